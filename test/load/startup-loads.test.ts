/**
 * Each entry point loads what it needs and nothing a later call might: the modules a real process
 * loaded (recorded by a load hook) are checked against the packages only some calls use. A new
 * top-level import of one of them fails here, naming the entry point and the module.
 */
import { spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { opening2025, opening2026 } from "../fixtures/mcp/openings.ts"

const REPO = NodePath.resolve(import.meta.dirname, "../..")
const HOOK = NodePath.join(import.meta.dirname, "fixtures/record-loads.mjs")
const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-loads-"))
afterAll(() => NodeFs.rmSync(dir, { recursive: true, force: true }))

/** Packages a call loads when it needs them (src/load/lazy.ts); never at start-up. */
const CALL_TIME = [
  "web-tree-sitter",
  "vscode-languageserver-protocol",
  "vscode-jsonrpc",
  "@mdream/js",
  "gpt-tokenizer",
  "yaml",
  "undici",
  "@vscode/ripgrep"
]
/** The MCP SDK and what it brings: only for serving (`mcp`) or connecting to a configured server. */
const MCP_SDK = [
  "@modelcontextprotocol/sdk",
  "@modelcontextprotocol/server",
  "@modelcontextprotocol/client",
  "@modelcontextprotocol/core",
  "zod",
  "zod-to-json-schema",
  "ajv",
  "hono",
  "@hono/node-server"
]

let runs = 0
const recordFile = () => NodePath.join(dir, `loads-${runs++}.txt`)
const packagesIn = (file: string): Set<string> => {
  const names = new Set<string>()
  for (const url of NodeFs.readFileSync(file, "utf8").split("\n")) {
    const after = url.split("/node_modules/").at(-1)!
    if (after === url) continue
    const parts = after.split("/")
    names.add(parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!)
  }
  return names
}
const ourModules = (file: string): Array<string> =>
  NodeFs.readFileSync(file, "utf8")
    .split("\n")
    .filter((u) => u.startsWith(`file://${REPO}/src/`) || u.startsWith(`file://${REPO}/layers/`))
    .map((u) => u.slice(`file://${REPO}/`.length))

const run = (args: ReadonlyArray<string>) => {
  const record = recordFile()
  const r = spawnSync(process.execPath, ["--import", HOOK, ...args], {
    cwd: REPO,
    encoding: "utf8",
    env: { ...process.env, RECORD_LOADS: record }
  })
  expect(r.status, r.stderr).toBe(0)
  return record
}

/** Only for a `postgres://` state store (`mcp --http --store`). */
const STORE_ONLY = ["@effect/sql-pg", "pg"]

/** `mcp` up to its first tools/list answer; then stdin closes and the server exits. */
const mcpToFirstList = (hello = opening2025("loads")) =>
  new Promise<{ record: string; listed: number }>((done, fail) => {
    const record = recordFile()
    const project = NodeFs.mkdtempSync(NodePath.join(dir, "project-"))
    const child = spawn(process.execPath, ["--import", HOOK, "src/cli/main.ts", "mcp", "--root", project], {
      cwd: REPO,
      env: { ...process.env, RECORD_LOADS: record },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let out = ""
    let listed = 0
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString()
      const line = out.split("\n").find((l) => l.includes('"id":2'))
      if (line !== undefined && listed === 0) {
        listed = (JSON.parse(line) as { result: { tools: Array<unknown> } }).result.tools.length
        child.stdin.end()
      }
    })
    child.on("error", fail)
    child.on("exit", () => (listed > 0 ? done({ record, listed }) : fail(new Error(`no tools/list answer: ${out}`))))
    child.stdin.write(hello)
  })

describe("what each entry point loads", () => {
  it("import of the package: none of the call-time packages, not the MCP SDK", () => {
    const loaded = packagesIn(run(["--input-type=module", "-e", 'await import("./src/index.ts")']))
    expect(loaded.has("effect"), "the recording sees packages").toBe(true)
    expect([...CALL_TIME, ...MCP_SDK].filter((p) => loaded.has(p))).toEqual([])
  }, 60_000)

  it("--version and --help: no tool system built, no call-time package, not the MCP SDK", () => {
    for (const flag of ["--version", "--help"]) {
      const record = run(["src/cli/main.ts", flag])
      const loaded = packagesIn(record)
      expect(
        [...CALL_TIME, ...MCP_SDK].filter((p) => loaded.has(p)),
        flag
      ).toEqual([])
      // The live layers (every tool's service) load only in a command that builds a tool system.
      expect(
        ourModules(record).filter((m) => m.startsWith("layers/live")),
        flag
      ).toEqual([])
    }
  }, 60_000)

  it("mcp to its first tools/list: the SDK's server side, none of the call-time packages", async () => {
    const { record, listed } = await mcpToFirstList()
    expect(listed).toBeGreaterThan(5)
    // The recording sees the live layers where a command builds a tool system (--help must not).
    expect(ourModules(record)).toContain("layers/live.ts")
    const loaded = packagesIn(record)
    expect(loaded.has("@modelcontextprotocol/sdk")).toBe(true)
    // A 2025 client's stdio never loads the SDK 2.x server side.
    expect(loaded.has("@modelcontextprotocol/server")).toBe(false)
    expect([...CALL_TIME, ...STORE_ONLY].filter((p) => loaded.has(p))).toEqual([])
  }, 60_000)

  it("mcp opened the 2026 way to its first tools/list: SDK 2.x's server side, nothing of SDK 1.32", async () => {
    const { record, listed } = await mcpToFirstList(opening2026("loads"))
    expect(listed).toBeGreaterThan(5)
    const loaded = packagesIn(record)
    expect(loaded.has("@modelcontextprotocol/server")).toBe(true)
    // The 2025 era's server, its schemas and its ajv load only for a client that opens with initialize.
    expect(loaded.has("@modelcontextprotocol/sdk")).toBe(false)
    expect([...CALL_TIME, ...STORE_ONLY].filter((p) => loaded.has(p))).toEqual([])
  }, 60_000)
})
