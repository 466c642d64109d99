import { html, type Html } from './html.js'
import { percent, type StepRow } from './report-model.js'

/**
 * The per-agent prefix-share chart as inline SVG, generated here so the
 * report needs no script and no charting library: x is the step, y the share
 * of the system prompt (0–100%). Series: the stable system prefix (solid),
 * the reusable request prefix (dashed, when the log has it) and the observed
 * cache share from usage records (diamonds, when any). Every plotted point is
 * a `circle.point` / `rect.point` with a `<title>` tooltip.
 */

const WIDTH = 560
const HEIGHT = 220
const PAD = { left: 44, right: 14, top: 14, bottom: 30 }

interface Series {
  readonly key: 'stable' | 'reusable' | 'observed'
  readonly label: string
  readonly points: readonly { readonly step: number; readonly share: number; readonly note: string; readonly first?: boolean }[]
}

/** The chart for one agent's rows (at least one row). */
export function prefixChart(agent: string, rows: readonly StepRow[]): Html {
  const series = seriesOf(rows)
  const first = rows[0]!.step
  const last = rows[rows.length - 1]!.step
  const plotW = WIDTH - PAD.left - PAD.right
  const plotH = HEIGHT - PAD.top - PAD.bottom
  const x = (step: number): number => PAD.left + (last === first ? plotW / 2 : ((step - first) / (last - first)) * plotW)
  const y = (share: number): number => PAD.top + (1 - share) * plotH
  const fmt = (n: number): string => n.toFixed(1)

  const grid = [0, 0.25, 0.5, 0.75, 1].map(
    (share) =>
      html`<line class="grid" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${fmt(y(share))}" y2="${fmt(y(share))}"/><text class="axis" x="${PAD.left - 6}" y="${fmt(y(share) + 4)}" text-anchor="end">${Math.round(share * 100)}%</text>`,
  )
  const every = Math.max(1, Math.ceil(rows.length / 12))
  const ticks = rows
    .filter((_, i) => (rows.length - 1 - i) % every === 0)
    .map((row) => html`<text class="axis" x="${fmt(x(row.step))}" y="${HEIGHT - PAD.bottom + 16}" text-anchor="middle">${row.step}</text>`)
  const compactions = rows
    .filter((row) => row.compacted)
    .map((row) => html`<line class="compacted" x1="${fmt(x(row.step))}" x2="${fmt(x(row.step))}" y1="${PAD.top}" y2="${HEIGHT - PAD.bottom}"><title>step ${row.step}: compacted</title></line>`)

  const plotted = series.map((s) => {
    // The first step has nothing to reuse: a hollow mark at 0, left out of the line so it does not read as a drop.
    const linked = s.points.filter((p) => p.first !== true)
    const path = s.key === 'observed' ? '' : linked.map((p, i) => `${i === 0 ? 'M' : 'L'}${fmt(x(p.step))},${fmt(y(p.share))}`).join(' ')
    const marks = s.points.map((p) => {
      const title = html`<title>step ${p.step} · ${s.label}: ${percent(p.share)}${p.note === '' ? '' : ` · ${p.note}`}</title>`
      return s.key === 'observed'
        ? html`<rect class="point ${s.key}" data-step="${p.step}" x="${fmt(x(p.step) - 4)}" y="${fmt(y(p.share) - 4)}" width="8" height="8" transform="rotate(45 ${fmt(x(p.step))} ${fmt(y(p.share))})">${title}</rect>`
        : html`<circle class="point ${s.key}${p.first === true ? ' first' : ''}" data-step="${p.step}" cx="${fmt(x(p.step))}" cy="${fmt(y(p.share))}" r="${s.key === 'stable' ? 3.5 : 2.5}">${title}</circle>`
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
  const out: Series[] = [
    { key: 'stable', label: 'stable system prefix', points: rows.map((row) => (row.first ? { step: row.step, share: 0, note: 'first step, nothing to reuse', first: true } : { step: row.step, share: row.stableShare, note: tokens(row) })) },
  ]
  const reusable = rows.filter((row) => row.reusableShare !== undefined)
  if (reusable.length > 0) {
    out.push({
      key: 'reusable',
      label: 'reusable request prefix',
      points: reusable.map((row) => ({ step: row.step, share: row.reusableShare!, note: `${row.reusablePrefixLength} chars` })),
    })
  }
  const observed = rows.filter((row) => row.usage !== undefined)
  if (observed.length > 0) {
    out.push({
      key: 'observed',
      label: 'observed cache (cached / input tokens)',
      points: observed.map((row) => ({
        step: row.step,
        share: row.usage!.observedShare,
        note: `${row.usage!.cachedInputTokens}/${row.usage!.inputTokens} tokens`,
      })),
    })
  }
  return out
}
