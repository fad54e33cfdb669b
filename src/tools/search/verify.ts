/**
 * Check, then use, for grep: a search backend opens the files it lists itself (rg, or the walk's
 * readFile), following a link that replaced a listed file between the listing and the open. So
 * before a match is shown, its file is read again through LocalFs with the file opened verified to
 * be the one expected (the real path the permission check resolved the target to, and the file's
 * place below it: LocalFs.readWhole's `expected`), and a match is kept only when that verified
 * read holds the same line. A file that was swapped, or changed in between, shows nothing.
 */
import { Effect } from "effect"
import type { FileStats, LocalFsShape } from "../../fs/local-fs.ts"
import { openedSecretTwin } from "../../permission/containment.ts"
import { type GrepMatch, matchText } from "./backend.ts"

/** Files larger than this are not re-read; their matches are dropped, and counted. */
const MAX_VERIFY_BYTES = 64 * 1024 * 1024
const decoder = new TextDecoder()

/**
 * The file at `path`, verified to be `expected` and not another name (a hard link) of a secret
 * below `roots`; undefined when it is not (or cannot be read).
 */
const readVerified = (
  fs: LocalFsShape,
  path: string,
  expected: string,
  roots: ReadonlyArray<string>
): Effect.Effect<Uint8Array | undefined> => {
  const twin = (f: { readonly stats: FileStats }) =>
    f.stats.identity !== undefined &&
    (f.stats.identity.links > 1 || f.stats.identity.mounted === true) &&
    openedSecretTwin(f.stats.identity, roots) !== undefined
  const whole = fs.readWhole(path, MAX_VERIFY_BYTES, expected)
  if (whole !== undefined)
    return whole.pipe(
      Effect.map((f) => (f.moved === undefined && !twin(f) ? f.bytes : undefined)),
      Effect.orElseSucceed(() => undefined)
    )
  // Not on a local mount: opened (verified) and read in chunks.
  return Effect.scoped(
    Effect.gen(function* () {
      const file = yield* fs.openForReading(path, expected)
      if (file.moved !== undefined || twin(file) || file.stats.type !== "File" || file.stats.size >= MAX_VERIFY_BYTES)
        return undefined
      const buffer = new Uint8Array(file.stats.size + 1)
      let at = 0
      for (;;) {
        const n = yield* file.read(buffer.subarray(at), at)
        if (n === 0 || at + n > file.stats.size) return n === 0 ? buffer.subarray(0, at) : undefined
        at += n
      }
    })
  ).pipe(Effect.orElseSucceed(() => undefined))
}

/**
 * The matches whose lines a verified read of their file confirms, and how many were dropped.
 * `target`: the searched path as given; `targetReal`: what the permission check resolved it to.
 */
export const verifyMatches = (
  fs: LocalFsShape,
  matches: ReadonlyArray<GrepMatch>,
  target: string,
  targetReal: string,
  roots: ReadonlyArray<string>
): Effect.Effect<{ readonly kept: ReadonlyArray<GrepMatch>; readonly dropped: number }> => {
  if (matches.length === 0) return Effect.succeed({ kept: matches, dropped: 0 })
  const byFile = new Map<string, Array<GrepMatch>>()
  for (const m of matches) byFile.set(m.path, [...(byFile.get(m.path) ?? []), m])
  return Effect.map(
    Effect.forEach(
      [...byFile],
      ([path, found]) => {
        const below = path === target ? "" : path.startsWith(`${target}/`) ? path.slice(target.length) : undefined
        // A match outside the target was not checked at all: it is not shown.
        if (below === undefined) return Effect.succeed([] as ReadonlyArray<GrepMatch>)
        const expected = targetReal === "/" && below !== "" ? below : `${targetReal}${below}`
        return Effect.map(readVerified(fs, path, expected, roots), (bytes) => {
          if (bytes === undefined) return []
          const lines = decoder.decode(bytes).split("\n")
          return found.filter((m) => {
            const line = lines[m.line - 1]
            return line !== undefined && matchText(line) === m.text
          })
        })
      },
      { concurrency: 8 }
    ),
    (groups) => {
      const kept = groups.flat()
      return { kept, dropped: matches.length - kept.length }
    }
  )
}
