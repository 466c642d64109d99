/**
 * A text summary of a V8 `.cpuprofile` (what `node --cpu-prof` or the
 * inspector's Profiler.stop writes): the functions with the most self time,
 * with percentages of the profile's duration, so a profile can be quoted.
 *
 *   npx tsx bench/cpu-profile.ts <file.cpuprofile>... [top=15] [--total]
 *
 * `--total` ranks by total time instead (a function's own samples and its
 * callees', each sample counted once however often the function recurs in
 * its stack): where a step's time goes, by caller.
 */
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { pathToFileURL } from 'node:url'

/** The parts of the `.cpuprofile` JSON this summary reads. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
  }[]
  readonly startTime: number
  readonly endTime: number
  readonly samples: readonly number[]
  readonly timeDeltas: readonly number[]
}

/** One function's self time. */
export interface SelfTime {
  readonly label: string
  readonly micros: number
  readonly share: number
}

/** A dependency's file as `package/path`, the project's own by its name alone. */
function fileOf(url: string): string {
  const path = url.split('?')[0]!
  const at = path.lastIndexOf('/node_modules/')
  return at >= 0 ? path.slice(at + '/node_modules/'.length) : basename(path)
}

/**
 * Self time per function (name, file and line; every node of the same
 * function merged), largest first: sample i lasts until sample i + 1, the last
 * one until the profile's end.
 */
export function selfTimes(profile: CpuProfile): SelfTime[] {
  // Keyed by position too: tsx's output puts a whole module on one line, so
  // two anonymous functions of one file differ only by column.
  const labelOf = new Map<number, string>()
  for (const { id, callFrame } of profile.nodes) {
    const { functionName, url, lineNumber, columnNumber } = callFrame
    const line = lineNumber > 0 ? `:${lineNumber + 1}` : ''
    const where = url === '' ? '' : ` ${fileOf(url)}${line}`
    labelOf.set(id, `${functionName || '(anonymous)'}${where}\u0000${columnNumber}`)
  }
  const micros = new Map<string, number>()
  const { samples, timeDeltas } = profile
  let at = profile.startTime
  const stamps = timeDeltas.map((delta) => (at += delta))
  for (let i = 0; i < samples.length; i++) {
    const duration = (i + 1 < stamps.length ? stamps[i + 1]! : profile.endTime) - stamps[i]!
    const label = labelOf.get(samples[i]!) ?? `(node ${samples[i]})`
    micros.set(label, (micros.get(label) ?? 0) + Math.max(0, duration))
  }
  const total = profile.endTime - profile.startTime
  return [...micros]
    .map(([key, us]) => ({ label: key.slice(0, key.indexOf('\u0000')), micros: us, share: us / total }))
    .sort((a, b) => b.micros - a.micros)
}

/**
 * Total (inclusive) time per function, largest first: every sample counts
 * for each distinct function on its stack, so nested calls are not counted
 * twice. Labels as in `selfTimes`.
 */
export function totalTimes(profile: CpuProfile): SelfTime[] {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const parentOf = new Map<number, number>()
  for (const node of profile.nodes) for (const child of (node as { children?: readonly number[] }).children ?? []) parentOf.set(child, node.id)
  const labelOf = (id: number): string => {
    const { functionName, url, lineNumber, columnNumber } = nodes.get(id)!.callFrame
    const line = lineNumber > 0 ? `:${lineNumber + 1}` : ''
    return `${functionName || '(anonymous)'}${url === '' ? '' : ` ${fileOf(url)}${line}`}\u0000${columnNumber}`
  }
  const micros = new Map<string, number>()
  const { samples, timeDeltas } = profile
  let at = profile.startTime
  const stamps = timeDeltas.map((delta) => (at += delta))
  for (let i = 0; i < samples.length; i++) {
    const duration = Math.max(0, (i + 1 < stamps.length ? stamps[i + 1]! : profile.endTime) - stamps[i]!)
    const seen = new Set<string>()
    for (let id: number | undefined = samples[i]; id !== undefined; id = parentOf.get(id)) {
      const label = labelOf(id)
      if (seen.has(label)) continue
      seen.add(label)
      micros.set(label, (micros.get(label) ?? 0) + duration)
    }
  }
  const total = profile.endTime - profile.startTime
  return [...micros]
    .map(([key, us]) => ({ label: key.slice(0, key.indexOf('\u0000')), micros: us, share: us / total }))
    .sort((a, b) => b.micros - a.micros)
}

/** The top `top` functions by total time as text lines, in µs per step when `steps` is given. */
export function summarizeTotals(profile: CpuProfile, top = 15, steps?: number): string {
  const lines = [`total time, top ${top}${steps === undefined ? '' : ', per step'}:`]
  for (const { label, micros, share } of totalTimes(profile).slice(0, top)) {
    const amount = steps === undefined ? `${(micros / 1000).toFixed(1).padStart(8)} ms` : `${(micros / steps).toFixed(1).padStart(8)} µs`
    lines.push(`${(share * 100).toFixed(1).padStart(5)} %  ${amount}  ${label}`)
  }
  return lines.join('\n')
}

/** The top `top` functions by self time as text lines, headed by the profile's duration. */
export function summarizeProfile(profile: CpuProfile, top = 15): string {
  const total = (profile.endTime - profile.startTime) / 1000
  const lines = [`self time, top ${top} of ${total.toFixed(0)} ms profiled:`]
  for (const { label, micros, share } of selfTimes(profile).slice(0, top)) {
    lines.push(`${(share * 100).toFixed(1).padStart(5)} %  ${(micros / 1000).toFixed(1).padStart(8)} ms  ${label}`)
  }
  return lines.join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2)
  const files = args.filter((arg) => !/^\d+$/.test(arg) && arg !== '--total')
  const top = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 15)
  const summarize = args.includes('--total') ? summarizeTotals : summarizeProfile
  if (files.length === 0) throw new Error('usage: npx tsx bench/cpu-profile.ts <file.cpuprofile>... [top] [--total]')
  for (const file of files) console.log(`${file}\n${summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, top)}`)
}
