/**
 * The OS sandbox bash runs in: a service any shell-running tool asks for the command line that
 * runs a program inside it. Off unless a layer provides it (the reference's default), so a tool
 * needs no new requirement and an embedder who owns its own boundary pays nothing.
 *
 * The layer owns a folder for the sessions' temp dirs and the proxy's socket, removed when the
 * layer is released; it finds once, lazily, whether the system's sandbox (bubblewrap on Linux,
 * Seatbelt on macOS) runs here, and starts the network proxy on the first call that needs it.
 */

import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Context, Data, Effect, Layer } from "effect"
import { userConfigFile } from "../config/user.ts"
import { stateDirConfig } from "../session/location.ts"
import { type Availability, probeSandbox } from "./availability.ts"
import { type BwrapHardening, bwrapLaunch } from "./bwrap.ts"
import { controlState } from "./control-audit.ts"
import { controlGuard } from "./control-guard.ts"
import { asCommandLine, type CommandLine, type Launch, plainLaunch } from "./launch.ts"
import { defaultRegistry, type RegistryChoice, registryFolders } from "./placeholder-registry.ts"
import { placeholders } from "./placeholders.ts"
import { realPlaces, type SandboxPolicy, sandboxPolicy, writableRoots } from "./policy.ts"
import { type ProxyListen, type SandboxProxy, startProxy } from "./proxy.ts"
import { seatbeltLine } from "./seatbelt.ts"
import { seccompFilter } from "./seccomp.ts"
import type { SandboxSettings } from "./settings.ts"

export class SandboxUnavailable extends Data.TaggedError("SandboxUnavailable")<{ readonly message: string }> {}

export type SandboxStatus =
  | { readonly state: "off" }
  | {
      readonly state: "active"
      readonly runner: "bubblewrap" | "seatbelt"
      readonly network: "off" | "filtered"
      readonly note?: string
    }
  | { readonly state: "unavailable"; readonly reason: string }

export interface WrapRequest {
  readonly sessionId: string
  readonly cwd: string
  /** Writable for this call only (the folder of the file the output goes to). */
  readonly writable: ReadonlyArray<string>
}

export type { CommandLine, Launch } from "./launch.ts"

export interface SandboxShape {
  readonly settings: SandboxSettings | undefined
  /** Whether commands run inside, found once. */
  readonly status: Effect.Effect<SandboxStatus>
  /**
   * The command line that runs `command` inside the sandbox; `command` itself when the sandbox is
   * off, or unavailable without `failIfUnavailable` (the permission rules then decide alone).
   */
  readonly wrap: (command: CommandLine, request: WrapRequest) => Effect.Effect<CommandLine, SandboxUnavailable>
  /**
   * `wrap` for a caller that spawns the line itself: the line and the files to open on its
   * descriptors (launch.ts's openDescriptors), which saves the `/bin/sh` that `wrap`'s line
   * starts to open them. No descriptors when the sandbox is off or unavailable. Optional, so a
   * sandbox of an embedder's own needs only `wrap` (launchIn).
   */
  readonly launch?: (command: CommandLine, request: WrapRequest) => Effect.Effect<Launch, SandboxUnavailable>
  /**
   * Once the command of a line `wrap` (or a launch `launch`) returned has ended: what the sandbox
   * found and did about control paths meanwhile (moved aside a `sub/.git` it made, stopped it
   * because a protected file was replaced from outside), one sentence each for the result; empty
   * when nothing.
   */
  readonly audit?: (started: CommandLine | Launch) => Effect.Effect<ReadonlyArray<string>>
}

/** What runs `command` in `sandbox`: its `launch`, or `wrap`'s line with nothing to open. */
export const launchIn = (
  sandbox: SandboxShape,
  command: CommandLine,
  request: WrapRequest
): Effect.Effect<Launch, SandboxUnavailable> =>
  sandbox.launch === undefined
    ? Effect.map(sandbox.wrap(command, request), plainLaunch)
    : sandbox.launch(command, request)

