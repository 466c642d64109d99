// UTF-8 byte counts as an encoder makes them (a lone surrogate becomes U+FFFD), without Node's `Buffer`.

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff
export const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/** UTF-8 bytes of `text.slice(start, end)`; a pair split by either bound counts as lone surrogates. */
export function utf8Length(text: string, start = 0, end = text.length): number {
  let bytes = 0
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (isHighSurrogate(code) && i + 1 < end && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

/** The longest common prefix of `a` and `b` in UTF-16 code units, compared from `from` on (they agree before it). */
export function commonPrefixLength(a: string, b: string, from = 0): number {
  const limit = Math.min(a.length, b.length)
  let end = from
  while (end < limit && a.charCodeAt(end) === b.charCodeAt(end)) end++
  return end
}

/** `length` cut back so a common prefix does not end between the halves of a surrogate pair in `a` or `b`. */
export function wholeCodePoints(a: string, b: string, length: number): number {
  const splitsPair = length > 0 && isHighSurrogate(a.charCodeAt(length - 1))
  return splitsPair && (isLowSurrogate(a.charCodeAt(length)) || isLowSurrogate(b.charCodeAt(length))) ? length - 1 : length
}
