/**
 * The `sandbox` block of freecode.json, in the shape of Claude Code's settings, so a block pasted
 * from there means the same thing here. Every key is optional; `resolveSandboxSettings` fills the
 * defaults, which depend on the entry point (see docs/sandbox.md).
 */
import { Schema } from "effect"
import { defineSection } from "../config/section.ts"

const Paths = Schema.optionalKey(Schema.Array(Schema.String))

export const SandboxConfig = Schema.Struct({
  /** Run bash inside the OS sandbox. */
  enabled: Schema.optionalKey(Schema.Boolean),
  /** A sandboxed bash command runs without asking (deny rules still apply). */
  autoAllowBashIfSandboxed: Schema.optionalKey(Schema.Boolean),
  /** When the sandbox cannot start: fail every bash call instead of falling back to the permission flow. */
  failIfUnavailable: Schema.optionalKey(Schema.Boolean),
  /** bash's `dangerouslyDisableSandbox: true` may ask to run one command outside (it then asks as usual). */
  allowUnsandboxedCommands: Schema.optionalKey(Schema.Boolean),
  filesystem: Schema.optionalKey(
    Schema.Struct({
      /** Writable besides the project root and the session's temp dir. */
      allowWrite: Paths,
      /** Not readable inside (besides the built-in credential list). */
      denyRead: Paths,
      /** Not writable inside, even below a writable folder. */
      denyWrite: Paths
    })
  ),
  network: Schema.optionalKey(
    Schema.Struct({
      /** Hosts reachable through the sandbox's proxy: `example.com`, `*.example.com`. None: no network. */
      allowedDomains: Paths
    })
  )
})
export type SandboxConfig = typeof SandboxConfig.Type

/** The settings with every default filled. */
export interface SandboxSettings {
  readonly enabled: boolean
  readonly autoAllowBashIfSandboxed: boolean
  readonly failIfUnavailable: boolean
  readonly allowUnsandboxedCommands: boolean
  readonly allowWrite: ReadonlyArray<string>
  readonly denyRead: ReadonlyArray<string>
  readonly denyWrite: ReadonlyArray<string>
  readonly allowedDomains: ReadonlyArray<string>
}

/**
 * `enabledByDefault`: what an absent `enabled` means. The CLI and `mcp` pass true (the sandbox is
 * what lets a command run without a person there to ask); an embedder's `ToolSystem.layer` passes
 * false unless it opts in, because it owns its own boundary (a container, a VM).
 */
export const resolveSandboxSettings = (
  config: SandboxConfig | undefined,
  enabledByDefault: boolean,
  /** Domains the permission rules allow (`WebFetch(domain:…)`), reachable from inside too. */
  ruleDomains: ReadonlyArray<string> = []
): SandboxSettings => ({
  enabled: config?.enabled ?? enabledByDefault,
  autoAllowBashIfSandboxed: config?.autoAllowBashIfSandboxed ?? true,
  failIfUnavailable: config?.failIfUnavailable ?? false,
  allowUnsandboxedCommands: config?.allowUnsandboxedCommands ?? true,
  allowWrite: config?.filesystem?.allowWrite ?? [],
  denyRead: config?.filesystem?.denyRead ?? [],
  denyWrite: config?.filesystem?.denyWrite ?? [],
  allowedDomains: [...new Set([...(config?.network?.allowedDomains ?? []), ...ruleDomains])]
})

const join = (a: ReadonlyArray<string> | undefined, b: ReadonlyArray<string> | undefined) =>
  a === undefined ? b : b === undefined ? a : [...new Set([...a, ...b])]

/**
 * The `sandbox` section. The person's settings and the project's merge key by key, lists joined
 * (a place the person hid stays hidden). A folder that is not trusted may only tighten the
 * sandbox: its `enabled: true` and `failIfUnavailable: true` are kept, anything that would widen
 * it (more writable places or domains, turning it off, leaving it) is left out.
 */
export const sandboxSection = defineSection<SandboxConfig, "sandbox">({
  key: "sandbox",
  schema: SandboxConfig,
  knownKeys: {
    sandbox: [
      "enabled",
      "autoAllowBashIfSandboxed",
      "failIfUnavailable",
      "allowUnsandboxedCommands",
      "filesystem",
      "network"
    ],
    "sandbox.filesystem": ["allowWrite", "denyRead", "denyWrite"],
    "sandbox.network": ["allowedDomains"]
  },
  merge: (lower, upper) => {
    const allowWrite = join(lower.filesystem?.allowWrite, upper.filesystem?.allowWrite)
    const denyRead = join(lower.filesystem?.denyRead, upper.filesystem?.denyRead)
    const denyWrite = join(lower.filesystem?.denyWrite, upper.filesystem?.denyWrite)
    const allowedDomains = join(lower.network?.allowedDomains, upper.network?.allowedDomains)
    const filesystem = {
      ...(allowWrite === undefined ? {} : { allowWrite }),
      ...(denyRead === undefined ? {} : { denyRead }),
      ...(denyWrite === undefined ? {} : { denyWrite })
    }
    return {
      ...lower,
      ...upper,
      ...(Object.keys(filesystem).length === 0 ? {} : { filesystem }),
      ...(allowedDomains === undefined ? {} : { network: { allowedDomains } })
    }
  },
  withoutPrograms: (value) => {
    const kept = {
      ...(value.enabled === true ? { enabled: true } : {}),
      ...(value.failIfUnavailable === true ? { failIfUnavailable: true } : {}),
      ...(value.filesystem?.denyRead === undefined && value.filesystem?.denyWrite === undefined
        ? {}
        : {
            filesystem: {
              ...(value.filesystem.denyRead === undefined ? {} : { denyRead: value.filesystem.denyRead }),
              ...(value.filesystem.denyWrite === undefined ? {} : { denyWrite: value.filesystem.denyWrite })
            }
          })
    }
    const widening =
      Object.keys(value).some((k) => k !== "enabled" && k !== "failIfUnavailable" && k !== "filesystem") ||
      value.enabled === false ||
      value.filesystem?.allowWrite !== undefined
    return {
      kept: Object.keys(kept).length === 0 ? undefined : kept,
      skipped: widening ? ["sandbox settings that widen the sandbox"] : []
    }
  }
})
