/**
 * The `sandbox` block of freecode.json, in the shape of Claude Code's settings, so a block pasted
 * from there means the same thing here. Every key is optional; `resolveSandboxSettings` fills the
 * defaults, which depend on the entry point (see docs/sandbox.md).
 */
import { Schema } from "effect"

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
