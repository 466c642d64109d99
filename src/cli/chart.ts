import { html, type Html } from './html.js'
import { percent, type StepRow } from './report-model.js'

const WIDTH = 560
const HEIGHT = 220
const PAD = { left: 44, right: 14, top: 14, bottom: 30 }

/** One agent's prefix shares per step (at least one row) as an inline SVG chart; each point a `.point` with a `<title>`. */
export function prefixChart(agent: string, rows: readonly StepRow[]): Html {
  const tokens = (row: StepRow): string =>
    row.stablePrefixTokens === undefined ? `${row.stablePrefixLength}/${row.promptLength} chars` : `${row.stablePrefixTokens}/${row.promptTokens ?? '?'} tokens`
  const point = (i: number, share: number, note: string, first = false) => ({ index: i, step: rows[i]!.step, share, note, first })
  const stable = rows.map((row, i) =>
    row.first ? point(i, 0, 'first step, nothing to reuse', true) : point(i, row.stableShare, tokens(row)),
  )
  const reusable = rows.map((row, i) => point(i, row.reusableShare, `${row.reusablePrefixLength} chars`))
  const observed = rows.flatMap(({ usage: u }, i) =>
    u === undefined ? [] : [point(i, u.observedShare, `${u.cachedInputTokens}/${u.inputTokens} tokens`)],
  )
  const series = [
    { key: 'stable', label: 'stable system prefix', points: stable },
    { key: 'reusable', label: 'reusable request prefix', points: reusable },
    ...(observed.length === 0 ? [] : [{ key: 'observed', label: 'observed cache (cached / input tokens)', points: observed }]),
  ]
  const plotW = WIDTH - PAD.left - PAD.right
  const plotH = HEIGHT - PAD.top - PAD.bottom
  const x = (index: number): number => PAD.left + (rows.length === 1 ? plotW / 2 : (index / (rows.length - 1)) * plotW)
  const y = (share: number): number => PAD.top + (1 - share) * plotH
  const fmt = (n: number): string => n.toFixed(1)

  const grid = [0, 0.25, 0.5, 0.75, 1].map(
    (share) =>
      html`<line class="grid" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${fmt(y(share))}" y2="${fmt(y(share))}"/><text class="axis" x="${PAD.left - 6}" y="${fmt(y(share) + 4)}" text-anchor="end">${Math.round(share * 100)}%</text>`,
  )
  const every = Math.max(1, Math.ceil(rows.length / 12))
  const ticks = rows.flatMap((row, i) =>
    (rows.length - 1 - i) % every === 0 ? [html`<text class="axis" x="${fmt(x(i))}" y="${HEIGHT - PAD.bottom + 16}" text-anchor="middle">${row.step}</text>`] : [],
  )
  const compactions = rows.flatMap((row, i) =>
    row.compacted
      ? [html`<line class="compacted" x1="${fmt(x(i))}" x2="${fmt(x(i))}" y1="${PAD.top}" y2="${HEIGHT - PAD.bottom}"><title>step ${row.step}: compacted</title></line>`]
      : [],
  )

  const plotted = series.map((s) => {
    // A session's first step has nothing to reuse: a hollow mark at 0, left out of the line so it does not read as a drop.
    const path = (s.key === 'observed' ? [] : s.points)
      .flatMap((p, i) => (p.first ? [] : `${i === 0 || s.points[i - 1]!.first ? 'M' : 'L'}${fmt(x(p.index))},${fmt(y(p.share))}`))
      .join(' ')
    const marks = s.points.map((p) => {
      const title = html`<title>step ${p.step} · ${s.label}: ${percent(p.share)} · ${p.note}</title>`
      return s.key === 'observed'
        ? html`<rect class="point ${s.key}" data-step="${p.step}" x="${fmt(x(p.index) - 4)}" y="${fmt(y(p.share) - 4)}" width="8" height="8" transform="rotate(45 ${fmt(x(p.index))} ${fmt(y(p.share))})">${title}</rect>`
        : html`<circle class="point ${s.key}${p.first ? ' first' : ''}" data-step="${p.step}" cx="${fmt(x(p.index))}" cy="${fmt(y(p.share))}" r="${s.key === 'stable' ? 3.5 : 2.5}">${title}</circle>`
    })
    return html`<g class="series ${s.key}">${path === '' ? '' : html`<path class="line ${s.key}" d="${path}"/>`}${marks}</g>`
  })

  return html`<figure class="chart-wrap">
<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${agent}: prefix share per step">
<g class="grid">${grid}</g><g class="ticks">${ticks}</g>${compactions}${plotted}
<text class="axis" x="${PAD.left - 6}" y="${HEIGHT - PAD.bottom + 16}" text-anchor="end">step</text>
</svg>
<figcaption class="legend">${series.map((s) => html`<span class="key ${s.key}"><i></i>${s.label}</span>`)}</figcaption>
</figure>`
}
