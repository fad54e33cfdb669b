/**
 * The warm index answers glob, grep and ls exactly as the walk and rg do, after every change: a
 * seeded, bounded differential run over random trees and random sequences of creates, deletes,
 * renames, edits, .gitignore changes, links (symbolic, and hard links from outside the tree
 * written through), binary files, whole-folder moves and folder replacements, made in this
 * process (as the edit tools write), by bash, and by another process. After each step every
 * glob and ls from the index must equal the walk's output, every grep the walk's and rg's, and
 * the index's file list rg's.
 */
import { execFileSync } from "node:child_process"
import * as NFS from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ToolSystem } from "../../layers/live.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { GlobTool } from "../../src/tools/glob.ts"
import { GrepTool } from "../../src/tools/grep.ts"
import { LsTool } from "../../src/tools/ls.ts"
import { CurrentSearchBackend } from "../../src/tools/search/auto.ts"
import type { SearchBackend } from "../../src/tools/search/backend.ts"
import { type IndexedBackend, searchIndexLayer } from "../../src/tools/search/indexed.ts"
import { loadRipgrepPath, makeRipgrepBackend } from "../../src/tools/search/ripgrep.ts"
import { walkBackend } from "../../src/tools/search/walk.ts"
import { byWalkOrder, inPathOrder } from "../../src/tools/search/walk-order.ts"
import { nodeLayer } from "../fs/layers.ts"
import { makeCtx, run } from "./helpers.ts"

const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const PATTERNS = ["**/*", "*.ts", "src/**/*.ts", "*.log", ".h*/**", "a*/**/*"]

/** grep calls: a literal, alternations, a class, -i, the modes, context, include, type; and two without a literal. */
const GREPS: ReadonlyArray<Record<string, unknown>> = [
  { pattern: "alpha" },
  { pattern: "beta|gam+a", output_mode: "files_with_matches" },
  { pattern: "delta\\d+ [a-z]", output_mode: "count" },
  { pattern: "EPSILON", "-i": true, "-C": 1 },
  { pattern: "(?i)kelvin|caf\u00e9", include: "*.{ts,md}" },
  { pattern: "zeta", type: "ts", "-A": 1 },
  { pattern: "needle\\(x, 4\\)" },
  { pattern: "\\w+a$", output_mode: "files_with_matches" }
]
const STEPS = 45
const LSES: ReadonlyArray<Record<string, unknown>> = [{}, { path: "src" }, { ignore: ["*.md", "deep/"] }]

const WORDS = [
  "alpha",
  "beta",
  "gamma",
  "gammma",
  "delta12 x",
  "Epsilon",
  "zeta",
  "needle(x, 4)",
  "\u212Aelvin",
  "café",
  "omega"
]

/** A few lines of random words. */
const text = (pick: <A>(xs: ReadonlyArray<A>) => A) => {
  const lines: Array<string> = []
  for (let i = 0; i < 3; i++) lines.push(`${pick(WORDS)} ${pick(WORDS)}`)
  return `${lines.join("\n")}\n`
}

/** Every file and directory under root, relative (not following links), for picking targets. */
const listAll = (root: string) => {
  const files: Array<string> = []
  const dirs: Array<string> = []
  const go = (rel: string) => {
    for (const e of NFS.readdirSync(NodePath.join(root, rel), { withFileTypes: true })) {
      const r = rel === "" ? e.name : `${rel}/${e.name}`
      if (e.isDirectory()) {
        dirs.push(r)
        go(r)
      } else files.push(r)
    }
  }
  go("")
  return { files, dirs }
}

