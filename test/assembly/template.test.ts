import { describe, expect, it } from 'vitest'
import { compileTemplate, fillTemplate } from '../../src/assembly/template.js'

/** Compile, then fill: how the renderer uses a template once. */
function interpolate(text: string, variables: Readonly<Record<string, string | undefined>>, owner: string): string {
  return fillTemplate(compileTemplate(text, owner), variables, owner)
}

// Speed at scale is measured by the benchmark (npm run bench, "template" rows), never here.

const INTRO = 'prompt section "intro"'
const ENV = 'runtime context "env"'

/** Runs `fn` and returns what it threw, failing the test when it returns normally. */
function thrown(fn: () => unknown): Error {
  try {
    fn()
  } catch (error) {
    if (error instanceof Error) return error
    throw new Error(`expected an Error, got ${String(error)}`)
  }
  throw new Error('expected a throw, but the call returned')
}

function malformedMessage(group: string, owner: string): string {
  return (
    `malformed prompt variable reference "${group}" in ${owner}; ` +
    'write {{name}} with a lowercase name matching /^[a-z][a-z0-9_]*$/, ' +
    'or register the entry with `interpolate: false` to keep its text literal'
  )
}

describe('compileTemplate', () => {
  it('compiles a text without "{{" to one part and no references', () => {
    const text = 'no references } here }} at all {'
    const template = compileTemplate(text, INTRO)
    expect(template).toEqual({ parts: [text], refs: [] })
    expect(template.parts[0]).toBe(text)
  })

  it('splits literal parts around each reference', () => {
    expect(compileTemplate('Hi {{user}}, it is {{date}}.', INTRO)).toEqual({
      parts: ['Hi ', ', it is ', '.'],
      refs: ['user', 'date'],
    })
  })

  it('keeps empty parts between adjacent references (parts.length === refs.length + 1)', () => {
    expect(compileTemplate('{{a}}{{b}}', INTRO)).toEqual({ parts: ['', '', ''], refs: ['a', 'b'] })
  })

  it('accepts names with digits and underscores after a lowercase letter', () => {
    expect(compileTemplate('{{a1_b2__}}', INTRO).refs).toEqual(['a1_b2__'])
  })

  it('treats a "{{" with no "}}" after it as literal text, with everything after it', () => {
    expect(compileTemplate('a {{b} c { {{ d', INTRO)).toEqual({ parts: ['a {{b} c { {{ d'], refs: [] })
  })

  it('keeps a trailing unclosed "{{" literal after earlier references', () => {
    expect(compileTemplate('{{x}} then {{ y', INTRO)).toEqual({ parts: ['', ' then {{ y'], refs: ['x'] })
  })

  it('treats lone "{", "}" and "}}" as literal text', () => {
    expect(compileTemplate('{ } }} {x} }}{', INTRO)).toEqual({ parts: ['{ } }} {x} }}{'], refs: [] })
  })

  it('closes a group at the first "}}", leaving a third "}" literal', () => {
    expect(compileTemplate('{{x}}}', INTRO)).toEqual({ parts: ['', '}'], refs: ['x'] })
  })

  it.each([
    ['{{ x }}', '{{ x }}'],
    ['{{}}', '{{}}'],
    ['{{{x}}}', '{{{x}}'],
    ['{{X}}', '{{X}}'],
    ['{{a {{b}}', '{{a {{b}}'],
    ['{{1a}}', '{{1a}}'],
    ['{{_a}}', '{{_a}}'],
    ['{{a-b}}', '{{a-b}}'],
    ['{{café}}', '{{café}}'],
  ])('rejects the malformed group in %j, quoting it and naming the owner', (text, group) => {
    expect(thrown(() => compileTemplate(text, INTRO)).message).toBe(malformedMessage(group, INTRO))
  })

  it('names a runtime-context owner in the malformed-reference error', () => {
    expect(thrown(() => compileTemplate('env: {{ cwd }}', ENV)).message).toBe(malformedMessage('{{ cwd }}', ENV))
  })

  it('reports the first malformed group in text order', () => {
    expect(thrown(() => compileTemplate('{{ok}} {{Bad}} {{ worse }}', INTRO)).message).toBe(
      malformedMessage('{{Bad}}', INTRO),
    )
  })

  it('escapes a newline inside a quoted malformed group (the message stays on one line)', () => {
    const message = thrown(() => compileTemplate('{{a\nb}}', INTRO)).message
    expect(message).toContain('"{{a\\nb}}"')
    expect(message).not.toContain('\n')
  })

  it('shortens a very long malformed group in the error (a huge text stays readable)', () => {
    const group = `{{${'x '.repeat(5000)}}}`
    const message = thrown(() => compileTemplate(group, INTRO)).message
    expect(message).toContain('malformed prompt variable reference "{{x x ')
    expect(message).toContain('…')
    expect(message.length).toBeLessThan(400)
  })

  it('reads each reference by its own name when the one before shares a prefix with it', () => {
    // A repeated name is recognized without a new slice; a longer or shorter name is not it.
    expect(compileTemplate('{{model}}{{models}}{{model}}{{mode}}{{model}}', INTRO).refs).toEqual(['model', 'models', 'model', 'mode', 'model'])
    expect(interpolate('{{a}} {{ab}} {{a}}', { a: '1', ab: '2' }, INTRO)).toBe('1 2 1')
  })

  it('rejects a malformed group after valid ones, an empty one included', () => {
    expect(thrown(() => compileTemplate('{{model}} {{model }}', INTRO)).message).toBe(malformedMessage('{{model }}', INTRO))
    expect(thrown(() => compileTemplate('{{model}} {{}}', INTRO)).message).toBe(malformedMessage('{{}}', INTRO))
    expect(thrown(() => compileTemplate('{{}}', INTRO)).message).toBe(malformedMessage('{{}}', INTRO))
  })

  it('compiles 5 MB of text with 220k references', () => {
    const text = 'lorem ipsum {{a}} dolor '.repeat(220_000)
    expect(text.length).toBeGreaterThan(5_000_000)
    const template = compileTemplate(text, INTRO)
    expect(template.refs).toHaveLength(220_000)
  })

  it('compiles 100k unclosed "{{" to one literal part', () => {
    const text = '{{'.repeat(100_000)
    const template = compileTemplate(text, INTRO)
    expect(template).toEqual({ parts: [text], refs: [] })
  })

  it('compiles a 5 MB text without "{{" to the text itself', () => {
    const text = '{ } }} '.repeat(750_000)
    const template = compileTemplate(text, INTRO)
    expect(template.parts[0]).toBe(text)
  })
})

