/** Where the person's own config lives: the same file for every project they work in. */
import { homedir } from "node:os"
import { join } from "node:path"
import { Config, Effect, Option } from "effect"

/**
 * `$XDG_CONFIG_HOME/freecode-tools/freecode.json`, else `~/.config/freecode-tools/freecode.json`.
 * Read through Effect Config, so a test (or an embedder) points it elsewhere.
 */
export const userConfigFile: Effect.Effect<string> = Effect.gen(function* () {
  const xdg = yield* Config.option(Config.String("XDG_CONFIG_HOME")).pipe(Effect.orElseSucceed(() => Option.none()))
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  const base = Option.isSome(xdg) && xdg.value.startsWith("/") ? xdg.value : join(homedir(), ".config")
  return join(base, "freecode-tools", "freecode.json")
})