describe("warm search index", () => {
  it.live(
    "a tool system serves glob from it by default; FREECODE_INDEX=0 turns it off",
    () => {
      const root = NFS.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-index-system-"))
      NFS.writeFileSync(NodePath.join(root, "a.ts"), "a\n")
      return Effect.gen(function* () {
        const on = yield* globUntilIndexed(200).pipe(Effect.provide(ToolSystem.layer({ root })))
        expect(on.at(-1)).toBe("index")
        // The first search walked (rg) while the index was built in the background.
        expect(on[0]).toBe("ripgrep")
        process.env.FREECODE_INDEX = "0"
        const off = yield* globUntilIndexed(20).pipe(
          Effect.provide(ToolSystem.layer({ root })),
          Effect.ensuring(Effect.sync(() => delete process.env.FREECODE_INDEX))
        )
        expect(off).toHaveLength(20)
        expect(new Set(off)).toEqual(new Set(["ripgrep"]))
      }).pipe(Effect.ensuring(Effect.sync(() => NFS.rmSync(root, { recursive: true, force: true }))))
    },
    120_000
  )

  it("lists a directory's entries in path order where name order differs (`a` before `a.b`, `a/x` after it)", () => {
    const entry = (name: string, kind: "dir" | "file") => ({ name, path: `/r/${name}`, kind }) as const
    // As the walk gives them: sorted by name.
    const byName = [
      entry("a", "dir"),
      entry("a-c", "file"),
      entry("a-d", "dir"),
      entry("a.b", "file"),
      entry("a0", "dir")
    ]
    const keys = (es: ReadonlyArray<{ readonly name: string; readonly kind: string }>) =>
      es.map((e) => (e.kind === "dir" ? `${e.name}/` : e.name))
    expect(keys(inPathOrder(byName))).toEqual(["a-c", "a-d/", "a.b", "a/", "a0/"])
    const plain = [entry("b", "dir"), entry("b0", "file"), entry("c", "file")]
    expect(inPathOrder(plain)).toBe(plain)
    // The notes name directories in the walk's order: by depth, then by name at each level.
    const dirs = ["/r/b/c", "/r/a-b/x", "/r/b", "/r/a/z", "/r/a"]
    expect(dirs.sort(byWalkOrder)).toEqual(["/r/a", "/r/b", "/r/a/z", "/r/a-b/x", "/r/b/c"])
  })

  it.live(
    "glob from the index prints paths sorted where the name order is not the path order",
    () => {
      const root = NFS.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-index-order-"))
      for (const f of ["a/x.ts", "a/b/y.ts", "a-d/z.ts", "a.b.ts", "a-c.ts", "a0/w.ts", "a.ts"]) {
        NFS.mkdirSync(NodePath.dirname(NodePath.join(root, f)), { recursive: true })
        NFS.writeFileSync(NodePath.join(root, f), "x\n")
      }
      const expected = ["a-c.ts", "a-d/z.ts", "a.b.ts", "a.ts", "a/b/y.ts", "a/x.ts", "a0/w.ts"]
      return Effect.gen(function* () {
        const indexed = (yield* CurrentSearchBackend) as IndexedBackend
        for (let i = 0; i < 500 && indexed.index.state() !== "ready"; i++) yield* Effect.sleep(10)
        for (const pattern of ["**/*.ts", "*.ts"]) {
          const out = yield* run(GlobTool, { pattern }, makeCtx(root))
          expect([pattern, out.metadata?.backend, out.output.split("\n")]).toEqual([pattern, "index", expected])
          // The same list as the walk gives it (sorted by the tool).
          const walked = yield* run(GlobTool, { pattern }, makeCtx(root)).pipe(
            Effect.provideService(CurrentSearchBackend, walkBackend)
          )
          expect(walked.output).toBe(out.output)
        }
      }).pipe(
        Effect.provide(searchIndexLayer(root, { eager: true })),
        Effect.provide(nodeLayer),
        Effect.ensuring(Effect.sync(() => NFS.rmSync(root, { recursive: true, force: true })))
      )
    },
    60_000
  )

  it.live(
    "differential: after each random change, glob from the index equals the walk's and rg's (seeded)",
    () => {
      const random = prng(2026)
      const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]!
      const base = NFS.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-index-test-"))
      const root = NodePath.join(base, "proj")
      const names = ["a.ts", "b.log", "c.md", ".env", "d.ts", "keep.log"]
      const folders = ["src", "src/deep", "a1", ".hidden", "node_modules/pkg", "build", "a1/b2"]
      for (const f of folders) NFS.mkdirSync(NodePath.join(root, f), { recursive: true })
      for (let i = 0; i < 30; i++)
        NFS.writeFileSync(NodePath.join(root, pick(folders), `${i}${pick(names)}`), text(pick))
      NFS.writeFileSync(NodePath.join(root, ".gitignore"), "*.log\n!keep.log\n/build\n")
      // A file outside the tree, hard-linked into it: a write through the outside name raises no event inside.
      const outside = NodePath.join(base, "outside.ts")
      NFS.writeFileSync(outside, "omega\n")
      NFS.linkSync(outside, NodePath.join(root, "src", "linked.ts"))
      return Effect.gen(function* () {
        const rg = makeRipgrepBackend(yield* loadRipgrepPath)
        const indexed = (yield* CurrentSearchBackend) as IndexedBackend
        expect(indexed.index).toBeDefined()
        for (let i = 0; i < 500 && !indexed.index.contentSize().ready; i++) yield* Effect.sleep(20)
        expect(indexed.index.state()).toBe("ready")
        expect(indexed.index.contentSize().ready).toBe(true)
        const viaRg = Effect.provideService(CurrentSearchBackend, rg as SearchBackend)
        const viaWalk = Effect.provideService(CurrentSearchBackend, walkBackend as SearchBackend)

        const sh = (script: string) => execFileSync("bash", ["-c", script], { cwd: root })
        const other = (code: string) => execFileSync(process.execPath, ["-e", code], { cwd: root })
        let answeredByIndex = 0
        let grepsByIndex = 0
        let lsByIndex = 0
        for (let step = 0; step < STEPS; step++) {
          const { files, dirs } = listAll(root)
          const by = pick(["here", "bash", "process"] as const)
          const target = (list: ReadonlyArray<string>) => (list.length === 0 ? undefined : pick(list))
          const newFile = `${pick(["", ...dirs.filter((d) => !d.startsWith("node_modules"))].map((d) => (d === "" ? "" : `${d}/`)))}n${step}${pick(names)}`
          const op = pick([
            "create",
            "create",
            "delete",
            "rename",
            "edit",
            "edit",
            "gitignore",
            "link",
            "mvdir",
            "replace",
            "mkdir",
            "binary",
            "outside"
          ])
          const js = (() => {
            const f = target(files)
            const d = target(dirs)
            switch (op) {
              case "create":
                return `fs.writeFileSync(${JSON.stringify(newFile)}, ${JSON.stringify(text(pick))})`
              case "binary":
                return `fs.writeFileSync(${JSON.stringify(newFile)}, "alpha\\0zeta\\n")`
              case "outside":
                return `fs.appendFileSync(${JSON.stringify(outside)}, ${JSON.stringify(text(pick))})`
              case "delete":
                return f === undefined ? "" : `fs.rmSync(${JSON.stringify(f)}, { force: true })`
              case "rename":
                return f === undefined ? "" : `fs.renameSync(${JSON.stringify(f)}, ${JSON.stringify(newFile)})`
              case "edit":
                return f === undefined
                  ? ""
                  : pick([
                      `fs.appendFileSync(${JSON.stringify(f)}, ${JSON.stringify(text(pick))})`,
                      `fs.writeFileSync(${JSON.stringify(f)}, ${JSON.stringify(text(pick))})`,
                      // As the edit tools write: a temporary file renamed over the old one.
                      `fs.writeFileSync(${JSON.stringify(`${f}.tmp`)}, ${JSON.stringify(text(pick))}); fs.renameSync(${JSON.stringify(`${f}.tmp`)}, ${JSON.stringify(f)})`
                    ])
              case "gitignore": {
                const where = pick(["", ...dirs.filter((x) => !x.startsWith("node_modules"))])
                const rules = pick(["*.md\n", "!node_modules/\n", "deep/\n", "", "*.ts\n!d.ts\n", ".hidden\n"])
                return `fs.writeFileSync(${JSON.stringify(NodePath.join(where, ".gitignore"))}, ${JSON.stringify(rules)})`
              }
              case "link":
                return d === undefined
                  ? ""
                  : `try { fs.symlinkSync(${JSON.stringify(NodePath.join(root, d))}, ${JSON.stringify(`ln${step}`)}) } catch {}`
              case "mvdir":
                return d === undefined || d.startsWith("node_modules")
                  ? ""
                  : `try { fs.renameSync(${JSON.stringify(d)}, ${JSON.stringify(`moved${step}`)}) } catch {}`
              case "replace":
                return d === undefined || d.startsWith("node_modules")
                  ? ""
                  : `fs.rmSync(${JSON.stringify(d)}, { recursive: true, force: true }); fs.mkdirSync(${JSON.stringify(`${d}/x`)}, { recursive: true }); fs.writeFileSync(${JSON.stringify(`${d}/x/r${step}.ts`)}, "r\\n")`
              default:
                return `fs.mkdirSync(${JSON.stringify(`a1/m${step}/n`)}, { recursive: true }); fs.writeFileSync(${JSON.stringify(`a1/m${step}/n/f.ts`)}, "m\\n")`
            }
          })()
          if (js !== "") {
            // A change that cannot be made (a link picked as a file to edit) is no change.
            const guarded = `try { ${js} } catch {}`
            if (by === "here") new Function("fs", guarded)(wrapFs(root))
            else if (by === "process") other(`const fs = require("node:fs"); ${guarded}`)
            else sh(`node -e ${shellQuote(`const fs = require("node:fs"); ${guarded}`)}`)
          }
          // At once, with no turn of the event loop since the change: only the barrier makes it seen.
          const listed = yield* indexed.listFiles({ root, dir: root })
          const rgListed = yield* rg.listFiles({ root, dir: root })
          expect({ step, op, by, files: [...listed.files].sort() }).toEqual({
            step,
            op,
            by,
            files: [...rgListed.files].sort()
          })
          for (const pattern of PATTERNS) {
            const viaIndex = yield* run(GlobTool, { pattern }, makeCtx(root))
            const viaWalk = yield* run(GlobTool, { pattern }, makeCtx(root)).pipe(
              Effect.provideService(CurrentSearchBackend, walkBackend as SearchBackend)
            )
            expect({ step, op, by, pattern, out: viaIndex.output }).toEqual({
              step,
              op,
              by,
              pattern,
              out: viaWalk.output
            })
            if (viaIndex.metadata?.backend === "index") answeredByIndex++
          }
          for (const args of GREPS) {
            const fromIndex = yield* run(GrepTool, args, makeCtx(root))
            const walked = yield* run(GrepTool, args, makeCtx(root)).pipe(viaWalk)
            const rgs = yield* run(GrepTool, args, makeCtx(root)).pipe(viaRg)
            const seen = { step, op, by, args, index: fromIndex.output, walk: walked.output, rg: rgs.output }
            expect(seen).toEqual({ ...seen, walk: fromIndex.output, rg: fromIndex.output })
            if (fromIndex.metadata?.backend === "index") grepsByIndex++
          }
          for (const args of LSES) {
            const fromIndex = yield* run(LsTool, args, makeCtx(root)).pipe(Effect.catch((e) => Effect.succeed(e)))
            const walked = yield* run(LsTool, args, makeCtx(root)).pipe(
              viaWalk,
              Effect.catch((e) => Effect.succeed(e))
            )
            expect({ step, op, by, args, out: outputOf(fromIndex) }).toEqual({
              step,
              op,
              by,
              args,
              out: outputOf(walked)
            })
            if ("metadata" in fromIndex && fromIndex.metadata?.backend === "index") lsByIndex++
          }
        }
        // The comparisons above were of the index's answers, not of the walk with itself.
        expect(answeredByIndex).toBeGreaterThan(PATTERNS.length * STEPS * 0.6)
        expect(grepsByIndex).toBeGreaterThan(STEPS * 4)
        expect(lsByIndex).toBeGreaterThan(STEPS)
      }).pipe(
        Effect.provide(searchIndexLayer(root, { eager: true, lsMinEntries: 0 })),
        Effect.provide(nodeLayer),
        Effect.ensuring(Effect.sync(() => NFS.rmSync(base, { recursive: true, force: true })))
      )
    },
    600_000
  )
})

