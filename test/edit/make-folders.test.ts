/**
 * make-folders.ts one case at a time, each the state another process could leave between the
 * permission check and the write: the folder the check saw above the missing ones replaced, a
 * missing folder made since by another write (taken) or an older folder renamed into its place
 * (refused), a link put there, and two files of one write in one new folder.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { MovedError } from "../../src/edit/atomic-write.ts"
import { type FolderCheck, makeFolders } from "../../src/edit/make-folders.ts"
import type { CheckedEntry } from "../../src/tool/tool.ts"

const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-made-")))
afterAll(() => NodeFs.rmSync(base, { recursive: true, force: true }))

let n = 0
/** A project with `d/` and `.git/hooks/`, and what the check saw of `d` for a write below it, at `at`. */
const project = (at = Date.now()) => {
  const root = NodePath.join(base, `p${n++}`)
  NodeFs.mkdirSync(NodePath.join(root, "d"), { recursive: true })
  NodeFs.mkdirSync(NodePath.join(root, ".git", "hooks"), { recursive: true })
  const st = NodeFs.statSync(NodePath.join(root, "d"))
  const check: FolderCheck = {
    folder: null,
    base: { path: NodePath.join(root, "d"), entry: { dev: st.dev, ino: st.ino, mode: st.mode }, at }
  }
  return { root, d: NodePath.join(root, "d"), check }
}

const entryAt = (p: string): CheckedEntry => {
  const st = NodeFs.lstatSync(p)
  return { dev: st.dev, ino: st.ino, mode: st.mode }
}

describe.skipIf(process.platform !== "linux")("the folders a write makes", () => {
  it("makes every missing folder from the folder checked, and the entry is the last one made", () => {
    const { d, check } = project()
    const made = new Map<string, CheckedEntry>()
    const entry = makeFolders(NodePath.join(d, "a", "b"), check, made)
    expect(entry).toEqual(entryAt(NodePath.join(d, "a", "b")))
    expect([...made.keys()]).toEqual([NodePath.join(d, "a"), NodePath.join(d, "a", "b")])
    // A second file of the same write goes in them.
    expect(makeFolders(NodePath.join(d, "a", "b"), check, made)).toEqual(entry)
    expect(makeFolders(NodePath.join(d, "a", "c"), check, made)).toEqual(entryAt(NodePath.join(d, "a", "c")))
  })

  it("refuses when another folder is where the check saw the folder above (.git renamed into d's place)", () => {
    const { root, d, check } = project()
    NodeFs.renameSync(d, `${d}.old`)
    NodeFs.renameSync(NodePath.join(root, ".git"), d)
    expect(() => makeFolders(NodePath.join(d, "hooks"), check, new Map())).toThrow(
      /another folder than the one the permission check saw/
    )
    expect(NodeFs.readdirSync(NodePath.join(d, "hooks"))).toEqual([])
  })

  it("takes a folder another write made since the check; refuses an older one renamed in, and a link", () => {
    const taken = project()
    NodeFs.mkdirSync(NodePath.join(taken.d, "new"))
    NodeFs.writeFileSync(NodePath.join(taken.d, "new", "other.txt"), "the other write's\n")
    expect(makeFolders(NodePath.join(taken.d, "new"), taken.check, new Map())).toEqual(
      entryAt(NodePath.join(taken.d, "new"))
    )
    // The check looked after .git/hooks was born: renamed into d/new, it is older than the check.
    const later = project(Date.now() + 1_000)
    NodeFs.renameSync(NodePath.join(later.root, ".git", "hooks"), NodePath.join(later.d, "new"))
    expect(() => makeFolders(NodePath.join(later.d, "new"), later.check, new Map())).toThrow(/is older than the check/)
    const linked = project()
    NodeFs.symlinkSync(NodePath.join(linked.root, ".git", "hooks"), NodePath.join(linked.d, "new"))
    expect(() => makeFolders(NodePath.join(linked.d, "new"), linked.check, new Map())).toThrow(MovedError)
  })

  it("without a check, makes what is missing now and vouches for nothing else", () => {
    const { d } = project()
    expect(makeFolders(d, {}, new Map())).toBeUndefined()
    expect(makeFolders(NodePath.join(d, "x"), {}, new Map())).toEqual(entryAt(NodePath.join(d, "x")))
  })
})
