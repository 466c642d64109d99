// The one median of the benches. No imports, so bench/memory.ts can use it without disturbing the heap it measures.

/** The middle of `values` (the mean of the two middle ones for an even count); does not reorder `values`. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
