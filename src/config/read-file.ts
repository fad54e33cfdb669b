/**
 * Reading one config file without being fooled by what stands at its name. `exists` follows a
 * link, so a dangling `freecode.json` link or a link loop looked like no file and the config was
 * silently skipped; a FIFO there blocked start-up in `open` until something wrote to it. Here
 * the name is looked at first (is it a link, and does the link lead anywhere), opened without
 * waiting on what it is, and read only if it is a plain file of a sane size. An empty folder at
 * an optional file's name is no file.
 *
 * Every look goes through `LocalFs`, the file-system service the tools use: over an in-memory
 * FileSystem the project's config is read from there, and nothing touches the host disk.
 */
import { Effect, type PlatformError } from "effect"
import { LocalFs, type LocalFsShape } from "../fs/local-fs.ts"
import { ConfigError } from "./error.ts"
import { parseJsonStrict } from "./json-text.ts"

/** Far above any real config; a larger file is refused rather than read into memory. */
export const MAX_CONFIG_BYTES = 1024 * 1024

/** The errno code behind a file-system failure (both LocalFs layers keep node's error as the cause). */
const codeOf = (e: PlatformError.PlatformError): string | undefined => {
  const cause = (e.reason as { readonly cause?: unknown }).cause as { readonly code?: unknown } | undefined
  if (typeof cause?.code === "string") return cause.code
  return e.reason._tag === "NotFound" ? "ENOENT" : undefined
}

/** What the failure says, in node's words when it has them (as before this read went through LocalFs). */
const wordsOf = (e: PlatformError.PlatformError): string => {
  const cause = (e.reason as { readonly cause?: unknown }).cause
  return cause instanceof Error ? cause.message : e.message
}

const KINDS: Readonly<Record<string, string>> = {
  Directory: "a directory",
  FIFO: "a FIFO",
  Socket: "a socket"
}

/** Reads at most `limit` bytes from an open file; more than `limit` means it grew past it. */
const readUpTo = (
  read: (buffer: Uint8Array, position: number) => Effect.Effect<number, PlatformError.PlatformError>,
  limit: number
) => {
  const buffer = new Uint8Array(limit + 1)
  const step = (filled: number): Effect.Effect<number, PlatformError.PlatformError> =>
    filled === buffer.length
      ? Effect.succeed(filled)
      : Effect.flatMap(read(buffer.subarray(filled), filled), (n) =>
          n === 0 ? Effect.succeed(filled) : step(filled + n)
        )
  return Effect.map(step(0), (n) => buffer.subarray(0, n))
}

// ignoreBOM: a BOM stays in the text, where the strict JSON reader names it (as node's utf8 did).
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true })

const readText = (
  fs: LocalFsShape,
  file: string,
  required: boolean
): Effect.Effect<string | undefined, ConfigError> => {
  const fail = (what: string) => Effect.fail(new ConfigError({ message: `${file} ${what}` }))
  const loops = () => fail("is a symbolic link that loops back on itself; point it at a real file.")
  const missing = (e: PlatformError.PlatformError) => codeOf(e) === "ENOENT" || codeOf(e) === "ENOTDIR"
  /** `emptyFolderIsNone`: the name itself (no link) is optional, so an empty folder there is no file. */
  const opened = (emptyFolderIsNone: boolean) =>
    Effect.scoped(
      Effect.flatMap(fs.openForReading(file), (open) => {
        const { type, size } = open.stats
        // An empty folder is what the sandbox leaves at a missing config's name while a command
        // runs (src/sandbox/placeholders.ts): there is no file there.
        if (type === "Directory" && emptyFolderIsNone)
          return Effect.flatMap(fs.readDirectory(file).pipe(Effect.orElseSucceed(() => [{ name: "?" }])), (entries) =>
            entries.length === 0
              ? Effect.succeed(undefined)
              : fail("is a directory; a config file must be a plain file.")
          )
        if (type !== "File") {
          const kind = KINDS[type] ?? "not a regular file"
          return fail(`is ${kind}; a config file must be a plain file.`)
        }
        if (size > MAX_CONFIG_BYTES) return fail(`is ${size} bytes; a config file may be at most 1 MiB.`)
        return Effect.flatMap(readUpTo(open.read, MAX_CONFIG_BYTES), (bytes) =>
          bytes.length > MAX_CONFIG_BYTES
            ? fail(`is more than ${MAX_CONFIG_BYTES} bytes; a config file may be at most 1 MiB.`)
            : Effect.succeed(utf8.decode(bytes))
        )
      })
    ).pipe(
      Effect.catchTag("PlatformError", (e) =>
        missing(e)
          ? required
            ? fail("cannot be read: it does not exist.")
            : Effect.succeed(undefined)
          : codeOf(e) === "ELOOP"
            ? loops()
            : fail(`cannot be read: ${wordsOf(e)}`)
      )
    )
  return Effect.flatMap(fs.readLink(file), (target) => {
    if (target !== undefined) {
      // A link must lead to something; where it leads is then read as any file is.
      return fs.realPath(file).pipe(
        Effect.matchEffect({
          onSuccess: () => opened(false),
          onFailure: (e) =>
            codeOf(e) === "ELOOP"
              ? loops()
              : missing(e)
                ? fail(`is a symbolic link to ${target}, which does not exist; fix or remove the link.`)
                : fail(`cannot be read: ${wordsOf(e)}`)
        })
      )
    }
    return opened(!required)
  })
}

/**
 * The JSON in `file`: undefined when nothing is at that name and it is not `required`; a
 * ConfigError naming the file for a link that leads nowhere, anything but a plain file, text
 * that is not JSON, a duplicate key or too deep a nesting.
 */
export const readJsonFile = (file: string, required: boolean): Effect.Effect<unknown, ConfigError, LocalFs> =>
  Effect.flatMap(Effect.service(LocalFs), (fs) =>
    Effect.flatMap(readText(fs, file, required), (text) => {
      if (text === undefined) return Effect.succeed(undefined)
      const parsed = parseJsonStrict(text)
      return parsed.ok
        ? Effect.succeed(parsed.value)
        : Effect.fail(new ConfigError({ message: `${file} ${parsed.message}` }))
    })
  )
