/**
 * Run by log-scale.test.ts in a child process with a capped heap: replays the
 * log named by argv[2] with the library's reader and prints what it saw.
 */
import { readSessionLog } from '../../src/node.js'

const { steps, warnings } = readSessionLog(process.argv[2]!)
const last = steps.at(-1)!
console.log(JSON.stringify({ steps: steps.length, warnings: warnings.length, lastStep: last.step, messages: last.systemMessages.length, prompt: last.prompt }))
