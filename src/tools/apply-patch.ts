/**
 * `apply_patch`: several file changes in one `*** Begin Patch` envelope (add, delete, update,
 * move), applied all-or-nothing. Every file is checked and every new content computed before
 * anything is written; the writes happen under the locks of every path involved, and if one
 * fails, those already made are undone.
 */
import { Effect, FileSystem, Option, type PlatformError, Schema } from "effect"
import { writeFileAtomic } from "../edit/atomic-write.ts"
import { unifiedDiff } from "../edit/diff.ts"
import { describeChange, loadFile, saveFile, stillKnown } from "../edit/file-state.ts"
import { applyChunks } from "../edit/patch-apply.ts"
import { type PatchOp, PatchSyntaxError, parsePatch } from "../edit/patch-parse.ts"
import { withPathLocks } from "../edit/path-lock.ts"
import { decodeText, encodeText, looksBinary } from "../edit/text.ts"
import { appendErrorsAfterEdit } from "../lsp/after-edit.ts"
import { ReadState } from "../read-state/read-state.ts"
import { fail, type ToolFailure, type TransientFailure } from "../tool/errors.ts"
import { defineTool } from "../tool/tool.ts"
import { dirnameOf, displayPath, fsFailure, resolvePath } from "./paths.ts"

const Parameters = Schema.Struct({
  patchText: Schema.String.annotate({
    description:
      "The patch: *** Begin Patch, then per file *** Add File: p (lines +text) | *** Delete File: p | *** Update File: p (optional *** Move to: q, then @@ chunks of ' ' context, - removed, + added lines), then *** End Patch."
  })
})

/** Every path a patch touches, resolved; [] when it does not parse (validation reports that). */
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

type Planned =
  | { readonly action: "add"; readonly abs: string; readonly bytes: Uint8Array }
  | { readonly action: "delete"; readonly abs: string; readonly before: Uint8Array }
  | {
      readonly action: "update"
      readonly abs: string
      readonly to: string
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
  concurrencySafe: false,
  mutates: true,
  retrySafe: false,
  interruptBehavior: "block",
  permissions: { operations: ["file.write"] },
  paths: ({ patchText }, ctx) => patchPaths(patchText, ctx.root),
  execute: ({ patchText }, ctx) =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const readState = yield* ReadState
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
      const seen = new Set<string>()
      for (const p of all) {
        if (seen.has(p))
          return yield* fail(
            `${shown(p)} appears twice in the patch; put all its changes in one section. Nothing was changed.`
          )
        seen.add(p)
      }

      return yield* withPathLocks(
        all,
        Effect.gen(function* () {
          const plan: Array<Planned> = []
          const refuse = (message: string) => fail(`${message} Nothing was changed.`)
          for (const op of ops) {
            const abs = resolvePath(ctx.root, op.path)
            const loaded = yield* loadFile(abs).pipe(Effect.mapError(toFailure(abs)))
            if (Option.isSome(loaded) && loaded.value.info.type !== "File") {
              return yield* refuse(`${shown(abs)} is not a regular file (${loaded.value.info.type}).`)
            }
            if (op.type === "add") {
              if (Option.isSome(loaded)) {
                return yield* refuse(`${shown(abs)} already exists; use "*** Update File:" to change it.`)
              }
              plan.push({ action: "add", abs, bytes: new TextEncoder().encode(op.content) })
              continue
            }
            if (Option.isNone(loaded)) {
              return yield* refuse(`${shown(abs)} does not exist; check the path (use glob), or use "*** Add File:".`)
            }
            const { bytes, view } = loaded.value
            if (op.type === "delete") {
              plan.push({ action: "delete", abs, before: bytes })
              continue
            }
            if (looksBinary(bytes)) return yield* refuse(`${shown(abs)} is a binary file; a patch changes text files.`)
            const to = op.moveTo === undefined ? abs : resolvePath(ctx.root, op.moveTo)
            if (to !== abs) {
              const exists = yield* fs.exists(to).pipe(Effect.mapError(toFailure(to)))
              if (exists) return yield* refuse(`${shown(to)} already exists; a move does not replace a file.`)
            }
            const file = decodeText(bytes)
            const result = applyChunks(file.text, op.chunks, shown(abs))
            if (!result.ok) return yield* refuse(result.message)
            const last = yield* readState.lastSeen(ctx.sessionId, abs)
            const stale = last === undefined ? undefined : describeChange(last, view)
            plan.push({
              action: "update",
              abs,
              to,
              before: bytes,
              bytes: encodeText({ ...file, text: result.text }),
              stale,
              known: stillKnown(last, stale)
            })
          }

          // Write everything; on a failure undo what was done, newest first.
          const undo: Array<Effect.Effect<void, unknown, FileSystem.FileSystem>> = []
          const step = <A>(
            effect: Effect.Effect<A, PlatformError.PlatformError, FileSystem.FileSystem | ReadState>,
            abs: string
          ) => effect.pipe(Effect.mapError(toFailure(abs)))
          const run = Effect.gen(function* () {
            for (const p of plan) {
              if (p.action === "add") {
                yield* step(fs.makeDirectory(dirnameOf(p.abs), { recursive: true }), p.abs)
                yield* step(saveFile(ctx.sessionId, p.abs, p.bytes, "apply_patch", true), p.abs)
                undo.push(fs.remove(p.abs, { force: true }))
              } else if (p.action === "update") {
                if (p.to !== p.abs) yield* step(fs.makeDirectory(dirnameOf(p.to), { recursive: true }), p.to)
                yield* step(saveFile(ctx.sessionId, p.to, p.bytes, "apply_patch", p.known), p.to)
                undo.push(p.to === p.abs ? writeFileAtomic(p.abs, p.before) : fs.remove(p.to, { force: true }))
              }
            }
            // Removals last: until here every original is still in place.
            for (const p of plan) {
              if (p.action === "delete" || (p.action === "update" && p.to !== p.abs)) {
                yield* step(fs.remove(p.abs), p.abs)
                undo.push(writeFileAtomic(p.abs, p.before))
                yield* readState.forget(ctx.sessionId, p.abs)
              }
            }
          })
          yield* run.pipe(
            Effect.catch((e: ToolFailure | TransientFailure) =>
              Effect.gen(function* () {
                for (const u of undo.reverse()) yield* Effect.ignore(u)
                return yield* fail(`${e.message} The patch was rolled back: nothing was changed.`)
              })
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
    }).pipe(Effect.flatMap((out) => appendErrorsAfterEdit(out, patchPaths(patchText, ctx.root), ctx.root)))
})
