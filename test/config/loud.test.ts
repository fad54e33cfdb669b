/**
 * Config that fails loudly: every file that used to load with exit 0 and no word, while it
 * meant something else, is an error naming the file, the key and what was meant.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, type Path, Result } from "effect"
import fc from "fast-check"
import { type FreecodeConfigData, loadConfig as loadWith, parseConfig } from "../../layers/config.ts"
import { testToolSystem } from "../../layers/test.ts"
import { MAX_DEPTH, structureProblem } from "../../src/config/json-text.ts"
import type { LocalFs } from "../../src/fs/local-fs.ts"
import { Echo } from "../cli/fixtures.ts"
import { runInProcess, runProcess } from "../cli/helpers.ts"
import { FS_MODES, nodeLayer, nodeWith } from "../fs/layers.ts"
import { tempDirs } from "../temp-dirs.ts"

const tmp = tempDirs()
const project = (files: Record<string, string> = {}) => {
  const root = tmp("freecode-loud-")
  for (const [name, text] of Object.entries(files)) NodeFs.writeFileSync(NodePath.join(root, name), text)
  return root
}

const loadConfig = (root: string) => loadWith(root, undefined, { userFile: false, trusted: true })
const failureOf = (root: string, layer: Layer.Layer<LocalFs | Path.Path> = nodeLayer) =>
  Effect.flip(loadConfig(root)).pipe(
    Effect.map((e) => e.message),
    Effect.provide(layer)
  )
const parsed = (value: unknown) => {
  const r = parseConfig(value, "freecode.json")
  return Result.isFailure(r) ? r.failure.message : "valid"
}

/** Builds a system with these tools and config; the build's error message, or "built". */
const buildWith = (config: FreecodeConfigData) =>
  Layer.build(testToolSystem({ root: NodeOs.tmpdir(), tools: [Echo], config })).pipe(
    Effect.scoped,
    Effect.as("built"),
    Effect.catch((e: unknown) => Effect.succeed((e as { message: string }).message))
  )

describe("a rule that would match nothing", () => {
  it.live("a tool name nobody has: the CLI refuses the file, naming it, the key and the tool meant", () =>
    Effect.gen(function* () {
      const root = project({ "freecode.json": JSON.stringify({ permissions: { deny: ["Bsh(rm:*)"] } }) })
      const r = yield* runInProcess(["call", "echo", '{"text":"hi"}', "--root", root], { tools: [Echo] })
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr).toContain(`${root}/freecode.json is not valid:`)
      expect(r.stderr).toContain(
        '- permissions.deny[0]: "Bsh(rm:*)": no tool is named Bsh, so the rule would match nothing. Did you mean Bash?'
      )
    })
  )

  it.live("in code too: building the system fails; kinds of tool, MCP names and * are names", () =>
    Effect.gen(function* () {
      expect(yield* buildWith({ permissions: { allow: ["Raed(./src/**)"] } })).toContain("Did you mean Read?")
      expect(yield* buildWith({ permissions: { ask: ["ech"] } })).toContain("Did you mean echo?")
      expect(
        yield* buildWith({
          permissions: {
            allow: ["Read(src/**)", "Edit", "MultiEdit", "WebFetch(domain:x.org)", "mcp__github__*", "*", "echo"],
            deny: ["Bash(rm:*)", "websearch", "agent", "skill", "tool_search"]
          }
        })
      ).toBe("built")
    })
  )

  it("a space after the colon, and :* anywhere but the end", () => {
    expect(parsed({ permissions: { deny: ["Bash(rm: *)"] } })).toContain(
      '- permissions.deny[0]: "Bash(rm: *)": the space after the colon makes "rm:" the command, which nothing runs. Write "Bash(rm:*)"'
    )
    expect(parsed({ profiles: { p: { allow: ["Bash(git status:   *)"] } } })).toContain(
      '- profiles.p.allow[0]: "Bash(git status:   *)": the space after the colon'
    )
    expect(parsed({ permissions: { allow: ["Bash(npm:* test)"] } })).toContain("goes only at the end")
    expect(parsed({ permissions: { allow: ["Bash(npm run test:*)", "Bash(ls *)", "Bash(echo a: b)"] } })).toBe("valid")
  })

  it.live("a profile's tool id that no tool has", () =>
    Effect.gen(function* () {
      const message = yield* buildWith({ profiles: { reviewer: { tools: ["read", "bsh"], deny: ["Wirte"] } } })
      expect(message).toContain('- profiles.reviewer.tools[1]: no tool has the id "bsh". Did you mean bash?')
      expect(message).toContain('- profiles.reviewer.deny[0]: "Wirte": no tool is named Wirte')
    })
  )
})

