import { signal, type Signal } from '@preact/signals-core'
import { Context } from 'cordis'
import { expect } from 'vitest'
import {
  bindScopeParent,
  createScope,
  HARNESS_IDENTITY_SECTION,
  PERSONA_PREFIX_SECTION,
  PERSONA_SUFFIX_SECTION,
  SECTION_ORDERS,
  SystemPrompt,
  type AssembleContext,
  type PromptPreparation,
  type PromptPresentation,
  type Scope,
  type ScopeKey,
  type ScopeParentBinding,
  type ToolProviderResult,
  type ToolSchema,
} from '../../src/index.js'
import { ReferenceSystemPrompt } from '../reference/index.js'
import { acceptResult, copyAccepted, expectSameRefreshAs, refreshAccepted } from './assembly-acceptance.js'
import {
  attempt,
  type CopyKind,
  expectSame,
  GLOBAL,
  INITIAL_PARENTS,
  SCOPE_NAMES,
  TOOL_NAMES,
  VARIABLE_NAMES,
  type Op,
  type TextSpec,
  type VariableSpec,
  type WorldConfig,
} from './assembly-ops.js'

// The world of one run: a Cordis app with the memoized engine (`systemPrompt`)
// and the recompute-everything oracle (`referencePrompt`) loaded with the same
// config, five scopes minted from a plugin that injects both, and a plain
// model of what is registered where and of the parent links.

type Kind = 'section' | 'context' | 'variable' | 'tools' | 'suppress' | 'listen'

/** One registration as the model sees it, with the disposers of both engines (one for a listener). */
export interface Registration {
  readonly layer: number
  readonly kind: Kind
  readonly name: string
  readonly order: number
  /** `complete: true` on a section, `required: true` on a context, `rewrite` on a listener. */
  readonly flagged: boolean
  readonly disposers: readonly (() => Promise<void> | undefined)[]
  alive: boolean
  /** Calls of its function provider (by either engine); `undefined` for a registration without one. */
  readonly calls: { n: number } | undefined
}

/** An accepted result on both engines; `copied` says how it was last copied (absent: as an engine returned it). */
export type Accepted = { readonly mine: PromptPreparation; readonly theirs: PromptPreparation; readonly copied?: CopyKind }

function schema(name: string): ToolSchema {
  return { name, description: `${name} tool`, parameters: { type: 'object', properties: { [name]: { type: 'string' } } } }
}

/**
 * One run's app, scopes and model. `apply` mirrors an operation on both
 * engines (through the same scope context) and on the model; the properties
 * read both engines and the model afterwards.
 */
export class World {
  readonly app = new Context()
  readonly keys: readonly ScopeKey[] = SCOPE_NAMES.map((name) => ({ name }))
  readonly scopes: (Scope | undefined)[] = SCOPE_NAMES.map(() => undefined)
  readonly bindings: (ScopeParentBinding | undefined)[] = SCOPE_NAMES.map(() => undefined)
  readonly parents: (number | undefined)[] = [...INITIAL_PARENTS]
  readonly registrations: Registration[] = []
  /** Plain (non-signal) state read by function providers: changes nothing the memo could see. */
  readonly cell = { text: '', value: 'v' as string | undefined, tools: 0, boom: false }
  readonly texts: Signal<string>[] = [signal('one'), signal('two {{a}}')]
  readonly values: Signal<string | undefined>[] = [signal<string | undefined>('s0'), signal<string | undefined>(undefined)]
  readonly results: readonly ToolProviderResult[]
  readonly toolSignals: Signal<ToolProviderResult>[]
  /** The last accepted preparation/assembly of each view (index GLOBAL for the global view). */
  readonly accepted: (Accepted | undefined)[] = [...SCOPE_NAMES, 'global'].map(() => undefined)
  minter!: Context

  private constructor(readonly setup: WorldConfig) {
    const schemas = new Map(TOOL_NAMES.map((name) => [name as string, schema(name)]))
    this.results = setup.results.map(({ names, known }) => {
      const result = { schemas: names.map((name) => schemas.get(name) ?? schema(name)) }
      return known === undefined ? result : { ...result, knownNames: known }
    })
    this.toolSignals = [signal(this.results[0]!), signal(this.results[1]!)]
  }

