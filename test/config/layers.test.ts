/**
 * The person's own config (`$XDG_CONFIG_HOME/freecode-tools/freecode.json`) merged under the
 * project's: rule lists join (deny still wins), the project wins a setting, and the person's
 * own programs run in any folder.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import { CONFIG_SECTIONS, loadConfig } from "../../layers/config.ts"
import { ToolSystem } from "../../layers/live.ts"
import { testToolSystem } from "../../layers/test.ts"
import { ConfigSource, FreecodeConfig } from "../../src/config/load.ts"
import { userConfigFile } from "../../src/config/user.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { MemoryFileSystem } from "../../src/fs/memory.ts"
import { Approval } from "../../src/permission/approval.ts"
import { Touch } from "../dispatch/helpers.ts"
import { nodeLayer } from "../fs/layers.ts"
import { tempDirs } from "../temp-dirs.ts"

const tmp = tempDirs()
const write = (file: string, value: unknown) => {
  NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
  NodeFs.writeFileSync(file, JSON.stringify(value))
}

/** A person (their XDG config folder) and a project, with the files given. */
const setting = (user: unknown, projectFiles: Record<string, unknown>) => {
  const xdg = tmp("freecode-xdg-")
  if (user !== undefined) write(NodePath.join(xdg, "freecode-tools", "freecode.json"), user)
  const root = tmp("freecode-proj-")
  for (const [name, value] of Object.entries(projectFiles)) write(NodePath.join(root, name), value)
  const env = ConfigProvider.fromEnv({ env: { XDG_CONFIG_HOME: xdg, FREECODE_STATE_DIR: tmp("freecode-state-") } })
  return { root, xdg, env }
}

describe("where the person's config is", () => {
  it.effect("XDG_CONFIG_HOME when it is absolute, else ~/.config", () =>
    Effect.gen(function* () {
      const at = (env: Record<string, string>) =>
        userConfigFile.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
      expect(yield* at({ XDG_CONFIG_HOME: "/x" })).toBe("/x/freecode-tools/freecode.json")
      expect(yield* at({ XDG_CONFIG_HOME: "relative" })).toBe(
        NodePath.join(NodeOs.homedir(), ".config", "freecode-tools", "freecode.json")
      )
      expect(yield* at({})).toBe(NodePath.join(NodeOs.homedir(), ".config", "freecode-tools", "freecode.json"))
    })
  )
})

