import { prefixChart } from './chart.js'
import { html, Html } from './html.js'
import { REPORT_CSS } from './report-css.js'
import { sum, type TreeNode } from './prefix-tree.js'
import { changedAny, percent, plural, ratio, type AgentModel, type ReportModel, type StepRow } from './report-model.js'
import type { SessionLogCacheBreak } from '../surface/session-log.js'
import { diffTexts } from './text-diff.js'

const num = (n: number): string => n.toLocaleString('en-US')

/**
 * The report as one self-contained page: no script, no external URL (CSP `default-src 'none'`), log data escaped. Runs of
 * unchanged steps fold into a row a CSS-only checkbox expands; a step's anchor (`#agent-1-step-4`) shows it even when folded.
 */
export function renderReportHtml(model: ReportModel): string {
  const steps = sum(model.agents.map((agent) => agent.rows.length))
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>promptloom report · ${model.agents.map((agent) => agent.name).join(', ')}</title>
<style>${new Html(REPORT_CSS)}</style>
</head>
<body>
<header class="page">
<h1>promptloom session report</h1>
<p class="sub">${plural(model.agents.length, 'agent')} · ${plural(steps, 'step')} · ${model.agents.map((agent, i) => html`${i === 0 ? '' : ', '}<code>${agent.file}</code>`)}</p>
</header>
<main>
${model.shared === undefined ? '' : sharedPanel(model.shared)}
${model.sharing === undefined ? '' : sharingPanel(model.sharing)}
<section class="overview" aria-label="agents">
${model.agents.map((agent, i) => agentCard(agent, i))}
</section>
${model.agents.map((agent, i) => stepTable(agent, i))}
</main>
<footer class="page">Stable prefix: the part of the rendered system prompt identical to the previous step's (the KV-cache prefix the system prompt keeps).
Reusable prefix: the same, but 0 when tools or config changed, since providers cache tools → system → messages.
Observed cache: cached input tokens / input tokens as the provider reported them; expected: what the provider's cache rules let it serve (expectedCachedTokens).
Why: the first cause of lost reuse in the order providers cache (tools → config → system prompt); the diff shows that section's text on the step before and on this one.</footer>
</body>
</html>
`.value
}

function sharedPanel(shared: NonNullable<ReportModel['shared']>): Html {
  return html`<section class="panel shared" aria-label="shared prefix">
<h2>Prefix shared by all agents</h2>
<p class="big">${num(shared.length)} <span class="unit">chars</span></p>
<ul class="shares">${shared.agents.map(
    (agent) =>
      html`<li><span class="name">${agent.name}</span>${bar(agent.share, 'shared')}<span class="num">${percent(agent.share)}</span><span class="cont" title="how this agent's prompt continues">${agent.continuation === '' ? '(ends here)' : html`…${agent.continuation.replace(/\s+/g, ' ')}`}</span></li>`,
  )}</ul>
<details><summary>shared text</summary><pre>${shared.text}</pre></details>
</section>`
}

function sharingPanel({ tree, splits, sharedByAll }: NonNullable<ReportModel['sharing']>): Html {
  const costs =
    splits.length === 0
      ? html`<p class="muted">None costs anything among these agents.</p>`
      : html`<ul class="splits">${splits.map(
          (split) =>
            html`<li class="split" data-agent="${split.agent}" data-section="${split.section}"><span class="chip agent">${split.agent}</span> <code>${split.section}</code> <span class="muted">(layer ${split.layer})</span> comes before global <code>${split.before}</code>: it costs ${split.cost.tokens === undefined ? `${num(split.cost.chars)} chars` : `${split.cost.estimated ? '≈' : ''}${num(split.cost.tokens)} tokens`} it could otherwise share with ${split.siblings.join(', ')}</li>`,
        )}</ul>`
  const alike =
    sharedByAll.length === 0
      ? ''
      : html`<p class="muted">Also before global sections, but sent alike by every agent here (no cost among these logs): ${sharedByAll.map((item, i) => html`${i === 0 ? '' : ', '}<code>${item.section}</code> (${item.layer})`)}</p>`
  return html`<section class="panel sharing" aria-label="prefix tree">
<h2>Which agents share which parts</h2>
<p class="muted">A prefix tree of the agents' latest system prompts: each node is a run of sections that exactly these agents send, byte for byte, from the start; a provider can serve a node from cache to any of them once one has sent it. Tokens marked ≈ are estimated from the agent's tokens per character.</p>
<ul class="tree">${tree.map(treeNode)}</ul>
${splits.length === 0 && sharedByAll.length === 0 ? '' : html`<h3>Scoped sections that split the shared prefix</h3>
${costs}${alike}`}
</section>`
}

function treeNode(node: TreeNode): Html {
  const tokens = node.tokens === undefined ? '' : ` · ${node.estimated ? '≈' : ''}${num(node.tokens)} tok`
  const through = node.prefixTokens === undefined || node.prefixTokens === node.tokens ? '' : html`<span class="muted"> (${node.estimated ? '≈' : ''}${num(node.prefixTokens)} tok from the start)</span>`
  return html`<li class="node" data-agents="${node.agents.join(' ')}"><div class="node-head"><span class="agents">${node.agents.map((agent) => html`<span class="chip agent">${agent}</span>`)}</span><span class="size">${num(node.chars)} chars${tokens}</span>${through}</div>
<div class="node-parts">${node.parts.map((part) => html`<span class="part" title="${part.layer === undefined ? 'layer unknown' : `layer ${part.layer}`} · ${part.chars} chars${part.tokens === undefined ? '' : ` · ${part.estimated ? '≈' : ''}${part.tokens} tokens`}">${part.name}${part.layer !== undefined && part.layer !== 'global' ? html`<span class="layer">${part.layer}</span>` : ''}</span>`)}</div>
${node.children.length === 0 ? '' : html`<ul>${node.children.map(treeNode)}</ul>`}</li>`
}

function agentCard(agent: AgentModel, index: number): Html {
  const last = agent.rows[agent.rows.length - 1]!
  const usage = agent.usageTotals
  const figures: [string, string | undefined][] = [
    ['steps', String(agent.rows.length)],
    ['latest prompt', `${num(last.promptLength)} chars${last.promptTokens === undefined ? '' : ` · ${num(last.promptTokens)} tokens`}`],
    ['mean stable prefix', agent.meanStableShare === undefined ? '—' : percent(agent.meanStableShare)],
    ['mean reusable prefix', agent.meanReusableShare === undefined ? undefined : percent(agent.meanReusableShare)],
    ['warnings', String(agent.warningCount)],
    ['cache breaks', agent.rows.length > 1 ? String(agent.breakCount) : undefined],
    ...agent.readWarnings.map((message): [string, string] => ['log damage', message]),
    ['withheld now', last.withheld.length > 0 ? last.withheld.join(', ') : undefined],
    ['cache, observed', usage && `${num(usage.cachedInputTokens)} / ${num(usage.inputTokens)} tokens (${percent(ratio(usage.cachedInputTokens, usage.inputTokens))})`],
    ['cache, predicted', usage?.predictedTokens === undefined ? undefined : `${num(usage.predictedTokens)} tokens`],
  ]
  return html`<article class="panel card" data-agent="${agent.name}">
<h2><a href="#agent-${index + 1}">${agent.name}</a></h2>
<p class="file"><code>${agent.file}</code></p>
<dl class="figures">${figures.map(([term, value]) => (value === undefined ? '' : html`<div><dt>${term}</dt><dd>${value}</dd></div>`))}</dl>
${prefixChart(agent.name, agent.rows)}
</article>`
}

function stepTable(agent: AgentModel, index: number): Html {
  const hasUsage = agent.rows.some((row) => row.usage !== undefined || row.expectedTokens !== undefined)
  const columns = hasUsage ? 9 : 8
  // The rows as table bodies: each run of two or more quiet rows folded on its own, the rest between them.
  const groups: { rows: StepRow[]; folded: boolean }[] = []
  agent.rows.forEach((row, i, rows) => {
    const folded = row.quiet && (rows[i - 1]?.quiet === true || rows[i + 1]?.quiet === true)
    if (groups.at(-1)?.folded === folded) groups.at(-1)!.rows.push(row)
    else groups.push({ rows: [row], folded })
  })
  const bodies = groups.map(({ rows, folded }) => {
    const body = rows.map((row) => stepRow(row, hasUsage, columns))
    if (!folded) return html`<tbody>${body}</tbody>`
    const first = rows[0]!.step
    const last = rows.at(-1)!.step
    return html`<tbody class="run" data-steps="${first}-${last}">
<tr class="run-toggle"><td colspan="${columns}"><label><input type="checkbox" class="expand"> <span class="fold">${rows.length} unchanged steps (${first}–${last}): every byte of the prompt reused</span></label></td></tr>
${body}
</tbody>`
  })
  return html`<section class="panel agent" id="agent-${index + 1}" data-agent="${agent.name}">
<h2>${agent.name} <span class="muted">· per step</span></h2>
<table class="steps">
<thead><tr><th class="n">step</th><th class="n">prompt</th><th>stable prefix</th><th class="n">reusable</th><th>why reuse was lost</th><th>sections</th><th>tools · config</th><th>warnings · withheld</th>${hasUsage ? html`<th>cache: observed vs expected</th>` : ''}</tr></thead>
${bodies}
</table>
</section>`
}

function stepRow(row: StepRow, hasUsage: boolean, columns: number): Html {
  return html`<tr class="step-row${row.quiet ? ' quiet' : ''}${row.cacheBreak === undefined ? '' : ' lost'}" id="${row.anchor}" data-step="${row.step}">
<td class="n"><a class="anchor" href="#${row.anchor}">${row.step}</a>${row.first && row.session > 1 ? html`<span class="badge session" title="a new surface appended to this log from here">session ${row.session}</span>` : ''}${row.compacted ? html`<span class="badge compacted" title="compaction rewrote the history before this step">compacted</span>` : ''}</td>
<td class="n">${num(row.promptLength)}${row.promptTokens === undefined ? '' : html`<div class="muted">${num(row.promptTokens)} tok</div>`}</td>
<td class="prefix">${row.first ? html`<span class="muted">first step</span>` : html`${bar(row.stableShare, 'stable')}<span class="num">${percent(row.stableShare)}</span><span class="muted"> ${num(row.stablePrefixLength)}${row.stablePrefixTokens === undefined ? '' : ` · ${row.stablePrefixTokens} tok`}</span>`}</td>
<td class="n">${percent(row.reusableShare)}</td>
<td class="why-cell">${whyCell(row)}</td>
<td>${sectionCell(row)}</td>
<td>${headerCell(row)}</td>
<td>${notesCell(row)}</td>
${hasUsage ? html`<td class="usage">${usageCell(row)}</td>` : ''}
</tr>${row.cacheBreak === undefined ? '' : whyRow(row, columns)}`
}

/** What happened, by cause, after "Step N lost reuse first at " (and, for a section, "section X (layer L): "). */
const CAUSE_TEXT: Readonly<Record<string, string>> = {
  tools: 'the request header: the tool declarations changed',
  config: 'the request header: the request config changed',
  withheld: 'the token budget withheld it',
  restored: 'the token budget restored it',
  section: 'its text changed',
  removed: 'it left the prompt',
  added: 'it entered the prompt',
}

function whyCell(row: StepRow): Html {
  const cause = row.cacheBreak
  if (cause === undefined) return html`<span class="muted">${row.first ? '—' : 'nothing lost'}</span>`
  return html`<span class="cause" data-cause="${cause.cause}">${cause.cause}</span>${cause.section === undefined ? '' : html`<code class="section">${cause.section}</code>`}${
    cause.layer === undefined ? '' : html`<span class="label">layer</span><span class="layer">${cause.layer}</span>`
  }${cause.variable === undefined ? '' : html`<span class="label">variable</span><code class="variable">${cause.variable}</code>`}${
    cause.tools === undefined ? '' : changeChips(cause.tools)
  }`
}

/** The detail row under a step that lost reuse: the cause in words, expected vs observed cache, the section's diff. */
function whyRow(row: StepRow, columns: number): Html {
  const cause = row.cacheBreak!
  const what =
    cause.cause === 'tools' || cause.cause === 'config'
      ? CAUSE_TEXT[cause.cause]
      : html`section <code>${cause.section ?? '?'}</code>${cause.layer === undefined ? '' : html` (layer ${cause.layer})`}: ${
          cause.variable === undefined ? CAUSE_TEXT[cause.cause] : html`its template is unchanged; the value of variable <code>${cause.variable}</code> changed`
        }`
  const { expectedTokens: expected, usage: observed } = row
  const figures: Html[] = []
  if (expected !== undefined) figures.push(html`expected ${num(expected)} cached tokens`)
  if (observed !== undefined) figures.push(html`observed ${num(observed.cachedInputTokens)} of ${num(observed.inputTokens)} input tokens cached`)
  return html`<tr class="why-row" data-step="${row.step}"><td colspan="${columns}"><div class="why">
<p class="why-line">Step ${row.step} lost reuse first at ${what}.${figures.length === 0 ? '' : html` <span class="figures-line">${figures.map((figure, i) => html`${i === 0 ? '' : ' · '}${figure}`)}</span>`}</p>
${diffBlock(row)}</div></td></tr>`
}

function diffBlock(row: StepRow): Html {
  const section = row.cacheBreak!.section
  if (section === undefined) return html``
  const texts = row.changedText
  if (texts === undefined) return html`<p class="muted">The log does not hold this section's text (it records part lengths from this version on).</p>`
  return html`<pre class="diff" aria-label="${section} before and after">${diffTexts(texts.before, texts.after).map((line) => {
    if (line.kind === 'gap') return html`<span class="line gap">  … ${plural(line.lines, 'unchanged line')}</span>`
    const sign = line.kind === 'removed' ? '-' : line.kind === 'added' ? '+' : ' '
    const body =
      line.mark === undefined || line.mark[0] >= line.mark[1]
        ? html`${line.text}`
        : html`${line.text.slice(0, line.mark[0])}<mark>${line.text.slice(line.mark[0], line.mark[1])}</mark>${line.text.slice(line.mark[1])}`
    return html`<span class="line ${line.kind}">${sign} ${body}</span>`
  })}</pre>`
}

