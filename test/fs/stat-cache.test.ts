/**
 * The stat-keyed cache against real directories and files: a value is reused only while the
 * path is unchanged and was settled when read; any add, remove, rename, rewrite or mtime reset
 * is seen at once.
 */
import * as NFS from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makeStatCache, RACY_MS } from "../../src/fs/stat-cache.ts"

const base = NFS.mkdtempSync(NodePath.join(tmpdir(), "stat-cache-"))
afterAll(() => NFS.rmSync(base, { recursive: true, force: true }))

let made = 0
const makeDir = (files: ReadonlyArray<string>) => {
  const dir = NodePath.join(base, `d${made++}`)
  NFS.mkdirSync(dir)
  for (const f of files) NFS.writeFileSync(NodePath.join(dir, f), f)
  return dir
}
const listings = (now?: () => number) =>
  makeStatCache<ReadonlyArray<string>>({
    maxPaths: 10,
    maxWeight: 1_000,
    weight: (names) => names.length,
    ...(now === undefined ? {} : { now })
  })
const list = (cache: ReturnType<typeof listings>, dir: string) =>
  [...cache.get(dir, NFS.statSync(dir), () => NFS.readdirSync(dir))].sort()

describe("stat cache", () => {
  it("reuses what was read from a settled, unchanged path", () => {
    // A clock far ahead: the path counts as settled at once.
    const cache = listings(() => Date.now() + 60_000)
    const dir = makeDir(["a", "b", "c"])
    expect(list(cache, dir)).toEqual(["a", "b", "c"])
    const again = cache.get(dir, NFS.statSync(dir), () => {
      throw new Error("read again")
    })
    expect([...again].sort()).toEqual(["a", "b", "c"])
    expect(cache.stats()).toEqual({ hits: 1, reads: 1 })
  })

  it("reads a path changed within the racy window every time", () => {
    const cache = listings()
    const dir = makeDir(["a"])
    expect(list(cache, dir)).toEqual(["a"])
    NFS.writeFileSync(NodePath.join(dir, "b"), "b")
    expect(list(cache, dir)).toEqual(["a", "b"])
    expect(list(cache, dir)).toEqual(["a", "b"])
    expect(cache.stats()).toEqual({ hits: 0, reads: 3 })
  })

  it("keeps within its bounds, dropping the least recently used", () => {
    const cache = makeStatCache<ReadonlyArray<string>>({
      maxPaths: 2,
      maxWeight: 5,
      weight: (names) => names.length,
      now: () => Date.now() + 60_000
    })
    const [a, b, c] = [makeDir(["1", "2"]), makeDir(["1", "2"]), makeDir(["1", "2"])]
    for (const dir of [a, b, a, c]) list(cache, dir)
    // c pushed out b (least recently used), not a.
    expect(cache.stats()).toEqual({ hits: 1, reads: 3 })
    list(cache, a)
    list(cache, b)
    expect(cache.stats()).toEqual({ hits: 2, reads: 4 })
    // Heavier than the whole budget: read, never kept.
    const big = makeDir(["1", "2", "3", "4", "5", "6"])
    list(cache, big)
    list(cache, big)
    expect(cache.stats()).toEqual({ hits: 2, reads: 6 })
  })

  it(
    "sees every change to what it kept: add, remove, rename, an mtime set back, a rewrite, a new inode",
    async () => {
      const cache = listings()
      const texts = makeStatCache<string>({ maxPaths: 10, maxWeight: 10, weight: () => 1 })
      const dir = makeDir(["a", "b"])
      const file = NodePath.join(base, `f${made++}.txt`)
      NFS.writeFileSync(file, "one")
      const read = () => texts.get(file, NFS.statSync(file), () => NFS.readFileSync(file, "utf8"))
      const old = new Date(Date.now() - 3_600_000)
      NFS.utimesSync(dir, old, old)
      // The real clock: wait until both ctimes are past the racy window.
      await new Promise((resolve) => setTimeout(resolve, RACY_MS + 200))
      expect(list(cache, dir)).toEqual(["a", "b"])
      expect(list(cache, dir)).toEqual(["a", "b"])
      expect(cache.stats().hits).toBe(1)
      expect(read()).toBe("one")
      expect(read()).toBe("one")
      expect(texts.stats().hits).toBe(1)

      NFS.writeFileSync(NodePath.join(dir, "c"), "c")
      expect(list(cache, dir)).toEqual(["a", "b", "c"])
      NFS.rmSync(NodePath.join(dir, "a"))
      expect(list(cache, dir)).toEqual(["b", "c"])
      NFS.renameSync(NodePath.join(dir, "b"), NodePath.join(dir, "d"))
      expect(list(cache, dir)).toEqual(["c", "d"])
      // As tar and rsync -a do: add an entry, then put the old mtime back. The ctime moves.
      NFS.writeFileSync(NodePath.join(dir, "e"), "e")
      NFS.utimesSync(dir, old, old)
      expect(list(cache, dir)).toEqual(["c", "d", "e"])
      // A directory replaced by another at the same path is another inode.
      NFS.renameSync(dir, `${dir}-old`)
      NFS.mkdirSync(dir)
      NFS.writeFileSync(NodePath.join(dir, "z"), "z")
      NFS.utimesSync(dir, old, old)
      expect(list(cache, dir)).toEqual(["z"])
      // Rewritten with the same size and its mtime put back: the ctime still moves.
      const stamp = NFS.statSync(file).mtime
      NFS.writeFileSync(file, "two")
      NFS.utimesSync(file, stamp, stamp)
      expect(read()).toBe("two")
    },
    RACY_MS + 10_000
  )
})
