import { PART_SEPARATOR } from '../render/rendered-prompt.js'
import type { AgentModel, StepPart } from './report-model.js'

/*
 * Which agents share which parts (section name and text) of their latest prompts: a prefix tree whose runs
 * shared by the same agents merge into one node, and the scoped sections that split an agent's prompt from
 * its siblings' (SPEC §5 'shared-prefix-split') with the tokens each costs.
 *
 *   identity · persona ─┬─ tools · suffix(1)      agent-1
 *   (agent-1, agent-3)  └─ plan · tools · …       agent-3
 *   identity · persona' ── …                      agent-2
 */

/**
 * A run of parts that exactly `agents` share: `chars` with separators, `tokens` (absent when one is unknown; `estimated`
 * from tokens per character) and `prefixTokens`, from the prompt's start through the run.
 */
export interface TreeNode {
  readonly parts: readonly ReturnType<typeof treePart>[]
  readonly agents: readonly string[]
  readonly chars: number
  readonly tokens: number | undefined
  readonly prefixTokens: number | undefined
  readonly estimated: boolean
  readonly children: readonly TreeNode[]
}

type Trie = Readonly<{ part: StepPart; agents: string[]; children: Trie[]; ratio: number | undefined }>

const keyOf = (part: StepPart): string => `${part.name}\u0000${part.text}`

const tokensOf = (part: StepPart, ratio: number | undefined): number | undefined =>
  part.tokens ?? (ratio === undefined ? undefined : Math.round(part.text.length * ratio))

export const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0)

/** The sum of `counts`, or `undefined` when one is unknown. */
const total = (counts: readonly (number | undefined)[]): number | undefined =>
  counts.includes(undefined) ? undefined : sum(counts as number[])

/** The prefix tree of the agents' latest prompts; roots in the order the agents first reach them. */
export function prefixTree(agents: readonly AgentModel['tree'][]): TreeNode[] {
  const roots: Trie[] = []
  for (const agent of agents) {
    let level = roots
    for (const part of agent.parts) {
      let node = level.find((candidate) => keyOf(candidate.part) === keyOf(part))
      if (node === undefined) level.push((node = { part, agents: [], children: [], ratio: agent.tokensPerChar }))
      node.agents.push(agent.name)
      level = node.children
    }
  }
  return roots.map((root) => compress(root, 0))
}

function treePart({ part, ratio }: Trie) {
  const tokens = tokensOf(part, ratio)
  return { name: part.name, layer: part.layer, chars: part.text.length, tokens, estimated: part.tokens === undefined && tokens !== undefined }
}

/** Merges `node` with its only child while that child has the same agents. */
function compress(node: Trie, before: number | undefined): TreeNode {
  const run = [treePart(node)]
  let last = node
  while (last.children.length === 1 && last.children[0]!.agents.length === last.agents.length) {
    last = last.children[0]!
    run.push(treePart(last))
  }
  const chars = sum(run.map((part) => part.chars)) + PART_SEPARATOR.length * (run.length - 1)
  const tokens = total(run.map((part) => part.tokens))
  const prefixTokens = tokens === undefined || before === undefined ? undefined : before + tokens
  const children = last.children.map((child) => compress(child, prefixTokens))
  return { parts: run, agents: node.agents, chars, tokens, prefixTokens, estimated: run.some((part) => part.estimated), children }
}

/**
 * The scoped sections (layer neither `'global'` nor unknown) before a global part in an agent's latest prompt.
 * `splits`: those some siblings do not send (with this text), with their `cost`, the later parts a sibling also
 * sends (what the agent could otherwise share). `sharedByAll`: those every agent sends alike (a preset's, say).
 */
export function prefixSplits(agents: readonly AgentModel['tree'][]) {
  const sends = agents.map((agent) => new Set(agent.parts.map(keyOf)))
  const sharedByAll = new Map<string, { readonly section: string; readonly layer: string }>()
  const splits = agents.flatMap((agent, a) =>
    agent.parts.flatMap((part, i) => {
      const before = agent.parts.slice(i + 1).find((later) => later.layer === 'global')
      if (part.layer === undefined || part.layer === 'global' || before === undefined) return []
      const siblings = agents.flatMap((_, b) => (b !== a && !sends[b]!.has(keyOf(part)) ? [b] : []))
      if (siblings.length === 0) {
        sharedByAll.set(`${part.name}\u0000${part.layer}`, { section: part.name, layer: part.layer })
        return []
      }
      const sharable = agent.parts.slice(i + 1).filter((later) => siblings.some((b) => sends[b]!.has(keyOf(later))))
      const cost = {
        chars: sum(sharable.map((later) => later.text.length)),
        tokens: total(sharable.map((later) => tokensOf(later, agent.tokensPerChar))),
        estimated: sharable.some((later) => later.tokens === undefined) && agent.tokensPerChar !== undefined,
      }
      const names = siblings.map((b) => agents[b]!.name)
      return [{ agent: agent.name, section: part.name, layer: part.layer, before: before.name, siblings: names, cost }]
    }),
  )
  return { splits, sharedByAll: [...sharedByAll.values()] }
}
