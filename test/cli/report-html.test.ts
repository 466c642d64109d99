import { describe, expect, test } from 'vitest'
import { escapeHtml, html, Html } from '../../src/cli/html.js'
import { agentLogOf } from './fixtures.js'
import { renderReportHtml } from '../../src/cli/report-html.js'
import { buildReport } from '../../src/cli/report-model.js'
import { budgetLog, headerLine, jsonl, messageLine, stepLine, threeStepLog, usageLine } from './fixtures.js'

const EVIL = `<img src=x onerror="alert('x')">&amp;`

function page(...logs: [text: string, file: string][]): string {
  return renderReportHtml(buildReport(logs.map(([text, file]) => agentLogOf(text, file))))
}

describe('escaping', () => {
  test('escapeHtml escapes the five characters that matter in text and quoted attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;')
  })

  test('the html template escapes values, joins arrays and keeps nested html and constructed Html fragments', () => {
    const inner = html`<b>${'<i>'}</b>`
    expect(html`<p title="${'"q"'}">${[inner, ' & ', new Html('<br>')]}${undefined}${false}</p>`.value).toBe(
      '<p title="&quot;q&quot;"><b>&lt;i&gt;</b> &amp; <br></p>',
    )
  })

  test('section names, tool names, warnings, prompts and file names from the log never reach the page as markup', () => {
    const text = jsonl(
      stepLine(1, { sections: [EVIL] }),
      messageLine(`prompt ${EVIL}`, 'append'),
      headerLine([EVIL], 'initial'),
      stepLine(2, {
        changedSections: [EVIL],
        sections: [],
        warnings: [{ kind: EVIL, section: EVIL, layer: EVIL, message: `warning ${EVIL}` }],
        withheld: [EVIL],
      }),
      headerLine([], `tools changed (removed ${EVIL})`, { [EVIL]: 1 }),
    )
    const out = page([text, `logs/${EVIL}.jsonl`], [text, 'logs/b.jsonl'])
    expect(out).not.toContain('<img')
    expect(out).not.toContain('onerror="')
    expect(out).toContain('−&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;amp;</span>')
  })
})

describe('the page', () => {
  test('is self-contained: no script, no external resource, and a CSP that forbids fetching any', () => {
    const out = page([threeStepLog(), 'a.jsonl'], [threeStepLog(), 'b.jsonl'])
    expect(out).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`)
    expect(out).not.toMatch(/<script|<link|<img|<iframe|\ssrc=|url\(|@import|https?:\/\//i)
    // Every link is a fragment of the page itself: an agent's table or a step's row.
    for (const [, href] of out.matchAll(/href="([^"]*)"/g)) expect(href).toMatch(/^#(agent-\d+|[ab]-step-\d+)$/)
  })

  test('the stylesheet is inlined unescaped', () => {
    const css = /<style>([\s\S]*?)<\/style>/.exec(page([threeStepLog(), 'a.jsonl']))![1]!
    expect(css).toContain('"Segoe UI"')
    expect(css).not.toContain('&quot;')
  })

  test('has one table row per step per agent', () => {
    const two = jsonl(stepLine(1), messageLine('p', 'append'), stepLine(2, { stablePrefixLength: 1 }))
    const out = page([threeStepLog(), 'a.jsonl'], [two, 'b.jsonl'])
    const rows = (agent: string): number => {
      const section = new RegExp(`<section class="panel agent" id="agent-\\d" data-agent="${agent}">([\\s\\S]*?)</section>`).exec(out)![1]!
      return [...section.matchAll(/<tr class="step-row/g)].length
    }
    expect([rows('a'), rows('b')]).toEqual([3, 2])
  })

  test('plots one stable-prefix point per step, with the first step hollow', () => {
    const out = page([threeStepLog(), 'a.jsonl'])
    expect([...out.matchAll(/<circle class="point stable( first)?" data-step="(\d+)"/g)].map((m) => [m[2], m[1] ?? ''])).toEqual([
      ['1', ' first'],
      ['2', ''],
      ['3', ''],
    ])
  })

  test('shows removed, added and changed sections as separate chips', () => {
    const out = page([threeStepLog(), 'a.jsonl'])
    expect(out).toContain('<span class="chip added">+web</span><span class="chip removed">−plan</span><span class="chip changed">~persona</span>')
  })

  test('shows a section the budget withheld or restored as its own chip in the sections column', () => {
    const out = page([budgetLog(), 'a.jsonl'])
    expect(out).toContain('<span class="chip added">+tips</span><span class="chip withheld" title="withheld by the token budget">⊘examples</span>')
    expect(out).toContain('<span class="chip removed">−tips</span><span class="chip restored" title="restored by the token budget">↺examples</span>')
  })

  test('a step whose only change is a withheld section is not shown as quiet', () => {
    const text = jsonl(stepLine(1, { sections: ['a', 'b'] }), messageLine('A\n\nB', 'append'), stepLine(2, { stablePrefixLength: 1, changedSections: ['b'], sections: ['a'], withheld: ['b'] }), messageLine('A'))
    expect(page([text, 'a.jsonl'])).toContain('<tr class="step-row" id="a-step-2" data-step="2">')
  })

  test('plots observed cache reuse and shows it next to the prediction when usage was recorded', () => {
    const text = jsonl(stepLine(1), messageLine('abcd', 'append'), stepLine(2, { stablePrefixLength: 4 }), usageLine(2, 100, 40, { predictedTokens: 50 }))
    const out = page([text, 'a.jsonl'])
    expect(out).toMatch(/<rect class="point observed" data-step="2"/)
    expect(out).toContain('predicted 50 (-10)')
  })

  test('shows the prefix the agents share, in characters and as a share of each prompt', () => {
    const a = jsonl(stepLine(1), messageLine('You are Loom. Plan.', 'append'))
    const b = jsonl(stepLine(1), messageLine('You are Loom. Review now.', 'append'))
    const out = page([a, 'a.jsonl'], [b, 'b.jsonl'])
    expect(out).toMatch(/<p class="big">14 <span class="unit">chars<\/span>/)
    expect(out).toContain('<span class="num">56.0%</span>')
  })
})
