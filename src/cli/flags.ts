/** The flags the commands share, with their help text. */
import { Flag } from "effect/cli"
import { providers } from "../registry/provider.ts"

export const SURFACES = ["all", "deferred", "shell"] as const
export type Surface = (typeof SURFACES)[number]

export const root = Flag.String("root").pipe(
  Flag.withMetavar("DIR"),
  Flag.withDescription(
    "The project root; relative paths in calls resolve against it (default: the current directory)."
  ),
  Flag.optional
)

export const config = Flag.String("config").pipe(
  Flag.withMetavar("FILE"),
  Flag.withDescription(
    "A freecode.json config file (permissions, hooks, mcpServers, profiles) instead of the one at the root. It must exist and be valid; a bad file is misuse."
  ),
  Flag.optional
)

export const surface = Flag.Literals("surface", SURFACES).pipe(
  Flag.withDescription("Which tool surface a session gets. Only 'all' is available yet."),
  Flag.withDefault("all" as Surface)
)

export const session = Flag.String("session").pipe(
  Flag.withMetavar("ID"),
  Flag.withDescription("The session id calls run under (default: a fresh random id per process)."),
  Flag.optional
)

export const profile = Flag.String("profile").pipe(
  Flag.withMetavar("NAME"),
  Flag.withDescription(
    "Run the calls under a profile: a narrower rule set and tool filter (built in: read-only, plan; more in freecode.json)."
  ),
  Flag.optional
)

export const yes = Flag.Boolean("yes").pipe(
  Flag.withDescription(
    "Approve every call that asks for approval (deny rules still refuse). Without it such calls are refused (status 'denied') with the reason."
  ),
  Flag.withDefault(false)
)

export const images = Flag.Boolean("images").pipe(
  Flag.withDescription("Tell tools the model can see images (default: it cannot)."),
  Flag.withDefault(false)
)

export const json = Flag.Boolean("json").pipe(
  Flag.withDescription("Print JSON instead of text."),
  Flag.withDefault(false)
)

export const provider = Flag.Literals("provider", providers).pipe(
  Flag.withDescription("Estimate (and with --json, print) the tools request parameter in this provider's shape."),
  Flag.optional
)

/** The flags of every command that builds a tool system. */
export const systemFlags = { root, config, surface } as const

/** The flags of every command that makes calls. */
export const sessionFlags = { ...systemFlags, session, profile, yes, images } as const
