import type { AssembleContext, PromptPreparation, PromptPresentation } from '../../src/assembly/types.js'
import type { Scoped } from '../../src/scope/scope-key.js'

// The two waterfalls the reference engine dispatches. The production engine
// (src/assembly) dispatches the same event names on purpose, so one listener
// observes both engines. This augmentation lives here only until the
// production declaration lands; whoever reconciles the two keeps one of them.
// The reference engine dispatches through a loosely typed handle, so a
// differently typed `this` in the production declaration cannot break it.
declare module 'cordis' {
  interface Events {
    'system-prompt/prepare'(
      this: Scoped<object>,
      preparation: PromptPreparation,
      context: AssembleContext,
      next: () => Promise<PromptPreparation>,
    ): Promise<PromptPreparation>
    'system-prompt/assemble'(
      this: Scoped<object>,
      presentation: PromptPresentation,
      context: AssembleContext,
      next: () => Promise<PromptPresentation>,
    ): Promise<PromptPresentation>
  }
}

export {}
