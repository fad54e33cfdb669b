/**
 * The QuickJS interpreter (WebAssembly, quickjs-emscripten's release-sync build), loaded on the
 * first program and shared by every program after it: each program gets its own runtime (heap,
 * stack, interrupt handler) inside it. A runtime that traps (a bug in the interpreter) may leave
 * the module's memory inconsistent, so a trapped module is dropped and the next program loads a
 * fresh one. docs/code-mode.md says why this runtime and not isolated-vm or a Node child.
 */
import type { QuickJSSyncVariant, QuickJSWASMModule } from "quickjs-emscripten-core"

let loading: Promise<QuickJSWASMModule> | undefined

/** The shared module, loaded once (a failed load is forgotten, so the next program tries again). */
export const quickjsModule = (): Promise<QuickJSWASMModule> => {
  loading ??= (async () => {
    const [core, variant] = await Promise.all([
      import("quickjs-emscripten-core"),
      import("@jitl/quickjs-wasmfile-release-sync")
    ])
    // The package's ESM default export is the variant (its CommonJS typings say otherwise).
    return core.newQuickJSWASMModuleFromVariant(variant.default as unknown as QuickJSSyncVariant)
  })().catch((error: unknown) => {
    loading = undefined
    throw error
  })
  return loading
}

/** Forgets the module after a trap: the next program starts from a fresh instance. */
export const dropModule = (): void => {
  loading = undefined
}
