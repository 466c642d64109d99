import { computed } from '@preact/signals-core'

/** A computed whose evaluations are counted; read `.value` to (re)evaluate it. */
export function counted<T>(read: () => T): { readonly value: T; readonly runs: number } {
  let runs = 0
  const view = computed(() => {
    runs++
    return read()
  })
  return {
    get value() {
      return view.value
    },
    get runs() {
      return runs
    },
  }
}
