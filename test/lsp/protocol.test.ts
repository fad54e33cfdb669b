/**
 * The client's side of the protocol against a scripted server (test/lsp/fake-server.mjs): the
 * server's own requests answered, files synced before a request, request deadlines, crash restarts
 * with a doubling backoff and a limit. Plus which TypeScript server the table picks by version,
 * and servers added or turned off in freecode.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FileSystem, Layer, Result, Scope, Tracer } from "effect"
import { parseConfig } from "../../layers/config.ts"
import { toolSystem } from "../../layers/system.ts"
import { SERVERS } from "../../src/lsp/servers.ts"
import { LspClients, type LspSettings } from "../../src/lsp/service.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { LspTool } from "../../src/tools/lsp.ts"
import { nodeLayer } from "../fs/layers.ts"
import { FAKE, fakeProject, fakeSpec } from "./fake.ts"

const fake = fakeSpec

/** A temp project with `a.fake`, and the path of the fake server's start log. */
const project = fakeProject("freecode-lsp-proto-")

const starts = (log: string): Array<number> =>
  readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((l) => Number(l.split(" ")[1]))

/** open + hover through LspClients; the hover's text, or the failure. */
const hover = (file: string, root: string) =>
  Effect.gen(function* () {
    const clients = yield* LspClients
    const doc = yield* clients.open(file, root)
    const result = yield* clients.request<{ contents: { value: string } }>(doc, "textDocument/hover", {
      textDocument: { uri: doc.uri },
      position: { line: 0, character: 0 }
    })
    return result.contents.value
  })

const withClients = (settings: Partial<LspSettings>) => LspClients.layerWith(settings)

describe("LspClients against a scripted server", () => {
  it.live(
    "answers the server's workspace/configuration and client/registerCapability, and syncs the file first",
    () =>
      Effect.gen(function* () {
        const { root, file, log } = yield* project
        yield* Effect.gen(function* () {
          const first = JSON.parse(yield* hover(file, root))
          // null per section asked: "use your defaults"; registerCapability answered with null (success).
          expect(first).toEqual({ answers: [[null, null], null], text: "first text\n" })
          writeFileSync(file, "changed on disk\n")
          const second = JSON.parse(yield* hover(file, root))
          expect(second.text).toBe("changed on disk\n")
        }).pipe(Effect.provide(withClients({ servers: [fake("asks", log)] })))
        expect(starts(log)).toHaveLength(1)
      }).pipe(Effect.provide(nodeLayer)),
    60_000
  )

  it.live(
    "a request the server never answers fails at the deadline with what to do",
    () =>
      Effect.gen(function* () {
        const { root, file, log } = yield* project
        const started = Date.now()
        const error = yield* hover(file, root).pipe(
          Effect.flip,
          Effect.provide(withClients({ servers: [fake("hang", log)], requestTimeoutMs: 500 }))
        )
        expect(error._tag).toBe("ToolFailure")
        expect(error.message).toBe("The fake server did not answer textDocument/hover in 0.5 s; try again.")
        expect(Date.now() - started).toBeGreaterThanOrEqual(500)
        expect(Date.now() - started).toBeLessThan(10_000)
      }).pipe(Effect.provide(nodeLayer)),
    60_000
  )

  it.live(
    "a server that keeps crashing is restarted after 1×, then 2× the backoff, and given up after maxRestarts",
    () =>
      Effect.gen(function* () {
        const { root, file, log } = yield* project
        const errors = yield* Effect.forEach([1, 2, 3, 4], () => hover(file, root).pipe(Effect.flip)).pipe(
          Effect.provide(withClients({ servers: [fake("crash", log)], restartBackoffMs: 300, maxRestarts: 3 }))
        )
        expect(errors.slice(0, 3).map((e) => e._tag)).toEqual([
          "TransientFailure",
          "TransientFailure",
          "TransientFailure"
        ])
        expect(errors[3]!.message).toBe(`The fake server for ${root} crashed 3 times; it is not restarted again.`)
        const times = starts(log)
        expect(times).toHaveLength(3)
        expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(300)
        expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(600)
      }).pipe(Effect.provide(nodeLayer)),
    60_000
  )

  it.live("open and each request run in a span named for the service member, with what they were about", () =>
    Effect.gen(function* () {
      const { root, file, log } = yield* project
      const spans: Array<Tracer.NativeSpan> = []
      const tracer = Tracer.make({
        span(options) {
          const span = new Tracer.NativeSpan(options)
          spans.push(span)
          return span
        }
      })
      yield* hover(file, root).pipe(
        Effect.provide(withClients({ servers: [fake("asks", log)] })),
        Effect.provideService(Tracer.Tracer, tracer)
      )
      const ours = spans.filter((s) => s.name.startsWith("LspClients."))
      expect(ours.map((s) => [s.name, Object.fromEntries(s.attributes)])).toEqual([
        ["LspClients.open", { path: file }],
        ["LspClients.request", { server: "fake", method: "textDocument/hover" }]
      ])
      expect(ours.every((s) => s.status._tag === "Ended")).toBe(true)
    }).pipe(Effect.provide(nodeLayer))
  )
})

