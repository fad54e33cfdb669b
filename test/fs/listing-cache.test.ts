/**
 * The directory listing cache against real directories: reused only while the directory is
 * unchanged and was settled when read; any add, remove, rename or mtime reset is seen at once.
 */
import * as NFS from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makeListingCache, RACY_MS } from "../../src/fs/listing-cache.ts"

const base = NFS.mkdtempSync(NodePath.join(tmpdir(), "listing-cache-"))
afterAll(() => NFS.rmSync(base, { recursive: true, force: true }))

let made = 0
const makeDir = (files: ReadonlyArray<string>) => {
  const dir = NodePath.join(base, `d${made++}`)
  NFS.mkdirSync(dir)
  for (const f of files) NFS.writeFileSync(NodePath.join(dir, f), f)
  return dir
}
const names = (dir: string) => NFS.readdirSync(dir).sort()
const listOf = (cache: ReturnType<typeof makeListingCache<string>>, dir: string) =>
  cache.list(dir, () => NFS.readdirSync(dir)).sort()

describe("directory listing cache", () => {
  it("reuses a settled, unchanged directory's listing, as a new array each time", () => {
    // A clock far ahead: the directory counts as settled at once.
    const cache = makeListingCache<string>(() => Date.now() + 60_000)
    const dir = makeDir(["a", "b", "c"])
    const first = cache.list(dir, () => NFS.readdirSync(dir))
    const second = cache.list(dir, () => {
      throw new Error("read again")
    })
    expect(second.sort()).toEqual(["a", "b", "c"])
    expect(second).not.toBe(first)
    second.reverse()
    expect(cache.list(dir, () => []).sort()).toEqual(["a", "b", "c"])
    expect(cache.stats()).toEqual({ hits: 2, reads: 1 })
  })

  it("reads a directory changed within the racy window every time", () => {
    const cache = makeListingCache<string>()
    const dir = makeDir(["a"])
    expect(listOf(cache, dir)).toEqual(["a"])
    NFS.writeFileSync(NodePath.join(dir, "b"), "b")
    expect(listOf(cache, dir)).toEqual(["a", "b"])
    expect(cache.stats()).toEqual({ hits: 0, reads: 2 })
  })

  it("says what reading says for a missing path or a file", () => {
    const cache = makeListingCache<string>(() => Date.now() + 60_000)
    const file = NodePath.join(makeDir(["f"]), "f")
    expect(() =>
      cache.list(NodePath.join(base, "missing"), () => NFS.readdirSync(NodePath.join(base, "missing")))
    ).toThrow(/ENOENT/)
    expect(() => cache.list(file, () => NFS.readdirSync(file))).toThrow(/ENOTDIR/)
  })

  it(
    "sees every change to a directory it kept: add, remove, rename, an mtime set back",
    async () => {
      const cache = makeListingCache<string>()
      const dir = makeDir(["a", "b"])
      const old = new Date(Date.now() - 3_600_000)
      NFS.utimesSync(dir, old, old)
      // The real clock: wait until the directory's ctime is past the racy window.
      await new Promise((resolve) => setTimeout(resolve, RACY_MS + 200))
      expect(listOf(cache, dir)).toEqual(["a", "b"])
      expect(listOf(cache, dir)).toEqual(["a", "b"])
      expect(cache.stats().hits).toBe(1)

      NFS.writeFileSync(NodePath.join(dir, "c"), "c")
      expect(listOf(cache, dir)).toEqual(names(dir))
      expect(listOf(cache, dir)).toEqual(["a", "b", "c"])
      NFS.rmSync(NodePath.join(dir, "a"))
      expect(listOf(cache, dir)).toEqual(["b", "c"])
      NFS.renameSync(NodePath.join(dir, "b"), NodePath.join(dir, "d"))
      expect(listOf(cache, dir)).toEqual(["c", "d"])
      // As tar and rsync -a do: add an entry, then put the old mtime back. The ctime moves.
      NFS.writeFileSync(NodePath.join(dir, "e"), "e")
      NFS.utimesSync(dir, old, old)
      expect(listOf(cache, dir)).toEqual(["c", "d", "e"])
      // A directory replaced by another at the same path is another inode.
      const moved = `${dir}-old`
      NFS.renameSync(dir, moved)
      NFS.mkdirSync(dir)
      NFS.writeFileSync(NodePath.join(dir, "z"), "z")
      NFS.utimesSync(dir, old, old)
      expect(listOf(cache, dir)).toEqual(["z"])
    },
    RACY_MS + 10_000
  )
})
