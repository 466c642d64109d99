import type { ReadonlySignal } from '@preact/signals-core'
import { trackedSignalOf } from '../signals/is-signal.js'
import { AnonymousEntries } from '../scope/anonymous-entries.js'
import { NamedEntries } from '../scope/named-entries.js'
import type { ScopeKey } from '../scope/scope-key.js'
import { describeValue, entryLabel, inScope, layerPhrase } from './errors.js'
import { VARIABLE_NAME } from './template.js'
import type { NamedSource, SectionSource } from './provenance.js'
import type {
  AssembleContext,
  PromptContext,
  PromptSection,
  Stability,
  ToolProvider,
  ToolProviderResult,
  VariableSource,
} from './types.js'

/** Where an entry lives: the global layer or a scope's own layer. */
export type LayerRef = 'global' | ScopeKey

/** The layer of an entry registered in `scope` (`'global'` for the global layer). */
export function layerOf(scope: ScopeKey | undefined): LayerRef {
  return scope === undefined ? 'global' : scope
}

/** The scope key of `layer`; `undefined` for the global layer or an unknown one. */
export function scopeOfLayer(layer: LayerRef | undefined): ScopeKey | undefined {
  return layer === undefined || layer === 'global' ? undefined : layer
}

/** `prompt section "intro"`, plus ` in scope "agent-1"` when `layer` is a scope's. */
export function labelInLayer(kind: string, name: string, layer: LayerRef | undefined): string {
  return entryLabel(kind, name, scopeOfLayer(layer))
}

/**
 * How an entry's value is obtained on each assembly: a fixed string (never
 * re-evaluated), a signal (read, no provider call), or a function provider
 * (called once per assembly, as its contract says).
 */
export const SourceKind = { Static: 0, Signal: 1, Provider: 2 } as const
/** One of `SourceKind`'s values. */
export type SourceKind = (typeof SourceKind)[keyof typeof SourceKind]

/** A validated value source, flattened for the assembly loop. */
export interface Source<T> {
  readonly kind: SourceKind
  readonly value: T | undefined
  readonly signal: ReadonlySignal<unknown> | undefined
  readonly fn: ((context: AssembleContext) => unknown) | undefined
}

interface EntryBase<T> extends Source<T> {
  readonly name: string
  /** The scope whose layer holds the entry; `undefined` for the global layer. */
  readonly scope: ScopeKey | undefined
  /**
   * What kind of entry it is, for `labelOf`: `prompt section`, `runtime
   * context` or `prompt variable`. The label itself is built only when a
   * message needs it, because scope keys are opaque.
   */
  readonly noun: string
  readonly stability: Stability | undefined
}

/** A runtime context or variable entry: its fields, plus how provenance lists it. */
interface NamedEntryBase<T> extends EntryBase<T> {
  /** This entry as an assembly's provenance lists it, made once at registration and shared by every plan holding it. */
  readonly source: NamedSource
}

/** A registered section. */
export interface SectionEntry extends EntryBase<string> {
  /** This entry as an assembly's provenance lists it, made once at registration and shared by every plan holding it. */
  readonly source: SectionSource
  readonly order: number
  readonly interpolate: boolean
  readonly complete: boolean
  readonly required: boolean
  readonly cacheBreakpoint: boolean
  readonly priority: number
}

/** A registered runtime context. */
export interface ContextEntry extends NamedEntryBase<string> {
  readonly order: number
  readonly interpolate: boolean
  readonly required: boolean
}

/** A registered prompt variable. */
export type VariableEntry = NamedEntryBase<string | undefined>

