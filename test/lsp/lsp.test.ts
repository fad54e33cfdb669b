import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FileSystem, Layer, Scope } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { trust } from "../../src/config/trust.ts"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { errorsAfterEdit } from "../../src/lsp/after-edit.ts"
import { onPath, SERVERS } from "../../src/lsp/servers.ts"
import { LspClients } from "../../src/lsp/service.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { LspTool } from "../../src/tools/lsp.ts"
import { nodeLayer } from "../fs/layers.ts"
import { makeCtx, runFailure } from "../tools/helpers.ts"
import { alive, eventually } from "./wait.ts"

const FIXTURE = new URL("../fixtures/lsp-project", import.meta.url).pathname
const NODE_MODULES = new URL("../../node_modules", import.meta.url).pathname

/** A copy of the fixture in a temp dir, with the repository's node_modules (TypeScript 7) linked in. */
const project = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-lsp-" })
  cpSync(FIXTURE, root, { recursive: true })
  symlinkSync(NODE_MODULES, join(root, "node_modules"))
  return root
}).pipe(Effect.provide(nodeLayer))

/** Processes whose working directory is `dir` (the servers started for it). */
const processesIn = (dir: string): Array<string> =>
  readdirSync("/proc").filter((pid) => {
    if (!/^\d+$/.test(pid)) return false
    try {
      return readlinkSync(`/proc/${pid}/cwd`) === dir
    } catch {
      return false
    }
  })

const lsp = (args: Record<string, unknown>) =>
  Orchestrator.use((o) => o.execute({ id: "l", name: "lsp", args }, { sessionId: "s" }))

/**
 * Runs `body` with a tool system for `root`, closing it (and its servers) at the end. The person
 * trusts `root` (in the test run's own state folder): its node_modules' servers may start
 * (test/lsp/trust.test.ts covers a folder that is not trusted).
 */
const withSystem = <A, E>(root: string, body: Effect.Effect<A, E, Orchestrator>) =>
  Effect.gen(function* () {
    yield* trust(root).pipe(Effect.orDie)
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(testToolSystem({ root, tools: [LspTool] }), scope)
    const exit = yield* body.pipe(Effect.provide(context), Effect.exit)
    yield* Scope.close(scope, Exit.void)
    return yield* exit
  })

const lines = (output: string) => output.split("\n")

/** test/fixtures/lsp-ts5: a devDependency whose own node_modules hold TypeScript 5 and typescript-language-server. */
const TS5_PACKAGE = new URL("../fixtures/lsp-ts5", import.meta.url).pathname

/** Where Node would find `name` from `dir`: the nearest node_modules/<name> above it. */
const installed = (dir: string, name: string): string => {
  for (let at = dir; ; at = dirname(at)) {
    const candidate = join(at, "node_modules", name)
    if (existsSync(join(candidate, "package.json"))) return candidate
    if (dirname(at) === at) throw new Error(`${name} is not installed for ${dir}; run npm ci`)
  }
}

/**
 * A copy of the fixture whose node_modules holds TypeScript 5 and typescript-language-server, both
 * real packages installed by npm ci (through the lsp-ts5 devDependency, so their tsc never
 * replaces the project's TypeScript 7).
 */
const projectOnTypeScript5 = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-lsp-ts5-" })
  cpSync(FIXTURE, root, { recursive: true })
  mkdirSync(join(root, "node_modules", ".bin"), { recursive: true })
  symlinkSync(installed(TS5_PACKAGE, "typescript"), join(root, "node_modules", "typescript"))
  symlinkSync(
    join(installed(TS5_PACKAGE, "typescript-language-server"), "lib", "cli.mjs"),
    join(root, "node_modules", ".bin", "typescript-language-server")
  )
  return root
}).pipe(Effect.provide(nodeLayer))