/** node:fs with paths taken relative to `root`, for the in-process changes. */
const wrapFs = (root: string) =>
  new Proxy(NFS, {
    get: (target, key) => {
      const f = (target as unknown as Record<string, unknown>)[key as string]
      if (typeof f !== "function") return f
      return (...args: Array<unknown>) =>
        (f as (...a: Array<unknown>) => unknown)(
          ...args.map((a, i) =>
            typeof a === "string" &&
            (i === 0 || (i === 1 && (key === "renameSync" || key === "symlinkSync"))) &&
            !a.startsWith("/")
              ? NodePath.join(root, a)
              : a
          )
        )
    }
  })

/** Calls glob through a whole tool system until the index answers (it builds on the first search). */
const globUntilIndexed = (tries: number) =>
  Effect.gen(function* () {
    const dispatcher = yield* Dispatcher
    const backends: Array<unknown> = []
    for (let i = 0; i < tries; i++) {
      const [result] = yield* dispatcher.dispatchBatch([{ id: `g${i}`, name: "glob", args: { pattern: "*.ts" } }], {
        sessionId: "s"
      })
      backends.push(result?.metadata?.backend)
      expect(result?.modelOutput).toBe("a.ts")
      if (backends.at(-1) === "index") break
      yield* Effect.sleep(20)
    }
    return backends
  })

/** A tool's output, or its failure's message (ls of a folder a change removed). */
const outputOf = (x: unknown): string =>
  typeof x === "object" && x !== null && "output" in x ? String(x.output) : JSON.stringify(x)

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`