/** A registered tool provider. */
export interface ToolEntry {
  readonly kind: typeof SourceKind.Signal | typeof SourceKind.Provider
  readonly signal: ReadonlySignal<unknown> | undefined
  readonly fn: ((context: AssembleContext) => unknown) | undefined
  /** Labelled at assembly, by its position in the layer (`tool provider #1 in scope "agent-1"`). */
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
    // Labelled when the error is built: the key is read only then.
    const duplicate = (kind: string, remedy: string) => (name: string) =>
      new Error(`${kind} "${name}" is already registered ${layerPhrase(scope)}; ${remedy}`)
    const remedy =
      scope === undefined
        ? 'dispose the earlier registration first, or register it through a scope to shadow it there'
        : 'dispose the earlier registration first, or register it in a nested scope to shadow it'
    this.sections = new NamedEntries(duplicate('prompt section', remedy))
    this.contexts = new NamedEntries(duplicate('runtime context', remedy))
    this.variables = new NamedEntries(duplicate('prompt variable', remedy))
  }

  isEmpty(): boolean {
    return (
      this.sections.isEmpty() &&
      this.contexts.isEmpty() &&
      this.variables.isEmpty() &&
      this.tools.isEmpty() &&
      this.suppressors.isEmpty()
    )
  }
}

const STABILITIES: readonly Stability[] = ['static', 'session', 'volatile']

function requireName(kind: string, name: unknown, scope: ScopeKey | undefined): string {
  if (typeof name === 'string' && name !== '') return name
  throw new TypeError(`${kind} name${inScope(scope)} must be a non-empty string (got ${describeValue(name)})`)
}

/** An entry's label, built only when an error needs it (see `labelOf`). */
type Label = () => string

function requireOrder(label: Label, order: unknown): number {
  if (typeof order === 'number' && Number.isFinite(order)) return order
  throw new TypeError(`${label()} order must be a finite number (got ${describeValue(order)})`)
}

function optionalPriority(label: Label, priority: unknown): number {
  if (priority === undefined) return 0
  if (typeof priority === 'number' && Number.isFinite(priority)) return priority
  throw new TypeError(`${label()} priority must be a finite number (got ${describeValue(priority)}); higher priorities are withheld last by a token budget`)
}

function optionalFlag(label: Label, key: string, value: unknown): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value
  throw new TypeError(`${label()} option "${key}" must be a boolean (got ${describeValue(value)})`)
}

function optionalStability(label: Label, value: unknown): Stability | undefined {
  if (value === undefined || STABILITIES.includes(value as Stability)) return value as Stability | undefined
  throw new TypeError(
    `${label()} stability must be one of ${STABILITIES.map((s) => `"${s}"`).join(', ')} (got ${describeValue(value)})`,
  )
}

function toSource<T>(label: Label, what: string, value: unknown): Source<T> {
  if (typeof value === 'string') return { kind: SourceKind.Static, value: value as T, signal: undefined, fn: undefined }
  const signal = trackedSignalOf(value, () => `${label()} ${what}`)
  if (signal !== undefined) return { kind: SourceKind.Signal, value: undefined, signal, fn: undefined }
  if (typeof value === 'function') {
    return {
      kind: SourceKind.Provider,
      value: undefined,
      signal: undefined,
      fn: value as (context: AssembleContext) => unknown,
    }
  }
  throw new TypeError(`${label()} ${what} must be a string, a signal or a function (got ${describeValue(value)})`)
}

function requireObject(kind: string, input: unknown): Record<string, unknown> {
  if (typeof input === 'object' && input !== null) return input as Record<string, unknown>
  throw new TypeError(`${kind} must be an object with name, order and text (got ${describeValue(input)})`)
}

/** The fields sections and contexts share, validated in the same order. */
function orderedFields(kind: string, input: unknown, scope: ScopeKey | undefined) {
  const raw = requireObject(kind, input)
  const name = requireName(kind, raw.name, scope)
  const label: Label = () => entryLabel(kind, name, scope)
  return {
    raw,
    name,
    label,
    order: requireOrder(label, raw.order),
    source: toSource<string>(label, 'text', raw.text),
    interpolate: optionalFlag(label, 'interpolate', raw.interpolate) !== false,
    stability: optionalStability(label, raw.stability),
  }
}

