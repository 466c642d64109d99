/** The session-log events a step surface produces (SPEC §3). */

import type { ToolSchema } from '../assembly/types.js'
import type { RenderedContextSection } from '../render/render.js'

/** The rendered system prompt as a surface message. */
export interface SystemMessageEvent {
  readonly type: 'system/message'
  /** `'append'` adds a message at `node`; `'replace'` rewrites node 0. */
  readonly op: 'append' | 'replace'
  /** The surface node: 0, or the history length for an in-history update. */
  readonly node: number
  readonly text: string
}

/** The request's config and tool declarations (never the prompt). */
export interface RequestHeaderEvent {
  readonly type: 'request/header'
  /** A deep-frozen JSON copy of the step's config. */
  readonly config: Readonly<Record<string, unknown>>
  /** Deep-frozen JSON copies of the step's tools, in assembly order. */
  readonly tools: readonly ToolSchema[]
  /** `'initial'`, or what changed: `tools changed (added grep; removed ls; changed bash; reordered)`, `config changed`, joined by `; `. */
  readonly reason: string
}

/** A runtime-context snapshot, recorded after the retained history. */
export interface ContextSnapshotEvent {
  readonly type: 'context/snapshot'
  readonly text: string
  readonly sections: readonly RenderedContextSection[]
}

/** One log operation produced by a step. */
export type SurfaceEvent = SystemMessageEvent | RequestHeaderEvent | ContextSnapshotEvent
