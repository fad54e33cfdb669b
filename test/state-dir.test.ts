import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { STATE_DIR_NAME } from "../src/session/location.ts"
import { makeProject, runProcess } from "./cli/helpers.ts"

describe("the test run's state folder", () => {
  it("is a temp folder of its own, and a CLI child process keeps its session there", async () => {
    const dir = process.env[STATE_DIR_NAME]
    expect(dir).toBeDefined()
    expect(dir!.startsWith(NodeOs.tmpdir())).toBe(true)
    expect(dir!.startsWith(NodePath.join(NodeOs.homedir(), ".local"))).toBe(false)
    const project = makeProject()
    try {
      const r = await runProcess([
        "call",
        "read",
        '{"filePath":"README.md"}',
        "--root",
        project.root,
        "--session",
        "s1"
      ])
      expect(r.code).toBe(0)
      const projects = NodeFs.readdirSync(NodePath.join(dir!, "projects"))
      expect(projects.some((p) => p.startsWith(`${NodePath.basename(project.root)}-`))).toBe(true)
    } finally {
      project.cleanup()
    }
  })
})