  static async create(setup: WorldConfig): Promise<World> {
    const world = new World(setup)
    const { app, keys } = world
    await app.plugin(SystemPrompt, setup.config)
    // The oracle learns the parent links from the model, never from promptloom's relation.
    const parentOf = (key: ScopeKey): ScopeKey | undefined => {
      const parent = world.parents[keys.indexOf(key)]
      return parent === undefined ? undefined : keys[parent]
    }
    await app.plugin(ReferenceSystemPrompt, { ...setup.config, parentOf })
    await app.inject(['systemPrompt', 'referencePrompt'], (ctx) => {
      world.minter = ctx
    })
    const { config } = setup
    const configured = (name: string, order: number) =>
      world.registrations.push({ layer: GLOBAL, kind: 'section', name, order, flagged: false, disposers: [], alive: true, calls: undefined })
    if (config.includeHarnessIdentity !== false) configured(HARNESS_IDENTITY_SECTION, SECTION_ORDERS.HARNESS_IDENTITY)
    configured(PERSONA_PREFIX_SECTION, SECTION_ORDERS.DEPLOYMENT_PERSONA_PREFIX)
    configured(PERSONA_SUFFIX_SECTION, SECTION_ORDERS.DEPLOYMENT_PERSONA_SUFFIX)
    if (config.includeRuntimeContext === false) {
      world.registrations.push({ layer: GLOBAL, kind: 'suppress', name: '', order: 0, flagged: false, disposers: [], alive: true, calls: undefined })
    }
    INITIAL_PARENTS.forEach((parent, s) => {
      if (parent !== undefined) world.bindings[s] = bindScopeParent(keys[s]!, keys[parent]!)
    })
    SCOPE_NAMES.forEach((_, s) => world.scope(s))
    if (config.toolOrder !== undefined) {
      // A global catalog that knows every generated tool name, so a toolOrder
      // naming them is not an "unregistered tool" in every view (until disposed).
      const catalog = { schemas: [], knownNames: [...TOOL_NAMES] }
      const calls = { n: 0 }
      world.register(GLOBAL, 'tools', '', 0, false, (sp) => sp.tools(() => (calls.n++, catalog)), calls)
    }
    // Every variable starts with a global value, so templates mostly resolve
    // until a registration is disposed or shadowed by one without a value.
    for (const name of VARIABLE_NAMES) world.register(GLOBAL, 'variable', name, 0, false, (sp) => sp.variable(name, name.toUpperCase()))
    for (let v = 0; v <= GLOBAL; v++) await world.apply({ t: 'accept', view: v, prepare: v % 2 === 0 })
    for (const name of ['TOOL_BASH', 'DELIVERABLE_FILE_REFERENCES', 'DEPLOY_NOTES', 'SANDBOX_POLICY', 'TICKET', 'NOPE']) {
      const sp = world.sp as unknown as Record<'getSectionOrder' | 'getContextOrder', (name: string) => number>
      const ref = world.ref as unknown as typeof sp
      for (const getter of ['getSectionOrder', 'getContextOrder'] as const) {
        expectSame(attempt(() => sp[getter](name)), attempt(() => ref[getter](name)), `${getter}("${name}")`)
      }
    }
    return world
  }

  get sp(): SystemPrompt {
    return this.minter.systemPrompt
  }

  get ref(): ReferenceSystemPrompt {
    return this.minter.referencePrompt
  }

  /** The assemble context of view `v`. */
  context(v: number): AssembleContext {
    return v === GLOBAL ? {} : { scope: this.keys[v] }
  }

  /** The live scope `s`, minted again (same key) when it was disposed. */
  scope(s: number): Scope {
    let scope = this.scopes[s]
    if (scope === undefined) {
      const parent = this.parents[s]
      // A bound key minted again with its current parent is accepted (team decision).
      const options = this.bindings[s] !== undefined && parent !== undefined ? { parent: this.keys[parent]! } : {}
      this.scopes[s] = scope = createScope(this.minter, this.keys[s]!, options)
    }
    return scope
  }

  /** `[s, parent, …]` by the model, nearest first; `[]` for the global view. */
  chainOf(v: number): number[] {
    const chain: number[] = []
    for (let at: number | undefined = v === GLOBAL ? undefined : v; at !== undefined; at = this.parents[at]) chain.push(at)
    return chain
  }

