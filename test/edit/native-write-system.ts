/**
 * What the check-then-use race tests share: the write tools on the native file system in
 * acceptEdits, with nobody to approve, and a wait for a racing child process to end.
 */
import type { ChildProcess } from "node:child_process"
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { toolSystem } from "../../layers/system.ts"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { NativeFileSystem } from "../../src/fs/node-fs.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { Approval } from "../../src/permission/approval.ts"
import { ApplyPatchTool } from "../../src/tools/apply-patch.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { WriteTool } from "../../src/tools/write.ts"

export const system = (root: string) =>
  toolSystem({
    root,
    outputConfig: OutputConfig.layerWith({}),
    tools: [EditTool, WriteTool, ApplyPatchTool],
    config: { permissions: { defaultMode: "acceptEdits" } },
    approval: Approval.layerTest({ answer: "deny" }, [])
  }).pipe(
    Layer.provide(LocalFs.layerNative),
    Layer.provideMerge(Layer.merge(NodeServices.layer, Layer.succeed(NativeFileSystem, true)))
  )

/** A pause on the clock the race tests poll with. */
export const sleep = (ms: number) => Effect.promise(() => new Promise((r) => setTimeout(r, ms)))

export const exited = (child: ChildProcess) =>
  Effect.promise(() => new Promise((done) => (child.exitCode === null ? child.once("exit", done) : done(0))))
