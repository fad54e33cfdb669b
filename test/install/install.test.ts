/**
 * What a new user does, on the machine's own Node (20 on CI): the README's two commands in a
 * fresh clone, then the package packed and installed the ways docs/install.md gives (into a
 * project, `npm install -g`, `npx --package=<tarball>`), a client config that uses it, and a
 * TypeScript consumer that type-checks the package's declarations (skipLibCheck: false).
 * Minutes of work (npm ci, npm pack): run when FREECODE_INSTALL_TESTS is set, as .ci/run does.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshEnv, INSTALL_TESTS, machinePath, mcpHello, REPO, sh, tempDir } from "./helpers.ts"

const MINUTE = 60_000
const pkg = JSON.parse(NodeFs.readFileSync(NodePath.join(REPO, "package.json"), "utf8")) as {
  version: string
  engines: { node: string }
}
const [wantMajor, wantMinor] = /(\d+)\.(\d+)/.exec(pkg.engines.node)!.slice(1).map(Number) as [number, number]

describe.runIf(INSTALL_TESTS !== "")("a new user's first run", () => {
  const work = tempDir("first-run")
  const clone = NodePath.join(work, "clone")
  const machine = freshEnv(machinePath())
  let machineNode = ""
  afterAll(() => NodeFs.rmSync(work, { recursive: true, force: true }), 5 * MINUTE)

  beforeAll(async () => {
    const version = await sh("node --version", work, machine)
    machineNode = version.stdout.trim()
    const cloned = await sh(`git clone --quiet ${JSON.stringify(REPO)} clone`, work, machine)
    expect(cloned.code, cloned.stderr).toBe(0)
  }, MINUTE)

  it(
    "README, first command: `npm ci && npx freecode-tools mcp` serves the tools",
    async () => {
      const r = await mcpHello("npm ci && npx freecode-tools mcp", clone, machine, 15 * MINUTE)
      expect(r.code, r.stderr).toBe(0)
      expect(r.tools).toEqual(expect.arrayContaining(["read", "edit", "bash", "grep"]))
      expect(r.stderr).toContain(`freecode-tools mcp: serving ${r.tools.length} tools for ${clone} over stdio`)
      // npm scripts and npx inside the clone run the project's Node, whatever the machine has.
      const inside = await sh("npm exec -- node --version", clone, machine)
      expect(inside.stdout.trim()).toMatch(/^v24\./)
    },
    20 * MINUTE
  )

  it.skipIf(INSTALL_TESTS === "quick")(
    "README, second command: `npm run check` (after the npm ci above) passes",
    async () => {
      const r = await sh("npm run check", clone, machine, "", 60 * MINUTE)
      expect(r.code, `${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`).toBe(0)
    },
    65 * MINUTE
  )

  describe("installed from a packed tarball", () => {
    const node24 = freshEnv([NodePath.join(clone, "node_modules/node/bin"), machinePath()].join(NodePath.delimiter))
    let tarball = ""
    const consumer = NodePath.join(work, "consumer")

    beforeAll(async () => {
      const packed = await sh(`npm pack --pack-destination ${JSON.stringify(work)}`, clone, machine)
      expect(packed.code, packed.stderr).toBe(0)
      tarball = NodePath.join(work, `freecode-tools-${pkg.version}.tgz`)
      NodeFs.mkdirSync(consumer)
      NodeFs.writeFileSync(
        NodePath.join(consumer, "package.json"),
        JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module" })
      )
      const installed = await sh(
        `npm install --no-audit --no-fund ${JSON.stringify(tarball)} typescript@7.0.2 @types/node@24.19.4`,
        consumer,
        node24
      )
      expect(installed.code, installed.stderr).toBe(0)
      // Nothing in the package asks the consumer's npm to approve an install script.
      expect(installed.stderr).not.toContain("install-scripts")
    }, 15 * MINUTE)

    it("ships what it uses: LICENSE, entry/, the bundles, types, the bash grammar; no .ts source, no source maps", () => {
      const root = NodePath.join(consumer, "node_modules/freecode-tools")
      for (const file of [
        "LICENSE",
        "entry/cli.js",
        "entry/index.js",
        "entry/mcp.js",
        "entry/layers.js",
        "dist/lib/index.js",
        "dist/lib/layers.js",
        "dist/cli/main.js",
        "dist/src/index.d.ts",
        "dist/layers/live.d.ts",
        "dist/src/permission/tree-sitter-bash.wasm"
      ]) {
        expect(NodeFs.existsSync(NodePath.join(root, file)), file).toBe(true)
      }
      const files = NodeFs.readdirSync(root, { recursive: true }).map(String)
      // The unbundled build is what the bundles are made from (scripts/bundle.ts); nothing runs it.
      expect(
        files.filter((f) => (f.startsWith("dist/src/") || f.startsWith("dist/layers/")) && f.endsWith(".js"))
      ).toEqual([])
      expect(files.filter((f) => f.endsWith(".map"))).toEqual([])
      expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([])
      expect(NodeFs.existsSync(NodePath.join(consumer, "node_modules/tree-sitter-bash"))).toBe(false)
    })

    it(
      "on the machine's Node: works, or one line saying which Node it needs",
      async () => {
        const [major, minor] = machineNode.slice(1).split(".").map(Number) as [number, number]
        const old = major < wantMajor || (major === wantMajor && minor < wantMinor)
        for (const command of ["npx freecode-tools --version", `node -e 'import("freecode-tools")'`]) {
          const r = await sh(command, consumer, machine)
          if (old) {
            expect(r.code, command).toBe(1)
            const lines = r.stderr.split("\n").filter((l) => l.startsWith("freecode-tools needs"))
            expect(lines, r.stderr).toHaveLength(1)
            expect(lines[0]).toContain(`found ${machineNode.slice(1)}`)
            expect(r.stderr).not.toMatch(/\n\s+at /)
          } else {
            expect(r.code, `${command}\n${r.stderr}`).toBe(0)
          }
        }
      },
      2 * MINUTE
    )

    it(
      "in a project on Node 24: the bin, the MCP server, the library, and tsc with skipLibCheck: false",
      async () => {
        const version = await sh("npx freecode-tools --version", consumer, node24)
        expect(version.stdout.trim()).toBe(pkg.version)
        const served = await mcpHello("npx freecode-tools mcp", consumer, node24, 2 * MINUTE)
        expect(served.tools).toContain("read")
        NodeFs.writeFileSync(
          NodePath.join(consumer, "index.ts"),
          [
            'import { analyzeCommand, Dispatcher } from "freecode-tools"',
            'import { ToolSystem } from "freecode-tools/layers"',
            "export const used = [analyzeCommand, Dispatcher, ToolSystem]",
            ""
          ].join("\n")
        )
        NodeFs.writeFileSync(
          NodePath.join(consumer, "tsconfig.json"),
          JSON.stringify({
            compilerOptions: {
              target: "ES2023",
              module: "NodeNext",
              moduleResolution: "NodeNext",
              strict: true,
              skipLibCheck: false,
              noEmit: true,
              types: ["node"]
            },
            files: ["index.ts"]
          })
        )
        const tsc = await sh("npx tsc -p .", consumer, node24)
        expect(tsc.code, tsc.stdout).toBe(0)
        // The shell parser loads the grammar shipped in dist/.
        const parsed = await sh(
          `node -e 'import("freecode-tools").then(async (m) => { const { Effect } = await import("effect"); console.log(JSON.stringify(await Effect.runPromise(m.analyzeCommand("ls && rm -rf x")))) })'`,
          consumer,
          node24
        )
        expect(JSON.parse(parsed.stdout).commands).toHaveLength(2)
      },
      5 * MINUTE
    )

    it(
      "npm install -g, npx --package=<tarball>, and a client config that starts it",
      async () => {
        const prefix = NodePath.join(work, "global")
        const global = await sh(
          `npm install -g --prefix ${JSON.stringify(prefix)} ${JSON.stringify(tarball)}`,
          work,
          node24
        )
        expect(global.code, global.stderr).toBe(0)
        const onPath = freshEnv([NodePath.join(prefix, "bin"), node24.PATH].join(NodePath.delimiter))
        expect((await sh("freecode-tools --version", work, onPath)).stdout.trim()).toBe(pkg.version)
        const empty = tempDir("npx")
        try {
          const once = await sh(
            `npx --yes --package=${JSON.stringify(tarball)} freecode-tools --version`,
            empty,
            node24
          )
          expect(once.stdout.trim(), once.stderr).toBe(pkg.version)
          // docs/install.md's client config: { "command": "npx", "args": ["--yes", "--package=<tarball>", "freecode-tools", "mcp", "--root", "<project>"] }
          const config = {
            command: "npx",
            args: ["--yes", `--package=${tarball}`, "freecode-tools", "mcp", "--root", empty]
          }
          const served = await mcpHello(
            [config.command, ...config.args.map((a) => JSON.stringify(a))].join(" "),
            work,
            node24,
            2 * MINUTE
          )
          expect(served.tools).toContain("read")
          expect(served.stderr).toContain(`for ${empty} over stdio`)
        } finally {
          NodeFs.rmSync(empty, { recursive: true, force: true })
        }
      },
      10 * MINUTE
    )
  })
})
