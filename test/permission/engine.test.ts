/** The permission engine on real tool declarations and real files (symlinks included). */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { FreecodeConfig } from "../../src/config/load.ts"
import { PermissionEngine, type Policy } from "../../src/permission/engine.ts"
import { GrantStore } from "../../src/session/grants.ts"
import { SessionStore } from "../../src/session/store.ts"
import { defineTool, type Tool, type ToolContext } from "../../src/tool/tool.ts"
import { Workspace } from "../../src/tool/workspace.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { GrepTool } from "../../src/tools/grep.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { WebFetchTool } from "../../src/tools/webfetch.ts"
import { WriteTool } from "../../src/tools/write.ts"
import { nodeLayer } from "../fs/layers.ts"

const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-perm-")))
const root = NodePath.join(base, "project")
const outside = NodePath.join(base, "outside")
const extra = NodePath.join(base, "extra")
for (const d of [root, outside, extra, `${root}/src`, `${root}/secrets`]) NodeFs.mkdirSync(d, { recursive: true })
NodeFs.writeFileSync(`${root}/src/a.ts`, "x\n")
NodeFs.writeFileSync(`${root}/.env`, "TOKEN=1\n")
NodeFs.writeFileSync(`${root}/.env.example`, "TOKEN=\n")
NodeFs.writeFileSync(`${root}/secrets/key.txt`, "k\n")
NodeFs.writeFileSync(`${outside}/x.txt`, "x\n")
NodeFs.symlinkSync(outside, `${root}/link-out`)
NodeFs.symlinkSync(`${outside}/x.txt`, `${root}/file-link`)
afterAll(() => NodeFs.rmSync(base, { recursive: true, force: true }))

const mcp = (id: string, mutates = true) =>
  defineTool({
    id,
    description: "An MCP tool.",
    source: "mcp",
    parameters: Schema.Struct({}),
    mutates,
    permissions: { operations: ["mcp.call"] },
    execute: () => Effect.succeed({ title: id, output: "" })
  })

const engineWith = (config: FreecodeConfigData) =>
  PermissionEngine.layer.pipe(
    Layer.provide([FreecodeConfig.layerWith(config), Workspace.layer(root)]),
    Layer.provideMerge(nodeLayer)
  )

const ctx = (sessionId = "s1"): ToolContext => ({
  sessionId,
  callId: "c",
  root,
  canSeeImages: false,
  emit: () => Effect.void
})
const t = (tool: unknown) => tool as Tool

/** Decides each [tool, args] under a config; returns the behaviours. */
const decide = (
  config: FreecodeConfigData,
  calls: ReadonlyArray<readonly [unknown, unknown]>,
  profiles: ReadonlyArray<string> = []
) =>
  Effect.gen(function* () {
    const engine = yield* PermissionEngine
    const chain: Array<Policy> = []
    for (const p of profiles) chain.push(yield* engine.profile(p))
    const out: Array<string> = []
    for (const [tool, args] of calls)
      out.push((yield* engine.decide({ tool: t(tool), args, ctx: ctx() }, chain)).behavior)
    return out
  }).pipe(Effect.provide(engineWith(config)))

const bash = (command: string) => [BashTool, { command }] as const
const read = (filePath: string) => [ReadTool, { filePath }] as const
const write = (filePath: string) => [WriteTool, { filePath, content: "x" }] as const
const edit = (filePath: string) => [EditTool, { filePath, oldString: "x", newString: "y" }] as const

