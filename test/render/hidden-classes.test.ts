import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

// What V8 makes of the objects a step hands out, asked through its natives
// (%HasFastProperties, %HaveSameMap) in a child process. A fresh getter per
// object, or a `text` accessor defined on the plain empty map that another
// kind of object had already given a different getter, leaves objects in
// dictionary mode or each with a map of its own: every read of them then
// misses V8's inline caches. Both happened once without any test noticing.
test('assemble() results, rendered prompts, their blocks and parts are each fast objects of one hidden class', () => {
  const probe = fileURLToPath(new URL('./hidden-classes.probe.ts', import.meta.url))
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', probe], { encoding: 'utf8' })
  expect(JSON.parse(out)).toEqual({
    assembly: { fast: true, shared: true },
    prompt: { fast: true, shared: true },
    block: { fast: true, shared: true },
    part: { fast: true, shared: true },
  })
})
