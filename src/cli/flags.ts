/** The flags the commands share, with their help text. */
import { Flag } from "effect/cli"
import { providers } from "../registry/provider.ts"
import { SURFACE_NAMES, type SurfaceName } from "../surface/surface.ts"

export const SURFACES = SURFACE_NAMES
export type Surface = SurfaceName

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
  Flag.withDescription(
    "Which tools are declared: all; deferred (a small core plus tool_search and tool_call, the rest found on demand); shell (bash and output only); code (one program tool, `code`, whose program calls every tool through the same rules, and output). Default: `surface.mode` in freecode.json, else all."
  ),
  Flag.optional
)

export const session = Flag.String("session").pipe(
  Flag.withMetavar("ID"),
  Flag.withDescription("The session id calls run under (default: a fresh random id per process)."),
  Flag.optional
)

export const profile = Flag.String("profile").pipe(
  Flag.withMetavar("NAME"),
  Flag.withDescription(
    "Run under a profile: a narrower rule set and tool filter (built in: read-only, plan; more in freecode.json). Tools it always refuses are not declared either."
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

export const strategy = Flag.Literals("strategy", ["bridge", "expand"] as const).pipe(
  Flag.withDescription(
    "--surface deferred: bridge (tool_call runs found tools; the declared list never changes) or expand (found tools join the declared list). Default: `surface.strategy` in freecode.json, else bridge."
  ),
  Flag.optional
)

export const core = Flag.String("core").pipe(
  Flag.withMetavar("TOOLS"),
  Flag.withDescription(
    "--surface deferred: the tools always declared, comma-separated (default: `surface.core` in freecode.json, else read,bash)."
  ),
  Flag.optional
)

export const model = Flag.String("model").pipe(
  Flag.withMetavar("ID"),
  Flag.withDescription(
    "The model the tools are for: picks its edit tool (apply_patch for GPT-5/o-series/Codex, edit otherwise) and, for `tools`, its provider dialect."
  ),
  Flag.optional
)

export const trust = Flag.Boolean("trust").pipe(
  Flag.withDescription(
    "Trust the project folder for this run: its own .mcp.json servers, hooks and language servers may start (`freecode-tools trust DIR` records it). Your own config and --config FILE are always trusted."
  ),
  Flag.withDefault(false)
)

/** The flags of every command that builds a tool system. */
export const systemFlags = { root, config, surface, strategy, core, model, trust } as const

/** The flags of every command that makes calls. */
export const sessionFlags = { ...systemFlags, session, profile, yes, images } as const
