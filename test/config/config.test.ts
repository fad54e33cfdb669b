/** freecode.json: strict validation with messages naming the key, loading, .mcp.json, the CLI. */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Result } from "effect"
import { CONFIG_SECTIONS, loadConfig as loadWithUser, parseConfig } from "../../layers/config.ts"
import { testToolSystem } from "../../layers/test.ts"
import { buildToolSystem, checkOptions, ToolSystemFactory } from "../../src/cli/system.ts"
import { ConfigSource, FreecodeConfig, type FreecodeConfigShape } from "../../src/config/load.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { Echo } from "../cli/fixtures.ts"
import { runInProcess } from "../cli/helpers.ts"
import { Touch } from "../dispatch/helpers.ts"
import { nodeLayer } from "../fs/layers.ts"
import { tempDirs } from "../temp-dirs.ts"

const tmp = tempDirs()
const projectWith = (files: Record<string, unknown>) => {
  const root = tmp("freecode-config-")
  for (const [name, value] of Object.entries(files)) {
    NodeFs.writeFileSync(NodePath.join(root, name), typeof value === "string" ? value : JSON.stringify(value))
  }
  return root
}

// The person's own config (XDG) is left out here: these tests are about the project's files.
const loadConfig = (root: string, file?: string) => loadWithUser(root, file, { userFile: false, trusted: true })

const errorOf = (value: unknown) => {
  const r = parseConfig(value, "freecode.json")
  return Result.isFailure(r) ? r.failure.message : "valid"
}

describe("freecode.json validation", () => {
  it("accepts the shapes Claude Code users paste", () => {
    expect(
      errorOf({
        $schema: "https://example.com/schema.json",
        permissions: {
          allow: ["Bash(npm run test:*)", "Read(~/.zshrc)", "WebFetch(domain:example.com)", "mcp__github__*"],
          ask: ["Bash(git push:*)"],
          deny: ["Read(./.env)", "Read(./secrets/**)"],
          defaultMode: "acceptEdits",
          additionalDirectories: ["../docs"],
          disableBypassPermissionsMode: "disable"
        },
        hooks: {
          PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./check.sh", timeout: 30 }] }],
          PostToolUse: [{ matcher: "Edit|Write", hooks: [{ type: "command", command: "npx prettier --write ." }] }]
        },
        mcpServers: { github: { command: "npx", args: ["-y", "@modelcontextprotocol/server-github"] } },
        profiles: { reviewer: { tools: "read-only", deny: ["Read(./secrets/**)"] } }
      })
    ).toBe("valid")
  })

  it("names every bad key and what was expected, never a silent default", () => {
    const message = errorOf({
      permisions: {},
      permissions: { allow: ["Bash(npm test:*)", "not a rule!"], defaultMode: "yolo", allowed: [] },
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command" }] }], Stop: [] },
      mcpServers: { broken: { args: [] } }
    })
    expect(message).toContain(
      "- permisions: unknown key; expected one of $schema, permissions, hooks, mcpServers, profiles"
    )
    expect(message).toContain('- permissions.allow[1]: "not a rule!" is not a rule.')
    expect(message).toContain(
      '- permissions.defaultMode: Expected "default" | "acceptEdits" | "plan" | "bypassPermissions" | "dontAsk", got "yolo"'
    )
    expect(message).toContain(
      "- permissions.allowed: unknown key; expected one of allow, ask, deny, defaultMode, additionalDirectories, disableBypassPermissionsMode"
    )
    expect(message).toContain("- hooks.PreToolUse[0].hooks[0].command: missing")
    expect(message).toContain("- hooks.Stop: unknown key; expected one of PreToolUse, PostToolUse")
    expect(message).toContain("- mcpServers.broken.command: missing")
  })

  it("a non-object is refused", () => {
    expect(errorOf([1])).toBe("freecode.json must hold a JSON object.")
  })
})

