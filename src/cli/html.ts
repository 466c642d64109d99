const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes `& < > " '` so `text` (user data from a log) reads literally in HTML text and in quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!)
}

/** A tagged template escaping every value but an `Html` fragment; arrays are joined, `undefined`, `null` and `false` omitted. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  return new Html(String.raw({ raw: strings }, ...values.map(fragment)))
}

/** Markup that is already safe: built by `html`, or constructed from markup the caller built safely (the page's CSS). */
export class Html {
  constructor(readonly value: string) {}
}

function fragment(value: unknown): string {
  if (value instanceof Html) return value.value
  if (Array.isArray(value)) return value.map(fragment).join('')
  return value === undefined || value === null || value === false ? '' : escapeHtml(String(value))
}
