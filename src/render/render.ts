import { labelInLayer, type SectionEntry } from '../assembly/entries.js'
import {
  recordOf,
  sourceNamed,
  type AssemblyRecord,
  type DeferredSections,
  type NamedSource,
  type RenderSlot,
  type SectionSource,
  type SourceTable,
} from '../assembly/provenance.js'
import { stillDeferred } from '../assembly/presentation.js'
import type { PromptPresentation } from '../assembly/types.js'
import { blockItemsOf, buildParts, variablesOf } from './prompt-parts.js'
import { guardStability } from './stability-guard.js'
import { RenderMemo } from './render-memo.js'
import { renderItem, type RenderItem, type RenderKey, type RenderOwner } from './shared-templates.js'
import { builtSoFar, joinOutputs, lazyPromptOf, PART_SEPARATOR, promptOf, type RenderedPart, type RenderedPrompt, type RenderedVariable } from './rendered-prompt.js'

/** The header that opens every runtime-context snapshot. */
export const RUNTIME_CONTEXT_HEADER =
  'Current runtime context. This snapshot supersedes earlier runtime-context snapshots.'

/** One rendered runtime-context section. */
export interface RenderedContextSection {
  /** The runtime context's name. */
  name: string
  /** Its rendered (interpolated), non-empty text. */
  text: string
}

type Variables = Readonly<Record<string, string | undefined>>

type Renderable = Pick<PromptPresentation, 'variables'> & {
  readonly sections?: readonly RenderItem[]
  readonly contexts?: readonly RenderItem[]
}

/** The last `RenderedPrompt` of a slot, with what it was derived from. */
interface LastPrompt {
  readonly version: number
  /** The memo's `commits` its parts' values are those of: `changed` of the next commit is what moved since. */
  readonly commits: number
  readonly sources: SourceTable<SectionSource> | undefined
  readonly origins: string
  readonly variablesTable: SourceTable<NamedSource> | undefined
  /** The required sections the assembly restored (§5), joined: their parts are marked `restored`. */
  readonly restored: string
  readonly rendered: RenderedPrompt
  /** Set when it was rendered from a deferred result: what `unchanged` compares. */
  readonly deferred:
    | {
        readonly entries: readonly SectionEntry[]
        /** The texts of the plan's dynamic sections (`plan.dynamic` order): the only ones a static plan can change. */
        readonly dynamicTexts: readonly string[]
        readonly referenced: readonly string[]
        readonly values: readonly (string | undefined | typeof ABSENT)[]
      }
    | undefined
}

/** What the render layer keeps per scope slot: the two render memos and the last `RenderedPrompt`. */
interface SlotCache {
  readonly sections: RenderMemo
  readonly contexts: RenderMemo
  prompt: LastPrompt | undefined
}

// Held weakly by the engine's slot: a released scope drops its slot, and so its caches.
const caches = new WeakMap<RenderSlot, SlotCache>()

function cacheOf(slot: RenderSlot): SlotCache {
  let cache = caches.get(slot)
  if (cache === undefined) caches.set(slot, (cache = { sections: new RenderMemo(), contexts: new RenderMemo(), prompt: undefined }))
  return cache
}

/**
 * Names a rendered item after the registration it came from, so a scoped
 * entry's error says `in scope "agent-1"`; an item only a waterfall listener
 * supplied is `kind "name"`.
 */
function ownerIn(table: SourceTable<{ readonly name: string; readonly layer: 'global' | object }> | undefined, kind: string): RenderOwner {
  if (table === undefined) return kind
  return (name) => {
    const layer = sourceNamed(table, name)?.layer
    return labelInLayer(kind, name, layer)
  }
}