describe("rules", () => {
  it.live("tool names match case-insensitively; Claude Code's Bash names our shell tool", () =>
    Effect.gen(function* () {
      expect(yield* decide({ permissions: { allow: ["Bash(npm test)"] } }, [bash("npm test")])).toEqual(["allow"])
      expect(yield* decide({ permissions: { allow: ["bash(npm test)"] } }, [bash("npm test")])).toEqual(["allow"])
      expect(yield* decide({ permissions: { deny: ["BASH"] } }, [bash("ls")])).toEqual(["deny"])
    })
  )

  it.live("a prefix rule matches at a word boundary: ls:* allows ls -la, never lsof", () =>
    Effect.gen(function* () {
      const config = { permissions: { allow: ["Bash(ls:*)", "Bash(npm run test:*)", "Bash(git status *)"] } }
      expect(
        yield* decide(config, [
          bash("ls"),
          bash("ls -la"),
          bash("lsof"),
          bash("npm run test -- --watch"),
          bash("npm run test:unit"),
          bash("git status -s"),
          bash("git statusx")
        ])
      ).toEqual(["allow", "allow", "ask", "allow", "ask", "allow", "ask"])
    })
  )

  it.live("precedence: deny > ask > allow", () =>
    Effect.gen(function* () {
      const config = {
        permissions: { allow: ["Bash(git:*)"], ask: ["Bash(git push:*)"], deny: ["Bash(git push --force:*)"] }
      }
      expect(
        yield* decide(config, [bash("git log"), bash("git push origin"), bash("git push --force origin")])
      ).toEqual(["allow", "ask", "deny"])
    })
  )

  it.live("path rules: Read(./secrets/**) denies every reading tool; Edit(src/**) allows every writing tool", () =>
    Effect.gen(function* () {
      const config = { permissions: { deny: ["Read(./secrets/**)"], allow: ["Edit(src/**)"] } }
      expect(
        yield* decide(config, [
          read("secrets/key.txt"),
          [GrepTool, { pattern: "k", path: "secrets" }],
          read("src/a.ts"),
          edit("src/a.ts"),
          write("src/new.ts"),
          write("README.md")
        ])
      ).toEqual(["deny", "deny", "allow", "allow", "allow", "ask"])
    })
  )

  it.live("WebFetch(domain:x.org) covers the host and its subdomains only", () =>
    Effect.gen(function* () {
      const config = { permissions: { deny: ["WebFetch(domain:evil.org)"], allow: ["WebFetch(domain:x.org)"] } }
      expect(
        yield* decide(config, [
          [WebFetchTool, { url: "https://docs.x.org/a" }],
          [WebFetchTool, { url: "https://evil.org/" }],
          [WebFetchTool, { url: "https://notx.org/" }]
        ])
      ).toEqual(["allow", "deny", "allow"])
    })
  )

  it.live("mcp__server__tool, mcp__server__* and mcp__server name MCP tools", () =>
    Effect.gen(function* () {
      const calls = [
        [mcp("mcp__github__create_issue"), {}],
        [mcp("mcp__github__delete_repo"), {}],
        [mcp("mcp__slack__post"), {}]
      ] as const
      expect(yield* decide({ permissions: { allow: ["mcp__github__create_issue"] } }, calls)).toEqual([
        "allow",
        "ask",
        "ask"
      ])
      expect(yield* decide({ permissions: { allow: ["mcp__github__*"] } }, calls)).toEqual(["allow", "allow", "ask"])
      expect(yield* decide({ permissions: { deny: ["mcp__github"] } }, calls)).toEqual(["deny", "deny", "ask"])
    })
  )

  it.live("from the declaration: read-only tools run, mutating ones ask (no name table)", () =>
    Effect.gen(function* () {
      expect(
        yield* decide({}, [read("src/a.ts"), write("src/a.ts"), bash("touch x"), [mcp("mcp__x__look", false), {}]])
      ).toEqual(["allow", "ask", "ask", "allow"])
      // A shell command on the read-only list runs without a rule (shell-read-only.test.ts).
      expect(yield* decide({}, [bash("ls")])).toEqual(["allow"])
    })
  )
})

const Broken = defineTool({
  id: "broken",
  description: "Its paths() throws.",
  parameters: Schema.Struct({}),
  permissions: { operations: ["file.read"] },
  paths: () => {
    throw new Error("no idea")
  },
  execute: () => Effect.succeed({ title: "broken", output: "" })
})

