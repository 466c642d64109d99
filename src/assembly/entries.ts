import type { ReadonlySignal } from '@preact/signals-core'
import { trackedSignalOf } from '../signals/tracked.js'
import { AnonymousEntries, NamedEntries } from '../scope/layer-entries.js'
import type { ScopeKey } from '../scope/scope-key.js'
import { describeValue, entryLabel, inScope, layerPhrase, optionError } from './errors.js'
import { VARIABLE_NAME } from './template.js'
import type { NamedSource, SectionSource } from './provenance.js'
import type { AssembleContext, PromptContext, PromptSection, Stability, ToolProvider, VariableSource } from './types.js'

/** Where an entry lives: the global layer or a scope's own layer. */
export type LayerRef = 'global' | ScopeKey

/** The layer of an entry registered in `scope` (`'global'` for the global layer). */
export function layerOf(scope: ScopeKey | undefined): LayerRef {
  return scope === undefined ? 'global' : scope
}

/** How an entry's value is obtained on each assembly: fixed, read from a signal, or by calling a provider once. */
export const SourceKind = { Static: 0, Signal: 1, Provider: 2 } as const
export type SourceKind = (typeof SourceKind)[keyof typeof SourceKind]

/** A validated value source, flattened for the assembly loop. */
export interface Source<T> {
  readonly kind: SourceKind
  readonly value: T | undefined
  readonly signal: ReadonlySignal<unknown> | undefined
  readonly fn: Provider | undefined
}

type Provider = (context: AssembleContext) => unknown

interface EntryBase<T, S = NamedSource> extends Source<T> {
  readonly name: string
  /** `undefined` for the global layer. */
  readonly scope: ScopeKey | undefined
  /** `prompt section`, `runtime context` or `prompt variable`, for `labelOf`. */
  readonly noun: string
  readonly stability: Stability | undefined
  /** The entry's provenance record, made once and shared by every plan. */
  readonly source: S
}

/** A registered section, with its declared options. */
export interface SectionEntry extends EntryBase<string, SectionSource>, Omit<SectionSource, 'layer'> {}
/** A registered runtime context, with its declared options. */
export interface ContextEntry extends EntryBase<string>, Pick<SectionEntry, 'order' | 'interpolate' | 'required'> {}
/** A registered variable and its value source. */
export interface VariableEntry extends EntryBase<string | undefined> {}

/** A registered tool provider, labelled at assembly by its position in its layer. */
export interface ToolEntry extends Pick<Source<never>, 'signal' | 'fn'> {
  readonly kind: typeof SourceKind.Signal | typeof SourceKind.Provider
  readonly scope: ScopeKey | undefined
}

/** Everything one scope (or the global layer) registered. */
export class PromptLayer {
  readonly sections: NamedEntries<SectionEntry>
  readonly contexts: NamedEntries<ContextEntry>
  readonly variables: NamedEntries<VariableEntry>
  readonly tools = new AnonymousEntries<ToolEntry>()
  readonly suppressors = new AnonymousEntries<true>()

  constructor(scope: ScopeKey | undefined) {
    const shadow = scope === undefined ? 'through a scope to shadow it there' : 'in a nested scope to shadow it'
    const duplicate = (kind: string) => (name: string) =>
      new Error(`${kind} "${name}" is already registered ${layerPhrase(scope)}; dispose the earlier registration first, or register it ${shadow}`)
    this.sections = new NamedEntries(duplicate(SECTION))
    this.contexts = new NamedEntries(duplicate(CONTEXT))
    this.variables = new NamedEntries(duplicate(VARIABLE))
  }

  isEmpty(): boolean {
    return [this.sections, this.contexts, this.variables, this.tools, this.suppressors].every((entries) => entries.isEmpty())
  }
}

const SECTION = 'prompt section'
const CONTEXT = 'runtime context'
const VARIABLE = 'prompt variable'
const STABILITIES: readonly Stability[] = ['static', 'session', 'volatile']
const FLAGS = ['complete', 'required', 'cacheBreakpoint'] as const

/** An entry's label, built only when an error needs it (scope keys are opaque). */
type Label = () => string

function requireFinite(label: Label, key: 'order' | 'priority', value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value
  const remedy = key === 'priority' ? '; higher priorities are withheld last by a token budget' : ''
  throw new TypeError(`${label()} ${key} must be a finite number (got ${describeValue(value)})${remedy}`)
}

/** `value === true`, once it is known to be a boolean or absent. */
function optionalFlag(label: Label, key: string, value: unknown): boolean {
  if (value === undefined || typeof value === 'boolean') return value === true
  throw optionError(label(), key, 'a boolean', value)
}

function optionalStability(label: Label, value: unknown): Stability | undefined {
  if (value === undefined || STABILITIES.includes(value as Stability)) return value as Stability | undefined
  const known = STABILITIES.map((s) => `"${s}"`).join(', ')
  throw new TypeError(`${label()} stability must be one of ${known} (got ${describeValue(value)})`)
}

