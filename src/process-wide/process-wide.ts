/**
 * The one owner of state that belongs to the process rather than to a tool system: what stands
 * for something every system in the process (or on the machine) shares, so two systems must see
 * one copy. Everything else lives in a layer, and two systems share nothing.
 *
 * Each entry is declared where it is used, with `processWide(name, make)`, and made on first
 * use. Today's entries:
 *
 * - `path locks` (src/read-state/read-state.ts): the in-process write lock of each real path,
 *   under which a write's stale check, the write and its record run. Paths are the machine's,
 *   so two systems writing one file queue on one semaphore (before the machine-wide lock file).
 * - `recovered staging folders` (src/edit/write-native.ts): a staging folder's dead owners'
 *   work is recovered once per process, on its first write.
 * - `lock folder` (src/edit/file-lock.ts): the folder of the machine-wide lock files, made
 *   private to the user once per process, and what had to be moved aside for it (said once).
 * - `sandbox probes` (src/sandbox/availability.ts): whether bubblewrap or Seatbelt works here,
 *   asked once per process (it starts a sandbox).
 * - `live job hosts` (src/jobs/jobs.ts): the tool systems alive in this process, so a job
 *   record of one of them is not taken for an ended job.
 * - `bind-mount table` (src/fs/bind-mounts.ts): /proc/self/mountinfo's binds, read at most
 *   once a second: the machine's mounts, whichever system asks.
 * - `secret-file listings`, `secret twins` (src/sandbox/secret-files.ts): the last walk's
 *   folders per set of roots (reused while unchanged) and the secrets' identities (a second).
 * - `missing places` (src/sandbox/existing-places.ts): which sandbox paths are missing, and the
 *   folder whose unchanged entry says they still are.
 * - `this process` (src/sandbox/placeholders.ts): its pid, start time and PID namespace, as a
 *   placeholder manifest names its owner.
 *
 * `resetProcessWide` forgets them all (each is made again on its next use): for tests, between
 * cases, when no call is running.
 */

export interface ProcessWide<T> {
  readonly name: string
  /** The process's value, made on first use (and again after a reset). */
  readonly get: () => T
}

interface Entry {
  value: unknown
  made: boolean
}

/** Kept on the global object, so a second copy of this module (source and bundle) shares it. */
const KEY = Symbol.for("freecode-tools/process-wide")
const holder = globalThis as { [KEY]?: Map<string, Entry> }
const entries: Map<string, Entry> = holder[KEY] ?? new Map()
holder[KEY] = entries

/**
 * Declares a process-wide value. A name declared again (the same module loaded twice, as source
 * and as a bundle) shares the first declaration's value: it is still one per process.
 */
export const processWide = <T>(name: string, make: () => T): ProcessWide<T> => {
  let entry = entries.get(name)
  if (entry === undefined) {
    entry = { value: undefined, made: false }
    entries.set(name, entry)
  }
  const own = entry
  return {
    name,
    get: () => {
      if (!own.made) {
        own.value = make()
        own.made = true
      }
      return own.value as T
    }
  }
}

/** The names of every process-wide value declared so far. */
export const processWideNames = (): ReadonlyArray<string> => [...entries.keys()]

/** Forgets every process-wide value (tests, between cases, with no call running). */
export const resetProcessWide = (): void => {
  for (const entry of entries.values()) {
    entry.value = undefined
    entry.made = false
  }
}