describe("loading", () => {
  it.live("reads freecode.json at the root, and .mcp.json beside it (freecode.json wins a name)", () =>
    Effect.gen(function* () {
      const root = projectWith({
        "freecode.json": { permissions: { allow: ["Bash(ls:*)"] }, mcpServers: { both: { command: "from-freecode" } } },
        ".mcp.json": { mcpServers: { both: { command: "from-mcp" }, only: { url: "http://127.0.0.1:1/mcp" } } }
      })
      const config = yield* loadConfig(root)
      expect(config.file).toBe(`${root}/freecode.json`)
      expect(config.values.permissions).toEqual({ allow: ["Bash(ls:*)"] })
      expect(config.values.mcpServers).toEqual({
        both: { command: "from-freecode" },
        only: { url: "http://127.0.0.1:1/mcp" }
      })
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live(
    "a file that starts with a UTF-8 byte order mark is read as without it: freecode.json, .mcp.json, the user's",
    () =>
      Effect.gen(function* () {
        const bom = "\uFEFF"
        const root = projectWith({
          "freecode.json": `${bom}${JSON.stringify({ permissions: { allow: ["Bash(ls:*)"] } })}`,
          ".mcp.json": `${bom}${JSON.stringify({ mcpServers: { only: { command: "from-mcp" } } })}`
        })
        // Written as bytes, as an editor writes them: EF BB BF, then the JSON.
        const userFile = NodePath.join(tmp("freecode-user-"), "freecode.json")
        NodeFs.writeFileSync(
          userFile,
          Buffer.concat([
            Buffer.from([0xef, 0xbb, 0xbf]),
            Buffer.from(JSON.stringify({ permissions: { deny: ["Bash(rm:*)"] } }))
          ])
        )
        const config = yield* loadWithUser(root, undefined, { userFile, trusted: true })
        expect((config.values.permissions as { allow?: unknown }).allow).toEqual(["Bash(ls:*)"])
        expect(JSON.stringify(config.values.permissions)).toContain("Bash(rm:*)")
        expect(config.values.mcpServers).toEqual({ only: { command: "from-mcp" } })
        // Only a leading mark is dropped: one anywhere else is still not JSON.
        const inside = projectWith({ "freecode.json": `{${bom}}` })
        expect((yield* Effect.flip(loadConfig(inside))).message).toContain("is not valid JSON")
      }).pipe(Effect.provide(nodeLayer))
  )

  it.live("no file is an empty config; a missing --config file, bad JSON and a bad .mcp.json are errors", () =>
    Effect.gen(function* () {
      const empty = projectWith({})
      expect(yield* loadConfig(empty)).toEqual({ file: undefined, values: {}, sources: [], skipped: [], trusted: true })
      expect((yield* Effect.flip(loadConfig(empty, "nope.json"))).message).toContain("nope.json cannot be read")
      const broken = projectWith({ "freecode.json": "{ permissions: " })
      expect((yield* Effect.flip(loadConfig(broken))).message).toContain("is not valid JSON")
      const badMcp = projectWith({ ".mcp.json": { mcpServers: { x: { args: 1 } } } })
      expect((yield* Effect.flip(loadConfig(badMcp))).message).toContain(".mcp.json is not valid")
    }).pipe(Effect.provide(nodeLayer))
  )
})

describe("ConfigSource", () => {
  const configUnder = (root: string, source: typeof ConfigSource.Service) =>
    Layer.build(FreecodeConfig.layerFromSource(root, CONFIG_SECTIONS)).pipe(
      Effect.map((context) => Context.get(context, FreecodeConfig)),
      Effect.provideService(ConfigSource, source),
      Effect.scoped,
      Effect.provide(nodeLayer)
    )

  it.live("a loaded configuration is used as it is; without one the files are read", () =>
    Effect.gen(function* () {
      const root = projectWith({
        "freecode.json": { permissions: { deny: ["Bash"] } },
        "other.json": { permissions: { ask: ["Read"] } }
      })
      const loaded: FreecodeConfigShape = {
        file: `${root}/freecode.json`,
        values: { permissions: { allow: ["Bash(ls:*)"] } },
        sources: [],
        skipped: []
      }
      expect(yield* configUnder(root, { loaded })).toEqual(loaded)
      expect((yield* configUnder(root, {})).values.permissions).toEqual({ deny: ["Bash"] })
      expect((yield* configUnder(root, { file: `${root}/other.json` })).values.permissions).toEqual({ ask: ["Read"] })
      NodeFs.writeFileSync(`${root}/freecode.json`, "{ permissions: ")
      // The files are not read at all when the configuration is given: a broken one is no error.
      expect(yield* configUnder(root, { loaded })).toEqual(loaded)
      expect((yield* Effect.flip(configUnder(root, {}))).message).toContain("is not valid JSON")
    })
  )
})

describe("the CLI reads it", () => {
  it.live("once: the tool system is built with what checkOptions parsed, not from the file again", () =>
    Effect.gen(function* () {
      const root = projectWith({ "freecode.json": { permissions: { deny: ["Touch(no.txt)"] } } })
      const setup = yield* checkOptions({ root: Option.some(root), config: Option.none(), surface: Option.none() })
      expect(setup.config?.values.permissions).toEqual({ deny: ["Touch(no.txt)"] })
      // Were the file parsed again while building, this would fail the build (exit 2).
      NodeFs.writeFileSync(`${root}/freecode.json`, "{ permissions: ")
      const system = yield* buildToolSystem(setup)
      const result = yield* Context.get(system, Dispatcher).dispatch(
        { id: "c1", name: "touch", args: { filePath: "no.txt" } },
        { sessionId: "s1", approve: () => Effect.succeed(true) }
      )
      expect(result).toMatchObject({ status: "denied", metadata: { permission: { rule: "Touch(no.txt)" } } })
      expect(NodeFs.existsSync(`${root}/no.txt`)).toBe(false)
    }).pipe(
      Effect.scoped,
      Effect.provide(
        Layer.merge(
          NodeServices.layer,
          ToolSystemFactory.layer((root) => testToolSystem({ root, tools: [Touch] }))
        )
      )
    )
  )

  it.live("a bad freecode.json at the root is misuse (exit 2) naming the key; nothing runs", () =>
    Effect.gen(function* () {
      const root = projectWith({ "freecode.json": { permissions: { allow: "Bash" } } })
      const r = yield* runInProcess(["call", "echo", '{"text":"hi"}', "--root", root], { tools: [Echo] })
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr).toContain("permissions.allow: Expected array")
    })
  )

  it.live("rules from --config apply: deny refuses, allow runs without --yes, --profile narrows", () =>
    Effect.gen(function* () {
      const root = projectWith({
        "rules.json": { permissions: { allow: ["Touch(ok.txt)"], deny: ["Touch(no.txt)"] } }
      })
      const cli = (...args: Array<string>) =>
        runInProcess(["call", "touch", ...args, "--root", root, "--config", `${root}/rules.json`, "--json"], {
          tools: [Touch]
        })
      const ok = yield* cli('{"filePath":"ok.txt"}')
      expect(ok.code).toBe(0)
      expect(NodeFs.existsSync(`${root}/ok.txt`)).toBe(true)
      const no = yield* cli('{"filePath":"no.txt"}', "--yes")
      expect(JSON.parse(no.stdout)).toMatchObject({
        status: "denied",
        metadata: { permission: { rule: "Touch(no.txt)" } }
      })
      const other = yield* cli('{"filePath":"other.txt"}')
      expect(JSON.parse(other.stdout).modelOutput).toContain("No one is available to approve it here")
      const narrowed = yield* cli('{"filePath":"ok.txt"}', "--profile", "read-only")
      expect(JSON.parse(narrowed.stdout).modelOutput).toContain("not available to this agent")
      const unknown = yield* cli('{"filePath":"ok.txt"}', "--profile", "nope")
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toContain('--profile: No profile named "nope"')
    })
  )
})
