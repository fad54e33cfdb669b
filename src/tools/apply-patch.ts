/**
 * `apply_patch`: several file changes in one `*** Begin Patch` envelope (add, delete, update,
 * move), applied all-or-nothing, across processes and crashes: every file is checked and every
 * new content computed under the locks of every path involved, then committed through a journal
 * (src/edit/patch-commit.ts).
 */
import { Effect, type PlatformError, Schema } from "effect"
import { unifiedDiff } from "../edit/diff.ts"
import { describeChange, stillKnown } from "../edit/file-state.ts"
import { applyChunks } from "../edit/patch-apply.ts"
import { type PatchOp, PatchSyntaxError, parsePatch } from "../edit/patch-parse.ts"
import { decodeText, encodeText, looksBinary } from "../edit/text.ts"
import { type FileChange, WriteFs } from "../edit/write-fs.ts"
import { appendErrorsAfterEdit } from "../lsp/after-edit.ts"
import { displayPath, resolvePath } from "../path/path.ts"
import { fail } from "../tool/errors.ts"
import { WRITES_FILES } from "../tool/presets.ts"
import { defineTool } from "../tool/tool.ts"
import { fsFailure, writeFailures } from "./failures/fs.ts"

const Parameters = Schema.Struct({
  patchText: Schema.String.annotate({
    description:
      "The patch: *** Begin Patch, then per file *** Add File: p (lines +text) | *** Delete File: p | *** Update File: p (optional *** Move to: q, then @@ chunks of ' ' context, - removed, + added lines), then *** End Patch."
  })
})

/** Every path a patch names, resolved; [] when it does not parse (execute reports that). */
const patchPaths = (patchText: string, root: string): Array<string> => {
  try {
    return parsePatch(patchText).flatMap((op) =>
      op.type === "update" && op.moveTo !== undefined
        ? [resolvePath(root, op.path), resolvePath(root, op.moveTo)]
        : [resolvePath(root, op.path)]
    )
  } catch {
    return []
  }
}

/** The path a file-system error names (the file being written when a commit failed). */
const pathOf = (e: PlatformError.PlatformError): string =>
  "pathOrDescriptor" in e.reason ? String(e.reason.pathOrDescriptor ?? "") : ""

type Planned =
  | { readonly action: "add"; readonly abs: string; readonly target: string; readonly bytes: Uint8Array }
  | { readonly action: "delete"; readonly abs: string; readonly target: string; readonly before: Uint8Array }
  | {
      readonly action: "update"
      readonly abs: string
      readonly target: string
      readonly to: string
      readonly toTarget: string
      readonly before: Uint8Array
      readonly bytes: Uint8Array
      readonly stale: string | undefined
      /** The model knew the whole file before the patch (see FileSnapshot.known). */
      readonly known: boolean
    }