describe('fillTemplate', () => {
  it('substitutes each reference with its value, in order', () => {
    const template = compileTemplate('{{a}}-{{b}}-{{a}}', INTRO)
    expect(fillTemplate(template, { a: '1', b: '2' }, INTRO)).toBe('1-2-1')
  })

  it('returns the single part itself for a template without references', () => {
    const text = 'plain text'
    expect(fillTemplate(compileTemplate(text, INTRO), {}, INTRO)).toBe(text)
  })

  it('never scans a substituted value again (a value containing "{{x}}" appears literally)', () => {
    const template = compileTemplate('say {{a}}', INTRO)
    expect(fillTemplate(template, { a: '{{b}} and {{ bad }}', b: 'B' }, INTRO)).toBe('say {{b}} and {{ bad }}')
  })

  it('accepts an empty-string value', () => {
    expect(fillTemplate(compileTemplate('[{{a}}]', INTRO), { a: '' }, INTRO)).toBe('[]')
  })

  it('rejects an unknown name, listing the registered variables sorted', () => {
    const template = compileTemplate('cwd: {{cwd}}', INTRO)
    expect(thrown(() => fillTemplate(template, { model: 'm', date: 'd' }, INTRO)).message).toBe(
      'unknown prompt variable "{{cwd}}" in prompt section "intro"; registered variables: date, model',
    )
  })

  it('says "none" when no variables are registered', () => {
    const template = compileTemplate('{{cwd}}', ENV)
    expect(thrown(() => fillTemplate(template, {}, ENV)).message).toBe(
      'unknown prompt variable "{{cwd}}" in runtime context "env"; registered variables: none',
    )
  })

  it('treats {{constructor}} as unknown unless registered (own-property lookup)', () => {
    const template = compileTemplate('{{constructor}}', INTRO)
    expect(thrown(() => fillTemplate(template, { date: 'd' }, INTRO)).message).toBe(
      'unknown prompt variable "{{constructor}}" in prompt section "intro"; registered variables: date',
    )
  })

  it('substitutes a registered {{constructor}}', () => {
    const template = compileTemplate('{{constructor}}', INTRO)
    expect(fillTemplate(template, { constructor: 'C' }, INTRO)).toBe('C')
  })

  it('treats a name found only on the prototype as unknown', () => {
    const variables = Object.create({ inherited: 'x' }) as Record<string, string>
    variables.own = 'o'
    expect(thrown(() => interpolate('{{inherited}}', variables, INTRO)).message).toBe(
      'unknown prompt variable "{{inherited}}" in prompt section "intro"; registered variables: own',
    )
  })

  it('rejects a registered name whose value is undefined', () => {
    const template = compileTemplate('today is {{date}}', INTRO)
    expect(thrown(() => fillTemplate(template, { date: undefined, model: 'm' }, INTRO)).message).toBe(
      'prompt variable "date" has no value in prompt section "intro"; its provider returned undefined for this assembly',
    )
  })

  it('reports the first failing reference in text order', () => {
    const template = compileTemplate('{{date}} {{cwd}}', INTRO)
    expect(thrown(() => fillTemplate(template, { date: undefined }, INTRO)).message).toContain(
      'prompt variable "date" has no value',
    )
  })

  it('fills a 5 MB template with 220k references', () => {
    const template = compileTemplate('lorem ipsum {{a}} dolor '.repeat(220_000), INTRO)
    const out = fillTemplate(template, { a: 'AB' }, INTRO)
    expect(out.length).toBe('lorem ipsum AB dolor '.length * 220_000)
  })
})

describe('interpolate', () => {
  it('renders a text without "{{" unchanged', () => {
    const text = 'a } b }} c { d \uD800 é'
    expect(interpolate(text, {}, INTRO)).toBe(text)
  })

  it('compiles and fills in one call', () => {
    expect(interpolate('model: {{model}}', { model: 'gpt' }, INTRO)).toBe('model: gpt')
  })

  it('reports a malformed group before an earlier unknown name (the whole text compiles first)', () => {
    expect(thrown(() => interpolate('{{cwd}} {{ x }}', {}, INTRO)).message).toBe(
      malformedMessage('{{ x }}', INTRO),
    )
  })

  it('throws a plain Error, not a TypeError, for a template fault', () => {
    const error = thrown(() => interpolate('{{cwd}}', {}, INTRO))
    expect(error.constructor).toBe(Error)
  })
})
