/**
 * Starts the CLI bundle (dist/cli/) of an installed package, with V8 compiling every function of
 * what start-up loads, not only the ones it calls (docs/benchmarks.md, "Start-up", step 6).
 *
 * Node's compile cache (turned on by entry/cli.js) keeps only the code V8 compiled before a module
 * ran, and V8 compiles a function when it is first called: every start compiled again the ~2,000
 * functions a start calls. Compiled whole (V8's `--no-lazy`), a module's cache entry holds them
 * all, and the next start compiles none of them. (The magic comment `//# allFunctionsCalledOnLoad`
 * would ask the same of one file, but Node does not tell V8 to follow it.) The price: a start with
 * no cache yet (the first, or the first after an upgrade) compiles everything it loads, and the
 * bytecode of functions never called takes memory until V8 flushes it.
 *
 * Lazily again once start-up is over (src/load/start-up.ts): what a call loads later, a built-in
 * such as node:http or a worker thread, is not compiled whole, and keeps Node's own code cache.
 */
import { builtins } from "../dist/cli/builtins.js"

// Node's code cache of each built-in was made under V8's default flags, and V8 refuses a cache
// made under other flags: the built-ins the bundle imports are loaded first.
for (const name of builtins) process.getBuiltinModule(name)
const v8 = process.getBuiltinModule("node:v8")
v8.setFlagsFromString("--no-lazy")
// The name is src/load/start-up.ts's START_UP_OVER.
process.once("freecode-tools:start-up-over", () => v8.setFlagsFromString("--lazy"))
await import("../dist/cli/main.js")
