/**
 * Trusted projects: a folder's own `.mcp.json` servers, hooks and language servers start only
 * once the person trusts it (`--trust` for a run, `freecode-tools trust DIR` to record it).
 * Records go to the test run's own state folder, never the person's.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { loadConfig } from "../../layers/config.ts"
import { forget, isTrusted, trust } from "../../src/config/trust.ts"
import { Echo } from "../cli/fixtures.ts"
import { runInProcess, runProcess } from "../cli/helpers.ts"
import { nodeLayer } from "../fs/layers.ts"
import { tempDirs } from "../temp-dirs.ts"

const tmp = tempDirs()

describe("the trust record", () => {
  it.live(
    "damaged records: a file where the folder should be is moved aside, a folder where a record should be is replaced",
    () =>
      Effect.gen(function* () {
        const state = tmp("freecode-state-")
        const a = tmp("freecode-a-")
        const inState = <A, E>(effect: Effect.Effect<A, E>) =>
          effect.pipe(
            Effect.provideService(
              ConfigProvider.ConfigProvider,
              ConfigProvider.fromEnv({ env: { FREECODE_STATE_DIR: state } })
            )
          )
        NodeFs.writeFileSync(NodePath.join(state, "trusted"), "garbage")
        expect(yield* inState(isTrusted(a))).toBe(false)
        yield* inState(trust(a))
        expect(yield* inState(isTrusted(a))).toBe(true)
        const aside = NodeFs.readdirSync(state).find((n) => n.startsWith("trusted.damaged-"))
        expect(NodeFs.readFileSync(NodePath.join(state, aside!), "utf8")).toBe("garbage")
        // A record that became a folder reads as not trusted (fail closed); trusting again mends it.
        const [record] = NodeFs.readdirSync(NodePath.join(state, "trusted"))
        NodeFs.rmSync(NodePath.join(state, "trusted", record!))
        NodeFs.mkdirSync(NodePath.join(state, "trusted", record!))
        expect(yield* inState(isTrusted(a))).toBe(false)
        yield* inState(trust(a))
        expect(yield* inState(isTrusted(a))).toBe(true)
      })
  )

  it.live("trust, look up, forget; a link to the folder is the folder; two at once both stay", () =>
    Effect.gen(function* () {
      const state = tmp("freecode-state-")
      const a = tmp("freecode-a-")
      const b = tmp("freecode-b-")
      const link = NodePath.join(tmp("freecode-l-"), "to-a")
      NodeFs.symlinkSync(a, link)
      const inState = <A, E>(effect: Effect.Effect<A, E>) =>
        effect.pipe(
          Effect.provideService(
            ConfigProvider.ConfigProvider,
            ConfigProvider.fromEnv({ env: { FREECODE_STATE_DIR: state } })
          )
        )
      expect(yield* inState(isTrusted(a))).toBe(false)
      yield* inState(Effect.all([trust(link), trust(b)], { concurrency: 2 }))
      expect(yield* inState(isTrusted(a))).toBe(true)
      expect(yield* inState(isTrusted(b))).toBe(true)
      expect(NodeFs.readdirSync(NodePath.join(state, "trusted"))).toHaveLength(2)
      expect(yield* inState(forget(a))).toEqual({ dir: a, was: true })
      expect(yield* inState(forget(a))).toEqual({ dir: a, was: false })
      expect(yield* inState(isTrusted(a))).toBe(false)
      expect(yield* inState(isTrusted(b))).toBe(true)
      // A damaged record trusts nothing.
      const [entry] = NodeFs.readdirSync(NodePath.join(state, "trusted"))
      NodeFs.writeFileSync(NodePath.join(state, "trusted", entry!), "/somewhere/else\n")
      expect(yield* inState(isTrusted(b))).toBe(false)
    })
  )
})

describe("an untrusted folder", () => {
  it.live("keeps its rules, and leaves out its servers, hooks and language servers, naming them", () =>
    Effect.gen(function* () {
      const root = tmp("freecode-untrusted-")
      NodeFs.writeFileSync(
        NodePath.join(root, "freecode.json"),
        JSON.stringify({
          permissions: { deny: ["Read(./secrets/**)"] },
          hooks: {
            PreToolUse: [
              {
                matcher: "*",
                hooks: [
                  { type: "command", command: "a" },
                  { type: "command", command: "b" }
                ]
              }
            ]
          },
          mcpServers: { fc: { command: "fc" } },
          lsp: { servers: { evil: { command: ["./evil"], extensions: ["x"] }, pyright: false } }
        })
      )
      NodeFs.writeFileSync(
        NodePath.join(root, ".mcp.json"),
        JSON.stringify({ mcpServers: { one: { command: "one" }, two: { url: "http://127.0.0.1:1/mcp" } } })
      )
      const config = yield* loadConfig(root, undefined, { userFile: false, trusted: false }).pipe(
        Effect.provide(nodeLayer)
      )
      expect(config.values).toEqual({
        permissions: { deny: ["Read(./secrets/**)"] },
        lsp: { servers: { pyright: false } }
      })
      expect(config.skipped).toEqual([
        "MCP servers one, two (.mcp.json)",
        "2 hooks (freecode.json)",
        "MCP server fc (freecode.json)",
        "language server evil (freecode.json)"
      ])
      const trusted = yield* loadConfig(root, undefined, { userFile: false, trusted: true }).pipe(
        Effect.provide(nodeLayer)
      )
      expect(Object.keys(trusted.values.mcpServers as object)).toEqual(["one", "two", "fc"])
      expect(trusted.skipped).toEqual([])
    })
  )
})

describe("the CLI", () => {
  /** A project whose own PreToolUse hook leaves a mark when it runs. */
  const hooked = () => {
    const root = tmp("freecode-hooked-")
    const mark = NodePath.join(root, "hook-ran")
    const hooks = { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: `touch '${mark}'` }] }] }
    NodeFs.writeFileSync(NodePath.join(root, "freecode.json"), JSON.stringify({ hooks }))
    return { root, mark, hooks }
  }
  const call = (root: string, ...flags: Array<string>) =>
    runInProcess(["call", "echo", '{"text":"hi"}', "--root", root, ...flags], { tools: [Echo] })

  it.live("says in one line what it skipped and how to trust; --trust, trust and --forget change it", () =>
    Effect.gen(function* () {
      const { root, mark } = hooked()
      const untrusted = yield* call(root)
      expect(untrusted.code).toBe(0)
      expect(untrusted.stdout).toBe("hi\n")
      expect(NodeFs.existsSync(mark)).toBe(false)
      expect(untrusted.stderr).toBe(
        `freecode-tools: ${root} is not trusted, so its own 1 hook (freecode.json) did not start; to trust it, run 'freecode-tools trust ${root}' (or pass --trust for one run).\n`
      )

      const once = yield* call(root, "--trust")
      expect(once.stderr).toBe("")
      expect(NodeFs.existsSync(mark)).toBe(true)
      NodeFs.rmSync(mark)

      const recorded = yield* runInProcess(["trust", root], { tools: [Echo] })
      expect(recorded.code).toBe(0)
      expect(recorded.stdout).toContain(`${root} is trusted`)
      const after = yield* call(root)
      expect(after.stderr).toBe("")
      expect(NodeFs.existsSync(mark)).toBe(true)
      NodeFs.rmSync(mark)

      const forgot = yield* runInProcess(["trust", "--forget", root], { tools: [Echo] })
      expect(forgot.stdout).toContain(`${root} is no longer trusted`)
      const again = yield* call(root)
      expect(again.stderr).toContain("is not trusted")
      expect(NodeFs.existsSync(mark)).toBe(false)

      const missing = yield* runInProcess(["trust", NodePath.join(root, "nope")], { tools: [Echo] })
      expect(missing.code).toBe(2)
      expect(missing.stderr).toContain("does not exist")
    })
  )

  it.live("--help lists trust, and every command that builds a tool system takes --trust", () =>
    Effect.gen(function* () {
      const help = yield* runInProcess(["--help"], { tools: [Echo] })
      expect(help.stdout).toMatch(/\btrust\b.*Trust a project folder/)
      for (const command of ["tools", "call", "run", "mcp"]) {
        const r = yield* runInProcess([command, "--help"], { tools: [Echo] })
        expect(r.stdout, command).toContain("--trust")
      }
      const trustHelp = yield* runInProcess(["trust", "--help"], { tools: [Echo] })
      expect(trustHelp.stdout).toContain("--forget")
    })
  )

  it.live("--config FILE is the person's own: its hooks run in any folder", () =>
    Effect.gen(function* () {
      const { root, mark, hooks } = hooked()
      const own = NodePath.join(tmp("freecode-own-"), "mine.json")
      NodeFs.writeFileSync(own, JSON.stringify({ hooks }))
      const r = yield* call(root, "--config", own)
      expect(r.stderr).toBe("")
      expect(NodeFs.existsSync(mark)).toBe(true)
    })
  )

  it.live(
    "mcp says the same line on stderr (stdout is the protocol's)",
    () =>
      Effect.gen(function* () {
        const { root } = hooked()
        const r = yield* Effect.promise(() => runProcess(["mcp", "--root", root]))
        expect(r.stdout).toBe("")
        const lines = r.stderr.split("\n").filter((l) => l.includes("trust"))
        expect(lines).toEqual([
          `freecode-tools: ${root} is not trusted, so its own 1 hook (freecode.json) did not start; to trust it, run 'freecode-tools trust ${root}' (or pass --trust for one run).`
        ])
      }),
    60_000
  )
})
