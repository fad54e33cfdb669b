/**
 * Code mode against granular calls and one shell command, on the survey's two tasks, scripted
 * (no model): the rename (DB_HOST → DATABASE_HOST across compose, Terraform, .env and docs, with
 * DB_HOST_OLD unchanged) and the reference lookup (the callers of getUserById; a same-named
 * method in a second module; mentions in comments and docs). For each: model round trips, the
 * characters and o200k tokens that enter the context (the calls the model writes and the results
 * it reads), and time. Then, in the same run, a deny rule on .env: the program's edit of it is
 * refused while the shell command, approved once as a whole, rewrote it. Then the runtime:
 * a program's cold and warm start, and a nested call's overhead over a direct dispatch.
 *   node bench/code-mode.ts
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { NodeServices } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { Dispatcher } from "../src/dispatch/dispatcher.ts"
import type { FreecodeConfigData } from "../src/layers/config.ts"
import { toolSystem } from "../src/layers/system.ts"
import { OutputConfig } from "../src/output/config.ts"
import { Approval } from "../src/permission/approval.ts"
import { encodeO200k } from "../src/surface/tokens.ts"
import type { ToolCall, ToolResult } from "../src/tool/result.ts"

const FILES: Record<string, string> = {
  "docker-compose.yml":
    "services:\n  api:\n    environment:\n      - DB_HOST=db\n      - DB_HOST_OLD=legacy\n      - DB_PORT=5432\n",
  "infra/main.tf": 'variable "DB_HOST" {}\nresource "x" "y" {\n  host = var.DB_HOST\n  old  = var.DB_HOST_OLD\n}\n',
  ".env": "DB_HOST=localhost\nDB_HOST_OLD=old.local\n",
  "docs/setup.md": "# Setup\nSet DB_HOST to the database host. DB_HOST_OLD is kept for the migration.\n",
  "src/users/repo.ts": "export class UserRepo {\n  getUserById(id: string) { return db.find(id) }\n}\n",
  "src/admin/repo.ts":
    "export class AdminRepo {\n  // not the user one: getUserById here reads admins\n  getUserById(id: string) { return admins.find(id) }\n}\n",
  "src/api/handler.ts":
    'import { UserRepo } from "../users/repo"\nconst repo = new UserRepo()\nexport const get = (id: string) => repo.getUserById(id)\n',
  "src/api/admin.ts":
    'import { AdminRepo } from "../admin/repo"\nexport const admin = (id: string) => new AdminRepo().getUserById(id)\n',
  "docs/api.md": "getUserById(id) returns the user; see src/users/repo.ts.\n"
}

const project = () => {
  const root = mkdtempSync(join(tmpdir(), "freecode-code-bench-"))
  for (const [name, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(root, name)), { recursive: true })
    writeFileSync(join(root, name), text)
  }
  return root
}

const system = (root: string, config: FreecodeConfigData = {}) =>
  Layer.build(
    toolSystem({
      root,
      config,
      outputConfig: OutputConfig.layerWith({}),
      code: true,
      approval: Approval.layerApproveAll
    }).pipe(Layer.provideMerge(NodeServices.layer))
  )

interface Tally {
  trips: number
  calls: number
  chars: number
  tokens: number
  ms: number
}

/** Runs turns of calls (each turn one round trip) and counts what enters the context. */
const drive = (
  dispatcher: Dispatcher["Service"],
  turns: ReadonlyArray<(prev: ReadonlyArray<ToolResult>) => ReadonlyArray<ToolCall>>
) =>
  Effect.gen(function* () {
    const t: Tally = { trips: 0, calls: 0, chars: 0, tokens: 0, ms: 0 }
    const started = performance.now()
    let prev: ReadonlyArray<ToolResult> = []
    for (const turn of turns) {
      const calls = turn(prev)
      t.trips += 1
      t.calls += calls.length
      prev = yield* dispatcher.dispatchBatch(calls, { sessionId: "bench" })
      const text = [
        ...calls.map((c) => JSON.stringify({ name: c.name, args: c.args })),
        ...prev.map((r) => r.modelOutput)
      ].join("\n")
      t.chars += text.length
      t.tokens += encodeO200k(text).length
    }
    t.ms = performance.now() - started
    return { tally: t, last: prev }
  })

let n = 0
const id = () => `c${++n}`
const call = (name: string, args: unknown): ToolCall => ({ id: id(), name, args })

/** Granular rename: grep, read each file, edit each occurrence, grep to check. */
const renameGranular = [
  () => [call("grep", { pattern: "DB_HOST\\b", "-n": true })],
  () => ["docker-compose.yml", "infra/main.tf", ".env", "docs/setup.md"].map((f) => call("read", { filePath: f })),
  () => [
    call("edit", { filePath: "docker-compose.yml", oldString: "- DB_HOST=db", newString: "- DATABASE_HOST=db" }),
    call("edit", { filePath: "infra/main.tf", oldString: 'variable "DB_HOST"', newString: 'variable "DATABASE_HOST"' }),
    call("edit", { filePath: "infra/main.tf", oldString: "var.DB_HOST\n", newString: "var.DATABASE_HOST\n" }),
    call("edit", { filePath: ".env", oldString: "DB_HOST=localhost", newString: "DATABASE_HOST=localhost" }),
    call("edit", { filePath: "docs/setup.md", oldString: "Set DB_HOST to", newString: "Set DATABASE_HOST to" })
  ],
  () => [call("grep", { pattern: "DB_HOST\\b", "-n": true })]
]
const SED =
  "sed -i -E 's/DB_HOST([^_A-Za-z0-9]|$)/DATABASE_HOST\\1/g' docker-compose.yml infra/main.tf .env docs/setup.md && grep -rn 'DB_HOST\\b' . || true"