/** Renders the sections or contexts of a recorded result through its scope's memo. */
function memoized(record: AssemblyRecord, assembly: Renderable, which: 'sections' | 'contexts'): RenderMemo {
  const cache = cacheOf(record.slot)
  const { provenance } = record
  const memo = which === 'sections' ? cache.sections : cache.contexts
  const owner = which === 'sections' ? ownerIn(provenance.sections, 'prompt section') : ownerIn(provenance.contexts, 'runtime context')
  memo.render(assembly[which]!, undefined, assembly.variables, owner, record.slot.stats)
  return memo
}

const ABSENT = Symbol('absent')

function valuesOf(names: readonly string[], variables: Variables): (string | undefined | typeof ABSENT)[] {
  return names.map((name) => (Object.hasOwn(variables, name) ? variables[name] : ABSENT))
}

/**
 * Whether a deferred result (sections = its plan's entries with `collected`
 * texts, see `DeferredSections`) renders exactly as the last prompt did:
 * same plan, same signal and function texts, same values of the referenced
 * variables, same variable provenance. O(dynamic sections + referenced
 * variables), whatever the number of static sections.
 */
function unchanged(last: LastPrompt, deferred: DeferredSections, record: AssemblyRecord, variables: Variables): boolean {
  const { plan } = deferred
  const key = last.deferred
  if (key === undefined || key.entries !== plan.entries || last.variablesTable !== record.provenance.variables) return false
  // A deferred result had no listener, so nothing was restored; the last prompt must not carry marks either.
  if (last.restored !== '') return false
  const collected = record.provenance.collected!
  const { dynamic } = plan
  for (let k = 0; k < dynamic.length; k++) if (key.dynamicTexts[k] !== collected[dynamic[k]!]) return false
  const { referenced, values } = key
  for (let i = 0; i < referenced.length; i++) {
    const name = referenced[i]!
    if ((Object.hasOwn(variables, name) ? variables[name] : ABSENT) !== values[i]) return false
  }
  return true
}

const ALL_COLLECTED = 'collected'

/**
 * A fingerprint of which sections still carry their collected name and text
 * (origins can change while outputs do not). The common case, a presentation
 * no listener touched, is one identity comparison per section.
 */
function originsOf(sections: readonly RenderItem[], record: AssemblyRecord): string {
  const { sections: sources, collected } = record.provenance
  if (sources === undefined || collected === undefined) return ''
  const { list, indexOf } = sources
  let untouched = sections.length === list.length
  for (let i = 0; untouched && i < sections.length; i++) {
    untouched = sections[i]!.name === list[i]!.name && sections[i]!.text === collected[i]
  }
  if (untouched) return ALL_COLLECTED
  let out = ''
  for (const { name, text } of sections) {
    const index = indexOf.get(name)
    out += index !== undefined && collected[index] === text ? '1' : '0'
  }
  return out
}

/**
 * The rendered system prompt of `assembly` as data (SPEC §4.1): the joined
 * text, one part per non-empty section with its supplying layer, origin,
 * stability, variables and flags, and the cache blocks. Strict like
 * `renderPrompt`: an unknown, valueless or malformed reference throws an
 * `Error` naming the section.
 *
 * Memoized for results of `assemble()`: an unchanged assembly of a scope
 * returns the same frozen `RenderedPrompt` object as the previous render of
 * that scope (for a result whose sections nobody read, found without
 * visiting the static sections); a changed one reuses the parts before the
 * change and every unchanged block. Any other object (a copy, say) renders
 * from scratch, and its parts carry no layer (`origin: 'waterfall'`, default
 * options). `text` and `blocks` are computed on first read.
 *
 * @example
 * ```ts
 * import { render } from 'promptloom'
 *
 * const rendered = render(await app.systemPrompt.assemble({ scope: agent }))
 * for (const part of rendered.parts) console.log(part.name, part.layer, part.stability, part.text.length)
 * for (const block of rendered.blocks) console.log(block.cacheBreakpoint ? 'breakpoint' : '-', block.parts.length)
 * ```
 */
