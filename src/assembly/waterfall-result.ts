import { describeValue } from './errors.js'

/** `{ name: string "x", text: undefined }`: what a malformed listener item held. */
function describeItem(item: unknown): string {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return describeValue(item)
  const { name, text } = item as { name?: unknown; text?: unknown }
  return `{ name: ${describeValue(name)}, text: ${describeValue(text)} }`
}

function checkItems(event: string, field: 'sections' | 'contexts', items: readonly unknown[]): void {
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as { name?: unknown; text?: unknown } | null | undefined
    if (typeof item === 'object' && item !== null && typeof item.name === 'string' && typeof item.text === 'string') continue
    throw new Error(
      `a "${event}" listener returned ${field}[${i}] = ${describeItem(item)}; every ${field === 'sections' ? 'section' : 'context'} needs a string name and text`,
    )
  }
}

/**
 * Throws unless what the `event` waterfall resolved to is a preparation (with `sections`, a
 * presentation) whose every section and context has a string `name` and `text`, so a bad listener
 * result fails the call that received it, not a later render.
 */
export function checkWaterfallResult(event: string, sections: boolean, result: unknown): void {
  const value = result as { contexts?: unknown; variables?: unknown; sections?: unknown } | null | undefined
  const missing =
    typeof value !== 'object' || value === null
      ? describeValue(value)
      : !Array.isArray(value.contexts)
        ? 'an object without a contexts array'
        : typeof value.variables !== 'object' || value.variables === null
          ? 'an object without a variables record'
          : sections && !Array.isArray(value.sections)
            ? 'an object without a sections array'
            : undefined
  if (missing !== undefined) {
    throw new Error(
      `a "${event}" listener resolved to ${missing}; return (or resolve to) the value of next(), or a modified copy of it`,
    )
  }
  checkItems(event, 'contexts', value!.contexts as readonly unknown[])
  if (sections) checkItems(event, 'sections', value!.sections as readonly unknown[])
}
