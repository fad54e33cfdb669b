/**
 * Modules loaded on first use instead of when their importer is. A process pays for what it runs:
 * importing the package, `--version` or an MCP server's first `tools/list` must not wait for the
 * bash grammar, the LSP protocol, ajv, yaml or the MCP SDK, which only some calls need.
 * docs/benchmarks.md ("Start-up") lists what is deferred and what it saves.
 *
 * A leaf: it imports nothing of ours, so any folder may use it.
 */
import { createRequire } from "node:module"

/**
 * `load` runs once, on the first call; every later call shares its promise. A failed load is
 * forgotten, so the next call tries again instead of repeating a stale error forever.
 */
export const lazyImport = <M>(load: () => Promise<M>): (() => Promise<M>) => {
  let loaded: Promise<M> | undefined
  return () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = undefined
      throw error
    })
    return loaded
  }
}

const require = createRequire(import.meta.url)

/**
 * The synchronous form, for a caller whose API is synchronous: `require` of a package (CommonJS,
 * or ESM without top-level await, which Node 22.12+ loads synchronously), once, on first call.
 */
export const lazyRequire = <M>(specifier: string): (() => M) => {
  let loaded: M | undefined
  return () => {
    loaded ??= require(specifier) as M
    return loaded
  }
}