describe("paths", () => {
  it.live(
    "a declaration whose paths() throws is refused, as the call path refuses it: never asked or allowed on a guess",
    () =>
      Effect.gen(function* () {
        for (const defaultMode of ["default", "bypassPermissions"] as const) {
          const d = yield* PermissionEngine.use((engine) =>
            engine.decide({ tool: t(Broken), args: {}, ctx: ctx() })
          ).pipe(Effect.provide(engineWith({ permissions: { allow: ["broken"], defaultMode } })))
          expect(d.behavior, defaultMode).toBe("deny")
          expect(d.reason).toBe(
            "broken could not say which paths it touches (no idea): a bug in the tool, not in your call; it does not run."
          )
        }
      })
  )

  const escapes = (what: string) => [`../outside/${what}`, `${outside}/${what}`, `link-out/${what}`] as const

  it.live("../, absolute paths and symlinks out of the root ask, for read, write and edit", () =>
    Effect.gen(function* () {
      const calls = [
        ...escapes("x.txt").map((p) => read(p)),
        read("file-link"),
        ...escapes("new.txt").map((p) => write(p)),
        ...escapes("x.txt").map((p) => edit(p)),
        edit("file-link")
      ]
      const got = yield* decide({ permissions: { allow: ["Read", "Edit"] } }, calls)
      expect(got).toEqual(calls.map(() => "ask"))
    })
  )

  it.live("additionalDirectories and an explicit path rule reach outside; a bare tool rule does not", () =>
    Effect.gen(function* () {
      expect(
        yield* decide({ permissions: { additionalDirectories: [extra] } }, [
          read(`${extra}/y.txt`),
          read(`${outside}/x.txt`)
        ])
      ).toEqual(["allow", "ask"])
      expect(yield* decide({ permissions: { allow: [`Read(/${outside}/**)`] } }, [read("link-out/x.txt")])).toEqual([
        "allow"
      ])
    })
  )

  it.live("reading .env-like files asks by default; .env.example does not; a rule can allow it", () =>
    Effect.gen(function* () {
      expect(yield* decide({}, [read(".env"), read(".env.example")])).toEqual(["ask", "allow"])
      expect(yield* decide({ permissions: { allow: ["Read(.env)"] } }, [read(".env")])).toEqual(["allow"])
    })
  )
})

describe("modes", () => {
  it.live("plan: nothing that mutates runs; reads still do", () =>
    Effect.gen(function* () {
      expect(
        yield* decide({ permissions: { defaultMode: "plan", allow: ["Bash"] } }, [
          read("src/a.ts"),
          bash("ls"),
          write("x")
        ])
      ).toEqual(["allow", "deny", "deny"])
    })
  )

  it.live("acceptEdits: file edits inside the project run; outside they still ask; shell still asks", () =>
    Effect.gen(function* () {
      expect(
        yield* decide({ permissions: { defaultMode: "acceptEdits" } }, [
          edit("src/a.ts"),
          write("src/b.ts"),
          write("../outside/z"),
          bash("touch x")
        ])
      ).toEqual(["allow", "allow", "ask", "ask"])
    })
  )

  it.live("bypassPermissions: everything but deny rules", () =>
    Effect.gen(function* () {
      expect(
        yield* decide({ permissions: { defaultMode: "bypassPermissions", deny: ["Bash(rm:*)"], ask: ["Write"] } }, [
          bash("echo $(id)"),
          write("../outside/z"),
          bash("ls && rm -rf x")
        ])
      ).toEqual(["allow", "allow", "deny"])
    })
  )

  it.live("dontAsk: what would ask is refused", () =>
    Effect.gen(function* () {
      expect(
        yield* decide({ permissions: { defaultMode: "dontAsk", allow: ["Bash(ls:*)"] } }, [bash("ls"), bash("touch x")])
      ).toEqual(["allow", "deny"])
    })
  )
})

describe("disableBypassPermissionsMode", () => {
  it.live('"disable" refuses bypassPermissions as the mode and in a profile, naming the key', () =>
    Effect.gen(function* () {
      const asMode = yield* Effect.flip(
        Effect.scoped(
          Layer.build(
            engineWith({ permissions: { defaultMode: "bypassPermissions", disableBypassPermissionsMode: "disable" } })
          )
        )
      )
      expect(String(asMode.message)).toContain("permissions.defaultMode: bypassPermissions mode is disabled")
      const inProfile = yield* Effect.flip(
        Effect.scoped(
          Layer.build(
            engineWith({
              permissions: { disableBypassPermissionsMode: "disable" },
              profiles: { yolo: { mode: "bypassPermissions" } }
            })
          )
        )
      )
      expect(String(inProfile.message)).toContain("profiles.yolo.mode: bypassPermissions mode is disabled")
    })
  )
})

