/**
 * Which project folders the person trusts to start their own programs (`.mcp.json` servers,
 * hooks, language servers named in freecode.json). One small file per trusted folder under the
 * state folder's `trusted/`, named by a hash of the folder's real path and holding that path:
 * two processes trusting or forgetting at once never overwrite each other's entries.
 */
import { createHash } from "node:crypto"
import { promises as fsp, realpathSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import { stateDirConfig } from "../session/location.ts"
import { ConfigError } from "./error.ts"

/** The folder as trust knows it: absolute, links resolved (a link to a folder is that folder). */
export const trustKey = (dir: string): string => {
  const absolute = resolve(dir)
  try {
    return realpathSync(absolute)
  } catch {
    return absolute
  }
}

const entryFile = (stateDir: string, dir: string) =>
  join(stateDir, "trusted", createHash("sha256").update(trustKey(dir)).digest("hex").slice(0, 32))

const stateDir = stateDirConfig.pipe(
  Effect.mapError((e) => new ConfigError({ message: `the state folder is not usable: ${e.message}` }))
)

/** Whether `dir` was trusted with `freecode-tools trust`. An unreadable record counts as not trusted. */
export const isTrusted = (dir: string): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const file = entryFile(yield* stateDir, dir)
    const text = yield* Effect.promise(() => fsp.readFile(file, "utf8").catch(() => undefined))
    return text?.trim() === trustKey(dir)
  }).pipe(Effect.orElseSucceed(() => false))

/** Moves what is at `path` aside when it is there and not a folder; returns where to. */
const moveAsideUnlessFolder = async (path: string): Promise<string | undefined> => {
  const st = await fsp.lstat(path).catch(() => undefined)
  if (st === undefined || st.isDirectory()) return undefined
  const aside = `${path}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`
  await fsp.rename(path, aside)
  return aside
}

/** Records `dir` as trusted; returns the folder as recorded. */
export const trust = (dir: string): Effect.Effect<string, ConfigError> =>
  Effect.gen(function* () {
    const key = trustKey(dir)
    const file = entryFile(yield* stateDir, dir)
    const tmp = `${file}.${process.pid}.tmp`
    const folder = join(file, "..")
    const aside = yield* Effect.tryPromise({
      try: async () => {
        const moved = await moveAsideUnlessFolder(folder)
        await fsp.mkdir(folder, { recursive: true, mode: 0o700 })
        // A damaged record (a folder in its place) is replaced, not refused: trusting is the fix.
        if ((await fsp.lstat(file).catch(() => undefined))?.isDirectory() === true)
          await fsp.rm(file, { recursive: true })
        await fsp.writeFile(tmp, `${key}\n`, { mode: 0o600 })
        await fsp.rename(tmp, file)
        return moved
      },
      catch: (e) => new ConfigError({ message: `cannot record ${key} as trusted in ${file}: ${(e as Error).message}` })
    })
    if (aside !== undefined) {
      yield* Effect.logWarning(
        `the trust records' folder ${folder} was not a folder; it was moved aside to ${aside} and a fresh one made`
      )
    }
    return key
  })

/** Forgets that `dir` was trusted; returns the folder and whether it had been. */
export const forget = (dir: string): Effect.Effect<{ readonly dir: string; readonly was: boolean }, ConfigError> =>
  Effect.gen(function* () {
    const key = trustKey(dir)
    const file = entryFile(yield* stateDir, dir)
    const was = yield* Effect.tryPromise({
      try: () =>
        fsp.unlink(file).then(
          () => true,
          (e: NodeJS.ErrnoException) => {
            if (e.code === "ENOENT") return false
            throw e
          }
        ),
      catch: (e) => new ConfigError({ message: `cannot forget ${key}: ${(e as Error).message}` })
    })
    return { dir: key, was }
  })