export function render(assembly: Pick<PromptPresentation, 'sections' | 'variables'>): RenderedPrompt {
  const record = recordOf(assembly)
  if (record === undefined) {
    const items = assembly.sections.map((item) => renderItem(item, assembly.variables, 'prompt section'))
    const texts = assembly.sections.map((item) => item.text)
    const names = assembly.sections.map((item) => item.name)
    const parts = buildParts(names, texts, items.map((item) => item.output), items.map((item) => item.template), assembly.variables, undefined, undefined)
    return promptOf(parts, variablesOf(parts, undefined), undefined)
  }
  const rendered = renderRecorded(assembly, record)
  // Config `stabilityGuard: 'error'` (SPEC §5), carried by the provenance.
  if (record.provenance.stabilityGuard === 'error') guardStability(rendered)
  return rendered
}

/** `render` of a result that carries its record: through the scope's memo and last prompt. */
function renderRecorded(assembly: Pick<PromptPresentation, 'sections' | 'variables'>, record: AssemblyRecord): RenderedPrompt {
  const cache = cacheOf(record.slot)
  const { variables } = assembly
  const last = cache.prompt
  const deferred = record.deferred !== undefined && stillDeferred(assembly, record.deferred) ? record.deferred : undefined
  if (deferred !== undefined && last !== undefined && unchanged(last, deferred, record, variables)) {
    record.slot.stats.renderCacheHits += deferred.plan.entries.length
    return last.rendered
  }
  const memo = cache.sections
  const { provenance } = record
  const items: readonly RenderKey[] = deferred !== undefined ? deferred.plan.entries : assembly.sections
  // A deferred result's texts are the collected ones; otherwise each item carries its own.
  const texts = deferred !== undefined ? provenance.collected! : undefined
  memo.render(items, texts, variables, ownerIn(provenance.sections, 'prompt section'), record.slot.stats, deferred?.plan.dynamic)
  const sources = provenance.sections
  const origins = deferred !== undefined ? ALL_COLLECTED : originsOf(assembly.sections, record)
  const restored = provenance.restored?.join('\0') ?? ''
  const key =
    deferred === undefined
      ? undefined
      : { entries: deferred.plan.entries, dynamicTexts: deferred.plan.dynamic.map((i) => texts![i]!), referenced: memo.referenced, values: valuesOf(memo.referenced, variables) }
  if (
    last !== undefined &&
    last.version === memo.version &&
    last.sources === sources &&
    last.origins === origins &&
    last.variablesTable === provenance.variables &&
    last.restored === restored
  ) {
    // Same version: no template of the current slots was re-filled, so the parts hold this commit's values too.
    cache.prompt = { ...last, commits: last.commits === memo.commits - 1 ? memo.commits : last.commits, deferred: key }
    return last.rendered
  }
  // Parts before the memo's first change are the last prompt's when nothing else a part is made of moved.
  const sameSources = last !== undefined && last.sources === sources && last.origins === origins && last.restored === restored
  const rendered = lazyPrompt(memo, variables, record, last, sameSources)
  cache.prompt = { version: memo.version, commits: memo.commits, sources, origins, variablesTable: provenance.variables, restored, rendered, deferred: key }
  return rendered
}

/**
 * The prompt of the memo's current commit, its parts built on first read
 * (a loop that reads only `text` joins the outputs and builds none), from
 * what the last prompt of the scope had built by now. Everything the build
 * reads is fixed here: the memo's committed arrays (replaced, never
 * written), the values of the referenced variables, the record.
 */