describe("lsp on typescript-language-server, for a workspace on TypeScript 5", () => {
  it.live(
    "the workspace's TypeScript picks the server; references and a type error come back as with TypeScript 7",
    () =>
      Effect.gen(function* () {
        const root = yield* projectOnTypeScript5
        const typescript = SERVERS.find((s) => s.id === "typescript")!
        const resolved = yield* typescript
          .resolve(root, { projectRoot: root, trusted: true })
          .pipe(Effect.provide(LocalFs.layerNative))
        expect(resolved).toEqual({
          command: join(root, "node_modules/.bin/typescript-language-server"),
          args: ["--stdio"],
          initializationOptions: { tsserver: { useSyntaxServer: "never" } }
        })
        writeFileSync(
          join(root, "src/broken.ts"),
          'import { getUserById } from "./users/db.ts"\n\nexport const user = getUserById("1")\n'
        )
        yield* withSystem(
          root,
          Effect.gen(function* () {
            // The first request on a fresh server: answered from the whole project, not the open file.
            // TypeScript 5 also counts each import (and the alias) as a reference; still nothing from
            // the other module's getUserById, the comments or the README.
            const db = yield* lsp({ operation: "findReferences", filePath: "src/users/db.ts", line: 9, character: 17 })
            expect(db.status).toBe("ok")
            expect(lines(db.modelOutput)).toEqual([
              'src/api/handler.ts:1:10: import { getUserById } from "../users/db.ts"',
              "src/api/handler.ts:4:71: export const handle = (ids: ReadonlyArray<number>) => ids.map((id) => getUserById(id)?.name)",
              "src/api/handler.ts:6:28: export const first = () => getUserById(1)",
              'src/broken.ts:1:10: import { getUserById } from "./users/db.ts"',
              'src/broken.ts:3:21: export const user = getUserById("1")',
              'src/cli/show.ts:1:10: import { getUserById as fetchUser } from "../users/db.ts"',
              'src/cli/show.ts:1:25: import { getUserById as fetchUser } from "../users/db.ts"',
              'src/cli/show.ts:4:45: export const show = (id: number): string => fetchUser(id)?.name ?? "unknown"',
              'src/users/repo.ts:1:10: import { getUserById, type User } from "./db.ts"',
              "src/users/repo.ts:9:12: return getUserById(id)"
            ])
            const diagnostics = yield* lsp({ operation: "diagnostics", filePath: "src/broken.ts" })
            expect(diagnostics.modelOutput).toBe(
              "src/broken.ts:3:33: error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'."
            )
            expect(processesIn(root).length).toBeGreaterThan(0)
          })
        )
        expect(processesIn(root)).toEqual([])
      }),
    120_000
  )
})