function sectionCell(row: StepRow): Html {
  const { added, withheld, restored, classified } = row.sections
  // A section the budget withheld or restored changed the prompt too: it gets its own chip.
  const budget = html`${withheld.map((name) => chip('withheld', '⊘', name, 'withheld by the token budget'))}${restored.map((name) =>
    chip('restored', '↺', name, 'restored by the token budget'),
  )}`
  if (row.first) return html`<span class="muted">first render${added.length > 0 ? ` · ${added.length} sections` : ''}</span>${withheld.length > 0 ? html` ${budget}` : ''}`
  if (!changedAny(row.sections)) return html`<span class="muted">unchanged</span>`
  return html`${changeChips(row.sections)}${budget}${classified ? '' : html`<span class="muted" title="this log has no section lists, so additions and removals show as changes"> (unclassified)</span>`}`
}

function headerCell(row: StepRow): Html {
  if (row.headerReason === undefined) return html`<span class="muted">—</span>`
  if (row.first) return html`<span class="muted" title="${row.headerReason}">initial header</span>`
  const { tools, config } = row
  return html`<span title="${row.headerReason}">${
    tools === undefined ? '' : html`<span class="label">tools</span>${changeChips(tools)}${tools.reordered ? chip('changed', '', 'reordered') : ''}`
  }${config === undefined ? '' : html`<span class="label">config</span>${config.map((key) => chip('changed', '~', key))}`}${
    tools === undefined && config === undefined ? row.headerReason : ''
  }</span>`
}

