import { spawn } from "node:child_process"
import * as NFS from "node:fs"
import * as NodePath from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { landingPath } from "../../src/edit/landing.ts"
import { makeNativeFs } from "../../src/fs/native.ts"
import { realPath } from "../../src/permission/containment.ts"
import { ApplyPatchTool } from "../../src/tools/apply-patch.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { WriteTool } from "../../src/tools/write.ts"
import { tempDirs } from "../temp-dirs.ts"
import { run } from "../tools/helpers.ts"
import { ctxFor, layer } from "./helpers.ts"

const tempDir = tempDirs()

/** Runs a tool call; its failure message, or "ok". */
const attempt = (tool: Parameters<typeof run>[0], args: unknown, root: string) =>
  Effect.runPromise(
    run(tool, args, ctxFor(root)).pipe(
      Effect.map(() => "ok"),
      Effect.catch((e) => Effect.succeed(String((e as { message?: string }).message))),
      Effect.provide(layer)
    ) as Effect.Effect<string>
  )

const patch = (...lines: Array<string>) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")

describe("a dangling symlink never creates a file outside the project", () => {
  it("write, edit with an empty oldString, Add File and Move to are all refused, and say where it would land", async () => {
    const root = tempDir("freecode-links-")
    const outside = tempDir("freecode-outside-")
    NFS.symlinkSync(NodePath.join(outside, "made.txt"), NodePath.join(root, "dangling"))
    NFS.symlinkSync(NodePath.join(outside, "sub"), NodePath.join(root, "dir-link"))
    NFS.writeFileSync(NodePath.join(root, "a.txt"), "a\n")
    const calls: Array<[Parameters<typeof run>[0], unknown]> = [
      [WriteTool, { filePath: "dangling", content: "x\n" }],
      [EditTool, { filePath: "dangling", oldString: "", newString: "x\n" }],
      [WriteTool, { filePath: "dir-link/new.txt", content: "x\n" }],
      [ApplyPatchTool, { patchText: patch("*** Add File: dangling", "+x") }],
      [ApplyPatchTool, { patchText: patch("*** Update File: a.txt", "*** Move to: dangling", "@@", "-a", "+b") }]
    ]
    for (const [tool, args] of calls) {
      const message = await attempt(tool, args, root)
      expect(message).toContain("leads outside")
      expect(message).toContain(outside)
    }
    expect(NFS.readdirSync(outside)).toEqual([])
    expect(NFS.readFileSync(NodePath.join(root, "a.txt"), "utf8")).toBe("a\n")
  })

  it("declares the path as named, and the permission check finds where the write lands", () => {
    const root = tempDir("freecode-links-")
    const outside = tempDir("freecode-outside-")
    NFS.symlinkSync(NodePath.join(outside, "made.txt"), NodePath.join(root, "dangling"))
    NFS.symlinkSync(NodePath.join(outside, "gone"), NodePath.join(root, "dir-link"))
    const ctx = ctxFor(root)
    const named = NodePath.join(root, "dangling")
    expect(WriteTool.paths({ filePath: "dangling", content: "" }, ctx)).toEqual([named])
    expect(EditTool.paths({ filePath: "dangling", oldString: "", newString: "" }, ctx)).toEqual([named])
    expect(ApplyPatchTool.paths({ patchText: patch("*** Add File: dangling", "+x") }, ctx)).toEqual([named])
    // Where the permission rules look (LocalFs, as the engine asks it): the links' targets.
    const fs = makeNativeFs()
    expect(Effect.runSync(realPath(fs, named))).toBe(NodePath.join(outside, "made.txt"))
    expect(Effect.runSync(realPath(fs, NodePath.join(root, "dir-link", "new.txt")))).toBe(
      NodePath.join(outside, "gone", "new.txt")
    )
  })

  it("a link inside the project is written through: its target changes, the link stays", async () => {
    const root = tempDir("freecode-links-")
    NFS.writeFileSync(NodePath.join(root, "real.txt"), "v = 1\n")
    NFS.symlinkSync("real.txt", NodePath.join(root, "alias.txt"))
    expect(await attempt(EditTool, { filePath: "alias.txt", oldString: "v = 1", newString: "v = 2" }, root)).toBe("ok")
    expect(NFS.readFileSync(NodePath.join(root, "real.txt"), "utf8")).toBe("v = 2\n")
    expect(NFS.lstatSync(NodePath.join(root, "alias.txt")).isSymbolicLink()).toBe(true)
  })

  it("landingPath follows every link, the last one too, and a chain that loops is undefined", () => {
    const root = tempDir("freecode-links-")
    NFS.mkdirSync(NodePath.join(root, "d"))
    NFS.symlinkSync(NodePath.join(root, "d"), NodePath.join(root, "l1"))
    NFS.symlinkSync("../missing/x", NodePath.join(root, "d", "to-missing"))
    expect(landingPath(NodePath.join(root, "l1", "to-missing"))).toBe(NodePath.join(root, "missing", "x"))
    expect(landingPath(NodePath.join(root, "l1", "new", "deeper.txt"))).toBe(
      NodePath.join(root, "d", "new", "deeper.txt")
    )
    NFS.symlinkSync("loop-b", NodePath.join(root, "loop-a"))
    NFS.symlinkSync("loop-a", NodePath.join(root, "loop-b"))
    expect(landingPath(NodePath.join(root, "loop-a"))).toBeUndefined()
  })
})