// Entries are plain data, built as explicit literals; `labelOf` builds a label only when a message needs it.

const SECTION = 'prompt section'
const CONTEXT = 'runtime context'
const VARIABLE = 'prompt variable'

/**
 * The entry named for error and warning messages: `prompt section "intro" in
 * scope "agent-1"`. The only place an entry's scope key is read.
 */
export function labelOf(entry: { readonly noun: string; readonly name: string; readonly scope: ScopeKey | undefined }): string {
  return entryLabel(entry.noun, entry.name, entry.scope)
}

/** Validates a `section()` argument; throws a `TypeError` naming the entry. */
export function toSectionEntry(input: PromptSection, scope: ScopeKey | undefined): SectionEntry {
  const { raw, name, label, order, source, interpolate, stability } = orderedFields(SECTION, input, scope)
  const complete = optionalFlag(label, 'complete', raw.complete) === true
  const required = optionalFlag(label, 'required', raw.required) === true
  const cacheBreakpoint = optionalFlag(label, 'cacheBreakpoint', raw.cacheBreakpoint) === true
  const priority = optionalPriority(label, raw.priority)
  const { kind, value, signal, fn } = source
  const layer = layerOf(scope)
  return {
    name,
    scope,
    noun: SECTION,
    source: { name, layer, order, stability, interpolate, complete, required, cacheBreakpoint, priority },
    order,
    kind,
    value,
    signal,
    fn,
    interpolate,
    complete,
    required,
    cacheBreakpoint,
    priority,
    stability,
  }
}

/** Validates a `context()` argument; throws a `TypeError` naming the entry. */
export function toContextEntry(input: PromptContext, scope: ScopeKey | undefined): ContextEntry {
  const { raw, name, label, order, source, interpolate, stability } = orderedFields(CONTEXT, input, scope)
  const required = optionalFlag(label, 'required', raw.required) === true
  const { kind, value, signal, fn } = source
  const named: NamedSource = { name, layer: layerOf(scope), stability }
  return { name, scope, noun: CONTEXT, source: named, order, kind, value, signal, fn, interpolate, required, stability }
}

/** Validates a `variable()` call; throws a `TypeError` naming the variable. */
export function toVariableEntry(
  name: string,
  provider: VariableSource,
  stability: unknown,
  scope: ScopeKey | undefined,
): VariableEntry {
  if (typeof name !== 'string' || !VARIABLE_NAME.test(name)) {
    throw new TypeError(
      `invalid prompt variable name ${typeof name === 'string' ? `"${name}"` : describeValue(name)}${inScope(scope)}; names match /^[a-z][a-z0-9_]*$/ (lowercase letter first, then lowercase letters, digits or _)`,
    )
  }
  const label: Label = () => entryLabel(VARIABLE, name, scope)
  const { kind, value, signal, fn } = toSource<string | undefined>(label, 'value', provider)
  const declared = optionalStability(label, stability)
  const named: NamedSource = { name, layer: layerOf(scope), stability: declared }
  return { name, scope, noun: VARIABLE, source: named, kind, value, signal, fn, stability: declared }
}

/** Validates a `tools()` argument; throws a `TypeError` naming the provider. */
export function toToolEntry(provider: ToolProvider, scope: ScopeKey | undefined): ToolEntry {
  const signal = trackedSignalOf(provider, () => `tool provider${inScope(scope)}`)
  if (signal !== undefined) return { kind: SourceKind.Signal, signal, fn: undefined, scope }
  if (typeof provider === 'function') {
    return { kind: SourceKind.Provider, signal: undefined, fn: provider as (context: AssembleContext) => ToolProviderResult, scope }
  }
  const label = `tool provider${inScope(scope)}`
  throw new TypeError(`${label} must be a function or a signal of { schemas, knownNames? } (got ${describeValue(provider)})`)
}
