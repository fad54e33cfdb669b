#!/usr/bin/env node
/**
 * The `freecode-tools` executable. Checks the Node.js version first, then runs the CLI: in a
 * clone, the TypeScript source directly (Node 24 strips the types, so a clone needs no build step
 * and never runs a stale build); in an installed package, which ships no .ts, the CLI bundle
 * (dist/cli/, scripts/bundle.ts).
 */
import "./node-check.js"
import { existsSync } from "node:fs"

const source = new URL("../src/cli/main.ts", import.meta.url)
await import(existsSync(source) ? source.href : new URL("../dist/cli/main.js", import.meta.url).href)
