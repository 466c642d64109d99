/**
 * `gen_ai.system_instructions` for a step's rendered prompt, shaped by the
 * OpenTelemetry GenAI semantic conventions as released in
 * semantic-conventions v1.41.0 (they have since moved to
 * open-telemetry/semantic-conventions-genai, unchanged for these attributes). The value is
 * the schema's list of parts, one per rendered section in prompt order, as a
 * JSON string: the JavaScript API takes no structured attribute values, and
 * the conventions allow a JSON string where structure is not supported.
 *
 *   recordContent   {"type":"text","content":"…","name":…,"layer":…,"stability":…,"content_hash":…}
 *   default         {"type":"generic","generic_type":"promptloom.section","name":…,…,"content_hash":…}
 *
 * A text part must carry its `content`, so a part recorded without its text
 * is the schema's generic part; both kinds allow the extra properties.
 */

import type { RenderedPart, RenderedPrompt } from '../render/rendered-prompt.js'
import { fnv1a64 } from '../providers/prompt-cache-key.js'
import { layerLabel } from '../surface/session-log.js'

/** The `generic_type` of a section recorded without its text. */
export const SECTION_PART_TYPE = 'promptloom.section'

/** What a traced surface keeps per part: its JSON item, and the content hash inside it. */
interface PartEntry {
  readonly item: string
  readonly hash: string
}

/**
 * The `gen_ai.system_instructions` text of the prompts one traced surface
 * records (never shared between surfaces). The renderer hands an unchanged
 * section's part to the next prompt as the same frozen object, so each part's
 * item is kept beside the part; a part placed anew (its offset moved after an
 * earlier change) whose text equals the previous prompt's part of the same
 * name reuses that part's hash. A step thus hashes only changed texts, and an
 * unchanged prompt reuses the whole list.
 */
export class SystemInstructions {
  readonly #recordContent: boolean
  readonly #entries = new WeakMap<RenderedPart, PartEntry>()
  #prompt: RenderedPrompt | undefined
  /** The latest prompt's parts by section name. */
  #previous = new Map<string, RenderedPart>()
  #text = ''

  constructor(recordContent: boolean) {
    this.#recordContent = recordContent
  }

  /** The JSON list of `rendered`'s parts, in prompt order; part texts only with `recordContent`. */
  of(rendered: RenderedPrompt): string {
    if (rendered === this.#prompt) return this.#text
    const { parts } = rendered
    const named = new Map<string, RenderedPart>()
    let text = '['
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      let entry = this.#entries.get(part)
      if (entry === undefined) {
        const before = this.#previous.get(part.name)
        const hash = before !== undefined && before.text === part.text ? this.#entries.get(before)!.hash : contentHash(part.text)
        entry = { item: itemOf(part, hash, this.#recordContent), hash }
        this.#entries.set(part, entry)
      }
      named.set(part.name, part)
      text += i === 0 ? entry.item : `,${entry.item}`
    }
    this.#prompt = rendered
    this.#previous = named
    this.#text = `${text}]`
    return this.#text
  }
}

/** 64-bit FNV-1a of the UTF-8 bytes of `text`, as 16 hex digits: equal texts have equal hashes in any process. */
export function contentHash(text: string): string {
  return fnv1a64(new TextEncoder().encode(text))
}

/** One part's item: a text part with its content, or a generic part without. */
function itemOf(part: RenderedPart, hash: string, recordContent: boolean): string {
  const about = {
    name: part.name,
    ...(part.layer === undefined ? {} : { layer: layerLabel(part.layer) }),
    stability: part.stability,
    content_hash: hash,
  }
  return JSON.stringify(recordContent ? { type: 'text', content: part.text, ...about } : { type: 'generic', generic_type: SECTION_PART_TYPE, ...about })
}