describe("saved approvals", () => {
  it.live("always is per session and per normalized command, never for the whole tool", () =>
    Effect.gen(function* () {
      const engine = yield* PermissionEngine
      const first = yield* engine.decide({ tool: t(BashTool), args: { command: "npm test" }, ctx: ctx("a") })
      expect(first.behavior).toBe("ask")
      yield* engine.grant("a", first.grant!)
      const again = (command: string, session = "a") =>
        Effect.map(engine.decide({ tool: t(BashTool), args: { command }, ctx: ctx(session) }), (d) => d.behavior)
      expect(yield* again("  npm test  ")).toBe("allow")
      // The same words are the same command; other words, or more commands, are not.
      expect(yield* again("npm  test")).toBe("allow")
      expect(yield* again("npm 'test'")).toBe("allow")
      expect(yield* again("npm test x")).toBe("ask")
      expect(yield* again("npm test; npm test")).toBe("ask")
      expect(yield* again("npm test > out.txt")).toBe("ask")
      expect(yield* again("rm x")).toBe("ask")
      expect(yield* again("npm test && rm x")).toBe("ask")
      expect(yield* again("npm test", "b")).toBe("ask")
    }).pipe(Effect.provide(engineWith({})))
  )

  it.live("with a session database, an always approval outlives the process that saved it", () =>
    Effect.gen(function* () {
      const stateDir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-grants-"))
      const persistent = engineWith({}).pipe(
        Layer.provide(GrantStore.layerSqlite.pipe(Layer.provide(SessionStore.layer({ root, stateDir }))))
      )
      const npmTest = (session: string) =>
        PermissionEngine.use((engine) =>
          engine.decide({ tool: t(BashTool), args: { command: "npm test" }, ctx: ctx(session) })
        )
      // First "process": the person answers "always".
      yield* Effect.gen(function* () {
        const first = yield* npmTest("resumed")
        expect(first.behavior).toBe("ask")
        yield* PermissionEngine.use((engine) => engine.grant("resumed", first.grant!))
      }).pipe(Effect.provide(persistent))
      // A second one, built afresh on the same database: the session does not ask again.
      const again = yield* npmTest("resumed").pipe(Effect.provide(persistent))
      expect(again).toMatchObject({ behavior: "allow", by: "session" })
      const other = yield* npmTest("another").pipe(Effect.provide(persistent))
      expect(other.behavior).toBe("ask")
    })
  )

  it.live("a saved approval never overrides a configured ask or deny", () =>
    Effect.gen(function* () {
      const engine = yield* PermissionEngine
      for (const command of ["git push", "rm x"]) {
        const d = yield* engine.decide({ tool: t(BashTool), args: { command }, ctx: ctx() })
        yield* engine.grant("s1", d.grant ?? { tool: "bash", key: `cmd:${command}`, display: command })
        expect((yield* engine.decide({ tool: t(BashTool), args: { command }, ctx: ctx() })).behavior).toBe(
          command === "rm x" ? "deny" : "ask"
        )
      }
    }).pipe(Effect.provide(engineWith({ permissions: { ask: ["Bash(git push:*)"], deny: ["Bash(rm:*)"] } })))
  )
})

describe("profiles", () => {
  it.live("read-only: mutating tools are not available; plan: mutating calls are denied", () =>
    Effect.gen(function* () {
      expect(yield* decide({}, [read("src/a.ts"), write("src/a.ts"), bash("ls")], ["read-only"])).toEqual([
        "allow",
        "deny",
        "deny"
      ])
      expect(yield* decide({ permissions: { allow: ["Bash"] } }, [bash("ls"), read("src/a.ts")], ["plan"])).toEqual([
        "deny",
        "allow"
      ])
    })
  )

  it.live("a child's rules are the intersection with its parent's, never wider", () =>
    Effect.gen(function* () {
      const config: FreecodeConfigData = {
        permissions: { allow: ["Bash(git:*)"], deny: ["Bash(git push:*)"] },
        profiles: {
          wide: { allow: ["Bash", "Write"] },
          narrow: { deny: ["Bash(git commit:*)"], tools: ["bash"] }
        }
      }
      // The child allows everything; the parent still asks (rm) and denies (git push).
      expect(yield* decide(config, [bash("rm x"), bash("git push"), bash("git log"), write("x")], ["wide"])).toEqual([
        "ask",
        "deny",
        "allow",
        "ask"
      ])
      // Narrowing twice: each profile only removes. "narrow" allows nothing itself, so a call
      // both parents allow still asks under it.
      expect(
        yield* decide(config, [bash("git fetch"), bash("git commit -m x"), read("src/a.ts")], ["wide", "narrow"])
      ).toEqual(["ask", "deny", "deny"])
    })
  )

  it.live("an unknown profile is an error naming the known ones", () =>
    Effect.gen(function* () {
      const engine = yield* PermissionEngine
      const e = yield* Effect.flip(engine.profile("nope"))
      expect(e.message).toContain('No profile named "nope"')
      expect(e.message).toContain("read-only")
    }).pipe(Effect.provide(engineWith({})))
  )
})
