/**
 * UTF-8 byte counts without Node's `Buffer`, so the package root stays
 * environment-neutral. Counts as an encoder does: a code point below U+0080
 * is 1 byte, below U+0800 2, a surrogate pair 4, and every other code unit
 * (a lone surrogate is encoded as U+FFFD) 3.
 */

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}

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

/**
 * The length of the longest common prefix of `a` and `b` in UTF-16 code
 * units, from `from` on (the caller knows they agree before it).
 */
export function commonPrefixLength(a: string, b: string, from = 0): number {
  const limit = Math.min(a.length, b.length)
  let end = from
  while (end < limit && a.charCodeAt(end) === b.charCodeAt(end)) end++
  return end
}

/**
 * `length` cut back to a whole code point of `a` and `b`: a common prefix
 * that ends between the halves of a surrogate pair in either string shares
 * no whole code point there.
 */
export function wholeCodePoints(a: string, b: string, length: number): number {
  if (length > 0 && isHighSurrogate(a.charCodeAt(length - 1))) {
    if (isLowSurrogate(a.charCodeAt(length)) || isLowSurrogate(b.charCodeAt(length))) return length - 1
  }
  return length
}
