/**
 * After tsc: copy into dist/ the files the built package reads at run time but tsc does not emit.
 * The bash grammar's .wasm (and its licence) goes beside the module that loads it, so the package
 * does not depend on tree-sitter-bash (20 MB and a native build it never uses).
 */
import * as NodeFs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"

const require = createRequire(import.meta.url)
const grammar = require.resolve("tree-sitter-bash/tree-sitter-bash.wasm")
const into = "dist/src/permission"
NodeFs.copyFileSync(grammar, NodePath.join(into, "tree-sitter-bash.wasm"))
NodeFs.copyFileSync(NodePath.join(NodePath.dirname(grammar), "LICENSE"), NodePath.join(into, "tree-sitter-bash.LICENSE"))