describe("lsp on the real TypeScript 7 server", () => {
  it.live(
    "findReferences on each getUserById returns exactly its own callers, not the other module's or comments",
    () =>
      Effect.gen(function* () {
        const root = yield* project
        yield* withSystem(
          root,
          Effect.gen(function* () {
            // The first request on a fresh server: answered from the whole project, not the open file.
            const db = yield* lsp({ operation: "findReferences", filePath: "src/users/db.ts", line: 9, character: 17 })
            expect(db.status).toBe("ok")
            expect(lines(db.modelOutput)).toEqual([
              "src/api/handler.ts:4:71: export const handle = (ids: ReadonlyArray<number>) => ids.map((id) => getUserById(id)?.name)",
              "src/api/handler.ts:6:28: export const first = () => getUserById(1)",
              'src/cli/show.ts:1:10: import { getUserById as fetchUser } from "../users/db.ts"',
              'src/cli/show.ts:4:45: export const show = (id: number): string => fetchUser(id)?.name ?? "unknown"',
              "src/users/repo.ts:9:12: return getUserById(id)"
            ])
            const legacy = yield* lsp({
              operation: "findReferences",
              filePath: "src/legacy/store.ts",
              line: 2,
              character: 17
            })
            expect(lines(legacy.modelOutput)).toEqual([
              'src/legacy/report.ts:4:48: export const report = (key: string): string => getUserById(key)?.key ?? "none"'
            ])
          })
        )
      }),
    120_000
  )

  it.live(
    "definition, hover, implementation, symbols and call hierarchy",
    () =>
      Effect.gen(function* () {
        const root = yield* project
        yield* withSystem(
          root,
          Effect.gen(function* () {
            const def = yield* lsp({ operation: "goToDefinition", filePath: "src/cli/show.ts", line: 4, character: 45 })
            expect(def.modelOutput).toBe(
              "src/users/db.ts:9:17: export function getUserById(id: number): User | undefined {"
            )
            const hover = yield* lsp({ operation: "hover", filePath: "src/users/db.ts", line: 9, character: 17 })
            expect(hover.modelOutput).toContain("function getUserById(id: number): User | undefined")
            expect(hover.modelOutput).toContain("getUserById looks a user up by numeric id.")
            const impl = yield* lsp({
              operation: "goToImplementation",
              filePath: "src/users/repo.ts",
              line: 3,
              character: 18
            })
            expect(impl.modelOutput).toBe("src/users/repo.ts:7:14: export class MemoryRepo implements Repo {")
            const symbols = yield* lsp({ operation: "documentSymbol", filePath: "src/users/repo.ts" })
            expect(lines(symbols.modelOutput)).toEqual([
              "src/users/repo.ts",
              "1:10 variable getUserById",
              "1:28 variable User",
              "3:18 interface Repo",
              "  4:3 method find",
              "7:14 class MemoryRepo",
              "  8:3 method find"
            ])
            const ws = yield* lsp({ operation: "workspaceSymbol", filePath: "src/users/db.ts", query: "getUserById" })
            expect(lines(ws.modelOutput).sort()).toEqual([
              "src/legacy/store.ts:2:17: function getUserById",
              "src/users/db.ts:9:17: function getUserById"
            ])
            const incoming = yield* lsp({
              operation: "incomingCalls",
              filePath: "src/users/db.ts",
              line: 9,
              character: 17
            })
            expect(incoming.modelOutput).toContain("src/api/handler.ts:4:14: function handle")
            expect(incoming.modelOutput).toContain(
              "  src/api/handler.ts:6:28: export const first = () => getUserById(1)"
            )
            expect(incoming.modelOutput).toContain("src/users/repo.ts:8:3: method find")
            expect(incoming.modelOutput).not.toContain("legacy")
            const outgoing = yield* lsp({
              operation: "outgoingCalls",
              filePath: "src/legacy/report.ts",
              line: 4,
              character: 14
            })
            expect(outgoing.modelOutput).toContain("src/legacy/store.ts:2:17: function getUserById")
          })
        )
      }),
    120_000
  )

  it.live(
    "diagnostics show a type error, follow the file as it changes, and the server stops with the scope",
    () =>
      Effect.gen(function* () {
        const root = yield* project
        const broken = join(root, "src/broken.ts")
        writeFileSync(broken, 'import { getUserById } from "./users/db.ts"\n\nexport const user = getUserById("1")\n')
        yield* withSystem(
          root,
          Effect.gen(function* () {
            const first = yield* lsp({ operation: "diagnostics", filePath: "src/broken.ts" })
            expect(first.status).toBe("ok")
            expect(first.modelOutput).toBe(
              "src/broken.ts:3:33: error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'."
            )
            expect(processesIn(root).length).toBeGreaterThan(0)
            writeFileSync(
              broken,
              'import { getUserById } from "./users/db.ts"\n\nexport const name = getUserById(1)?.name\n'
            )
            const fixed = yield* lsp({ operation: "diagnostics", filePath: "src/broken.ts" })
            expect(fixed.modelOutput).toBe("src/broken.ts: no problems.")
          })
        )
        expect(processesIn(root)).toEqual([])
      }),
    120_000
  )

  it.live(
    "results are capped at 100, with a line that says how many there were",
    () =>
      Effect.gen(function* () {
        const root = yield* project
        const calls = Array.from({ length: 150 }, (_, i) => `export const c${i} = ping()`)
        writeFileSync(
          join(root, "src/many.ts"),
          ["export function ping(): number { return 1 }", ...calls, ""].join("\n")
        )
        yield* withSystem(
          root,
          Effect.gen(function* () {
            const refs = yield* lsp({ operation: "findReferences", filePath: "src/many.ts", line: 1, character: 17 })
            const out = lines(refs.modelOutput)
            expect(out).toHaveLength(101)
            expect(out[0]).toBe("src/many.ts:2:19: export const c0 = ping()")
            expect(out[99]).toBe("src/many.ts:101:20: export const c99 = ping()")
            expect(out[100]).toBe(
              "(Showing 100 of 150 references; narrow the query or ask about a more specific symbol.)"
            )
          })
        )
      }),
    120_000
  )

  it.live(
    "bad positions and unsupported files fail with what to do instead; a missing server is reported once",
    () =>
      Effect.gen(function* () {
        const root = yield* project
        writeFileSync(join(root, "tool.py"), "print('hi')\n")
        writeFileSync(join(root, "notes.txt"), "text\n")
        yield* withSystem(
          root,
          Effect.gen(function* () {
            const noPos = yield* lsp({ operation: "hover", filePath: "src/users/db.ts" })
            expect(noPos.modelOutput).toContain("hover needs line and character (1-based")
            const zero = yield* lsp({ operation: "hover", filePath: "src/users/db.ts", line: 0, character: 1 })
            expect(zero.modelOutput).toContain("1-based")
            const past = yield* lsp({ operation: "hover", filePath: "src/users/db.ts", line: 500, character: 1 })
            expect(past.modelOutput).toContain("src/users/db.ts has 12 lines; line 500 does not exist.")
            const missing = yield* lsp({ operation: "documentSymbol", filePath: "src/users/dbb.ts" })
            expect(missing.modelOutput).toBe("File not found: src/users/dbb.ts. Did you mean src/users/db.ts?")
            const dir = yield* lsp({ operation: "documentSymbol", filePath: "src/users" })
            expect(dir.modelOutput).toContain("src/users is not a file")
            const txt = yield* lsp({ operation: "documentSymbol", filePath: "notes.txt" })
            expect(txt.modelOutput).toContain("No language server handles .txt files here.")
            const noQuery = yield* lsp({ operation: "workspaceSymbol", filePath: "src/users/db.ts" })
            expect(noQuery.modelOutput).toContain("workspaceSymbol needs a query")
            const py1 = yield* lsp({ operation: "documentSymbol", filePath: "tool.py" })
            const py2 = yield* lsp({ operation: "documentSymbol", filePath: "tool.py" })
            expect(py1.status).toBe("error")
            expect(py1.modelOutput).toContain("pyright-langserver is not on PATH")
            expect(py2.modelOutput).toBe(py1.modelOutput)
          })
        )
      }),
    120_000
  )

  it.live(
    "a server that crashes is restarted after a backoff, and a later call works",
    () =>
      Effect.gen(function* () {
        const root = yield* project
        const hover = { operation: "hover", filePath: "src/users/db.ts", line: 9, character: 17 }
        yield* withSystem(
          root,
          Effect.gen(function* () {
            const before = yield* lsp(hover)
            expect(before.modelOutput).toContain("function getUserById")
            const [pid] = processesIn(root)
            expect(pid).toBeDefined()
            process.kill(Number(pid), "SIGKILL")
            const started = Date.now()
            // The call may race the crash (then it is retried once as a transient failure); either way
            // it waits out the 1 s backoff and answers from a new server.
            const after = yield* lsp(hover)
            expect(after.modelOutput).toContain("function getUserById")
            expect(after).toMatchObject({ status: "ok" })
            expect(Date.now() - started).toBeGreaterThanOrEqual(900)
            const now = processesIn(root)
            expect(now).not.toContain(pid)
            expect(now.length).toBeGreaterThan(0)
          })
        )
      }),
    120_000
  )

  it.live(
    "a server that fails to start is reported with its reason, once, and not started again",
    () =>
      Effect.gen(function* () {
        const root = yield* project
        const starts = join(root, "starts.log")
        writeFileSync(join(root, "a.brk"), "x\n")
        const broken = {
          id: "broken",
          extensions: { brk: "broken" },
          rootMarkers: [],
          resolve: () =>
            Effect.succeed({
              command: process.execPath,
              args: [
                "-e",
                `require("fs").appendFileSync(${JSON.stringify(starts)}, "start\\n"); console.error("toolchain component missing"); process.exit(3)`
              ]
            })
        }
        yield* Effect.gen(function* () {
          const first = yield* runFailure(LspTool, { operation: "documentSymbol", filePath: "a.brk" }, makeCtx(root))
          expect(first).toContain("The broken language server")
          expect(first).toContain("failed to start")
          expect(first).toContain("code 3")
          expect(first).toContain("toolchain component missing")
          const second = yield* runFailure(LspTool, { operation: "documentSymbol", filePath: "a.brk" }, makeCtx(root))
          expect(second).toBe(first)
          expect(readFileSync(starts, "utf8")).toBe("start\n")
        }).pipe(
          Effect.provide(LspClients.layerWith({ servers: [broken, ...SERVERS] }).pipe(Layer.provideMerge(nodeLayer)))
        )
      }),
    120_000
  )

  it.live(
    "a server whose stdin breaks while it still runs is treated as crashed: killed, and the call is transient",
    () =>
      Effect.gen(function* () {
        const root = yield* project
        const pids = join(root, "pids.log")
        const closed = join(root, "stdin-closed")
        writeFileSync(join(root, "a.half"), "x\n")
        // Answers initialize; once the document is open, closes its stdin and lingers: our next
        // write fails with EPIPE while the process is alive, as after a SIGKILL whose exit Node has
        // not reported yet. Paced by the messages, not a timer: under load the open came late.
        const script = `
          process.on("uncaughtException", () => {})
          require("fs").appendFileSync(${JSON.stringify(pids)}, process.pid + "\\n")
          let buf = ""
          process.stdin.on("data", (d) => {
            buf += d
            for (;;) {
              const m = /Content-Length: (\\d+)\\r\\n\\r\\n/.exec(buf)
              if (m === null || buf.length < m.index + m[0].length + Number(m[1])) return
              const end = m.index + m[0].length + Number(m[1])
              const msg = JSON.parse(buf.slice(m.index + m[0].length, end))
              buf = buf.slice(end)
              if (msg.method === "initialize") {
                const body = JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: { capabilities: { hoverProvider: true } } })
                process.stdout.write("Content-Length: " + Buffer.byteLength(body) + "\\r\\n\\r\\n" + body)
              }
              if (msg.method === "textDocument/didOpen") {
                process.stdin.destroy()
                require("fs").closeSync(0)
                require("fs").writeFileSync(${JSON.stringify(closed)}, "closed")
                return
              }
            }
          })
          setInterval(() => {}, 1000)`
        const half = {
          id: "half",
          extensions: { half: "half" },
          rootMarkers: [],
          resolve: () => Effect.succeed({ command: process.execPath, args: ["-e", script] })
        }
        yield* Effect.gen(function* () {
          const clients = yield* LspClients
          const doc = yield* clients.open(join(root, "a.half"), root)
          // The request goes once the server has closed its stdin (it says so in a file).
          yield* eventually("the server closed its stdin", () => existsSync(closed))
          const error = yield* clients.request(doc, "textDocument/hover", {}).pipe(Effect.flip)
          expect(error._tag).toBe("TransientFailure")
          expect(error.message).toBe("The half server exited during textDocument/hover.")
          const [pid] = readFileSync(pids, "utf8").trim().split("\n")
          // Killed: its pid stops answering signals (a bound against a hang, not a deadline to meet).
          yield* eventually(`the half server (pid ${pid}) was killed`, () => !alive(Number(pid)))
        }).pipe(
          Effect.provide(LspClients.layerWith({ servers: [half, ...SERVERS] }).pipe(Layer.provideMerge(nodeLayer)))
        )
      }),
    120_000
  )

  it.live(
    "errorsAfterEdit lists the errors an edit introduced, all of them for a file the server had not seen",
    () =>
      Effect.gen(function* () {
        const root = yield* project
        const file = join(root, "src/edited.ts")
        writeFileSync(file, "export const a: number = 'x'\nexport const b: string = 1\n")
        yield* Effect.gen(function* () {
          const text = yield* errorsAfterEdit(file, root)
          expect(text).toBe(
            [
              "Errors in this file now:",
              "src/edited.ts:1:14: error TS2322: Type 'string' is not assignable to type 'number'.",
              "src/edited.ts:2:14: error TS2322: Type 'number' is not assignable to type 'string'."
            ].join("\n")
          )
          expect(yield* errorsAfterEdit(join(root, "src/users/db.ts"), root)).toBeUndefined()
          expect(yield* errorsAfterEdit(join(root, "README.md"), root)).toBeUndefined()

          // The server has seen the file now: the next edit reports only the error it introduced,
          // though it moved the old ones down a line.
          writeFileSync(file, "export const c: boolean = 0\nexport const a: number = 'x'\nexport const b: string = 1\n")
          expect(yield* errorsAfterEdit(file, root)).toBe(
            [
              "New errors in this file:",
              "src/edited.ts:1:14: error TS2322: Type 'number' is not assignable to type 'boolean'.",
              "(2 errors that were there before are not shown.)"
            ].join("\n")
          )
          // An edit that fixes one and adds none reports nothing.
          writeFileSync(
            file,
            "export const c: boolean = false\nexport const a: number = 'x'\nexport const b: string = 1\n"
          )
          expect(yield* errorsAfterEdit(file, root)).toBeUndefined()
        }).pipe(Effect.provide(LspClients.layerWith({ trusted: true }).pipe(Layer.provideMerge(nodeLayer))))
      }),
    120_000
  )
})

