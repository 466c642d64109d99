/**
 * `gen_ai.system_instructions` for a step's rendered prompt, shaped by the
 * OpenTelemetry GenAI semantic conventions v0.1.0 (the first release of
 * open-telemetry/semantic-conventions-genai; the attribute and its JSON
 * schema came over unchanged from semantic-conventions v1.41.0). The value is
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
import { layerLabel } from './step-attributes.js'

/** The `generic_type` of a section recorded without its text. */
export const SECTION_PART_TYPE = 'promptloom.section'

/**
 * The content hashes of the latest prompt's parts, by text: an unchanged part
 * is not hashed again, and only one prompt's texts are held. One per traced
 * surface, never shared between surfaces.
 */
export class ContentHashes {
  #latest = new Map<string, string>()

  /** `content_hash` of each part of `parts`, in order; afterwards holds exactly these parts' texts. */
  of(parts: readonly RenderedPart[]): string[] {
    const next = new Map<string, string>()
    const hashes = new Array<string>(parts.length)
    for (let i = 0; i < parts.length; i++) {
      const { text } = parts[i]!
      let hash = next.get(text) ?? this.#latest.get(text)
      if (hash === undefined) hash = contentHash(text)
      next.set(text, hash)
      hashes[i] = hash
    }
    this.#latest = next
    return hashes
  }
}

/** 64-bit FNV-1a of the UTF-8 bytes of `text`, as 16 hex digits: equal texts have equal hashes in any process. */
export function contentHash(text: string): string {
  return fnv1a64(new TextEncoder().encode(text))
}

/** The JSON text of `gen_ai.system_instructions` for `rendered`; part texts only when `recordContent`. */
export function systemInstructions(rendered: RenderedPrompt, recordContent: boolean, hashes: ContentHashes): string {
  const { parts } = rendered
  const digests = hashes.of(parts)
  const items = parts.map((part, i) => {
    const about = {
      name: part.name,
      ...(part.layer === undefined ? {} : { layer: layerLabel(part.layer) }),
      stability: part.stability,
      content_hash: digests[i]!,
    }
    return recordContent ? { type: 'text', content: part.text, ...about } : { type: 'generic', generic_type: SECTION_PART_TYPE, ...about }
  })
  return JSON.stringify(items)
}