function lazyPrompt(memo: RenderMemo, variables: Variables, record: AssemblyRecord, last: LastPrompt | undefined, sameSources: boolean): RenderedPrompt {
  const { texts, outputs, templates, referenced } = memo
  // Only a build needs the names (an edits commit makes them on first read).
  const namesOf = memo.namesReader()
  const values: Record<string, string | undefined> = Object.create(null)
  for (let i = 0; i < referenced.length; i++) values[referenced[i]!] = variables[referenced[i]!]
  const built = builtSoFar(last?.rendered)
  const previous = built.parts
  // `changed` says what moved since the last commit; parts older than that are checked value by value.
  const current = previous !== undefined && last!.commits === memo.commits - 1
  const changed = current ? memo.changed : undefined
  const kept = current && sameSources ? memo.firstChange : 0
  // The same variable sources: the variables are the last prompt's whenever the parts reference the same names.
  const previousVariables = last !== undefined && last.variablesTable === record.provenance.variables ? built.variables : undefined
  return lazyPromptOf(
    () => joinOutputs(outputs),
    () => {
      const parts = buildParts(namesOf(), texts, outputs, templates, values, record, previous, changed, kept)
      return { parts, variables: sameReferences(parts, previous, previousVariables) ?? Object.freeze(variablesOf(parts, record)) }
    },
    built.blocks,
    () => blockItemsOf(namesOf(), outputs, record),
  )
}

/** `previousVariables` when `parts` reference exactly what `previous` did, part by part (the same names arrays). */
function sameReferences(parts: readonly RenderedPart[], previous: readonly RenderedPart[] | undefined, previousVariables: readonly RenderedVariable[] | undefined): readonly RenderedVariable[] | undefined {
  if (previous === undefined || previousVariables === undefined || previous.length !== parts.length) return undefined
  for (let i = 0; i < parts.length; i++) if (parts[i]!.variables !== previous[i]!.variables) return undefined
  return previousVariables
}

/**
 * Renders the system prompt of `assembly`: interpolates `{{name}}` in each
 * section (unless `interpolate: false`), drops empty results and joins the
 * rest with a blank line. Strict: an unknown name, a name without a value or
 * a malformed reference throws an `Error` naming the section. Equals
 * `render(assembly).text`, and is memoized the same way.
 */
export function renderPrompt(assembly: Pick<PromptPresentation, 'sections' | 'variables'>): string {
  return render(assembly).text
}

function plainOutputs(items: readonly RenderItem[], variables: Variables, kind: string): string[] {
  return items.map((item) => renderItem(item, variables, kind).output)
}

function contextOutputs(assembly: Pick<PromptPresentation, 'contexts' | 'variables'>): readonly string[] {
  const record = recordOf(assembly)
  if (record === undefined) return plainOutputs(assembly.contexts, assembly.variables, 'runtime context')
  return memoized(record, assembly, 'contexts').outputs
}

/**
 * Renders each runtime context of `assembly` (interpolated unless
 * `interpolate: false`), keeping only non-empty ones, in the assembly's
 * order. Returns a fresh array the caller owns.
 */
export function renderContextSections(
  assembly: Pick<PromptPresentation, 'contexts' | 'variables'>,
): RenderedContextSection[] {
  const outputs = contextOutputs(assembly)
  const out: RenderedContextSection[] = []
  for (let i = 0; i < outputs.length; i++) {
    if (outputs[i] !== '') out.push({ name: assembly.contexts[i]!.name, text: outputs[i]! })
  }
  return out
}

/**
 * Joins rendered context sections into one snapshot: `''` when there are
 * none, else the runtime-context header, a blank line, and the sections'
 * texts separated by blank lines.
 */
export function joinContextSections(sections: readonly { readonly text: string }[]): string {
  if (sections.length === 0) return ''
  const parts = [RUNTIME_CONTEXT_HEADER]
  for (const { text } of sections) parts.push(text)
  return parts.join(PART_SEPARATOR)
}

/** `joinContextSections(renderContextSections(assembly))`, memoized like `renderPrompt`. */
export function renderContextSnapshot(assembly: Pick<PromptPresentation, 'contexts' | 'variables'>): string {
  const record = recordOf(assembly)
  if (record === undefined) return joinContextSections(renderContextSections(assembly))
  const memo = memoized(record, assembly, 'contexts')
  return (memo.joined ??= joinContextSections(memo.outputs.filter((output) => output !== '').map((text) => ({ text }))))
}
