import type { StepPart } from './replayed-step.js'

/**
 * Which agents share which parts of their latest prompts: a prefix tree over
 * the parts (a part is its section name and text), with runs of parts shared
 * by the same agents merged into one node, and the scoped sections that split
 * an agent's prompt from its siblings' (SPEC §5 'shared-prefix-split'), with
 * the tokens each costs. Plain data for the report.
 *
 *   identity · persona ─┬─ tools · suffix(1)      agent-1
 *   (agent-1, agent-3)  └─ plan · tools · …       agent-3
 *   identity · persona' ── …                      agent-2
 */

/** One agent's latest prompt: its parts (one holding the whole prompt when the log has no part lengths). */
export interface TreeAgent {
  readonly name: string
  readonly parts: readonly StepPart[]
  /** Tokens per character of its latest prompt, for estimates when a part's count is not logged. */
  readonly tokensPerChar: number | undefined
}

/** A part in the tree; its `tokens` are logged, or `estimated` from an agent's tokens per character. */
export interface TreePart {
  readonly name: string
  readonly layer: string | undefined
  readonly chars: number
  readonly tokens: number | undefined
  readonly estimated: boolean
}

/**
 * A run of consecutive parts that exactly `agents` share (in report order): its
 * characters with the separators between parts, its tokens (absent when a count is
 * unknown) and `prefixTokens`, the tokens from the start of the prompt through it.
 */
export interface TreeNode {
  readonly parts: readonly TreePart[]
  readonly agents: readonly string[]
  readonly chars: number
  readonly tokens: number | undefined
  readonly prefixTokens: number | undefined
  readonly estimated: boolean
  readonly children: readonly TreeNode[]
}

/**
 * A scoped section ordered before global section `before` in an agent's latest
 * prompt, which `siblings` do not send (with this text); `cost` counts the parts
 * after it that some sibling also sends: what the agent could otherwise share.
 */
export interface PrefixSplit {
  readonly agent: string
  readonly section: string
  readonly layer: string
  readonly before: string
  readonly siblings: readonly string[]
  readonly cost: { readonly chars: number; readonly tokens: number | undefined; readonly estimated: boolean }
}

/** A scoped section before a global one that every agent here sends alike (a preset's, say): no cost among these logs. */
export interface SharedScopedSection {
  readonly section: string
  readonly layer: string
}

const SEPARATOR_CHARS = 2

interface Trie {
  readonly part: StepPart
  readonly agents: string[]
  readonly children: Trie[]
  readonly ratio: number | undefined
}

const keyOf = (part: StepPart): string => `${part.name}\u0000${part.text}`

const tokensOf = (part: StepPart, ratio: number | undefined): number | undefined =>
  part.tokens ?? (ratio === undefined ? undefined : Math.round(part.text.length * ratio))

/** The prefix tree of the agents' latest prompts; roots in the order the agents first reach them. */
export function prefixTree(agents: readonly TreeAgent[]): TreeNode[] {
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

function treePart({ part, ratio }: Trie): TreePart {
  const tokens = tokensOf(part, ratio)
  return { name: part.name, layer: part.layer, chars: part.text.length, tokens, estimated: part.tokens === undefined && tokens !== undefined }
}

/** Merges `node` with its only child while that child has the same agents. */
function compress(node: Trie, before: number | undefined): TreeNode {
  const run: TreePart[] = [treePart(node)]
  let last = node
  while (last.children.length === 1 && last.children[0]!.agents.length === last.agents.length) {
    last = last.children[0]!
    run.push(treePart(last))
  }
  const chars = run.reduce((sum, part) => sum + part.chars, 0) + SEPARATOR_CHARS * (run.length - 1)
  const tokens = run.every((part) => part.tokens !== undefined) ? run.reduce((sum, part) => sum + part.tokens!, 0) : undefined
  const prefixTokens = tokens === undefined || before === undefined ? undefined : before + tokens
  const children = last.children.map((child) => compress(child, prefixTokens))
  return { parts: run, agents: node.agents, chars, tokens, prefixTokens, estimated: run.some((part) => part.estimated), children }
}

/**
 * The scoped sections (layer neither `'global'` nor unknown) that come before
 * a global part in an agent's latest prompt: those some sibling does not send
 * are splits, with their cost; those every agent sends alike are listed apart.
 */
export function prefixSplits(agents: readonly TreeAgent[]): { readonly splits: PrefixSplit[]; readonly sharedByAll: SharedScopedSection[] } {
  const splits: PrefixSplit[] = []
  const sharedByAll: SharedScopedSection[] = []
  const seen = new Set<string>()
  const sends = agents.map((agent) => new Set(agent.parts.map(keyOf)))
  agents.forEach((agent, a) => {
    agent.parts.forEach((part, i) => {
      if (part.layer === undefined || part.layer === 'global') return
      const before = agent.parts.slice(i + 1).find((later) => later.layer === 'global')
      if (before === undefined) return
      const siblings = agents.filter((_, b) => b !== a && !sends[b]!.has(keyOf(part)))
      if (siblings.length === 0) {
        const key = `${part.name}\u0000${part.layer}`
        if (!seen.has(key)) sharedByAll.push({ section: part.name, layer: part.layer })
        seen.add(key)
        return
      }
      const sharable = agent.parts.slice(i + 1).filter((later) => siblings.some((sibling) => sends[agents.indexOf(sibling)]!.has(keyOf(later))))
      const counted = sharable.map((later) => tokensOf(later, agent.tokensPerChar))
      const cost = {
        chars: sharable.reduce((sum, later) => sum + later.text.length, 0),
        tokens: counted.every((count) => count !== undefined) ? counted.reduce((sum: number, count) => sum + count!, 0) : undefined,
        estimated: sharable.some((later) => later.tokens === undefined) && agent.tokensPerChar !== undefined,
      }
      splits.push({ agent: agent.name, section: part.name, layer: part.layer, before: before.name, siblings: siblings.map((sibling) => sibling.name), cost })
    })
  })
  return { splits, sharedByAll }
}
