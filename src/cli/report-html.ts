import { prefixChart } from './chart.js'
import { html, raw, type Html } from './html.js'
import { REPORT_CSS } from './report-css.js'
import { percent, type AgentModel, type ReportModel, type SharedPrefix, type StepRow } from './report-model.js'

/**
 * Renders the report model as one self-contained HTML page: inline styles,
 * inline SVG charts, no script and no external URL (a Content-Security-Policy
 * of `default-src 'none'` makes the browser refuse any fetch). Every piece of
 * log data is escaped by the `html` template.
 */
export function renderReportHtml(model: ReportModel): string {
  const steps = model.agents.reduce((sum, agent) => sum + agent.rows.length, 0)
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>promptloom report · ${model.agents.map((agent) => agent.name).join(', ')}</title>
<style>${raw(REPORT_CSS)}</style>
</head>
<body>
<header class="page">
<h1>promptloom session report</h1>
<p class="sub">${plural(model.agents.length, 'agent')} · ${plural(steps, 'step')} · ${model.agents.map((agent, i) => html`${i === 0 ? '' : ', '}<code>${agent.file}</code>`)}</p>
</header>
<main>
${model.shared === undefined ? '' : sharedPanel(model.shared)}
<section class="overview" aria-label="agents">
${model.agents.map((agent, i) => agentCard(agent, i))}
</section>
${model.agents.map((agent, i) => stepTable(agent, i))}
</main>
<footer class="page">Stable prefix: the part of the rendered system prompt identical to the previous step's (the KV-cache prefix the system prompt keeps).
Reusable prefix: the same, but 0 when tools or config changed, since providers cache tools → system → messages.
Observed cache: cached input tokens / input tokens as the provider reported them.</footer>
</body>
</html>
`
  return page.value
}

function sharedPanel(shared: SharedPrefix): Html {
  return html`<section class="panel shared" aria-label="shared prefix">
<h2>Prefix shared by all agents</h2>
<p class="big">${shared.length.toLocaleString('en-US')} <span class="unit">chars</span></p>
<ul class="shares">${shared.agents.map(
    (agent) =>
      html`<li><span class="name">${agent.name}</span>${bar(agent.share, 'shared')}<span class="num">${percent(agent.share)}</span><span class="cont" title="how this agent's prompt continues">${agent.continuation === '' ? '(ends here)' : html`…${agent.continuation.replace(/\s+/g, ' ')}`}</span></li>`,
  )}</ul>
<details><summary>shared text</summary><pre>${shared.text}</pre></details>
</section>`
}

function agentCard(agent: AgentModel, index: number): Html {
  const last = agent.rows[agent.rows.length - 1]!
  const figures: [string, Html | string][] = [
    ['steps', String(agent.rows.length)],
    ['latest prompt', `${last.promptLength.toLocaleString('en-US')} chars${last.promptTokens === undefined ? '' : ` · ${last.promptTokens.toLocaleString('en-US')} tokens`}`],
    ['mean stable prefix', agent.rows.length < 2 ? '—' : percent(agent.meanStableShare)],
  ]
  if (agent.rows.length > 1) figures.push(['mean reusable prefix', percent(agent.meanReusableShare)])
  figures.push(['warnings', String(agent.warningCount)])
  for (const message of agent.readWarnings) figures.push(['log damage', message])
  if (last.withheld.length > 0) figures.push(['withheld now', last.withheld.join(', ')])
  const usage = agent.usageTotals
  if (usage !== undefined) {
    figures.push([
      'cache, observed',
      `${usage.cachedInputTokens.toLocaleString('en-US')} / ${usage.inputTokens.toLocaleString('en-US')} tokens (${percent(usage.inputTokens === 0 ? 0 : usage.cachedInputTokens / usage.inputTokens)})`,
    ])
    if (usage.predictedTokens !== undefined) figures.push(['cache, predicted', `${usage.predictedTokens.toLocaleString('en-US')} tokens`])
  }
  return html`<article class="panel card" data-agent="${agent.name}">
<h2><a href="#agent-${index + 1}">${agent.name}</a></h2>
<p class="file"><code>${agent.file}</code></p>
<dl class="figures">${figures.map(([term, value]) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`)}</dl>
${prefixChart(agent.name, agent.rows)}
</article>`
}

function stepTable(agent: AgentModel, index: number): Html {
  const hasUsage = agent.rows.some((row) => row.usage !== undefined)
  return html`<section class="panel agent" id="agent-${index + 1}" data-agent="${agent.name}">
<h2>${agent.name} <span class="muted">· per step</span></h2>
<table class="steps">
<thead><tr><th class="n">step</th><th class="n">prompt</th><th>stable prefix</th><th class="n">reusable</th><th>sections</th><th>tools · config</th><th>warnings · withheld</th>${hasUsage ? html`<th>cache: observed vs predicted</th>` : ''}</tr></thead>
<tbody>
${agent.rows.map((row) => stepRow(row, hasUsage))}
</tbody>
</table>
</section>`
}

function stepRow(row: StepRow, hasUsage: boolean): Html {
  const { changed, added, removed, withheld, restored } = row.sections
  const quiet =
    !row.first && changed.length + added.length + removed.length + withheld.length + restored.length === 0 && row.headerReason === undefined && row.warnings.length === 0
  return html`<tr class="step-row${quiet ? ' quiet' : ''}" data-step="${row.step}">
<td class="n">${row.step}${row.first && row.session > 1 ? html`<span class="badge session" title="a new surface appended to this log from here">session ${row.session}</span>` : ''}${row.compacted ? html`<span class="badge compacted" title="compaction rewrote the history before this step">compacted</span>` : ''}</td>
<td class="n">${row.promptLength.toLocaleString('en-US')}${row.promptTokens === undefined ? '' : html`<div class="muted">${row.promptTokens.toLocaleString('en-US')} tok</div>`}</td>
<td class="prefix">${row.first ? html`<span class="muted">first step</span>` : html`${bar(row.stableShare, 'stable')}<span class="num">${percent(row.stableShare)}</span><span class="muted"> ${row.stablePrefixLength.toLocaleString('en-US')}${row.stablePrefixTokens === undefined ? '' : ` · ${row.stablePrefixTokens} tok`}</span>`}</td>
<td class="n">${percent(row.reusableShare)}</td>
<td>${sectionCell(row)}</td>
<td>${headerCell(row)}</td>
<td>${notesCell(row)}</td>
${hasUsage ? html`<td>${usageCell(row)}</td>` : ''}
</tr>`
}

function sectionCell(row: StepRow): Html {
  const { changed, added, removed, withheld, restored, classified } = row.sections
  // A section the budget withheld or restored changed the prompt too: it gets its own chip.
  const budget = html`${withheld.map((name) => chip('withheld', '⊘', name, 'withheld by the token budget'))}${restored.map((name) =>
    chip('restored', '↺', name, 'restored by the token budget'),
  )}`
  if (row.first) return html`<span class="muted">first render${added.length > 0 ? ` · ${added.length} sections` : ''}</span>${withheld.length > 0 ? html` ${budget}` : ''}`
  if (changed.length + added.length + removed.length + withheld.length + restored.length === 0) return html`<span class="muted">unchanged</span>`
  return html`${added.map((name) => chip('added', '+', name))}${removed.map((name) => chip('removed', '−', name))}${changed.map((name) =>
    chip('changed', '~', name),
  )}${budget}${classified ? '' : html`<span class="muted" title="this log has no section lists, so additions and removals show as changes"> (unclassified)</span>`}`
}

function headerCell(row: StepRow): Html {
  if (row.headerReason === undefined) return html`<span class="muted">—</span>`
  if (row.first) return html`<span class="muted" title="${row.headerReason}">initial header</span>`
  const tools = row.tools
  return html`<span title="${row.headerReason}">${
    tools === undefined
      ? ''
      : html`<span class="label">tools</span>${tools.added.map((name) => chip('added', '+', name))}${tools.removed.map((name) => chip('removed', '−', name))}${tools.changed.map(
          (name) => chip('changed', '~', name),
        )}${tools.reordered ? chip('changed', '', 'reordered') : ''}`
  }${row.config === undefined ? '' : html`<span class="label">config</span>${row.config.map((key) => chip('changed', '~', key))}`}${
    tools === undefined && row.config === undefined ? row.headerReason : ''
  }</span>`
}

function notesCell(row: StepRow): Html {
  if (row.warnings.length === 0 && row.withheld.length === 0 && !row.overBudget) return html`<span class="muted">—</span>`
  return html`${row.overBudget ? html`<span class="badge over">over budget</span>` : ''}${
    row.withheld.length === 0 ? '' : html`<div><span class="label">withheld</span>${row.withheld.map((name) => chip('withheld', '', name))}</div>`
  }${row.warnings.length === 0 ? '' : html`<ul class="warnings">${row.warnings.map((w) => html`<li class="warning" title="${w.kind}${'layer' in w && w.layer !== undefined ? ` · layer ${w.layer}` : ''}">${w.message}</li>`)}</ul>`}`
}

function usageCell(row: StepRow): Html {
  const usage = row.usage
  if (usage === undefined) return html`<span class="muted">—</span>`
  const predicted = usage.predictedTokens
  const delta = predicted === undefined ? undefined : usage.cachedInputTokens - predicted
  return html`${bar(usage.observedShare, 'observed')}<span class="num">${percent(usage.observedShare)}</span>
<div class="muted">${usage.cachedInputTokens.toLocaleString('en-US')} / ${usage.inputTokens.toLocaleString('en-US')} cached${usage.cacheWriteTokens === undefined ? '' : ` · ${usage.cacheWriteTokens} written`}</div>${
    predicted === undefined
      ? ''
      : html`<div class="${delta! < 0 ? 'short' : 'muted'}">predicted ${predicted.toLocaleString('en-US')}${delta === 0 ? ' (as predicted)' : ` (${delta! > 0 ? '+' : ''}${delta})`}</div>`
  }`
}

function chip(kind: string, sign: string, name: string, title?: string): Html {
  return title === undefined ? html`<span class="chip ${kind}">${sign}${name}</span>` : html`<span class="chip ${kind}" title="${title}">${sign}${name}</span>`
}

function bar(share: number, kind: string): Html {
  return html`<span class="bar ${kind}" aria-hidden="true"><span style="width:${(100 * Math.max(0, Math.min(1, share))).toFixed(1)}%"></span></span>`
}
