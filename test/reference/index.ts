export { ReferenceSystemPrompt } from './reference-system-prompt.js'
export { resolveReferenceConfig, type ReferenceSystemPromptConfig, type ResolvedReferenceConfig } from './config.js'
export {
  REFERENCE_CONTEXT_HEADER,
  referenceInterpolate,
  referenceJoinContextSections,
  referenceRenderContextSections,
  referenceRenderContextSnapshot,
  referenceRenderPrompt,
} from './render.js'
export { referenceCollectTools, referenceValidateToolOrder } from './tools.js'
export { REFERENCE_SCOPE_TAG, type ParentOf } from './scope.js'
