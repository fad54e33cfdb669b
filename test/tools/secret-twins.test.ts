/**
 * A secret is hidden from the file tools however its file is reached, not only by its name: a
 * hard link under an innocent name (in the project, or to a home credential file), and the
 * /proc and /dev/fd spellings of the secret's own path. Each call goes the whole way (the
 * Dispatcher's rules, then the tool, on the native LocalFs), the person declining whatever asks.
 */
import { spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { toolSystem } from "../../layers/system.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { Approval } from "../../src/permission/approval.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { GrepTool } from "../../src/tools/grep.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { WriteTool } from "../../src/tools/write.ts"

const SECRET = "API_TOKEN=twin-secret-4242"

const project = () => {
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-twin-")))
  NodeFs.writeFileSync(NodePath.join(root, ".env"), `${SECRET}\n`)
  NodeFs.mkdirSync(NodePath.join(root, "docs"))
  NodeFs.linkSync(NodePath.join(root, ".env"), NodePath.join(root, "docs", "notes.txt"))
  NodeFs.writeFileSync(NodePath.join(root, "plain.txt"), "API_TOKEN=not-a-secret\n")
  return root
}

const call = (root: string, name: string, args: Record<string, unknown>, mode = "default") =>
  Dispatcher.use((d) => d.dispatch({ id: "c", name, args }, { sessionId: `s-${Math.random()}` })).pipe(
    Effect.map((r) => ({ status: r.status, text: r.modelOutput })),
    Effect.provide(
      toolSystem({
        root,
        outputConfig: OutputConfig.layerWith({}),
        tools: [ReadTool, GrepTool, EditTool, WriteTool],
        config: { permissions: { defaultMode: mode as "default" } },
        approval: Approval.layerTest({ answer: "deny" }, [])
      }).pipe(Layer.provide(LocalFs.layerNative), Layer.provideMerge(NodeServices.layer))
    )
  )

describe("secrets reached by another name", () => {
  it.live("read: a hard link to .env under an innocent name is refused, naming the secret", () =>
    Effect.gen(function* () {
      const root = project()
      const r = yield* call(root, "read", { filePath: "docs/notes.txt" })
      expect(r.text).not.toContain("twin-secret")
      expect(r.status).toBe("error")
      expect(r.text).toContain("another name (a hard link or a bind mount) of")
      expect(r.text).toContain(".env")
      // An ordinary file, and a linked file that is no secret, read as always.
      expect((yield* call(root, "read", { filePath: "plain.txt" })).text).toContain("not-a-secret")
      NodeFs.writeFileSync(NodePath.join(root, "a.txt"), "shared\n")
      NodeFs.linkSync(NodePath.join(root, "a.txt"), NodePath.join(root, "b.txt"))
      expect((yield* call(root, "read", { filePath: "b.txt" })).text).toContain("shared")
      NodeFs.rmSync(root, { recursive: true, force: true })
    })
  )

  it.live("grep: a hard link to .env shows in no mode (content, files, counts)", () =>
    Effect.gen(function* () {
      const root = project()
      for (const output_mode of ["content", "files_with_matches", "count"]) {
        const r = yield* call(root, "grep", { pattern: "twin-secret", output_mode })
        expect(r.text, output_mode).not.toContain("twin-secret-4242")
        expect(r.text, output_mode).not.toContain("notes.txt")
      }
      const plain = yield* call(root, "grep", { pattern: "API_TOKEN", output_mode: "content" })
      expect(plain.text).toContain("not-a-secret")
      expect(plain.text).not.toContain("twin-secret")
      NodeFs.rmSync(root, { recursive: true, force: true })
    })
  )

  it.live(
    "/proc/self/root, /proc/PID/root, /proc/thread-self/root and /dev/fd spellings of .env ask (declined: not read)",
    () =>
      Effect.gen(function* () {
        const root = project()
        const fd = NodeFs.openSync(NodePath.join(root, ".env"), "r")
        try {
          const spellings = [
            `/proc/self/root${root}/.env`,
            `/proc/${process.pid}/root${root}/.env`,
            `/proc/thread-self/root${root}/docs/../.env`,
            `/dev/fd/${fd}`,
            `/proc/self/fd/${fd}`
          ]
          for (const filePath of spellings) {
            const r = yield* call(root, "read", { filePath })
            expect(r.text, filePath).not.toContain("twin-secret")
            expect(r.status, filePath).not.toBe("ok")
          }
          // The same spellings of the hard link: refused as the secret's other name.
          const linked = yield* call(root, "read", { filePath: `/proc/self/root${root}/docs/notes.txt` })
          expect(linked.text).not.toContain("twin-secret")
        } finally {
          NodeFs.closeSync(fd)
          NodeFs.rmSync(root, { recursive: true, force: true })
        }
      })
  )

  it.live(
    "edit and write of a secret, by its name or another, ask even in acceptEdits (edit shows the text it missed)",
    () =>
      Effect.gen(function* () {
        const root = project()
        for (const filePath of [".env", "docs/notes.txt"]) {
          const r = yield* call(
            root,
            "edit",
            { filePath, oldString: "API_TOKEN=twin-secret-4243", newString: "x" },
            "acceptEdits"
          )
          expect(r.text, filePath).not.toContain("twin-secret-4242")
          expect(r.status, filePath).not.toBe("ok")
          const w = yield* call(root, "write", { filePath, content: "x" }, "acceptEdits")
          expect(w.status, filePath).not.toBe("ok")
        }
        expect(NodeFs.readFileSync(NodePath.join(root, ".env"), "utf8")).toBe(`${SECRET}\n`)
        // An ordinary file still edits without asking there.
        const ok = yield* call(
          root,
          "edit",
          { filePath: "plain.txt", oldString: "not-a-secret", newString: "plain" },
          "acceptEdits"
        )
        expect(ok.status).toBe("ok")
        NodeFs.rmSync(root, { recursive: true, force: true })
      })
  )

  it.live("a removed .env another process still holds open, read through /proc/PID/fd, asks (declined: not read)", () =>
    Effect.gen(function* () {
      const root = project()
      const holder = spawn("sh", [
        "-c",
        `exec 3<"${root}/.env"; rm "${root}/.env" "${root}/docs/notes.txt"; echo ready; sleep 30`
      ])
      try {
        yield* Effect.promise(() => new Promise((ready) => holder.stdout.once("data", ready)))
        expect(NodeFs.readlinkSync(`/proc/${holder.pid}/fd/3`)).toContain("(deleted)")
        const r = yield* call(root, "read", { filePath: `/proc/${holder.pid}/fd/3` })
        expect(r.text).not.toContain("twin-secret")
        expect(r.status).not.toBe("ok")
      } finally {
        holder.kill("SIGKILL")
        NodeFs.rmSync(root, { recursive: true, force: true })
      }
    })
  )

  // Only root can bind-mount: elsewhere the case is skipped, saying so.
  const canMount = process.getuid?.() === 0 && spawnSync("mount", ["--version"]).status === 0
  it.live.skipIf(!canMount)(
    "a secret bind-mounted under an innocent name (one link, same inode): read, grep, edit and the /proc spellings",
    () =>
      Effect.gen(function* () {
        const root = project()
        const mountPoint = NodePath.join(root, "docs", "mounted.txt")
        NodeFs.writeFileSync(mountPoint, "placeholder\n")
        expect(spawnSync("mount", ["--bind", NodePath.join(root, ".env"), mountPoint]).status).toBe(0)
        try {
          expect(NodeFs.statSync(mountPoint).nlink).toBe(2) // the .env's own hard link from project()
          // A secret with one name, bind-mounted: its link count shows nothing.
          NodeFs.rmSync(NodePath.join(root, "docs", "notes.txt"))
          expect(NodeFs.statSync(mountPoint).nlink).toBe(1)
          for (const filePath of ["docs/mounted.txt", `/proc/self/root${mountPoint}`]) {
            const r = yield* call(root, "read", { filePath })
            expect(r.text, filePath).not.toContain("twin-secret")
            expect(r.status, filePath).not.toBe("ok")
          }
          for (const output_mode of ["content", "files_with_matches", "count"]) {
            const r = yield* call(root, "grep", { pattern: "twin-secret", path: "docs", output_mode })
            expect(r.text, output_mode).not.toContain("twin-secret-4242")
            expect(r.text, output_mode).not.toContain("mounted.txt")
          }
          const e = yield* call(
            root,
            "edit",
            { filePath: "docs/mounted.txt", oldString: "API_TOKEN=twin-secret-4243", newString: "x" },
            "acceptEdits"
          )
          expect(e.status).not.toBe("ok")
          expect(e.text).not.toContain("twin-secret-4242")
          expect(NodeFs.readFileSync(NodePath.join(root, ".env"), "utf8")).toBe(`${SECRET}\n`)
        } finally {
          spawnSync("umount", [mountPoint])
          NodeFs.rmSync(root, { recursive: true, force: true })
        }
      })
  )
})
