import { Context } from 'cordis'
import {
  createScope,
  HARNESS_IDENTITY_SECTION,
  PERSONA_PREFIX_SECTION,
  PERSONA_SUFFIX_SECTION,
  SystemPrompt,
  type AssembleContext,
  type PromptPreparation,
  type PromptPresentation,
  type Scope,
  type SystemPromptConfig,
  type ToolSchema,
} from '../../src/index.js'

// Shared fixtures of the SystemPrompt integration tests (test/system-prompt.*.test.ts).

/** Config that registers no identity text: assemblies hold only the two empty persona sections. */
export const BARE: SystemPromptConfig = { includeHarnessIdentity: false }

/** A root app with the SystemPrompt plugin loaded. */
export async function mount(config?: SystemPromptConfig): Promise<Context> {
  const app = new Context()
  await app.plugin(SystemPrompt, config)
  return app
}

/** The scope keys of `family`: preset ← agent ← sub-agent, and agent-2 beside agent under preset. */
export interface FamilyKeys {
  readonly preset: { readonly name: 'preset' }
  readonly agent: { readonly name: 'agent' }
  readonly sub: { readonly name: 'sub-agent' }
  readonly agent2: { readonly name: 'agent-2' }
}

/** Mints preset → agent → sub-agent plus a sibling agent-2 from a plugin that injects systemPrompt. */
export async function family(app: Context): Promise<{ keys: FamilyKeys; scopes: Record<keyof FamilyKeys, Scope> }> {
  const keys: FamilyKeys = {
    preset: { name: 'preset' },
    agent: { name: 'agent' },
    sub: { name: 'sub-agent' },
    agent2: { name: 'agent-2' },
  }
  let scopes!: Record<keyof FamilyKeys, Scope>
  await app.inject(['systemPrompt'], (ctx) => {
    scopes = {
      preset: createScope(ctx, keys.preset),
      agent: createScope(ctx, keys.agent, { parent: keys.preset }),
      sub: createScope(ctx, keys.sub, { parent: keys.agent }),
      agent2: createScope(ctx, keys.agent2, { parent: keys.preset }),
    }
  })
  return { keys, scopes }
}

/** Mints one scope (optionally under `parent`) from a plugin that injects systemPrompt. */
export async function mintScope(app: Context, key: object, parent?: object): Promise<Scope> {
  let scope!: Scope
  await app.inject(['systemPrompt'], (ctx) => {
    scope = createScope(ctx, key, parent === undefined ? {} : { parent })
  })
  return scope
}

/** A small, plain tool schema. */
export function tool(name: string): ToolSchema {
  return { name, description: `${name} tool`, parameters: { type: 'object', properties: { path: { type: 'string' } } } }
}

const CONFIG_SECTIONS = new Set<string>([HARNESS_IDENTITY_SECTION, PERSONA_PREFIX_SECTION, PERSONA_SUFFIX_SECTION])

/** The sections a test registered, with the always-present config sections left out. */
export function ownSections<T extends { name: string }>(assembly: { sections: T[] }): T[] {
  return assembly.sections.filter((section) => !CONFIG_SECTIONS.has(section.name))
}

export function names(items: readonly { name: string }[]): string[] {
  return items.map((item) => item.name)
}

/** The label of a scope key as an event log shows it. */
export function labelOf(scope: object | undefined): string {
  return (scope as { name?: string } | undefined)?.name ?? 'global'
}

export type PrepareListener = (
  preparation: PromptPreparation,
  context: AssembleContext,
  next: () => Promise<PromptPreparation>,
) => Promise<PromptPreparation>

export type AssembleListener = (
  presentation: PromptPresentation,
  context: AssembleContext,
  next: () => Promise<PromptPresentation>,
) => Promise<PromptPresentation>
