/**
 * Check, then use, for the folder a write lands in: a folder on the way renamed (not swapped
 * for a link) after the permission check, another folder renamed into its place. A second
 * process watches the staging folder (inotify) and, as soon as a write has staged its temp —
 * after the rules checked `d/…` — renames `d` away and the project's `.git/hooks` into its place,
 * then back a moment later (a seeded delay, 0–2 ms). The rules saw `d`, so nothing may land in
 * `.git/hooks`; a write that finds another folder at `d` is refused and says so. Seeded and
 * bounded; the swapper is killed at the end.
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { exited, sleep, system } from "./native-write-system.ts"

/**
 * During call `i` (the test writes `i` to `.token`), on the first temp staged: after a seeded
 * pause, `d` → `d.orig` and `.git/hooks` → `d`; 3 ms later, back. Once the test writes `idle-i`
 * (the call returned), it answers in `.ack` when no swap of that call is left undone, so the
 * next call's check never meets a late swap. Counts its swaps in `.swaps`.
 */
const SWAPPER = `
const fs = require("node:fs")
const [root, seed] = process.argv.slice(1)
let s = Number(seed)
const rand = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648)
const d = root + "/d", orig = root + "/d.orig", hooks = root + "/.git/hooks"
const quiet = (f) => { try { f(); return true } catch { return false } }
const token = () => { try { return fs.readFileSync(root + "/.token", "utf8") } catch { return "" } }
let cycling = false, swappedFor = "", pendingAck = undefined, swaps = 0
const ack = (i) => { fs.writeFileSync(root + "/.ack.tmp", i); fs.renameSync(root + "/.ack.tmp", root + "/.ack") }
const done = () => {
  cycling = false
  fs.writeFileSync(root + "/.swaps", String(swaps))
  if (pendingAck !== undefined) { ack(pendingAck); pendingAck = undefined }
}
fs.watch(root + "/.freecode/staging", (type, name) => {
  if (cycling || name === null || !name.endsWith(".tmp")) return
  const t = token()
  if (!/^[0-9]+$/.test(t) || t === swappedFor) return
  swappedFor = t
  cycling = true
  const until = performance.now() + rand() * 2
  while (performance.now() < until) {}
  if (!quiet(() => fs.renameSync(d, orig))) return done()
  if (quiet(() => fs.renameSync(hooks, d))) swaps++
  setTimeout(() => {
    quiet(() => fs.renameSync(d, hooks))
    quiet(() => fs.renameSync(orig, d))
    done()
  }, 3)
})
fs.watch(root, (type, name) => {
  if (name !== ".token") return
  const m = /^idle-([0-9]+)$/.exec(token())
  if (m === null) return
  if (cycling) pendingAck = m[1]
  else ack(m[1])
})
fs.writeFileSync(root + "/.swapper-ready", "")
`

const setUp = () => {
  const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-wfolder-")))
  const root = NodePath.join(base, "project")
  NodeFs.mkdirSync(NodePath.join(root, "d"), { recursive: true })
  NodeFs.mkdirSync(NodePath.join(root, ".git", "hooks"), { recursive: true })
  NodeFs.mkdirSync(NodePath.join(root, ".freecode", "staging"), { recursive: true, mode: 0o700 })
  NodeFs.writeFileSync(NodePath.join(root, ".git", "hooks", "pre-commit.sample"), "#!/bin/sh\n", { mode: 0o755 })
  NodeFs.writeFileSync(NodePath.join(root, "d", "a.txt"), "inside line\n")
  return { base, root }
}

/** The calls, in turn: writes, edits and patches making new files in d/, and edits of d/a.txt. */
const callOf = (i: number): { name: string; args: Record<string, unknown> } => {
  switch (i % 4) {
    case 0:
      return { name: "write", args: { filePath: `d/w${i}.txt`, content: `written ${i}\n` } }
    case 1:
      return { name: "edit", args: { filePath: `d/new${i}.txt`, oldString: "", newString: `made ${i}\n` } }
    case 2:
      return {
        name: "apply_patch",
        args: {
          patchText: ["*** Begin Patch", `*** Add File: d/p${i}.txt`, `+patched ${i}`, "*** End Patch"].join("\n")
        }
      }
    default:
      return {
        name: "edit",
        args: { filePath: "d/a.txt", oldString: "inside line", newString: "inside line" + ` e${i}` }
      }
  }
}

describe.skipIf(process.platform !== "linux")("check, then use, for the folder a write lands in", () => {
  it.live(
    "200 writes while another process renames .git/hooks into d's place after each check: none lands there",
    () =>
      Effect.gen(function* () {
        const { base, root } = setUp()
        const hooks = NodePath.join(root, ".git", "hooks")
        const dIno = NodeFs.statSync(NodePath.join(root, "d")).ino
        const hooksBefore = NodeFs.readdirSync(hooks).sort()
        const swapper = spawn(process.execPath, ["-e", SWAPPER, root, "41"], { stdio: "ignore" })
        yield* Effect.gen(function* () {
          while (!NodeFs.existsSync(NodePath.join(root, ".swapper-ready"))) yield* sleep(10)
          const file = (name: string) => NodePath.join(root, name)
          const say = (text: string) => {
            NodeFs.writeFileSync(file(".token.tmp"), text)
            NodeFs.renameSync(file(".token.tmp"), file(".token"))
          }
          const acked = (i: number) =>
            NodeFs.existsSync(file(".ack")) && NodeFs.readFileSync(file(".ack"), "utf8") === `${i}`
          const statuses = new Map<string, number>()
          let refused = 0
          for (let i = 0; i < 200; i++) {
            const { name, args } = callOf(i)
            say(`${i}`)
            const r = yield* Dispatcher.use((d) => d.dispatch({ id: `c${i}`, name, args }, { sessionId: `s${i}` }))
            say(`idle-${i}`)
            // No swap of this call is left when the next one is checked (bounded: 10 s).
            for (let k = 0; k < 10_000 && !acked(i); k++) yield* sleep(1)
            expect(acked(i), `the swapper answered call ${i}`).toBe(true)
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
            if (/another folder than the one the permission check saw/.test(r.modelOutput)) refused++
            expect(NodeFs.readdirSync(hooks).sort(), `after call ${i} (${name}): ${r.modelOutput}`).toEqual(hooksBefore)
            expect(NodeFs.statSync(file("d")).ino).toBe(dIno)
          }
          swapper.kill("SIGKILL")
          yield* exited(swapper)
          // Whatever state the kill left: the folder that was .git/hooks, found by what it holds.
          for (const [from, to] of [
            [NodePath.join(root, "d"), hooks],
            [NodePath.join(root, "d.orig"), NodePath.join(root, "d")]
          ] as const)
            if (NodeFs.existsSync(from) && NodeFs.statSync(from).ino !== dIno && !NodeFs.existsSync(to))
              NodeFs.renameSync(from, to)
          expect(NodeFs.readdirSync(hooks).sort()).toEqual(hooksBefore)
          // The race was run (the swapper swapped), and calls did get through between swaps.
          expect(Number(NodeFs.readFileSync(NodePath.join(root, ".swaps"), "utf8"))).toBeGreaterThan(0)
          expect(statuses.get("ok") ?? 0).toBeGreaterThan(0)
          console.log(`folder swap: ${refused} of 200 writes refused, statuses ${JSON.stringify([...statuses])}`)
        }).pipe(
          Effect.provide(system(root)),
          Effect.ensuring(
            Effect.sync(() => {
              swapper.kill("SIGKILL")
              NodeFs.rmSync(base, { recursive: true, force: true })
            })
          )
        )
      }),
    300_000
  )
})