describe("what JSON.parse would hide", () => {
  it.live("a duplicate key: the first block would vanish; nested duplicates too", () =>
    Effect.gen(function* () {
      const twice = project({
        "freecode.json": '{"permissions": {"deny": ["Bash(rm:*)"]}, "permissions": {"allow": ["Bash(ls:*)"]}}'
      })
      expect(yield* failureOf(twice)).toBe(
        `${twice}/freecode.json cannot be used: the key "permissions" appears twice; JSON keeps only the last one, so the first would be ignored. Merge the two into one.`
      )
      const nested = project({
        "freecode.json": '{"hooks": {}, "permissions": {"deny": [], "ask": [], "deny": ["Read"]}}'
      })
      expect(yield* failureOf(nested)).toContain('the key "deny" appears twice (in permissions)')
      // The same key in two different objects is no duplicate; nor is a key inside a string.
      const fine = project({
        "freecode.json":
          '{"profiles": {"a": {"deny": ["Read"]}, "b": {"deny": ["Read"]}}, "$schema": "\\"profiles\\": 1"}'
      })
      expect((yield* loadConfig(fine).pipe(Effect.provide(nodeLayer))).values.profiles).toMatchObject({
        a: { deny: ["Read"] },
        b: { deny: ["Read"] }
      })
    })
  )

  it("the duplicate check agrees with JSON.parse on every generated document (seeded, bounded)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.string({ maxLength: 8 }), (value, key) => {
        // Generated objects have unique keys: no false alarm.
        const text = JSON.stringify(value)
        expect(structureProblem(text)).toBeUndefined()
        // The same key twice in one object is always found, wherever the object sits.
        const doubled = `{${JSON.stringify(key)}:${text},${JSON.stringify(key)}:1}`
        expect(structureProblem(`[${text},${doubled}]`)).toContain("appears twice")
      }),
      { seed: 17, numRuns: 300 }
    )
  })

  it.live("5,000 levels of nesting is a config error, not a stack trace, in the loader and the CLI", () =>
    Effect.gen(function* () {
      const deep = `{"permissions": {"allow": ${"[".repeat(5000)}${"]".repeat(5000)}}}`
      const root = project({ "freecode.json": deep })
      expect(yield* failureOf(root)).toBe(
        `${root}/freecode.json cannot be used: it nests deeper than ${MAX_DEPTH} levels (at permissions.allow${"[0]".repeat(MAX_DEPTH - 2)}); no setting is that deep.`
      )
      const r = yield* runInProcess(["tools", "--root", root], { tools: [Echo] })
      expect(r.code).toBe(2)
      expect(r.stderr).toContain("nests deeper than")
      expect(r.stderr).not.toContain("RangeError")
      // A million levels costs no more than the scan up to the limit.
      expect(structureProblem("[".repeat(1_000_000))).toContain("nests deeper")
    })
  )
})

