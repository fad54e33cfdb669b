/**
 * Where unfinished writes live, so a crash leaves nothing in the project but one folder the
 * next start cleans: `<root>/.freecode/staging/` (ignored by git through its own .gitignore).
 * - Temp files: `<owner>-<n>.tmp`, written, synced, then renamed over their target. A target on
 *   another file system (a rename cannot cross one) gets its temp beside it, named in a
 *   `<owner>-<n>.where` record here, so it is found all the same.
 * - Journals: `<owner>-<n>.journal`, apply_patch's list of renames and removals, written and
 *   synced before the first of them: from then on the patch is committed.
 * Recovery (the first write of a process, and whenever a dead owner's lock is broken) takes
 * what belongs to owners that no longer run: a journal is rolled forward (its remaining renames
 * and removals done), every other temp file removed — the write it belonged to never happened.
 */
import { randomBytes } from "node:crypto"
import * as NFS from "node:fs"
import * as NodePath from "node:path"
import { Effect } from "effect"
import { alive, me, ownerTag, parseOwner } from "./owner.ts"

export type JournalEntry =
  | { readonly op: "put"; readonly temp: string; readonly target: string }
  | { readonly op: "remove"; readonly target: string }

const GITIGNORE = "# Unfinished writes of freecode-tools; cleaned on its next start.\n*\n"

/**
 * The staging folder of a project root, made when missing (with its .gitignore). Nothing is kept
 * here: the native WriteFs layer remembers each root's folder (write-native.ts), so two tool
 * systems in one process, or two tests, share no state through this module.
 */
export const makeStagingFolder = (root: string): string => {
  const dir = NodePath.join(root, ".freecode", "staging")
  NFS.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const ignore = NodePath.join(dir, ".gitignore")
  if (!NFS.existsSync(ignore)) NFS.writeFileSync(ignore, GITIGNORE)
  return dir
}

/**
 * A name no other write has: the owner (for recovery), the time, and 40 random bits. Random, not
 * a counter, so nothing is shared between callers; a clash would still fail the exclusive create.
 */
export const freshName = (ext: string): string =>
  `${ownerTag(me)}-${Date.now().toString(36)}${randomBytes(5).toString("hex")}.${ext}`

const deviceOf = (dir: string): number | undefined => {
  try {
    return NFS.statSync(dir).dev
  } catch {
    return undefined
  }
}

/**
 * A fresh temp path for a file that will be renamed onto `target`: in `staging` when both are
 * on one file system, else beside the target with a record in `staging` that names it.
 */
export const tempFor = (staging: string, target: string): string => {
  const dev = deviceOf(staging) ?? -1
  const name = freshName("tmp")
  const here = deviceOf(NodePath.dirname(target))
  // A folder that cannot be read now is moving or being swapped: a temp "beside" it could land
  // wherever the swap points (outside the project), so nothing is written.
  if (here === undefined)
    throw new Error(`the folder ${NodePath.dirname(target)} changed while it was written to; nothing was written`)
  if (dev !== -1 && here === dev) return NodePath.join(staging, name)
  const beside = NodePath.join(NodePath.dirname(target), `.${NodePath.basename(target)}.${name}`)
  NFS.writeFileSync(NodePath.join(staging, `${name.slice(0, -4)}.where`), beside)
  return beside
}

/** Forgets a temp that is gone (renamed or removed): its record, when it had one. */
export const tempDone = (staging: string, temp: string): void => {
  if (NodePath.dirname(temp) === staging) return
  const name = NodePath.basename(temp).split(".").at(-2)
  if (name !== undefined) NFS.rmSync(NodePath.join(staging, `${name}.where`), { force: true })
}

const syncFolder = (dir: string) => {
  try {
    const fd = NFS.openSync(dir, "r")
    try {
      NFS.fsyncSync(fd)
    } finally {
      NFS.closeSync(fd)
    }
  } catch {
    // a folder that cannot be synced (some file systems) is as durable as it gets
  }
}

/** Writes and syncs a journal; once this returns, the entries will all be done, now or by recovery. */
export const writeJournal = (staging: string, entries: ReadonlyArray<JournalEntry>): string => {
  const path = NodePath.join(staging, freshName("journal"))
  const part = `${path}.part`
  const fd = NFS.openSync(part, "wx", 0o600)
  try {
    NFS.writeSync(fd, JSON.stringify(entries))
    NFS.fsyncSync(fd)
  } finally {
    NFS.closeSync(fd)
  }
  NFS.renameSync(part, path)
  syncFolder(staging)
  return path
}

/** Does what is left of a journal's entries: every step is safe to repeat. */
export const rollForward = (entries: ReadonlyArray<JournalEntry>): void => {
  for (const e of entries) {
    if (e.op === "put") {
      if (!NFS.existsSync(e.temp)) continue // done before the crash
      NFS.mkdirSync(NodePath.dirname(e.target), { recursive: true })
      NFS.renameSync(e.temp, e.target)
    } else NFS.rmSync(e.target, { force: true })
  }
}

const ownerOf = (name: string) => parseOwner(name.split("-").slice(0, 2).join("-"))

/**
 * Rolls a dead owner's journals forward and removes its other temp files. Claims a journal by
 * renaming it to our own name first, so two processes never replay one journal, and a crash
 * while replaying leaves it to the next recovery.
 */
export const recoverStaging = (staging: string): Effect.Effect<void> =>
  Effect.sync(() => {
    let names: Array<string>
    try {
      names = NFS.readdirSync(staging)
    } catch {
      return
    }
    const dead = names.filter((n) => {
      const o = ownerOf(n)
      return o !== undefined && !alive(o)
    })
    for (const n of dead.filter((x) => x.endsWith(".journal"))) {
      const claimed = NodePath.join(staging, freshName("journal"))
      try {
        NFS.renameSync(NodePath.join(staging, n), claimed)
      } catch {
        continue // another process claimed it
      }
      try {
        rollForward(JSON.parse(NFS.readFileSync(claimed, "utf8")) as Array<JournalEntry>)
        NFS.rmSync(claimed, { force: true })
      } catch {
        // left for the next recovery, under our name (we are alive, it waits until we exit)
      }
    }
    for (const n of dead) {
      const path = NodePath.join(staging, n)
      try {
        if (n.endsWith(".where")) {
          const temp = NFS.readFileSync(path, "utf8")
          if (/\.tmp$/.test(temp) && NodePath.basename(temp).includes(n.slice(0, -6))) NFS.rmSync(temp, { force: true })
          NFS.rmSync(path, { force: true })
        } else if (n.endsWith(".tmp") || n.endsWith(".journal.part")) NFS.rmSync(path, { force: true })
      } catch {
        // one that cannot be removed now is tried again next time
      }
    }
  })
