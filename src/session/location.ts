/**
 * Where a project's persistent state lives: one folder per project under a state folder,
 * holding the session database and the files the stores own (spilled outputs).
 */
import { createHash } from "node:crypto"
import { homedir } from "node:os"
import { basename, join, resolve } from "node:path"
import { Config, Effect, Option } from "effect"

/** Overrides the state folder (every project's state lives under it). */
export const STATE_DIR_NAME = "FREECODE_STATE_DIR"

/**
 * The state folder: FREECODE_STATE_DIR, else $XDG_STATE_HOME/freecode-tools, else
 * ~/.local/state/freecode-tools. Read through Effect Config, so tests can provide their own.
 */
export const stateDirConfig: Effect.Effect<string, Config.ConfigError> = Effect.gen(function* () {
  const explicit = yield* Config.option(Config.String(STATE_DIR_NAME))
  if (Option.isSome(explicit) && explicit.value !== "") return resolve(explicit.value)
  const xdg = yield* Config.option(Config.String("XDG_STATE_HOME"))
  // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
  if (Option.isSome(xdg) && xdg.value.startsWith("/")) return join(xdg.value, "freecode-tools")
  return join(homedir(), ".local", "state", "freecode-tools")
})

/**
 * The folder of one project: its name (readable in a listing) and a hash of its absolute path
 * (two projects with the same name never share a database).
 */
export const projectStateDir = (stateDir: string, root: string): string => {
  const absolute = resolve(root)
  const hash = createHash("sha256").update(absolute).digest("hex").slice(0, 12)
  const name = basename(absolute).replace(/[^\w.-]/g, "_") || "root"
  return join(stateDir, "projects", `${name}-${hash}`)
}
