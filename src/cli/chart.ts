import { html, type Html } from './html.js'
import { percent, type StepRow } from './report-model.js'

const WIDTH = 560
const HEIGHT = 220
const PAD = { left: 44, right: 14, top: 14, bottom: 30 }

interface Series {
  readonly key: 'stable' | 'reusable' | 'observed'
  readonly label: string
  readonly points: readonly { index: number; step: number; share: number; note: string; first?: boolean }[]
}

/**
 * One agent's prefix-share chart (at least one row) as inline SVG, so the report needs
 * no script: x is the step (rows evenly spaced, so several sessions read left to right),
 * y the share of the system prompt. Series: the stable system prefix (solid), the
 * reusable request prefix (dashed) and the observed cache share from usage records
 * (diamonds, when any). Every plotted point is a `circle.point` / `rect.point` with a
 * `<title>` tooltip.
 */
export function prefixChart(agent: string, rows: readonly StepRow[]): Html {
  const series = seriesOf(rows)
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
    let path = ''
    let move = true
    for (const p of s.key === 'observed' ? [] : s.points) {
      if (p.first === true) move = true
      else {
        path += `${path === '' ? '' : ' '}${move ? 'M' : 'L'}${fmt(x(p.index))},${fmt(y(p.share))}`
        move = false
      }
    }
    const marks = s.points.map((p) => {
      const title = html`<title>step ${p.step} · ${s.label}: ${percent(p.share)}${p.note === '' ? '' : ` · ${p.note}`}</title>`
      return s.key === 'observed'
        ? html`<rect class="point ${s.key}" data-step="${p.step}" x="${fmt(x(p.index) - 4)}" y="${fmt(y(p.share) - 4)}" width="8" height="8" transform="rotate(45 ${fmt(x(p.index))} ${fmt(y(p.share))})">${title}</rect>`
        : html`<circle class="point ${s.key}${p.first === true ? ' first' : ''}" data-step="${p.step}" cx="${fmt(x(p.index))}" cy="${fmt(y(p.share))}" r="${s.key === 'stable' ? 3.5 : 2.5}">${title}</circle>`
    })
    return html`<g class="series ${s.key}">${path === '' ? '' : html`<path class="line ${s.key}" d="${path}"/>`}${marks}</g>`
  })

  const legend = series.map((s) => html`<span class="key ${s.key}"><i></i>${s.label}</span>`)
  return html`<figure class="chart-wrap">
<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${agent}: prefix share per step">
<g class="grid">${grid}</g><g class="ticks">${ticks}</g>${compactions}${plotted}
<text class="axis" x="${PAD.left - 6}" y="${HEIGHT - PAD.bottom + 16}" text-anchor="end">step</text>
</svg>
<figcaption class="legend">${legend}</figcaption>
</figure>`
}

function seriesOf(rows: readonly StepRow[]): Series[] {
  const tokens = (row: StepRow): string =>
    row.stablePrefixTokens === undefined ? `${row.stablePrefixLength}/${row.promptLength} chars` : `${row.stablePrefixTokens}/${row.promptTokens ?? '?'} tokens`
  const stable = rows.map((row, index) =>
    row.first
      ? { index, step: row.step, share: 0, note: 'first step, nothing to reuse', first: true }
      : { index, step: row.step, share: row.stableShare, note: tokens(row) },
  )
  const reusable = rows.map((row, index) => ({ index, step: row.step, share: row.reusableShare, note: `${row.reusablePrefixLength} chars` }))
  const observed = rows.flatMap(({ step, usage }, index) =>
    usage === undefined ? [] : [{ index, step, share: usage.observedShare, note: `${usage.cachedInputTokens}/${usage.inputTokens} tokens` }],
  )
  return [
    { key: 'stable', label: 'stable system prefix', points: stable },
    { key: 'reusable', label: 'reusable request prefix', points: reusable },
    ...(observed.length === 0 ? [] : [{ key: 'observed', label: 'observed cache (cached / input tokens)', points: observed } as const]),
  ]
}
