/**
 * The declaration blocks several built-in tools share, one preset each, spread into
 * `defineTool({ ...preset, ... })`: a tool states what kind of tool it is once, and two tools
 * of one kind cannot drift apart.
 */
import { resolvePath } from "../path/path.ts"
import type { Operation, ToolContext } from "./tool.ts"

/**
 * A tool that changes files (write, edit, apply_patch): one call at a time, never rerun (a
 * second run would apply the change twice), a cancel waits for the change to finish or undo
 * rather than leave it half-made, and the permission rules see a `file.write`.
 */
export const WRITES_FILES = {
  concurrencySafe: false,
  mutates: true,
  retrySafe: false,
  interruptBehavior: "block",
  permissions: { operations: ["file.write"] }
} as const

/**
 * A tool that looks below a folder (`path`, default the project root) and lists what it finds
 * (glob, grep, ls): safe to run beside others and to rerun, cancelled at once, its output cut
 * at both ends (the last line says how many more there are, and a cut must keep it), and the
 * folder is the path the permission rules check.
 */
export const searchesBelow = (operation: Extract<Operation, "file.search" | "file.read">) =>
  ({
    concurrencySafe: true,
    mutates: false,
    retrySafe: true,
    interruptBehavior: "cancel",
    truncate: "both",
    permissions: { operations: [operation] },
    paths: ({ path }: { readonly path?: string | undefined }, ctx: ToolContext) => [resolvePath(ctx.root, path ?? ".")]
  }) as const