describe("the TypeScript server follows the workspace's TypeScript version", () => {
  const typescript = SERVERS.find((s) => s.id === "typescript")!
  /** A workspace the person trusts: its own programs may start (test/lsp/trust.test.ts: when not). */
  const trusted = (projectRoot: string) => ({ projectRoot, trusted: true })

  /** A workspace whose node_modules holds TypeScript `version` and the given .bin entries. */
  const workspace = (base: string, name: string, version: string | undefined, bins: ReadonlyArray<string>) => {
    const root = join(base, name)
    mkdirSync(join(root, "node_modules", ".bin"), { recursive: true })
    if (version !== undefined) {
      mkdirSync(join(root, "node_modules", "typescript"))
      writeFileSync(join(root, "node_modules", "typescript", "package.json"), JSON.stringify({ version }))
    }
    for (const bin of bins) writeFileSync(join(root, "node_modules", ".bin", bin), "#!/bin/sh\n")
    return root
  }

  it.live("7 and later: tsc --lsp --stdio; 6 and older: typescript-language-server --stdio; else why not", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const base = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-ts-version-" })
      const both = ["tsc", "typescript-language-server"]
      const ts7 = workspace(base, "ts7", "7.0.2", both)
      expect(yield* typescript.resolve(ts7, trusted(ts7))).toEqual({
        command: join(ts7, "node_modules/.bin/tsc"),
        args: ["--lsp", "--stdio"]
      })
      const ts6 = workspace(base, "ts6", "6.0.3", both)
      expect(yield* typescript.resolve(ts6, trusted(ts6))).toEqual({
        command: join(ts6, "node_modules/.bin/typescript-language-server"),
        args: ["--stdio"],
        initializationOptions: { tsserver: { useSyntaxServer: "never" } }
      })
      const ts5 = workspace(base, "ts5", "5.9.3", both)
      expect(yield* typescript.resolve(ts5, trusted(ts5))).toMatchObject({ args: ["--stdio"] })

      // Without typescript-language-server in the workspace or on PATH, the reason names what to install.
      const path = process.env.PATH
      process.env.PATH = ""
      try {
        const bare = workspace(base, "ts6-bare", "6.0.3", ["tsc"])
        expect(yield* typescript.resolve(bare, trusted(bare))).toEqual({
          missing: "TypeScript 6.0.3 has no built-in language server; install typescript-language-server"
        })
        const none = workspace(base, "none", undefined, [])
        expect(yield* typescript.resolve(none, trusted(none))).toEqual({
          missing: "no TypeScript in the workspace's node_modules (install typescript@7, or typescript-language-server)"
        })
      } finally {
        process.env.PATH = path
      }
    }).pipe(Effect.provide(nodeLayer))
  )
})

describe("freecode.json's lsp section", () => {
  it.live(
    "adds a server by command and extensions, and turns a built-in off",
    () =>
      Effect.gen(function* () {
        const { root, log } = yield* project
        writeFileSync(join(root, "b.ts"), "export const b = 1\n")
        const config = {
          lsp: {
            servers: {
              fake: { command: [process.execPath, FAKE, "asks", log], extensions: [".fake"] },
              typescript: false as const
            }
          }
        }
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          toolSystem({ root, outputConfig: OutputConfig.layerWith({}), tools: [LspTool], config }).pipe(
            Layer.provideMerge(nodeLayer)
          ),
          scope
        )
        const lsp = (args: Record<string, unknown>) =>
          Orchestrator.use((o) => o.execute({ id: "l", name: "lsp", args }, { sessionId: "s" })).pipe(
            Effect.provide(context)
          )
        const hovered = yield* lsp({ operation: "hover", filePath: "a.fake", line: 1, character: 1 })
        const ts = yield* lsp({ operation: "documentSymbol", filePath: "b.ts" })
        yield* Scope.close(scope, Exit.void)
        expect(hovered.status).toBe("ok")
        expect(JSON.parse(hovered.modelOutput)).toMatchObject({ text: "first text\n" })
        expect(hovered.metadata).toMatchObject({ server: "fake" })
        expect(ts.modelOutput).toContain("No language server handles .ts files here.")

        const missing = {
          lsp: { servers: { lua: { command: ["lua-language-server-not-here"], extensions: ["lua"] } } }
        }
        writeFileSync(join(root, "x.lua"), "print(1)\n")
        const scope2 = yield* Scope.make()
        const context2 = yield* Layer.buildWithScope(
          toolSystem({ root, outputConfig: OutputConfig.layerWith({}), tools: [LspTool], config: missing }).pipe(
            Layer.provideMerge(nodeLayer)
          ),
          scope2
        )
        const lua = yield* Orchestrator.use((o) =>
          o.execute(
            { id: "l", name: "lsp", args: { operation: "documentSymbol", filePath: "x.lua" } },
            { sessionId: "s" }
          )
        ).pipe(Effect.provide(context2))
        yield* Scope.close(scope2, Exit.void)
        expect(lua.modelOutput).toBe(
          `No lua language server for ${root}: lua-language-server-not-here is not on PATH. Use grep and read instead.`
        )
      }).pipe(Effect.provide(nodeLayer)),
    60_000
  )

  it("is validated: a server without a command is an error naming the key", () => {
    const bad = parseConfig({ lsp: { servers: { lua: { extensions: ["lua"] } } } }, "freecode.json")
    expect(Result.isFailure(bad) && bad.failure.message).toBe(
      "freecode.json is not valid:\n- lsp.servers.lua.command: missing"
    )
    const unknown = parseConfig({ lsp: { server: {} } }, "freecode.json")
    expect(Result.isFailure(unknown) && unknown.failure.message).toContain(
      "lsp.server: unknown key; expected one of servers"
    )
  })
})
