/**
 * Reading one config file without being fooled by what stands at its name. `exists` follows a
 * link, so a dangling `freecode.json` link or a link loop looked like no file and the config was
 * silently skipped; a FIFO there blocked start-up in `open` until something wrote to it. Here
 * the name is looked at first (lstat), opened without blocking, and read only if it is a plain
 * file of a sane size. An empty folder at an optional file's name is no file.
 */
import { constants, promises as fsp } from "node:fs"
import { Effect } from "effect"
import { ConfigError } from "./error.ts"
import { parseJsonStrict } from "./json-text.ts"

/** Far above any real config; a larger file is refused rather than read into memory. */
export const MAX_CONFIG_BYTES = 1024 * 1024

const code = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code

const kindOf = (s: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string =>
  s.isDirectory() ? "a directory" : s.isFIFO() ? "a FIFO" : s.isSocket() ? "a socket" : "not a regular file"

const readText = async (file: string, required: boolean): Promise<string | undefined | ConfigError> => {
  const fail = (what: string) => new ConfigError({ message: `${file} ${what}` })
  let link: boolean
  try {
    const entry = await fsp.lstat(file)
    // An empty folder is what the sandbox leaves at a missing config's name while a command runs
    // (src/sandbox/placeholders.ts): there is no file there.
    if (entry.isDirectory() && !required && (await fsp.readdir(file)).length === 0) return undefined
    link = entry.isSymbolicLink()
  } catch (e) {
    if (code(e) === "ENOENT" || code(e) === "ENOTDIR")
      return required ? fail("cannot be read: it does not exist.") : undefined
    return fail(`cannot be read: ${(e as Error).message}`)
  }
  if (link) {
    try {
      await fsp.stat(file)
    } catch (e) {
      if (code(e) === "ELOOP") return fail("is a symbolic link that loops back on itself; point it at a real file.")
      if (code(e) === "ENOENT" || code(e) === "ENOTDIR") {
        const target = await fsp.readlink(file).catch(() => "?")
        return fail(`is a symbolic link to ${target}, which does not exist; fix or remove the link.`)
      }
      return fail(`cannot be read: ${(e as Error).message}`)
    }
  }
  let handle: fsp.FileHandle
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
    handle = await fsp.open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY)
  } catch (e) {
    if (code(e) === "ELOOP") return fail("is a symbolic link that loops back on itself; point it at a real file.")
    return fail(`cannot be read: ${(e as Error).message}`)
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) return fail(`is ${kindOf(info)}; a config file must be a plain file.`)
    if (info.size > MAX_CONFIG_BYTES) return fail(`is ${info.size} bytes; a config file may be at most 1 MiB.`)
    return await handle.readFile("utf8")
  } catch (e) {
    return fail(`cannot be read: ${(e as Error).message}`)
  } finally {
    await handle.close().catch(() => undefined)
  }
}

/**
 * The JSON in `file`: undefined when nothing is at that name and it is not `required`; a
 * ConfigError naming the file for a link that leads nowhere, anything but a plain file, text
 * that is not JSON, a duplicate key or too deep a nesting.
 */
export const readJsonFile = (file: string, required: boolean): Effect.Effect<unknown, ConfigError> =>
  Effect.flatMap(
    Effect.promise(() =>
      readText(file, required).catch(
        (e: unknown) => new ConfigError({ message: `${file} cannot be read: ${String(e)}` })
      )
    ),
    (text) => {
      if (text instanceof ConfigError) return Effect.fail(text)
      if (text === undefined) return Effect.succeed(undefined)
      const parsed = parseJsonStrict(text)
      return parsed.ok
        ? Effect.succeed(parsed.value)
        : Effect.fail(new ConfigError({ message: `${file} ${parsed.message}` }))
    }
  )