/**
 * Whether a bash call with these arguments runs inside the sandbox and may run without asking:
 * the sandbox is active, `autoAllowBashIfSandboxed` holds, and the call did not ask to leave it.
 */
export const sandboxAllows = (sandbox: SandboxShape, args: unknown): Effect.Effect<boolean> => {
  const settings = sandbox.settings
  if (settings === undefined || !settings.enabled || !settings.autoAllowBashIfSandboxed) return Effect.succeed(false)
  const leaving =
    (args as { dangerouslyDisableSandbox?: unknown } | null)?.dangerouslyDisableSandbox === true &&
    settings.allowUnsandboxedCommands
  if (leaving) return Effect.succeed(false)
  return Effect.map(sandbox.status, (s) => s.state === "active")
}

const off: SandboxShape = {
  settings: undefined,
  status: Effect.succeed({ state: "off" }),
  wrap: (command) => Effect.succeed(command),
  launch: (command) => Effect.succeed(plainLaunch(command))
}

/** One line for a person: what the sandbox does here. */
export const describeSandbox = (status: SandboxStatus): string => {
  switch (status.state) {
    case "off":
      return "sandbox: off; bash commands run under the permission rules alone"
    case "active":
      return `sandbox: on (${status.runner === "seatbelt" ? "Seatbelt" : "bubblewrap"}); bash writes only inside the project and its temp dir, network ${status.network === "off" ? "off" : "only to sandbox.network.allowedDomains"}${status.note === undefined ? "" : `; ${status.note}`}`
    case "unavailable":
      return `sandbox: unavailable (${status.reason}); bash commands run under the permission rules alone`
  }
}

/**
 * Whether the sandbox is on when freecode.json does not say (`sandbox.enabled`), for a system
 * built without `sandboxByDefault`: the `mcp` command sets it, as it sets the PrompterSource.
 */
export const SandboxByDefault = Context.Reference<boolean>("freecode/SandboxByDefault", {
  defaultValue: () => false
})

export class Sandbox extends Context.Reference<SandboxShape>("freecode/Sandbox", { defaultValue: () => off }) {
  static readonly off = off

  /** The sandbox for a project root under `settings` (with `enabled: false`, the same as `off`). */
  static readonly layer = (settings: SandboxSettings, options: SandboxPlaces) =>
    Layer.effect(Sandbox, make(settings, options))
}

export interface SandboxPlaces {
  readonly root: string
  /** Whose credential files are hidden (default: this user's home). */
  readonly home?: string
  /** Where bubblewrap and socat are looked for (default: PATH). */
  readonly path?: string
  /** Which system's sandbox to use (default: this one's); tests name another. */
  readonly platform?: NodeJS.Platform
  /** Where placeholders' manifests are kept (default: this user's places, tried in order, placeholder-registry.ts). */
  readonly registry?: RegistryChoice
}

