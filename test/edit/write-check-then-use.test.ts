/**
 * Check, then use, for writes: edit, write and apply_patch change the file the permission rules
 * checked, or nothing. A second process swaps the target between the check and the write — a
 * hard link to the project's .env (a secret, which asks), a symbolic link to an executable
 * outside, a folder on the way swapped for a link — hundreds of times while the calls run through the Dispatcher in
 * acceptEdits (so a write inside the project runs unasked); the files outside never change, and
 * no result shows their content. Seeded and bounded; the swapper is killed at the end.
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { exited, system } from "./native-write-system.ts"

const SECRET = "inside line OUTSIDE-SECRET-7731"
const HOOK = "#!/bin/sh\necho inside line HOOK-RAN-7731\n"

/**
 * Swaps `a.txt` in turn for a plain file, a hard link to the secret and a symbolic link
 * to the hook outside (each by an atomic rename, so the name always exists), and `d` between a
 * folder and a link to the folder outside. A seeded pause now and then varies where swaps land.
 */
const SWAPPER = `
const fs = require("node:fs")
const [root, secret, hook, dirOut, swaps, seed] = process.argv.slice(1)
let s = Number(seed)
const rand = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648)
const a = root + "/a.txt", d = root + "/d", away = root + "/d.away"
const quiet = (f) => { try { f() } catch {} }
for (let i = 0; i < Number(swaps); i++) {
  const tmp = root + "/.swap" + (i % 2)
  quiet(() => fs.rmSync(tmp, { force: true }))
  const kind = Math.floor(rand() * 3)
  quiet(() => {
    if (kind === 0) fs.writeFileSync(tmp, "inside line\\n")
    else if (kind === 1) fs.linkSync(secret, tmp)
    else fs.symlinkSync(hook, tmp)
    fs.renameSync(tmp, a)
  })
  if (i % 3 === 0) {
    if (fs.lstatSync(d, { throwIfNoEntry: false })?.isSymbolicLink()) {
      quiet(() => fs.unlinkSync(d))
      quiet(() => fs.renameSync(away, d))
    } else {
      quiet(() => fs.renameSync(d, away))
      quiet(() => fs.symlinkSync(dirOut, d))
    }
  }
  if (rand() < 0.02) { const until = Date.now() + 1; while (Date.now() < until) {} }
}
`

const setUp = () => {
  const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-wtoctou-")))
  const root = NodePath.join(base, "project")
  const outside = NodePath.join(base, "outside")
  NodeFs.mkdirSync(NodePath.join(root, "d"), { recursive: true })
  NodeFs.mkdirSync(NodePath.join(outside, "dir"), { recursive: true })
  const secret = NodePath.join(root, ".env")
  const hook = NodePath.join(outside, "pre-commit")
  NodeFs.writeFileSync(secret, `${SECRET}\n`, { mode: 0o600 })
  NodeFs.writeFileSync(hook, HOOK, { mode: 0o755 })
  NodeFs.chmodSync(hook, 0o755)
  NodeFs.writeFileSync(NodePath.join(outside, "dir", "kept.txt"), "kept\n")
  NodeFs.writeFileSync(NodePath.join(root, "a.txt"), "inside line\n")
  return { base, root, outside, secret, hook }
}

const outsideState = (outside: string) => {
  const files = (dir: string): Array<string> =>
    NodeFs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(NodePath.join(dir, e.name)) : [NodePath.join(dir, e.name)]
    )
  return files(outside)
    .sort()
    .map((p) => {
      const st = NodeFs.statSync(p)
      return `${p} ${(st.mode & 0o7777).toString(8)} ${NodeFs.readFileSync(p, "utf8")}`
    })
}

const patch = (i: number) =>
  ["*** Begin Patch", "*** Update File: a.txt", "@@", "-inside line", `+inside line p${i}`, "*** End Patch"].join("\n")

/** The calls, in turn: edits, patches and writes of a.txt, and new files in d/. */
const callOf = (i: number): { name: string; args: Record<string, unknown> } => {
  switch (i % 4) {
    case 0:
      return { name: "edit", args: { filePath: "a.txt", oldString: "inside line", newString: `inside line e${i}` } }
    case 1:
      return { name: "apply_patch", args: { patchText: patch(i) } }
    case 2:
      return { name: "edit", args: { filePath: `d/new${i}.txt`, oldString: "", newString: `made ${i}\n` } }
    default:
      return { name: "write", args: { filePath: `d/w${i}.txt`, content: `written ${i}\n` } }
  }
}

describe("check, then use, for writes", () => {
  it.live(
    "800 edits, patches and writes while a second process swaps in links out: nothing outside changes or shows",
    () =>
      Effect.gen(function* () {
        const { base, root, outside, secret, hook } = setUp()
        const before = outsideState(outside)
        const swapper = spawn(
          process.execPath,
          ["-e", SWAPPER, root, secret, hook, NodePath.join(outside, "dir"), "3000000", "29"],
          { stdio: "ignore" }
        )
        yield* Effect.gen(function* () {
          const statuses = new Map<string, number>()
          for (let i = 0; i < 800; i++) {
            const { name, args } = callOf(i)
            const r = yield* Dispatcher.use((d) => d.dispatch({ id: `c${i}`, name, args }, { sessionId: `s${i}` }))
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
            const shown = `${r.modelOutput}\n${JSON.stringify(r.metadata)}`
            expect(shown).not.toContain("OUTSIDE-SECRET")
            expect(shown).not.toContain("HOOK-RAN")
          }
          swapper.kill("SIGKILL")
          yield* exited(swapper)
          expect(outsideState(outside)).toEqual(before)
          expect(NodeFs.readFileSync(secret, "utf8")).toBe(`${SECRET}\n`)
          // Calls did run (the race did not simply refuse everything).
          expect(statuses.get("ok") ?? 0).toBeGreaterThan(0)
          // Once the swapping stops, an edit of the plain file goes through.
          NodeFs.rmSync(NodePath.join(root, "a.txt"), { force: true })
          NodeFs.writeFileSync(NodePath.join(root, "a.txt"), "inside line\n")
          const after = yield* Dispatcher.use((d) =>
            d.dispatch(
              { id: "last", name: "edit", args: { filePath: "a.txt", oldString: "inside line", newString: "last" } },
              { sessionId: "last" }
            )
          )
          expect(after.status).toBe("ok")
          expect(NodeFs.readFileSync(NodePath.join(root, "a.txt"), "utf8")).toBe("last\n")
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