function toSource<T>(label: Label, what: string, value: unknown): Source<T> {
  if (typeof value === 'string') return { kind: SourceKind.Static, value: value as T, signal: undefined, fn: undefined }
  const signal = trackedSignalOf(value, () => `${label()} ${what}`)
  if (signal !== undefined) return { kind: SourceKind.Signal, value: undefined, signal, fn: undefined }
  if (typeof value === 'function') return { kind: SourceKind.Provider, value: undefined, signal: undefined, fn: value as Provider }
  throw new TypeError(`${label()} ${what} must be a string, a signal or a function (got ${describeValue(value)})`)
}

/** The fields sections and contexts share, validated in the same order. */
function orderedFields(kind: string, input: unknown, scope: ScopeKey | undefined) {
  if (typeof input !== 'object' || input === null) {
    throw new TypeError(`${kind} must be an object with name, order and text (got ${describeValue(input)})`)
  }
  const raw = input as Record<string, unknown>
  const name = raw.name
  if (typeof name !== 'string' || name === '') {
    throw new TypeError(`${kind} name${inScope(scope)} must be a non-empty string (got ${describeValue(name)})`)
  }
  const label: Label = () => entryLabel(kind, name, scope)
  return {
    raw,
    name,
    label,
    order: requireFinite(label, 'order', raw.order),
    source: toSource<string>(label, 'text', raw.text),
    interpolate: raw.interpolate === undefined || optionalFlag(label, 'interpolate', raw.interpolate),
    stability: optionalStability(label, raw.stability),
  }
}

/** The entry named for messages: `prompt section "intro" in scope "agent-1"`. The only place its scope key is read. */
export function labelOf(entry: { readonly noun: string; readonly name: string; readonly scope: ScopeKey | undefined }): string {
  return entryLabel(entry.noun, entry.name, entry.scope)
}

/** Validates a `section()` argument; throws a `TypeError` naming the entry. */
export function toSectionEntry(input: PromptSection, scope: ScopeKey | undefined): SectionEntry {
  const { raw, name, label, order, source, interpolate, stability } = orderedFields(SECTION, input, scope)
  const [complete, required, cacheBreakpoint] = FLAGS.map((key) => optionalFlag(label, key, raw[key]))
  const priority = raw.priority === undefined ? 0 : requireFinite(label, 'priority', raw.priority)
  const record: SectionSource = { name, layer: layerOf(scope), order, stability, interpolate, complete, required, cacheBreakpoint, priority }
  return { name, scope, noun: SECTION, source: record, order, ...source, interpolate, complete, required, cacheBreakpoint, priority, stability }
}

/** Validates a `context()` argument; throws a `TypeError` naming the entry. */
export function toContextEntry(input: PromptContext, scope: ScopeKey | undefined): ContextEntry {
  const { raw, name, label, order, source, interpolate, stability } = orderedFields(CONTEXT, input, scope)
  const required = optionalFlag(label, 'required', raw.required)
  const record: NamedSource = { name, layer: layerOf(scope), stability }
  return { name, scope, noun: CONTEXT, source: record, order, ...source, interpolate, required, stability }
}

/** Validates a `variable()` call; throws a `TypeError` naming the variable. */
export function toVariableEntry(name: string, provider: VariableSource, stability: unknown, scope: ScopeKey | undefined): VariableEntry {
  if (typeof name !== 'string' || !VARIABLE_NAME.test(name)) {
    throw new TypeError(
      `invalid prompt variable name ${typeof name === 'string' ? `"${name}"` : describeValue(name)}${inScope(scope)}; names match /^[a-z][a-z0-9_]*$/ (lowercase letter first, then lowercase letters, digits or _)`,
    )
  }
  const label: Label = () => entryLabel(VARIABLE, name, scope)
  const source = toSource<string | undefined>(label, 'value', provider)
  const declared = optionalStability(label, stability)
  const record: NamedSource = { name, layer: layerOf(scope), stability: declared }
  return { name, scope, noun: VARIABLE, source: record, ...source, stability: declared }
}

/** Validates a `tools()` argument; throws a `TypeError` naming the provider. */
export function toToolEntry(provider: ToolProvider, scope: ScopeKey | undefined): ToolEntry {
  const label = () => `tool provider${inScope(scope)}`
  const signal = trackedSignalOf(provider, label)
  if (signal !== undefined) return { kind: SourceKind.Signal, signal, fn: undefined, scope }
  if (typeof provider === 'function') return { kind: SourceKind.Provider, signal: undefined, fn: provider as Provider, scope }
  throw new TypeError(`${label()} must be a function or a signal of { schemas, knownNames? } (got ${describeValue(provider)})`)
}
