/**
 * The machine-wide lock folder (`<tmp>/freecode-tools-<uid>/locks`) when it is damaged: a file
 * where the folder should be is moved aside, said once, and the edit goes on; a folder another
 * user owns is refused with what to do, and the file is left as it was. Each case runs the real
 * CLI in its own TMPDIR (the folder is found once per process).
 */
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"

const MAIN = NodePath.resolve(import.meta.dirname, "../../src/cli/main.ts")
const uid = process.getuid?.() ?? 0

const setup = () => {
  const top = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-lockdir-")))
  const tmp = NodePath.join(top, "tmp")
  const project = NodePath.join(top, "project")
  NodeFs.mkdirSync(NodePath.join(tmp, `freecode-tools-${uid}`), { recursive: true, mode: 0o700 })
  NodeFs.mkdirSync(project)
  NodeFs.writeFileSync(NodePath.join(project, "a.txt"), "hello\n")
  const edit = () =>
    spawnSync(
      process.execPath,
      [MAIN, "call", "--yes", "edit", JSON.stringify({ filePath: "a.txt", oldString: "hello", newString: "bye" })],
      {
        cwd: project,
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env, TMPDIR: tmp, FREECODE_STATE_DIR: NodePath.join(top, "state") }
      }
    )
  return { locks: NodePath.join(tmp, `freecode-tools-${uid}`, "locks"), project, edit }
}

describe("a damaged lock folder", () => {
  it("a file where the folder should be is moved aside, named, and the edit goes on", () => {
    const { locks, project, edit } = setup()
    NodeFs.writeFileSync(locks, "not a folder\n")
    const run = edit()
    expect(run.stdout).toContain("Edited a.txt")
    expect(NodeFs.readFileSync(NodePath.join(project, "a.txt"), "utf8")).toBe("bye\n")
    expect(NodeFs.statSync(locks).isDirectory()).toBe(true)
    const aside = NodeFs.readdirSync(NodePath.dirname(locks)).find((n) => n.startsWith("locks.damaged-"))
    expect(aside).toMatch(/^locks\.damaged-\d{4}-/)
    expect(NodeFs.readFileSync(NodePath.join(NodePath.dirname(locks), aside!), "utf8")).toBe("not a folder\n")
    expect(run.stderr).toContain(`the lock folder ${locks} was not a folder; it was moved aside`)
  })

  it.skipIf(uid !== 0)("a folder another user owns is refused, saying what to do; the file is untouched", () => {
    const { locks, project, edit } = setup()
    NodeFs.mkdirSync(locks, { mode: 0o700 })
    NodeFs.chownSync(locks, 65534, 65534)
    const run = edit()
    expect(`${run.stdout}${run.stderr}`).toContain(`the lock folder ${locks} is not a folder of this user`)
    expect(`${run.stdout}${run.stderr}`).toContain("set TMPDIR to a folder of your own")
    expect(NodeFs.readFileSync(NodePath.join(project, "a.txt"), "utf8")).toBe("hello\n")
    expect(NodeFs.statSync(locks).uid).toBe(65534)
  })
})
