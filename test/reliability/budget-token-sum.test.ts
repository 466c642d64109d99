import { describe, expect, test } from 'vitest'
import { promptTokenSum, TokenSum } from '../../src/surface/step-tokens.js'

// The exact running total the token budget keeps (an internal module).

function sumOf(...counts: number[]): TokenSum {
  const sum = new TokenSum()
  for (const count of counts) sum.add(count)
  return sum
}

describe('TokenSum', () => {
  test('is 0 when empty', () => {
    expect(new TokenSum().value).toBe(0)
  })

  test('adds integers as integers up to Number.MAX_SAFE_INTEGER', () => {
    expect(sumOf(2 ** 52, 2 ** 52 - 1).value).toBe(Number.MAX_SAFE_INTEGER)
  })

  test('subtracting what was added leaves exactly 0 (no residue)', () => {
    const sum = sumOf(0.1, 0.2, 0.7)
    for (const count of [0.2, 0.7, 0.1]) sum.add(-count)
    expect(sum.value).toBe(0)
  })

  test('rounds the exact total once: ten 0.1 counts are 1, where adding them one by one gives 0.9999999999999999', () => {
    expect(sumOf(...Array<number>(10).fill(0.1)).value).toBe(1)
  })

  test('keeps a small count beside a large one that is later taken away', () => {
    const sum = sumOf(1e16, 1, 0.5)
    sum.add(-1e16)
    expect(sum.value).toBe(1.5)
  })

  test('a total exactly halfway between two numbers rounds to the even one', () => {
    expect(sumOf(1, 2 ** -53).value).toBe(1)
  })

  test('a total just above halfway rounds up, decided by the parts below the half', () => {
    expect(sumOf(1, 2 ** -53, 2 ** -200).value).toBe(1 + 2 ** -52)
  })

  test('a total just below halfway rounds down', () => {
    expect(sumOf(1 + 2 ** -52, 2 ** -53, -(2 ** -200)).value).toBe(1 + 2 ** -52)
  })
})

describe('promptTokenSum', () => {
  test('adds one separator between each two counts', () => {
    expect(promptTokenSum([3, 4, 5], 1).value).toBe(14)
  })

  test('a single count past Number.MAX_SAFE_INTEGER is a RangeError naming who counted', () => {
    expect(() => promptTokenSum([1, 2 ** 60], 0)).toThrow(
      new RangeError(
        `budget countTokens counts add up to ${2 ** 60 + 1} tokens for this prompt, past Number.MAX_SAFE_INTEGER (${Number.MAX_SAFE_INTEGER}); countTokens must return token counts whose sum stays a safe integer`,
      ),
    )
  })

  test('a huge separator counts only where a separator is', () => {
    expect(promptTokenSum([5], Number.MAX_VALUE).value).toBe(5)
    expect(() => promptTokenSum([5, 5], Number.MAX_VALUE)).toThrow(RangeError)
  })
})