describe("merged under the project's", () => {
  it.live("rule lists join, the project's mode and settings win, servers and profiles merge by name", () =>
    Effect.gen(function* () {
      const { root, env, xdg } = setting(
        {
          permissions: { allow: ["Bash(git status:*)"], deny: ["Read(~/.ssh/**)"], defaultMode: "acceptEdits" },
          mcpServers: { mine: { command: "mine" }, both: { command: "user" } },
          profiles: { reviewer: { tools: "read-only" } },
          surface: { mode: "deferred", core: ["read"] },
          models: [{ pattern: "u-*", edit: "edit", provider: "anthropic" }]
        },
        {
          "freecode.json": {
            permissions: { allow: ["Bash(npm test:*)"], defaultMode: "plan" },
            mcpServers: { both: { command: "project" } },
            surface: { core: ["read", "bash"] },
            models: [{ pattern: "p-*", edit: "apply_patch", provider: "openai" }]
          }
        }
      )
      const config = yield* loadConfig(root, undefined, { trusted: true }).pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, env),
        Effect.provide(nodeLayer)
      )
      expect(config.sources.map((s) => s.file)).toEqual([
        `${xdg}/freecode-tools/freecode.json`,
        `${root}/freecode.json`
      ])
      expect(config.values.permissions).toEqual({
        allow: ["Bash(git status:*)", "Bash(npm test:*)"],
        deny: ["Read(~/.ssh/**)"],
        defaultMode: "plan"
      })
      expect(config.values.mcpServers).toEqual({ mine: { command: "mine" }, both: { command: "project" } })
      expect(config.values.profiles).toEqual({ reviewer: { tools: "read-only" } })
      expect(config.values.surface).toEqual({ mode: "deferred", core: ["read", "bash"] })
      expect(config.values.models).toEqual([
        { pattern: "p-*", edit: "apply_patch", provider: "openai" },
        { pattern: "u-*", edit: "edit", provider: "anthropic" }
      ])
    })
  )

  it.live("a deny in the person's file beats an allow in the project's, in a real call", () =>
    Effect.gen(function* () {
      const { root, env } = setting(
        { permissions: { deny: ["Touch(no.txt)"] } },
        { "freecode.json": { permissions: { allow: ["Touch"] } } }
      )
      const result = yield* Effect.gen(function* () {
        const context = yield* Layer.build(testToolSystem({ root, tools: [Touch] }))
        return yield* Context.get(context, Dispatcher).dispatch(
          { id: "c1", name: "touch", args: { filePath: "no.txt" } },
          { sessionId: "s1" }
        )
      }).pipe(Effect.scoped, Effect.provideService(ConfigProvider.ConfigProvider, env))
      expect(result).toMatchObject({ status: "denied", metadata: { permission: { rule: "Touch(no.txt)" } } })
      expect(NodeFs.existsSync(NodePath.join(root, "no.txt"))).toBe(false)
    })
  )

  it.live("a bad person's file is an error naming it; a bypass disabled there stays disabled", () =>
    Effect.gen(function* () {
      const bad = setting({ permissions: { allowed: [] } }, {})
      const message = (yield* Effect.flip(
        loadConfig(bad.root).pipe(
          Effect.provideService(ConfigProvider.ConfigProvider, bad.env),
          Effect.provide(nodeLayer)
        )
      )).message
      expect(message).toContain(`${bad.xdg}/freecode-tools/freecode.json is not valid:`)
      const locked = setting(
        { permissions: { disableBypassPermissionsMode: "disable" } },
        { "freecode.json": { permissions: { defaultMode: "bypassPermissions" } } }
      )
      const config = yield* loadConfig(locked.root).pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, locked.env),
        Effect.provide(nodeLayer)
      )
      expect(config.values.permissions).toEqual({
        defaultMode: "bypassPermissions",
        disableBypassPermissionsMode: "disable"
      })
    })
  )

  it.live("your own file given as the project's (--config) is read once, not merged with itself", () =>
    Effect.gen(function* () {
      const { root, env, xdg } = setting({ permissions: { deny: ["Read(./x)"] } }, {})
      const own = `${xdg}/freecode-tools/freecode.json`
      const config = yield* loadConfig(root, own).pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, env),
        Effect.provide(nodeLayer)
      )
      expect(config.sources.map((s) => s.file)).toEqual([own])
      expect(config.values.permissions).toEqual({ deny: ["Read(./x)"] })
    })
  )

  it.live("the person's own hooks and servers are kept in a folder that is not trusted", () =>
    Effect.gen(function* () {
      const { root, env } = setting(
        {
          hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: "true" }] }] },
          mcpServers: { mine: { command: "mine" } }
        },
        { ".mcp.json": { mcpServers: { theirs: { command: "theirs" } } } }
      )
      const config = yield* Layer.build(FreecodeConfig.layerFromSource(root, CONFIG_SECTIONS)).pipe(
        Effect.map((context) => Context.get(context, FreecodeConfig)),
        Effect.scoped,
        Effect.provideService(ConfigSource, {}),
        Effect.provideService(ConfigProvider.ConfigProvider, env),
        Effect.provide(nodeLayer)
      )
      expect(config.values.mcpServers).toEqual({ mine: { command: "mine" } })
      expect(config.values.hooks).toMatchObject({
        PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: "true" }] }]
      })
      expect(config.skipped).toEqual(["MCP server theirs (.mcp.json)"])
    })
  )
})

describe("the config is read through the system's file system", () => {
  it.live("over an in-memory FileSystem, the project's and the person's files are read from it, not the disk", () =>
    Effect.gen(function* () {
      // Neither folder exists on this machine's disk: what is found is only the FileSystem's.
      const root = "/memory-config-project"
      const xdg = "/memory-config-home"
      const files = {
        [`${root}/freecode.json`]: JSON.stringify({ permissions: { deny: ["Read(./secret.txt)"] } }),
        [`${root}/.mcp.json`]: JSON.stringify({ mcpServers: {} }),
        [`${xdg}/freecode-tools/freecode.json`]: JSON.stringify({ permissions: { deny: ["Glob"] } }),
        [`${root}/secret.txt`]: "s\n",
        [`${root}/open.txt`]: "o\n"
      }
      const env = ConfigProvider.fromEnv({ env: { XDG_CONFIG_HOME: xdg, FREECODE_STATE_DIR: tmp("freecode-state-") } })
      const system = ToolSystem.layer({ root }).pipe(
        Layer.provide(Layer.merge(MemoryFileSystem.layer(files), Approval.layerApproveAll))
      )
      const { config, secret, open } = yield* Effect.gen(function* () {
        const d = yield* Dispatcher
        const config = yield* FreecodeConfig
        const secret = yield* d.dispatch(
          { id: "s", name: "read", args: { filePath: "secret.txt" } },
          { sessionId: "m" }
        )
        const open = yield* d.dispatch({ id: "o", name: "read", args: { filePath: "open.txt" } }, { sessionId: "m" })
        return { config, secret, open }
      }).pipe(Effect.provide(system), Effect.provideService(ConfigProvider.ConfigProvider, env))
      expect(config.file).toBe(`${root}/freecode.json`)
      expect(config.sources.map((s) => s.file)).toEqual([
        `${xdg}/freecode-tools/freecode.json`,
        `${root}/.mcp.json`,
        `${root}/freecode.json`
      ])
      expect(config.values.permissions).toEqual({ deny: ["Glob", "Read(./secret.txt)"] })
      expect(secret.status).toBe("denied")
      expect(open.status).toBe("ok")
      expect(open.modelOutput).toContain("o")
    })
  )
})