export const ApplyPatchTool = defineTool({
  id: "apply_patch",
  description:
    "Apply a patch that adds, deletes, updates or moves files, all or nothing. Chunks are found after the previous chunk of the same file, tolerating trailing whitespace, indentation and typographic punctuation; a chunk that fits two places is refused. Use edit for a single change.",
  parameters: Parameters,
  ...WRITES_FILES,
  // As named: where each lands is found by the permission check (LocalFs) and WriteFs, not here.
  paths: ({ patchText }, ctx) => patchPaths(patchText, ctx.root),
  execute: ({ patchText }, ctx) =>
    Effect.gen(function* () {
      const writes = yield* WriteFs
      let ops: Array<PatchOp>
      try {
        ops = parsePatch(patchText)
      } catch (e) {
        if (e instanceof PatchSyntaxError)
          return yield* fail(`The patch did not parse: ${e.message} Nothing was changed.`)
        throw e
      }
      const shown = (abs: string) => displayPath(ctx.root, abs)
      const toFailure = (abs: string) => (e: PlatformError.PlatformError) => fsFailure(e, ctx.root, abs)
      const all = patchPaths(patchText, ctx.root)
      const request = {
        sessionId: ctx.sessionId,
        root: ctx.root,
        by: "apply_patch",
        paths: all,
        checked: ctx.checked
      } as const
      return yield* writes
        .transaction(request, (tx) =>
          Effect.gen(function* () {
            const seen = new Set<string>()
            for (const p of all) {
              const target = tx.target(p)
              if (seen.has(target))
                return yield* fail(
                  `${shown(p)} appears twice in the patch (or two of its paths lead to one file); put all its changes in one section. Nothing was changed.`
                )
              seen.add(target)
            }
            const plan: Array<Planned> = []
            const refuse = (message: string) => fail(`${message} Nothing was changed.`)
            for (const op of ops) {
              const abs = resolvePath(ctx.root, op.path)
              const target = tx.target(abs)
              const { file: loaded, seen: last } = yield* tx.load(abs).pipe(Effect.mapError(toFailure(abs)))
              if (loaded !== undefined && loaded.type !== "File") {
                return yield* refuse(`${shown(abs)} is not a regular file (${loaded.type}).`)
              }
              if (op.type === "add") {
                if (loaded !== undefined) {
                  return yield* refuse(`${shown(abs)} already exists; use "*** Update File:" to change it.`)
                }
                plan.push({ action: "add", abs, target, bytes: new TextEncoder().encode(op.content) })
                continue
              }
              if (loaded === undefined) {
                return yield* refuse(`${shown(abs)} does not exist; check the path (use glob), or use "*** Add File:".`)
              }
              const { bytes, view } = loaded
              if (op.type === "delete") {
                plan.push({ action: "delete", abs, target, before: bytes })
                continue
              }
              if (looksBinary(bytes))
                return yield* refuse(`${shown(abs)} is a binary file; a patch changes text files.`)
              const to = op.moveTo === undefined ? abs : resolvePath(ctx.root, op.moveTo)
              const toTarget = tx.target(to)
              if (toTarget !== target) {
                const there = yield* tx.load(to).pipe(Effect.mapError(toFailure(to)))
                if (there.file !== undefined)
                  return yield* refuse(`${shown(to)} already exists; a move does not replace a file.`)
              }
              const file = decodeText(bytes)
              const result = applyChunks(file.text, op.chunks, shown(abs))
              if (!result.ok) return yield* refuse(result.message)
              const stale = last === undefined ? undefined : describeChange(last, view)
              plan.push({
                action: "update",
                abs,
                target,
                to,
                toTarget,
                before: bytes,
                bytes: encodeText({ ...file, text: result.text }),
                stale,
                known: stillKnown(last, stale)
              })
            }

            // Every new file and content first, removals (deletes, the sources of moves) last.
            const changes: Array<FileChange> = []
            for (const p of plan) {
              if (p.action === "add") changes.push({ abs: p.abs, bytes: p.bytes, before: undefined })
              if (p.action === "update") {
                changes.push({
                  abs: p.to,
                  bytes: p.bytes,
                  before: p.toTarget === p.target ? p.before : undefined,
                  known: p.known
                })
              }
            }
            for (const p of plan) {
              if (p.action === "delete") changes.push({ abs: p.abs, bytes: undefined, before: p.before })
              if (p.action === "update" && p.toTarget !== p.target) {
                changes.push({ abs: p.abs, bytes: undefined, before: p.before })
              }
            }
            yield* tx
              .commit(changes)
              .pipe(
                Effect.mapError((e) =>
                  fail(`${toFailure(pathOf(e))(e).message} The patch was rolled back: nothing was changed.`)
                )
              )

            const summary: Array<string> = []
            const files: Array<Record<string, unknown>> = []
            const diffs: Array<string> = []
            const warnings: Array<string> = []
            for (const p of plan) {
              const before = p.action === "add" ? "" : decodeText(p.before).text
              const after = p.action === "delete" ? "" : decodeText(p.bytes).text
              const name = p.action === "update" && p.to !== p.abs ? `${shown(p.abs)} → ${shown(p.to)}` : shown(p.abs)
              const d = unifiedDiff(shown(p.action === "update" ? p.to : p.abs), before, after)
              const letter = p.action === "add" ? "A" : p.action === "delete" ? "D" : p.to !== p.abs ? "R" : "M"
              summary.push(`${letter} ${name} (+${d.additions} -${d.deletions})`)
              files.push({
                path: p.abs,
                action: p.action,
                ...(p.action === "update" && p.to !== p.abs ? { movedTo: p.to } : {}),
                additions: d.additions,
                deletions: d.deletions
              })
              diffs.push(d.diff)
              if (p.action === "update" && p.stale !== undefined) {
                warnings.push(
                  `Warning: ${shown(p.abs)} ${p.stale}; the patch matched its current text, but read it again before relying on other parts.`
                )
              }
            }
            return {
              title: `apply_patch (${plan.length} file${plan.length === 1 ? "" : "s"})`,
              output: ["Applied the patch:", ...summary, ...warnings].join("\n"),
              metadata: { files, diff: diffs.join("") }
            }
          })
        )
        .pipe(writeFailures((e) => fsFailure(e, ctx.root, pathOf(e))))
    }).pipe(Effect.flatMap((out) => appendErrorsAfterEdit(out, patchPaths(patchText, ctx.root), ctx.root)))
})
