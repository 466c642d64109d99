import type { ToolSchema } from '../assembly/types.js'
import type { RenderedContextSection } from '../render/render.js'

/** The rendered system prompt as a surface message: `'append'` adds it at `node`; `'replace'` rewrites node 0. */
export interface SystemMessageEvent {
  readonly type: 'system/message'
  readonly op: 'append' | 'replace'
  /** 0, or the history length for an in-history update. */
  readonly node: number
  readonly text: string
}

/** The request's config and tool declarations (never the prompt), as deep-frozen JSON copies. */
export interface RequestHeaderEvent {
  readonly type: 'request/header'
  readonly config: Readonly<Record<string, unknown>>
  /** In assembly order. */
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

/** One session-log operation produced by a step (SPEC §3). */
export type SurfaceEvent = SystemMessageEvent | RequestHeaderEvent | ContextSnapshotEvent
