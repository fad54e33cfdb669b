#!/usr/bin/env node
/**
 * The `freecode-tools` executable. Checks the Node.js version first, then runs the CLI: in a
 * clone, the TypeScript source directly (Node 24 strips the types, so a clone needs no build step
 * and never runs a stale build); in an installed package, which ships no .ts, the CLI bundle
 * (dist/cli/, scripts/bundle.ts) through bundle-start.js.
 */
import "./node-check.js"
import { existsSync } from "node:fs"
// A namespace, not a named import: an old Node (which node-check.js turns away with one line)
// has no enableCompileCache, and a missing named import would fail before that check runs.
import * as NodeModule from "node:module"

// V8 keeps the code it compiled on disk (Node's cache, in the OS temp folder) for the next start:
// compiling the bundle is about a tenth of an MCP server's start. A cache that cannot be written
// is skipped, never an error.
NodeModule.enableCompileCache()

const source = new URL("../src/cli/main.ts", import.meta.url)
await import(existsSync(source) ? source.href : new URL("./bundle-start.js", import.meta.url).href)
