/**
 * Every command block (```sh) of README.md and docs/*.md runs as printed, in a project set up
 * with the files the docs name: a copy of src/ and examples/, a README.md ("# Demo"), and
 * src/a.ts holding `const a = 1` (the edit and apply_patch examples). A block of `$ ` lines is a
 * transcript: each command's output (stdout and stderr) must be the lines printed under it. A
 * block that cannot run here says why in a `<!-- placeholder: … -->` line just above it. A
 * transcript prints the project as /home/me/project and the home folder as /home/me; no search
 * API or skill folder is configured.
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"

const REPO = NodePath.resolve(import.meta.dirname, "../..")
const FILES = [
  "README.md",
  ...NodeFs.readdirSync(NodePath.join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`)
]

interface Block {
  readonly file: string
  readonly line: number
  readonly text: string
  readonly placeholder: string | undefined
}

const blocksOf = (file: string): ReadonlyArray<Block> => {
  const lines = NodeFs.readFileSync(NodePath.join(REPO, file), "utf8").split("\n")
  const blocks: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)\s*$/.exec(lines[i]!)
    if (fence === null) continue
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"))
    if (["sh", "bash", "shell", "console"].includes(fence[1]!)) {
      const before = lines.slice(0, i).findLast((l) => l.trim() !== "") ?? ""
      const placeholder = /^<!-- placeholder: (.+) -->$/.exec(before.trim())?.[1]
      blocks.push({ file, line: i + 1, text: lines.slice(i + 1, end).join("\n"), placeholder })
    }
    i = end
  }
  return blocks
}

/** A project as the docs assume one: their files, this package's bin (npx and on PATH). */
const makeProject = () => {
  const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-docs-"))
  NodeFs.cpSync(NodePath.join(REPO, "src"), NodePath.join(root, "src"), { recursive: true })
  NodeFs.cpSync(NodePath.join(REPO, "examples"), NodePath.join(root, "examples"), { recursive: true })
  NodeFs.copyFileSync(NodePath.join(REPO, "package.json"), NodePath.join(root, "package.json"))
  NodeFs.symlinkSync(NodePath.join(REPO, "node_modules"), NodePath.join(root, "node_modules"))
  NodeFs.symlinkSync(NodePath.join(REPO, "entry"), NodePath.join(root, "entry"))
  NodeFs.writeFileSync(NodePath.join(root, "README.md"), "# Demo\n\nA small project.\n")
  NodeFs.writeFileSync(NodePath.join(root, "src/a.ts"), "const a = 1\n")
  NodeFs.writeFileSync(NodePath.join(root, ".gitignore"), "node_modules/\n")
  const bin = NodePath.join(root, ".bin")
  NodeFs.mkdirSync(bin)
  NodeFs.symlinkSync(NodePath.join(REPO, "entry/cli.js"), NodePath.join(bin, "freecode-tools"))
  const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-docs-home-"))
  const { SEARXNG_URL, BRAVE_API_KEY, TAVILY_API_KEY, FREECODE_SKILL_DIRS, ...inherited } = process.env
  const env = {
    ...inherited,
    HOME: home,
    NO_COLOR: "1",
    PATH: [bin, NodePath.dirname(process.execPath), process.env.PATH].join(NodePath.delimiter)
  }
  const cleanup = () => {
    NodeFs.rmSync(root, { recursive: true, force: true })
    NodeFs.rmSync(home, { recursive: true, force: true })
  }
  /** Output as the docs print it. */
  const asPrinted = (text: string) => text.replaceAll(root, "/home/me/project").replaceAll(home, "/home/me")
  return { root, env, asPrinted, cleanup }
}

const bash = (script: string, cwd: string, env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (b: Buffer) => (output += b.toString()))
    child.stderr.on("data", (b: Buffer) => (output += b.toString()))
    child.on("close", (code) => resolve({ code, output }))
  })

/** A transcript's commands, each with the output printed under it. */
const transcript = (text: string) => {
  const steps: Array<{ command: string; expected: Array<string> }> = []
  for (const line of text.split("\n")) {
    if (line.startsWith("$ ")) steps.push({ command: line.slice(2), expected: [] })
    else steps.at(-1)?.expected.push(line)
  }
  return steps
}

const trimmed = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n")
    .trim()

const blocks = FILES.flatMap(blocksOf)

describe("the docs' command blocks", () => {
  it("every placeholder says why", () => {
    expect(blocks.length).toBeGreaterThan(10)
    for (const b of blocks.filter((b) => b.placeholder !== undefined)) expect(b.placeholder!.length).toBeGreaterThan(10)
  })

  for (const block of blocks.filter((b) => b.placeholder === undefined)) {
    it(`${block.file}:${block.line} runs as printed`, async () => {
      const project = makeProject()
      try {
        if (block.text.trimStart().startsWith("$ ")) {
          for (const step of transcript(block.text)) {
            const r = await bash(step.command, project.root, project.env)
            expect(trimmed(project.asPrinted(r.output)), step.command).toBe(trimmed(step.expected.join("\n")))
          }
        } else {
          const r = await bash(`set -e -o pipefail\n${block.text}`, project.root, project.env)
          expect(r.code, r.output.slice(-3000)).toBe(0)
        }
      } finally {
        project.cleanup()
      }
    }, 300_000)
  }
})
