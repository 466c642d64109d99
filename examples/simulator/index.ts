// A local provider cache simulator for the examples, tests and benches: an HTTP server on 127.0.0.1
// that the official SDK clients talk to, answering usage computed from the providers' documented
// caching rules. A simulation, not the providers: see README.md for what is modelled and the sources.
export { ANTHROPIC_MINIMUM_TOKENS, ANTHROPIC_UNKNOWN_MODEL_MINIMUM, anthropicMinimumTokens } from './anthropic-minimums.js'
export { createCacheSimulator, providerOf } from './cache-simulator.js'
export type { CacheSimulator, SimulatedExchange, SimulatedProvider, SimulatorOptions } from './cache-simulator.js'
export { DEEPSEEK_GRANULARITY } from './deepseek-cache.js'
export { OPENAI_GRANULARITY, OPENAI_MINIMUM_TOKENS, OPENAI_OVERFLOW_PER_MINUTE } from './openai-cache.js'
export { printBody, trimmed } from './print-body.js'
export { prefixBySection } from './prompt-sections.js'
export type { SectionTokens } from './prompt-sections.js'
export type { SimulatedReply } from './replies.js'
export { scriptedModel } from './scripted-model.js'
export { startSimulator } from './server.js'
export type { Simulator } from './server.js'