// Each LocalFs layer the config is read through says the same about what stands at the name.
describe.each(FS_MODES)("what stands at the name (%s)", (mode) => {
  const fsLayer = nodeWith(mode)
  it.live("a dangling link and a link loop are errors, not a missing file", () =>
    Effect.gen(function* () {
      const dangling = project()
      NodeFs.symlinkSync(NodePath.join(dangling, "gone.json"), NodePath.join(dangling, "freecode.json"))
      expect(yield* failureOf(dangling, fsLayer)).toBe(
        `${dangling}/freecode.json is a symbolic link to ${dangling}/gone.json, which does not exist; fix or remove the link.`
      )
      const loop = project()
      NodeFs.symlinkSync(NodePath.join(loop, "freecode.json"), NodePath.join(loop, "freecode.json"))
      expect(yield* failureOf(loop, fsLayer)).toBe(
        `${loop}/freecode.json is a symbolic link that loops back on itself; point it at a real file.`
      )
      const mcpLoop = project()
      NodeFs.symlinkSync(NodePath.join(mcpLoop, "b"), NodePath.join(mcpLoop, ".mcp.json"))
      NodeFs.symlinkSync(NodePath.join(mcpLoop, ".mcp.json"), NodePath.join(mcpLoop, "b"))
      expect(yield* failureOf(mcpLoop, fsLayer)).toContain(".mcp.json is a symbolic link that loops back on itself")
      // A link to a real file is read through.
      const linked = project({ "real.json": JSON.stringify({ permissions: { deny: ["Read"] } }) })
      NodeFs.symlinkSync(NodePath.join(linked, "real.json"), NodePath.join(linked, "freecode.json"))
      const config = yield* loadConfig(linked).pipe(Effect.provide(fsLayer))
      expect(config.values.permissions).toEqual({ deny: ["Read"] })
    })
  )

  it.live("a FIFO does not hang start-up (nobody ever writes to it); a directory is refused", () =>
    Effect.gen(function* () {
      const fifo = project()
      execFileSync("mkfifo", [NodePath.join(fifo, "freecode.json")])
      expect(yield* failureOf(fifo, fsLayer)).toBe(
        `${fifo}/freecode.json is a FIFO; a config file must be a plain file.`
      )
      // The real CLI, as a person would start it: it ends, exit 2, saying why.
      const r = yield* Effect.promise(() => runProcess(["tools", "--root", fifo]))
      expect(r.code).toBe(2)
      expect(r.stderr).toContain("freecode.json is a FIFO")
      const dir = project()
      NodeFs.mkdirSync(NodePath.join(dir, "freecode.json"))
      NodeFs.writeFileSync(NodePath.join(dir, "freecode.json", "x"), "")
      expect(yield* failureOf(dir, fsLayer)).toContain("freecode.json is a directory")
    })
  )

  it.live("an empty folder at freecode.json or .mcp.json (the sandbox's placeholder) is no file", () =>
    Effect.gen(function* () {
      const dir = project()
      NodeFs.mkdirSync(NodePath.join(dir, "freecode.json"))
      NodeFs.mkdirSync(NodePath.join(dir, ".mcp.json"))
      const config = yield* loadConfig(dir).pipe(Effect.provide(fsLayer))
      expect(config.file).toBeUndefined()
      expect(config.sources).toEqual([])
    })
  )
})

describe("hooks and .mcp.json", () => {
  it("a matcher that is not a regular expression is refused (the hook would never run)", () => {
    const message = parsed({
      hooks: { PreToolUse: [{ matcher: "[bash", hooks: [{ type: "command", command: "true" }] }] }
    })
    expect(message).toContain('- hooks.PreToolUse[0].matcher: "[bash" is not a valid regular expression')
    expect(
      parsed({
        hooks: {
          PreToolUse: [
            { matcher: "*", hooks: [{ type: "command", command: "true" }] },
            { matcher: "", hooks: [{ type: "command", command: "true" }] },
            { matcher: "Edit|Write", hooks: [{ type: "command", command: "true" }] },
            { matcher: "mcp__.*", hooks: [{ type: "command", command: "true" }] }
          ]
        }
      })
    ).toBe("valid")
  })

  it.live("an unknown key in .mcp.json, at the top or in a server, is named", () =>
    Effect.gen(function* () {
      const top = project({ ".mcp.json": JSON.stringify({ mcpServers: {}, servers: {} }) })
      expect(yield* failureOf(top)).toBe(
        `${top}/.mcp.json is not valid:\n- servers: unknown key; expected one of $schema, mcpServers`
      )
      const inServer = project({ ".mcp.json": JSON.stringify({ mcpServers: { gh: { command: "gh", arg: ["x"] } } }) })
      const message = yield* failureOf(inServer)
      expect(message).toContain(`${inServer}/.mcp.json is not valid:`)
      expect(message).toContain("mcpServers.gh.arg: unknown key; expected one of type, command, args, env, cwd")
    })
  )
})
