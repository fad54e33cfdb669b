/**
 * "Every change made before now has been reported": a file created in a private directory that
 * this process watches, and the wait for its event. All of a process's watches share one
 * inotify queue (libuv keeps one per event loop), which the kernel fills in the order the
 * changes happened and Node reads in that order; so when the barrier's own event arrives, every
 * event of a change finished before it was created has been handed to its listener. A barrier
 * that does not come back in time (a full queue drops events, and then its own) says so, and
 * the caller must not trust what it holds.
 */
import * as NFS from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

export interface EventBarrier {
  /** Resolves true once every earlier change's event was delivered; false when unsure. */
  readonly pass: () => Promise<boolean>
  readonly close: () => void
}

/** How long a barrier may take before the index is not trusted (~0.1 ms when idle). Its timer keeps the process alive while it waits. */
const TIMEOUT_MS = 2000

export const makeEventBarrier = (): EventBarrier | undefined => {
  let dir: string
  let watcher: NFS.FSWatcher
  try {
    dir = NFS.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-index-"))
    watcher = NFS.watch(dir, { persistent: false })
  } catch {
    return undefined
  }
  const waiting = new Map<string, (ok: boolean) => void>()
  let broken = false
  watcher.on("change", (_event, name) => {
    const key = typeof name === "string" ? name : undefined
    const resolve = key === undefined ? undefined : waiting.get(key)
    if (resolve === undefined) return
    waiting.delete(key!)
    NFS.rm(NodePath.join(dir, key!), { force: true }, () => {})
    resolve(true)
  })
  watcher.on("error", () => {
    broken = true
    for (const resolve of waiting.values()) resolve(false)
    waiting.clear()
  })
  let counter = 0
  return {
    pass: () =>
      new Promise<boolean>((resolve) => {
        if (broken) return resolve(false)
        const key = `b${++counter}`
        const timer = setTimeout(() => {
          waiting.delete(key)
          resolve(false)
        }, TIMEOUT_MS)
        waiting.set(key, (ok) => {
          clearTimeout(timer)
          resolve(ok)
        })
        try {
          NFS.writeFileSync(NodePath.join(dir, key), "")
        } catch {
          waiting.delete(key)
          clearTimeout(timer)
          resolve(false)
        }
      }),
    close: () => {
      broken = true
      watcher.close()
      for (const resolve of waiting.values()) resolve(false)
      waiting.clear()
      NFS.rmSync(dir, { recursive: true, force: true })
    }
  }
}