function notesCell(row: StepRow): Html {
  if (row.warnings.length === 0 && row.withheld.length === 0 && !row.overBudget) return html`<span class="muted">—</span>`
  return html`${row.overBudget ? html`<span class="badge over">over budget</span>` : ''}${
    row.withheld.length === 0 ? '' : html`<div><span class="label">withheld</span>${row.withheld.map((name) => chip('withheld', '', name))}</div>`
  }${row.warnings.length === 0 ? '' : html`<ul class="warnings">${row.warnings.map((w) => html`<li class="warning" title="${w.kind}${'layer' in w && w.layer !== undefined ? ` · layer ${w.layer}` : ''}">${w.message}</li>`)}</ul>`}`
}

function usageCell(row: StepRow): Html {
  const { usage, expectedTokens: expected } = row
  if (usage === undefined) return expected === undefined ? html`<span class="muted">—</span>` : html`<span class="muted">expected ${num(expected)}</span>`
  const predicted = usage.predictedTokens
  const delta = predicted === undefined ? undefined : usage.cachedInputTokens - predicted
  return html`${bar(usage.observedShare, 'observed')}<span class="num">${percent(usage.observedShare)}</span>
<div class="muted">${num(usage.cachedInputTokens)} / ${num(usage.inputTokens)} cached${usage.cacheWriteTokens === undefined ? '' : ` · ${usage.cacheWriteTokens} written`}</div>${
    expected === undefined ? '' : html`<div class="muted expected">expected ${num(expected)}</div>`
  }${
    predicted === undefined
      ? ''
      : html`<div class="${delta! < 0 ? 'short' : 'muted'}">predicted ${num(predicted)}${delta === 0 ? ' (as predicted)' : ` (${delta! > 0 ? '+' : ''}${delta})`}</div>`
  }`
}

/** Chips for added, removed and changed names, in that order. */
function changeChips(names: NonNullable<SessionLogCacheBreak['tools']>): Html {
  return html`${names.added.map((name) => chip('added', '+', name))}${names.removed.map((name) => chip('removed', '−', name))}${names.changed.map((name) => chip('changed', '~', name))}`
}

function chip(kind: string, sign: string, name: string, title?: string): Html {
  return html`<span class="chip ${kind}"${title === undefined ? '' : html` title="${title}"`}>${sign}${name}</span>`
}

function bar(share: number, kind: string): Html {
  return html`<span class="bar ${kind}" aria-hidden="true"><span style="width:${(100 * Math.max(0, Math.min(1, share))).toFixed(1)}%"></span></span>`
}
