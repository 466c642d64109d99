/**
 * UTF-8 byte counting without Node's `Buffer`, so the step surface runs in
 * browsers and edge runtimes too. Counts code points, not code units: a
 * surrogate pair is one code point of 4 bytes, and a lone surrogate counts 3
 * bytes, the size of the U+FFFD replacement character an encoder writes for
 * it (as `Buffer.byteLength` and `TextEncoder` do).
 */

/** UTF-8 bytes of `text.slice(start, end)`, counted in place (no copy). */
export function utf8ByteLength(text: string, start = 0, end = text.length): number {
  let bytes = 0
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < end && isLowSurrogate(text.charCodeAt(i + 1))) {
      // A high surrogate followed by a low one: one supplementary code point.
      bytes += 4
      i++
    } else bytes += 3 // the rest of the BMP, and lone surrogates (encoded as U+FFFD)
  }
  return bytes
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}