// clangd publishes diagnostics (push) rather than answering textDocument/diagnostic, so it covers
// the other path. It is a system package (apt install clangd); without it these tests are skipped.
const clangd = await Effect.runPromise(onPath("clangd").pipe(Effect.provide(LocalFs.layerNative)))
describe.skipIf(clangd === undefined)("lsp on a real clangd (push diagnostics)", () => {
  it.live(
    "reports a C file's errors from publishDiagnostics, and its symbols",
    () =>
      Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const root = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-clangd-" })
        writeFileSync(
          join(root, "main.c"),
          "static int twice(int x) { return 2 * x; }\n\nint main(void) {\n  return twice(missing);\n}\n"
        )
        yield* withSystem(
          root,
          Effect.gen(function* () {
            const diagnostics = yield* lsp({ operation: "diagnostics", filePath: "main.c" })
            expect(diagnostics.status).toBe("ok")
            expect(diagnostics.modelOutput).toMatch(
              /^main\.c:4:16: error clang undeclared_var_use: use of undeclared identifier 'missing'/i
            )
            expect(diagnostics.metadata).toMatchObject({ server: "clangd" })
            const symbols = yield* lsp({ operation: "documentSymbol", filePath: "main.c" })
            expect(lines(symbols.modelOutput)).toEqual(["main.c", "1:12 function twice", "3:5 function main"])
          })
        )
        expect(processesIn(root)).toEqual([])
      }).pipe(Effect.provide(nodeLayer)),
    120_000
  )
})
