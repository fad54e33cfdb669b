/**
 * Check, then use, for the folders a write makes: the permission check saw `d/n1/x.txt` with
 * `d/n1` missing, so the write makes it. A second process watches `d` (inotify) and, as soon as
 * a folder appears there, after a seeded pause (0–2 ms) puts something else in its place for
 * 3 ms: the project's `.git/hooks` renamed in (`n…`), `.git` itself renamed in as the parent of
 * a `hooks` folder the write makes next (`p…`), or a link to a folder outside (`l…`). Nothing
 * may land in `.git` or outside; a write that meets the swap is refused and says so. Seeded and
 * bounded; the swapper is killed at the end. Without make-folders.ts (mkdir -p) writes land in
 * `.git/hooks` within the first few dozen calls.
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { exited, sleep, system } from "./native-write-system.ts"

/** On a new folder `d/<name>`: a seeded pause, the swap, 3 ms, the swap undone; then `.done` says `<name>`. */
const SWAPPER = `
const fs = require("node:fs")
const [root, outside, seed] = process.argv.slice(1)
let s = Number(seed)
const rand = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648)
const quiet = (f) => { try { f(); return true } catch { return false } }
const d = root + "/d"
const seen = new Set()
let swaps = 0
const done = (name) => {
  fs.writeFileSync(root + "/.done.tmp", name + " " + swaps)
  fs.renameSync(root + "/.done.tmp", root + "/.done")
}
fs.watch(d, (type, name) => {
  if (name === null || !/^[npl][0-9]+$/.test(name) || seen.has(name)) return
  seen.add(name)
  const at = d + "/" + name, aside = at + ".orig"
  const into = name[0] === "n" ? root + "/.git/hooks" : root + "/.git"
  const until = performance.now() + rand() * 2
  while (performance.now() < until) {}
  if (!quiet(() => fs.renameSync(at, aside))) return done(name)
  const put = name[0] === "l" ? quiet(() => fs.symlinkSync(outside, at)) : quiet(() => fs.renameSync(into, at))
  if (put) swaps++
  setTimeout(() => {
    if (put) name[0] === "l" ? quiet(() => fs.unlinkSync(at)) : quiet(() => fs.renameSync(at, into))
    quiet(() => fs.renameSync(aside, at))
    done(name)
  }, 3)
})
fs.writeFileSync(root + "/.swapper-ready", "")
`

const setUp = () => {
  const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-wmade-")))
  const root = NodePath.join(base, "project")
  const outside = NodePath.join(base, "outside")
  NodeFs.mkdirSync(NodePath.join(root, "d"), { recursive: true })
  NodeFs.mkdirSync(outside)
  NodeFs.mkdirSync(NodePath.join(root, ".git", "hooks"), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
  NodeFs.writeFileSync(NodePath.join(root, ".git", "hooks", "pre-commit.sample"), "#!/bin/sh\n", { mode: 0o755 })
  return { base, root, outside }
}

/** Call `i`: the folder it makes first in `d` (what the swapper swaps), and the call. */
const callOf = (i: number): { folder: string; name: string; args: Record<string, unknown> } => {
  switch (i % 4) {
    case 0:
      return { folder: `n${i}`, name: "write", args: { filePath: `d/n${i}/x.txt`, content: `written ${i}\n` } }
    case 1:
      // `.git` renamed in as d/p…: the write then makes `hooks` in it, or finds `hooks` there.
      return { folder: `p${i}`, name: "write", args: { filePath: `d/p${i}/hooks/pre-commit`, content: "#!/bin/sh\n" } }
    case 2:
      return {
        folder: `l${i}`,
        name: "apply_patch",
        args: {
          patchText: [
            "*** Begin Patch",
            `*** Add File: d/l${i}/a.txt`,
            `+a ${i}`,
            `*** Add File: d/l${i}/b/c.txt`,
            `+c ${i}`,
            "*** End Patch"
          ].join("\n")
        }
      }
    default:
      return {
        folder: `n${i}`,
        name: "edit",
        args: { filePath: `d/n${i}/deep/x.txt`, oldString: "", newString: `made ${i}\n` }
      }
  }
}

/** Every entry below `dir`, relative, sorted. */
const tree = (dir: string): Array<string> =>
  (NodeFs.readdirSync(dir, { recursive: true }) as Array<string>).map(String).sort()

describe.skipIf(process.platform !== "linux")("check, then use, for the folders a write makes", () => {
  it.live(
    "120 writes into new folders while another process swaps each folder made (or its parent) for .git/hooks, .git or a link out: none lands there",
    () =>
      Effect.gen(function* () {
        const { base, root, outside } = setUp()
        const git = NodePath.join(root, ".git")
        const gitBefore = tree(git)
        const swapper = spawn(process.execPath, ["-e", SWAPPER, root, outside, "7"], { stdio: "ignore" })
        yield* Effect.gen(function* () {
          while (!NodeFs.existsSync(NodePath.join(root, ".swapper-ready"))) yield* sleep(10)
          const doneFile = NodePath.join(root, ".done")
          const doneWith = (folder: string) =>
            NodeFs.existsSync(doneFile) && NodeFs.readFileSync(doneFile, "utf8").split(" ")[0] === folder
          const statuses = new Map<string, number>()
          let refused = 0
          for (let i = 0; i < 120; i++) {
            const { folder, name, args } = callOf(i)
            const r = yield* Dispatcher.use((d) => d.dispatch({ id: `c${i}`, name, args }, { sessionId: `s${i}` }))
            // The swap of this call is undone before anything is looked at (bounded: 10 s).
            for (let k = 0; k < 10_000 && !doneWith(folder); k++) yield* sleep(1)
            expect(doneWith(folder), `the swapper answered call ${i} (${r.modelOutput})`).toBe(true)
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
            if (
              /which this write was making|something else has made it|another folder than|is gone since|moved to|changed while/.test(
                r.modelOutput
              )
            )
              refused++
            const what = `after call ${i} (${name}): ${r.modelOutput}`
            expect(tree(git), what).toEqual(gitBefore)
            expect(tree(outside), what).toEqual([])
          }
          const swaps = Number(NodeFs.readFileSync(doneFile, "utf8").split(" ")[1])
          // The race was run (the swapper swapped), and calls did get through between swaps.
          expect(swaps).toBeGreaterThan(0)
          expect(statuses.get("ok") ?? 0).toBeGreaterThan(0)
          // Every call that did not write was refused for the swap, saying so.
          expect(statuses.get("error") ?? 0).toBe(refused)
          console.log(
            `made folders: ${refused} of 120 writes refused, ${swaps} swaps, ${JSON.stringify([...statuses])}`
          )
        }).pipe(
          Effect.provide(system(root)),
          Effect.ensuring(
            Effect.gen(function* () {
              swapper.kill("SIGKILL")
              yield* exited(swapper)
              NodeFs.rmSync(base, { recursive: true, force: true })
            })
          )
        )
      }),
    300_000
  )
})
