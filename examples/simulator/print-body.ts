/** A copy of a JSON body with every string longer than 60 characters cut, for printing. */
export function trimmed<T>(value: T): T {
  if (typeof value === 'string') return (value.length > 60 ? `${value.slice(0, 57)}...` : value) as T
  if (Array.isArray(value)) return value.map(trimmed) as T
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, trimmed(item)])) as T
  return value
}

/** Prints a request body under a `===== title =====` header: each system block, tool and message on one line. */
export function printBody(title: string, body: Record<string, unknown>): void {
  const lines = [`===== ${title} =====`]
  for (const [key, value] of Object.entries(body)) {
    if (!Array.isArray(value)) lines.push(`${key}: ${JSON.stringify(value)}`)
    else lines.push(`${key}: [`, ...value.map((item) => `  ${JSON.stringify(item)}`), ']')
  }
  console.log(lines.join('\n'))
}