const make = (settings: SandboxSettings, options: SandboxPlaces) =>
  Effect.gen(function* () {
    if (!settings.enabled) return { ...off, settings }
    const base = yield* Effect.acquireRelease(
      Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-sandbox-"))),
      (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
    )
    let proxy: Promise<SandboxProxy> | undefined
    yield* Effect.addFinalizer(() =>
      proxy === undefined ? Effect.void : Effect.promise(() => proxy!.then((p) => p.close()).catch(() => undefined))
    )
    const availability = yield* Effect.cached(
      Effect.promise(() => probeSandbox(options.platform ?? process.platform, options.path))
    )
    const home = options.home ?? NodeOs.homedir()
    const root = NodeFs.realpathSync(options.root)
    // Never writable from inside, even below a writable place: the session database, approvals
    // and trust records, and the person's own configuration.
    const stateDir = yield* stateDirConfig.pipe(
      Effect.orElseSucceed(() => NodePath.join(home, ".local", "state", "freecode-tools"))
    )
    const registry = options.registry ?? defaultRegistry()
    const neverWritable = [stateDir, NodePath.dirname(yield* userConfigFile), ...registryFolders(registry)]
    const filtered = settings.allowedDomains.length > 0

    const status: Effect.Effect<SandboxStatus> = Effect.map(availability, (a: Availability): SandboxStatus => {
      if (!a.available) return { state: "unavailable", reason: a.reason }
      const runner = a.runner
      const notes = [
        ...(a.runner === "bubblewrap" && !a.seccomp
          ? [`no system-call filter on ${process.arch} (capabilities are dropped all the same)`]
          : []),
        ...(filtered && a.runner === "bubblewrap" && a.socat === undefined
          ? ["socat is not installed, so allowedDomains cannot be reached"]
          : [])
      ]
      const network = filtered && !(a.runner === "bubblewrap" && a.socat === undefined) ? "filtered" : "off"
      return { state: "active", runner, network, ...(notes.length === 0 ? {} : { note: notes.join("; ") }) }
    })

    // The filter's bytes, in a file bubblewrap reads from fd 3 on each start. Written again if
    // something removed it: a missing filter would fail every command (closed, but useless).
    const filterFile = NodePath.join(base, "seccomp.bpf")
    const emptyFile = NodePath.join(base, "empty")
    NodeFs.writeFileSync(emptyFile, "", { mode: 0o444 })
    const filterBytes = seccompFilter() // the same bytes for the layer's life: built once
    const hardeningOf = (a: { readonly seccomp: boolean; readonly disableUserns: boolean }): BwrapHardening => {
      const filter = a.seccomp ? filterBytes : undefined
      if (filter !== undefined && !NodeFs.existsSync(filterFile))
        NodeFs.writeFileSync(filterFile, filter, { mode: 0o600 })
      return { seccompFile: filter === undefined ? undefined : filterFile, disableUserns: a.disableUserns }
    }

    // Placeholders for control paths missing at a root's top, removed once no sandbox relies on
    // them: looked after every second while some of this process's remain (the next call adopts
    // them meanwhile), and at the end.
    const holds = placeholders(registry)
    let collector: ReturnType<typeof setInterval> | undefined
    const stopCollecting = () => {
      if (collector !== undefined) clearInterval(collector)
      collector = undefined
    }
    const collectSoon = () => {
      collector ??= setInterval(() => {
        holds.collect().then((own) => (own ? undefined : stopCollecting()), stopCollecting)
      }, 1_000)
      collector.unref()
    }
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => {
        stopCollecting()
        return holds.collect().catch(() => false)
      })
    )

    // A session id is the caller's text: hashed, it is always one safe folder name. The name is
    // kept (hashing cost more than the rest of this); the folder is made again if it went.
    const tempDirs = new Map<string, string>()

    // What a mount cannot hold: control paths made while a command runs (moved aside into the
    // state folder) and bound ones replaced from outside (the command stopped): control-guard.ts.
    // Tracked by the launch the caller gets (or the line `wrap` makes of it), which `audit` takes.
    const guard = controlGuard(NodePath.join(stateDir, "quarantine"))
    yield* Effect.addFinalizer(() => Effect.sync(() => guard.close()))
    const guarded = (
      started: Launch,
      policy: SandboxPolicy,
      roots: ReadonlyArray<string>,
      held: ReadonlyArray<string>,
      info: string | undefined
    ): Launch => {
      const placeholders = policy.placeholders.map((p) => p.path)
      guard.track(started, {
        info,
        roots,
        root,
        start: controlState(roots, policy.controlNames ?? [], policy.unlistedFolders ?? []),
        bound: [...policy.writeDenied, ...policy.pinned, ...policy.readDenied.map((d) => d.path), ...placeholders],
        skip: new Set([...placeholders, ...held]),
        folders: policy.walkedFolders ?? [],
        hiddenOnly: new Set(policy.readDenied.map((d) => d.path).filter((p) => !policy.writeDenied.includes(p)))
      })
      return started
    }

    const tempDirOf = (sessionId: string) => {
      let dir = tempDirs.get(sessionId)
      if (dir === undefined) {
        dir = NodePath.join(base, createHash("sha256").update(sessionId).digest("hex").slice(0, 16))
        if (tempDirs.size >= 1_000) tempDirs.clear() // a bound for a long-lived server's many sessions
        tempDirs.set(sessionId, dir)
      }
      if (NodeFs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() !== true)
        NodeFs.mkdirSync(dir, { recursive: true })
      return dir
    }

    const startedProxy = (listen: ProxyListen) => {
      // A proxy that could not start is tried again by the next call, not kept as a failure.
      proxy ??= startProxy(listen, settings.allowedDomains).catch((e: unknown) => {
        proxy = undefined
        throw e
      })
      return proxy
    }

    const launch = (command: CommandLine, request: WrapRequest): Effect.Effect<Launch, SandboxUnavailable> =>
      Effect.flatMap(availability, (a) => {
        if (!a.available) {
          return settings.failIfUnavailable
            ? Effect.fail(
                new SandboxUnavailable({
                  message: `The sandbox cannot start: ${a.reason}. sandbox.failIfUnavailable is set, so no command runs outside it; install what is missing or turn the setting off.`
                })
              )
            : Effect.succeed(plainLaunch(command))
        }
        const line = async (): Promise<Launch> => {
          const tempDir = tempDirOf(request.sessionId)
          const roots = writableRoots(settings, { root, home })
          const hold = a.runner === "bubblewrap" ? await holds.hold(roots) : undefined
          if (hold !== undefined) collectSoon()
          const policy = sandboxPolicy(settings, { root, home, tempDir, neverWritable, held: hold?.paths ?? [] })
          const done = (started: Launch) => guarded(started, policy, roots, hold?.paths ?? [], hold?.info)
          const call = { cwd: request.cwd, writable: realPlaces(request.writable), tempDir }
          // The runner is the same for the layer's life, so the proxy's kind of address is too;
          // an address of the other kind (never) leaves the command with no network.
          if (a.runner === "seatbelt") {
            if (!filtered) return done(plainLaunch(seatbeltLine(a.sandboxExec, policy, call, command)))
            const { listen } = await startedProxy({ port: 0 })
            return done(
              plainLaunch(
                seatbeltLine(
                  a.sandboxExec,
                  policy,
                  "port" in listen ? { ...call, proxyPort: listen.port } : call,
                  command
                )
              )
            )
          }
          const inBwrap = {
            ...call,
            hardening: hardeningOf(a),
            emptyFile,
            ...(hold === undefined ? {} : { info: hold.info })
          }
          if (!filtered || a.socat === undefined) return done(bwrapLaunch(a.bwrap, policy, inBwrap, command))
          const { listen } = await startedProxy({ socket: NodePath.join(base, "proxy.sock") })
          return done(
            "socket" in listen
              ? bwrapLaunch(a.bwrap, policy, inBwrap, command, { socket: listen.socket, socat: a.socat })
              : bwrapLaunch(a.bwrap, policy, inBwrap, command)
          )
        }
        return Effect.tryPromise({
          try: line,
          catch: (e) =>
            new SandboxUnavailable({
              message: `The sandbox could not be set up for this command: ${e instanceof Error ? e.message : String(e)}. Nothing ran; try again, or check the temp folder (${base}).`
            })
        })
      })

    const wrap = (command: CommandLine, request: WrapRequest): Effect.Effect<CommandLine, SandboxUnavailable> =>
      Effect.map(launch(command, request), (started) => {
        const line = asCommandLine(started)
        guard.alias(started, line)
        return line
      })

    return Sandbox.of({
      settings,
      status,
      wrap,
      launch,
      audit: (started) => Effect.promise(() => guard.audit(started))
    })
  })
