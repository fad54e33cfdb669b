import { Data } from "effect"

/** A config file that cannot be used; `message` names the file, the key and what was expected. */
export class ConfigError extends Data.TaggedError("ConfigError")<{ readonly message: string }> {}