const renameShell = [() => [call("bash", { command: SED, description: "rename DB_HOST" })]]
const RENAME_PROGRAM = `for (const f of ["docker-compose.yml", "infra/main.tf", ".env", "docs/setup.md"])
  for (let l of (await tools.read({ filePath: f })).output.split("\\n")) {
    l = l.replace(/^\\s*\\d+\\t/, "")
    if (/DB_HOST\\b/.test(l)) await tools.edit({ filePath: f, oldString: l, newString: l.replace(/DB_HOST\\b/g, "DATABASE_HOST") }).catch((e) => text(f, e.status))
  }`
const renameProgram = [() => [call("code", { program: RENAME_PROGRAM })]]

/** Reference lookup of getUserById callers. */
const refsGranular = [
  () => [call("grep", { pattern: "getUserById", "-n": true })],
  () =>
    ["src/users/repo.ts", "src/admin/repo.ts", "src/api/handler.ts", "src/api/admin.ts"].map((f) =>
      call("read", { filePath: f })
    )
]
const refsShell = [
  () => [
    call("bash", {
      command: "rg -n 'getUserById' --type-add 'd:*.md' ; rg -n 'UserRepo|AdminRepo' src",
      description: "find callers"
    })
  ]
]
const REFS_PROGRAM = `for (const h of (await tools.grep({ pattern: "getUserById\\\\(", "-n": true })).output.split("\\n"))
  if (/^src.*:\\d+:/.test(h) && !/\\/\\/|\\(id: string\\)/.test(h))
    text(h, /UserRepo/.test((await tools.read({ filePath: h.split(":")[0] })).output) ? "UserRepo" : "AdminRepo")`
const refsProgram = [() => [call("code", { program: REFS_PROGRAM })]]

const row = (name: string, t: Tally) =>
  `| ${name} | ${t.trips} | ${t.calls} | ${t.chars} | ${t.tokens} | ${t.ms.toFixed(0)} |`

const measure = (label: string, turns: ReadonlyArray<() => ReadonlyArray<ToolCall>>, config?: FreecodeConfigData) =>
  Effect.scoped(
    Effect.gen(function* () {
      const root = project()
      const ctx = yield* system(root, config)
      const { tally, last } = yield* drive(Context.get(ctx, Dispatcher), turns)
      const env = readFileSync(join(root, ".env"), "utf8")
      rmSync(root, { recursive: true, force: true })
      return { label, tally, last, env }
    })
  )

const main = Effect.gen(function* () {
  console.log("| task | round trips | calls | context chars | context tokens | ms |")
  console.log("| --- | --- | --- | --- | --- | --- |")
  const results = []
  for (const [label, turns] of [
    ["rename: granular", renameGranular],
    ["rename: one shell command", renameShell],
    ["rename: one program", renameProgram],
    ["references: granular", refsGranular],
    ["references: one shell command", refsShell],
    ["references: one program", refsProgram]
  ] as const) {
    const r = yield* measure(label, turns)
    results.push(r)
    console.log(row(label, r.tally))
  }
  const ratio = (a: number, b: number) => (a / b).toFixed(2)
  const [, rs, rp, , fs, fp] = results
  console.log(
    `\nprogram / shell: rename trips ${ratio(rp!.tally.trips, rs!.tally.trips)}, tokens ${ratio(rp!.tally.tokens, rs!.tally.tokens)}; references trips ${ratio(fp!.tally.trips, fs!.tally.trips)}, tokens ${ratio(fp!.tally.tokens, fs!.tally.tokens)}`
  )

  // A deny rule on .env: the shell's one approval covered the whole command; the program's edit is refused.
  const deny: FreecodeConfigData = { permissions: { deny: ["Edit(./.env)"] } }
  const shell = yield* measure("shell with deny", renameShell, deny)
  const program = yield* measure("program with deny", renameProgram, deny)
  console.log(
    `\nwith deny Edit(./.env): after the shell command .env reads ${JSON.stringify(shell.env.split("\n")[0])}; after the program ${JSON.stringify(program.env.split("\n")[0])}`
  )
  console.log(`program's answer: ${program.last[0]!.modelOutput.replace(/\n/g, " | ")}`)

  // The runtime: cold start (first program in the process), warm start, nested call overhead.
  yield* Effect.scoped(
    Effect.gen(function* () {
      const root = project()
      const ctx = yield* system(root)
      const d = Context.get(ctx, Dispatcher)
      const run = (program: string) => d.dispatch(call("code", { program }), { sessionId: "rt" })
      let t = performance.now()
      yield* run("return 1")
      const cold = performance.now() - t
      const warm: Array<number> = []
      for (let i = 0; i < 20; i++) {
        t = performance.now()
        yield* run("return 1")
        warm.push(performance.now() - t)
      }
      warm.sort((a, b) => a - b)
      const N = 200
      t = performance.now()
      for (let i = 0; i < N; i++) yield* d.dispatch(call("read", { filePath: "docs/api.md" }), { sessionId: "rt" })
      const direct = (performance.now() - t) / N
      t = performance.now()
      yield* run(`for (let i = 0; i < ${N}; i++) await tools.read({ filePath: "docs/api.md" })`)
      const nested = (performance.now() - t - warm[10]!) / N
      console.log(
        `\nprogram start: cold ${cold.toFixed(1)} ms (thread + interpreter load), warm median ${warm[10]!.toFixed(1)} ms`
      )
      console.log(
        `read: direct dispatch ${direct.toFixed(3)} ms/call, from a program ${nested.toFixed(3)} ms/call, overhead ${(nested - direct).toFixed(3)} ms`
      )
      rmSync(root, { recursive: true, force: true })
    })
  )
})

Effect.runPromise(main).then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  }
)