describe("a NUL byte in a path", () => {
  it("is refused with a clear error by write and edit, and nothing is written", async () => {
    const root = tempDir("freecode-nul-")
    for (const [tool, args] of [
      [WriteTool, { filePath: "a.txt\0.sh", content: "x" }],
      [EditTool, { filePath: "a\0b", oldString: "", newString: "x" }]
    ] as const) {
      expect(await attempt(tool, args, root)).toContain("NUL byte")
    }
    expect(NFS.readdirSync(root).filter((n) => n !== ".freecode")).toEqual([])
  })
})

describe("a folder swapped for a link while edits run (bounded: about a second)", () => {
  it("no edit ever reads or changes the file outside", async () => {
    const root = tempDir("freecode-race-")
    const outside = tempDir("freecode-outside-")
    NFS.mkdirSync(NodePath.join(root, "dir"))
    NFS.writeFileSync(NodePath.join(root, "dir", "f.txt"), "n = 0\n")
    NFS.writeFileSync(NodePath.join(outside, "f.txt"), "n = 0\n")
    const dir = NodePath.join(root, "dir")
    const away = NodePath.join(root, "dir.away")
    // Another process swaps the folder as fast as it can: the real folder moves aside and a
    // link to the outside takes its name, then back.
    const swapper = spawn(
      process.execPath,
      [
        "-e",
        `const fs = require("fs"); const [dir, away, outside] = process.argv.slice(1); let n = 0
        const until = Date.now() + 1500
        while (Date.now() < until) {
          try { fs.renameSync(dir, away); fs.symlinkSync(outside, dir); fs.unlinkSync(dir); fs.renameSync(away, dir); n++ } catch {}
        }
        try { fs.unlinkSync(dir) } catch {}
        try { fs.renameSync(away, dir) } catch {}
        console.log(n)`,
        dir,
        away,
        outside
      ],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    let out = ""
    swapper.stdout.on("data", (d) => {
      out += String(d)
    })
    const done = new Promise((r) => swapper.on("exit", r))
    const until = Date.now() + 1_200
    let ok = 0
    let refused = 0
    while (Date.now() < until) {
      const message = await attempt(EditTool, { filePath: "dir/f.txt", oldString: "n = ", newString: "n = 1" }, root)
      if (message === "ok") ok++
      else refused++
    }
    await done
    const swaps = Number(out.trim())
    expect(swaps).toBeGreaterThan(10)
    expect(ok + refused).toBeGreaterThan(10)
    expect(NFS.readFileSync(NodePath.join(outside, "f.txt"), "utf8")).toBe("n = 0\n")
    expect(NFS.readdirSync(outside)).toEqual(["f.txt"])
  }, 30_000)
})
