/**
 * Check, then use: a path that another process flips between a file inside the project and a
 * link to a file outside it, thousands of times while read and grep run, never shows the outside
 * file. Each call goes the whole way (the Dispatcher's rules, then the tool, on the native
 * LocalFs); the flipper is a separate process, seeded and bounded, killed at the end.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { toolSystem } from "../../layers/system.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { Approval } from "../../src/permission/approval.ts"
import { GrepTool } from "../../src/tools/grep.ts"
import { ReadTool } from "../../src/tools/read.ts"

const SECRET = "OUTSIDE-SECRET-CONTENT"

/**
 * Flips `target` between a regular file and a link to `outside` with atomic renames, so the
 * name always exists; a seeded pause now and then varies where the flips land. Stops after
 * `flips` or when killed.
 */
const FLIPPER = `
const fs = require("node:fs")
const [target, outside, flips, seed] = process.argv.slice(1)
let s = Number(seed)
const rand = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648)
for (let i = 0; i < Number(flips); i++) {
  const tmp = target + ".tmp" + (i % 2)
  try { fs.rmSync(tmp, { force: true }) } catch {}
  if (i % 2 === 0) fs.symlinkSync(outside, tmp)
  else fs.writeFileSync(tmp, "inside line\\n")
  fs.renameSync(tmp, target)
  if (rand() < 0.01) { const until = Date.now() + 1; while (Date.now() < until) {} }
}
`

const setUp = () => {
  const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-toctou-")))
  const root = NodePath.join(base, "project")
  const outside = NodePath.join(base, "outside")
  NodeFs.mkdirSync(root)
  NodeFs.mkdirSync(outside)
  NodeFs.writeFileSync(NodePath.join(outside, "secret.txt"), `${SECRET}\n`)
  NodeFs.writeFileSync(NodePath.join(root, "x.txt"), "inside line\n")
  return { base, root, outside: NodePath.join(outside, "secret.txt"), target: NodePath.join(root, "x.txt") }
}

const startFlipper = (target: string, outside: string, seed: number): ChildProcess =>
  spawn(process.execPath, ["-e", FLIPPER, target, outside, "2000000", String(seed)], { stdio: "ignore" })

/** `n` calls of `name` with `args` through the Dispatcher, the person declining whatever asks. */
const calls = (root: string, name: string, args: Record<string, unknown>, n: number) =>
  Effect.gen(function* () {
    const outputs: Array<{ status: string; text: string }> = []
    for (let i = 0; i < n; i++) {
      // A session each: no call is answered from an earlier read's record.
      const r = yield* Dispatcher.use((d) => d.dispatch({ id: `c${i}`, name, args }, { sessionId: `s${i}` }))
      outputs.push({ status: r.status, text: r.modelOutput })
    }
    return outputs
  }).pipe(
    Effect.provide(
      toolSystem({
        root,
        outputConfig: OutputConfig.layerWith({}),
        tools: [ReadTool, GrepTool],
        config: {},
        approval: Approval.layerTest({ answer: "deny" }, [])
      }).pipe(Layer.provide(LocalFs.layerNative), Layer.provideMerge(NodeServices.layer))
    )
  )

const race = (name: string, args: Record<string, unknown>, n: number, seed: number) =>
  Effect.gen(function* () {
    const { base, root, outside, target } = setUp()
    const flipper = startFlipper(target, outside, seed)
    try {
      const outputs = yield* calls(root, name, args, n)
      const leaks = outputs.filter((o) => o.text.includes(SECRET))
      expect(leaks).toEqual([])
      // Once the flipping stops and the file stays, the same call shows it: the refusals above
      // were the race, not a call that never works.
      flipper.kill("SIGKILL")
      yield* Effect.promise(
        () => new Promise((done) => (flipper.exitCode === null ? flipper.once("exit", done) : done(0)))
      )
      NodeFs.rmSync(target, { force: true })
      NodeFs.writeFileSync(target, "inside line\n")
      const [after] = yield* calls(root, name, args, 1)
      expect(after).toMatchObject({ status: "ok" })
      expect(after!.text).toContain("inside line")
      return outputs
    } finally {
      flipper.kill("SIGKILL")
      NodeFs.rmSync(base, { recursive: true, force: true })
    }
  })

describe("check, then use", () => {
  it.live(
    "read: zero leaks in 3,000 reads of a path flipped between a file and a link out",
    () => Effect.asVoid(race("read", { filePath: "x.txt" }, 3000, 7)),
    180_000
  )

  it.live(
    "grep on the path itself: zero leaks in 1,000 searches",
    () => Effect.asVoid(race("grep", { pattern: "SECRET|inside", path: "x.txt" }, 1000, 11)),
    180_000
  )

  it.live(
    "grep in the project: zero leaks in 60 searches (each walks the folder as it churns)",
    () => Effect.asVoid(race("grep", { pattern: "SECRET|inside" }, 60, 13)),
    180_000
  )
})
