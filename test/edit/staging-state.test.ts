/**
 * The staging folder a write uses is remembered by the WriteFs layer that made it, not by a
 * module: a second system in the same process (or a second test) finds the folder as it is on
 * disk, not as the first one last saw it.
 */
import * as NFS from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer } from "effect"
import { WriteFs } from "../../src/edit/write-fs.ts"
import { WriteTool } from "../../src/tools/write.ts"
import { run } from "../tools/helpers.ts"
import { ctxFor, layer, project } from "./helpers.ts"

/** A write through a WriteFs layer of its own, as a second tool system in this process has. */
const writeInOwnSystem = (root: string, filePath: string, content: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    run(WriteTool, { filePath, content }, ctxFor(root)).pipe(
      Effect.provide(Layer.fresh(WriteFs.layerNative).pipe(Layer.provide(Layer.succeed(FileSystem.FileSystem, fs))))
    )
  )

describe("staging folders belong to a layer", () => {
  it.live("a second system writes after the first one's staging folder was removed: it makes the folder again", () =>
    Effect.gen(function* () {
      const root = yield* project({})
      const staging = NodePath.join(root, ".freecode", "staging")
      yield* writeInOwnSystem(root, "a.txt", "one\n")
      expect(NFS.existsSync(staging)).toBe(true)
      // What a person cleaning the project (or a test) does between two systems' writes.
      NFS.rmSync(NodePath.join(root, ".freecode"), { recursive: true, force: true })
      yield* writeInOwnSystem(root, "b.txt", "two\n")
      expect(NFS.readFileSync(NodePath.join(root, "b.txt"), "utf8")).toBe("two\n")
      expect(NFS.readdirSync(staging)).toEqual([".gitignore"])
    }).pipe(Effect.scoped, Effect.provide(layer))
  )
})