  /** Registers the same thing on both engines through layer `at`'s context; both must succeed or fail alike. */
  register(
    at: number,
    kind: Kind,
    name: string,
    order: number,
    flagged: boolean,
    call: (service: Pick<SystemPrompt, 'section' | 'context' | 'variable' | 'tools' | 'suppressRuntimeContext'>) => () => Promise<void> | undefined,
    calls?: { n: number },
  ): void {
    const ctx = at === GLOBAL ? this.minter : this.scope(at).ctx
    const mine = attempt(() => call(ctx.systemPrompt))
    const theirs = attempt(() => call(ctx.referencePrompt))
    expectSame(
      mine.ok ? { ok: true, value: 'registered' } : mine,
      theirs.ok ? { ok: true, value: 'registered' } : theirs,
      `${kind} "${name}" registered in ${at === GLOBAL ? 'the global layer' : SCOPE_NAMES[at]}`,
    )
    if (mine.ok && theirs.ok) {
      this.registrations.push({ layer: at, kind, name, order, flagged, disposers: [mine.value, theirs.value], alive: true, calls })
    }
  }

  #text(spec: TextSpec, calls: { n: number }): string | Signal<string> | ((context: AssembleContext) => string) {
    if (spec.k === 'string') return spec.s
    if (spec.k === 'signal') return this.texts[spec.i]!
    const { cell } = this
    return () => (calls.n++, spec.s + cell.text)
  }

  #variable(
    spec: VariableSpec,
    calls: { n: number },
  ): string | Signal<string | undefined> | ((context: AssembleContext) => string | undefined) {
    if (spec.k === 'string') return spec.s
    if (spec.k === 'signal') return this.values[spec.i]!
    const { cell } = this
    if (spec.mode === 'cell') return () => (calls.n++, cell.value)
    if (spec.mode === 'scope') return (context) => (calls.n++, `in ${(context.scope as { name?: string } | undefined)?.name ?? 'global'}`)
    return () => {
      calls.n++
      if (cell.boom) throw new Error('boom: variable provider failed')
      return 'fine'
    }
  }

  /** Applies one generated operation to both engines and to the model. */
  async apply(op: Op): Promise<void> {
    switch (op.t) {
      case 'section': {
        const calls = { n: 0 }
        const text = this.#text(op.text, calls)
        const input = { name: op.name, order: op.order, text, ...(op.interpolate ? {} : { interpolate: false }), ...(op.complete ? { complete: true } : {}) }
        return this.register(op.at, 'section', op.name, op.order, op.complete, (sp) => sp.section(input), calls)
      }
      case 'context': {
        const calls = { n: 0 }
        const text = this.#text(op.text, calls)
        const input = { name: op.name, order: op.order, text, interpolate: op.interpolate, required: op.required }
        return this.register(op.at, 'context', op.name, op.order, op.required, (sp) => sp.context(input), calls)
      }
      case 'variable': {
        const calls = { n: 0 }
        const source = this.#variable(op.src, calls)
        return this.register(op.at, 'variable', op.name, 0, false, (sp) => sp.variable(op.name, source), calls)
      }
      case 'tools': {
        const { cell, results } = this
        const calls = { n: 0 }
        const provider =
          op.src.k === 'signal'
            ? this.toolSignals[op.src.i % this.toolSignals.length]!
            : () => (calls.n++, results[(op.src.i + cell.tools) % results.length]!)
        return this.register(op.at, 'tools', '', 0, false, (sp) => sp.tools(provider), calls)
      }
      case 'suppress':
        return this.register(op.at, 'suppress', '', 0, false, (sp) => sp.suppressRuntimeContext())
      case 'listen': {
        // One listener serves both engines: Cordis dispatches both waterfalls on
        // the same app. It adds a context and, with `rewrite`, hands back a copy
        // with the sections reversed and variable c overridden (the waterfall's
        // result is authoritative; a complete section is restored afterwards).
        const ctx = op.at === GLOBAL ? this.minter : this.scope(op.at).ctx
        const text = `noted by ${op.at === GLOBAL ? 'global' : SCOPE_NAMES[op.at]}`
        const dispose = ctx.on(
          'system-prompt/assemble',
          async (presentation: PromptPresentation, _context: AssembleContext, next: () => Promise<PromptPresentation>) => {
            presentation.contexts.push({ name: op.name, text })
            const result = await next()
            // A listener returning malformed items must fail the call on both engines, naming the index.
            if (op.bad === 'section') return { ...result, sections: [...result.sections, null as never] }
            if (op.bad === 'context') return { ...result, contexts: [...result.contexts, { name: op.name } as never] }
            if (!op.rewrite) return result
            return { ...result, sections: [...result.sections].reverse(), variables: { ...result.variables, c: text } }
          },
        )
        this.registrations.push({
          layer: op.at,
          kind: 'listen',
          name: op.name,
          order: 0,
          flagged: op.rewrite,
          disposers: [async () => void dispose()],
          alive: true,
          calls: undefined,
        })
        return
      }
      case 'dispose': {
        const disposable = this.registrations.filter((r) => r.disposers.length > 0)
        if (disposable.length === 0) return
        // Dead registrations stay pickable: a stale disposer must be a no-op.
        const registration = disposable[op.pick % disposable.length]!
        for (const dispose of registration.disposers) await dispose()
        registration.alive = false
        return
      }
      case 'disposeScope': {
        const scope = this.scopes[op.s]
        if (scope === undefined) return
        await scope.dispose()
        this.scopes[op.s] = undefined
        for (const r of this.registrations) if (r.layer === op.s) r.alive = false
        return
      }
      case 'remint':
        this.scope(op.s)
        return
      case 'setText':
        this.texts[op.i]!.value = op.s
        return
      case 'setValue':
        this.values[op.i]!.value = op.v
        return
      case 'setTools':
        this.toolSignals[op.i]!.value = this.results[op.r % this.results.length]!
        return
      case 'setCell':
        Object.assign(this.cell, { text: op.text, value: op.value, tools: op.tools, boom: op.boom })
        return
      case 'rebind':
        return this.rebind(op.s, op.target === GLOBAL ? undefined : op.target)
      case 'accept':
        return acceptResult(this, op.view, op.prepare)
      case 'refresh':
        return refreshAccepted(this, op.view)
      case 'copy':
        return copyAccepted(this, op.view, op.how)
      case 'refreshAs':
        return expectSameRefreshAs(this, op.view, op.as)
      case 'mutateTool': {
        // In place, on the object the providers keep returning (SPEC §2 Reliability).
        const pool = this.results.filter((result) => result.schemas.length > 0)
        const result = pool[op.r % Math.max(pool.length, 1)]
        if (result === undefined) return
        const schema = result.schemas[op.k % result.schemas.length] as { name: string; description: string; parameters: object }
        if (op.how === 'rename') schema.name = op.to
        else if (op.how === 'description') schema.description = `${op.to} tool, revised`
        else schema.parameters = { type: 'object', properties: { [op.to]: { type: 'number' } } }
        return
      }
      case 'teardownAssemble':
        return this.teardownAssemble(op.s)
    }
  }

  /**
   * Disposes scope `s` while a `system-prompt/change` listener re-assembles
   * it on every retraction (SPEC §2 Reliability: views a listener creates
   * during teardown retain nothing). The checks after this step then compare
   * the disposed scope's key against the oracle.
   */
  async teardownAssemble(s: number): Promise<void> {
    const scope = this.scopes[s]
    if (scope === undefined) return
    const pending: Promise<unknown>[] = []
    const stop = this.app.on('system-prompt/change', () => {
      pending.push(this.sp.assemble(this.context(s)).catch(() => undefined))
    })
    await scope.dispose()
    stop()
    await Promise.all(pending)
    this.scopes[s] = undefined
    for (const r of this.registrations) if (r.layer === s) r.alive = false
  }

  /** Re-links scope `s` (binding it first if it never was); a link into its own subtree must throw "cycle" and change nothing. */
  rebind(s: number, parent: number | undefined): void {
    const binding = this.bindings[s]
    if (binding === undefined && parent === undefined) return
    const key = this.keys[s]!
    const link = (): void => {
      const target = parent === undefined ? undefined : this.keys[parent]!
      if (binding !== undefined) binding.rebind(target)
      else this.bindings[s] = bindScopeParent(key, target!)
    }
    if (parent !== undefined && this.chainOf(parent).includes(s)) {
      expect(link, `linking ${SCOPE_NAMES[s]} under its descendant ${SCOPE_NAMES[parent]}`).toThrow(/cycle/)
    } else {
      link()
      this.parents[s] = parent
    }
  }
}

