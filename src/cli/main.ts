#!/usr/bin/env node
/**
 * The `freecode-tools` executable. Runs directly on Node 24 (`node src/cli/main.ts`) and built
 * (`dist/src/cli/main.js`).
 *
 * Before loading anything it makes Node compile WebAssembly with its baseline compiler only
 * (`--liftoff-only`). The bash grammar the permission layer parses commands with has a lexer that
 * is one 160 KB wasm function; once it is hot, V8's optimizing tier recompiles it in a compile
 * zone of ~700 MB, and the process keeps much of it: a shell check of a few words (a `trap`, an
 * `eval`) grew the process by 500 MB. V8 reads that flag only at start, so the process replaces
 * itself (execve: same pid, same stdio, same signals) with one that has it. Without execve
 * (Windows) it runs as it is.
 */
const FLAG = "--liftoff-only"

if (!process.execArgv.includes(FLAG) && typeof process.execve === "function") {
  try {
    process.execve(process.execPath, [process.execPath, FLAG, ...process.execArgv, ...process.argv.slice(1)])
  } catch {
    // Could not re-execute (a sandbox refusing execve): run with the default compiler.
  }
}

await import("./executable.ts")
