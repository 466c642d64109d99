/**
 * The public path of src/assembly/cordis-internals.ts: every service of this file takes it, as it would
 * under a Cordis whose internals do not match the contract, and the behaviour tests imported below run
 * through it unchanged.
 */
import { Context } from 'cordis'
import { expect, test, vi } from 'vitest'
import type { CordisBridge } from '../../src/assembly/cordis-internals.js'
import { SystemPrompt } from '../../src/index.js'

const bridges = vi.hoisted(() => [] as CordisBridge[])

vi.mock('../../src/assembly/cordis-internals.js', async (importOriginal) => {
  const internals = await importOriginal<typeof import('../../src/assembly/cordis-internals.js')>()
  return {
    ...internals,
    cordisBridgeOf: (ctx: Context) => {
      const bridge = internals.cordisBridgeOf(ctx, true)
      bridges.push(bridge)
      return bridge
    },
  }
})

import './system-prompt.events.test.js'
import './system-prompt.waterfall.test.js'
import './system-prompt.prepare.test.js'
import './system-prompt.refresh.test.js'
import './system-prompt.required.test.js'

test('every service in this file took the public path', async () => {
  const app = new Context()
  await app.plugin(SystemPrompt)
  expect(bridges.length).toBeGreaterThan(0)
  expect(bridges.every((bridge) => bridge.path === 'public')).toBe(true)
})
