/**
 * The session's background jobs (bash `run_in_background`): started, looked at, written to and
 * stopped by the model through `bash` and `job`. A session's jobs are kept in its `Sessions`
 * slot and stopped when the session ends. The layer owns the folder their output goes to:
 * releasing it stops every job, and so does the host process dying — each job
 * runs in its own PID namespace whose init bubblewrap kills when its parent dies (the sandbox's,
 * or a bare one for that purpose where the sandbox is off), so a SIGKILLed host leaves no orphan.
 * While a job runs its output goes to ToolEvents for a UI (follow.ts); with a session database
 * each job's record is kept there, so a resumed session learns which jobs ended with their process.
 */
import { randomUUID } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Context, Data, Effect, Layer, Option } from "effect"
import { EVENT_WINDOW_CHARS, ToolEvents } from "../events/events.ts"
import { spillSettingsConfig } from "../output/config.ts"
import { processWide } from "../process-wide/process-wide.ts"
import { probeSandbox } from "../sandbox/availability.ts"
import { type CommandLine, launchIn, type SandboxShape } from "../sandbox/sandbox.ts"
import { type JobRecord, JobRecordStore } from "../session/job-records.ts"
import { sessionsOrOwn } from "../session/sessions.ts"
import { positiveIntOr } from "../setting/positive-int.ts"
import { followJob } from "./follow.ts"
import { type Job, startJob } from "./job.ts"

export class JobError extends Data.TaggedError("JobError")<{ readonly message: string }> {}

export interface JobsSettings {
  /** Jobs a session may have running at once. */
  readonly maxPerSession: number
  /** A job nobody looked at or wrote to for this long is stopped. */
  readonly idleMs: number
  /** A job whose output passes this many bytes is stopped. */
  readonly maxOutputBytes: number
}

export const JOBS_MAX_NAME = "FREECODE_JOBS_MAX"
export const JOBS_IDLE_NAME = "FREECODE_JOBS_IDLE_MS"

export interface StartRequest {
  readonly sessionId: string
  readonly command: string
  readonly cwd: string
  readonly sandbox: SandboxShape
  /** The bash call starting the job: its live output events carry this call id and the job's id. */
  readonly callId?: string
}

export interface JobsShape {
  readonly available: boolean
  readonly settings: JobsSettings
  readonly start: (request: StartRequest) => Effect.Effect<Job, JobError>
  readonly get: (sessionId: string, id: string) => Job | undefined
  readonly list: (sessionId: string) => ReadonlyArray<Job>
  /**
   * The session's jobs that ended with an earlier process (a resumed session, `--session ID`),
   * each as last seen; empty without a session database.
   */
  readonly ended: (sessionId: string) => Effect.Effect<ReadonlyArray<JobRecord>>
}

const unavailable: JobsShape = {
  available: false,
  settings: { maxPerSession: 0, idleMs: 0, maxOutputBytes: 0 },
  start: () =>
    Effect.fail(
      new JobError({
        message: "Background jobs are not available in this tool system; run the command in the foreground."
      })
    ),
  get: () => undefined,
  list: () => [],
  ended: () => Effect.succeed([])
}

export class Jobs extends Context.Reference<JobsShape>("freecode/Jobs", { defaultValue: () => unavailable }) {
  static readonly layer = (settings?: Partial<JobsSettings>) => Layer.effect(Jobs, make(settings))
}

/** The settings from the environment: a value that is set but unusable is an InvalidSetting naming it. */
const settingsFromEnv = Effect.gen(function* () {
  const maxPerSession = yield* positiveIntOr(JOBS_MAX_NAME, 8)
  const idleMs = yield* positiveIntOr(JOBS_IDLE_NAME, 30 * 60_000)
  const { spillBytes: maxOutputBytes } = yield* spillSettingsConfig
  return { maxPerSession, idleMs, maxOutputBytes }
})

/** The tool systems alive in this process, by token: a record whose host is one of them is not an ended job. */
const liveHosts = processWide("live job hosts", () => new Set<string>())

/** Whether the tool system that ran a recorded job is gone (and the job with it). */
const hostGone = (record: JobRecord): boolean => {
  if (record.hostPid === process.pid) return !liveHosts.get().has(record.hostToken)
  try {
    process.kill(record.hostPid, 0)
    return false
  } catch {
    // ESRCH, or EPERM: another user's process has that pid now; ours is gone either way.
    return true
  }
}

const jobNumber = (id: string) => Number(/^job-(\d+)$/.exec(id)?.[1] ?? 0)

const make = (overrides: Partial<JobsSettings> = {}) =>
  Effect.gen(function* () {
    const settings: JobsSettings = { ...(yield* settingsFromEnv), ...overrides }
    const events = yield* Effect.serviceOption(ToolEvents)
    const records = yield* Effect.serviceOption(JobRecordStore)
    const scope = yield* Effect.scope
    const host = { pid: process.pid, token: randomUUID() }
    liveHosts.get().add(host.token)
    yield* Effect.addFinalizer(() => Effect.sync(() => liveHosts.get().delete(host.token)))
    // The output folder is made on the first job: most systems never start one.
    let folder: string | undefined
    const dir = () => (folder ??= NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-jobs-")))
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => (folder === undefined ? undefined : NodeFs.rmSync(folder, { recursive: true, force: true })))
    )
    const running = (j: Job) => j.state().state === "running"
    // A session that ends (DELETE, idle, the cap) takes its jobs down with it; each exit is
    // recorded by its follower, as for any other stop.
    const bySession = (yield* sessionsOrOwn).slot<Map<string, Job>>("jobs", (_, jobs) =>
      Effect.promise(() => Promise.all([...jobs.values()].filter(running).map((j) => j.stop("its session ended", 500))))
    )
    // Weak: a job leaves with its session's map, and its follower holds it until it has exited.
    const sessionOf = new WeakMap<Job, string>()
    const all = () => [...bySession.values()].flatMap((m) => [...m.values()])
    // A record is for a later process: a database failing now must not fail or orphan a job.
    const record = (job: Job): Effect.Effect<void> =>
      Option.match(records, {
        onNone: () => Effect.void,
        onSome: (store) =>
          store.put({
            sessionId: sessionOf.get(job) ?? "",
            id: job.id,
            command: job.command,
            startedAt: job.started,
            hostPid: host.pid,
            hostToken: host.token,
            state: job.state(),
            bytes: job.size()
          })
      }).pipe(Effect.exit, Effect.asVoid)
    // Stopped, and their last state recorded, before the folder goes (finalizers run in reverse order).
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => Promise.all(all().map((j) => j.stop("the tool system shut down", 500)))).pipe(
        Effect.andThen(Effect.forEach(all(), record, { discard: true }))
      )
    )
    // Where the sandbox is off, bubblewrap still gives a job a PID namespace that dies with us.
    // The probe is the process's one (availability.ts), shared with the Sandbox layer.
    const lifetime = yield* Effect.cached(
      Effect.promise(async () => {
        const a = await probeSandbox()
        return a.available && a.runner === "bubblewrap"
          ? [a.bwrap, "--dev-bind", "/", "/", "--proc", "/proc", "--unshare-pid", "--die-with-parent", "--"]
          : []
      })
    )
    const watch = setInterval(() => {
      const now = Date.now()
      for (const j of all()) {
        if (!running(j)) continue
        if (j.size() > settings.maxOutputBytes)
          void j.stop(
            `it printed more than its output cap of ${settings.maxOutputBytes} bytes (FREECODE_OUTPUT_SPILL_BYTES)`
          )
        else if (now - j.lastTouched > settings.idleMs)
          void j.stop(`nobody looked at it for ${Math.round(settings.idleMs / 60_000)} min (${JOBS_IDLE_NAME})`)
      }
    }, 1_000)
    watch.unref()
    yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(watch)))

    const start = Effect.fnUntraced(function* (request: StartRequest): Effect.fn.Return<Job, JobError> {
      const session = bySession.getOrCreate(request.sessionId, () => new Map<string, Job>())
      const live = [...session.values()].filter(running)
      if (live.length >= settings.maxPerSession) {
        return yield* new JobError({
          message: `This session already runs ${live.length} background jobs (${JOBS_MAX_NAME}=${settings.maxPerSession}): stop one with job {"id": …, "stop": true} first (${live.map((j) => j.id).join(", ")}).`
        })
      }
      // Numbered per session, after every job the session ever recorded: an id is never reused.
      const recorded = Option.isSome(records) ? yield* records.value.list(request.sessionId) : []
      const id = `job-${Math.max(0, ...[...session.keys(), ...recorded.map((r) => r.id)].map(jobNumber)) + 1}`
      const file = NodePath.join(dir(), `${id}.out`)
      const plain: CommandLine = [
        "/bin/bash",
        "--norc",
        "-c",
        'exec /bin/bash --norc -c "$1" > "$2" 2>&1',
        "bash",
        request.command,
        file
      ]
      const launched = yield* launchIn(request.sandbox, plain, {
        sessionId: request.sessionId,
        cwd: request.cwd,
        writable: [dir()]
      }).pipe(Effect.mapError((e) => new JobError({ message: e.message })))
      // A sandboxed line already has a PID namespace of its own under bubblewrap (Seatbelt has none to add).
      const prefix = launched.line === plain ? yield* lifetime : []
      const line = [...prefix, ...launched.line] as unknown as CommandLine
      const job = yield* Effect.try({
        try: () =>
          startJob({ id, command: request.command, line, descriptors: launched.descriptors, file, cwd: request.cwd }),
        catch: (e) =>
          new JobError({
            message: `The job could not start: ${e instanceof Error ? e.message : String(e)}. Nothing ran; try again.`
          })
      })
      session.set(id, job)
      sessionOf.set(job, request.sessionId)
      yield* record(job)
      // Its live output goes to whoever listens, and its last state to the record, once it exits.
      const follow = Option.isSome(events)
        ? followJob(job, {
            sessionId: request.sessionId,
            callId: request.callId ?? id,
            events: events.value,
            windowChars: EVENT_WINDOW_CHARS
          })
        : Effect.promise(() => job.exited)
      // What the sandbox did about control paths while it ran goes after its output, for the next look.
      const audit = request.sandbox.audit
      const notices =
        audit === undefined
          ? Effect.void
          : Effect.flatMap(audit(launched), (ns) =>
              Effect.sync(() => {
                try {
                  if (ns.length > 0) NodeFs.appendFileSync(file, `${ns.map((n) => `\n[${n}]`).join("")}\n`)
                } catch {} // the session's output folder is gone: nobody is left to read it
              })
            )
      yield* Effect.forkIn(Effect.andThen(Effect.andThen(follow, notices), record(job)), scope)
      return job
    })

    return Jobs.of({
      available: true,
      settings,
      start,
      get: (sessionId, id) => {
        const job = bySession.get(sessionId)?.get(id)
        if (job !== undefined) job.lastTouched = Date.now()
        return job
      },
      list: (sessionId) => [...(bySession.get(sessionId)?.values() ?? [])],
      ended: (sessionId) =>
        Option.isNone(records)
          ? Effect.succeed([])
          : Effect.map(records.value.list(sessionId), (rs) =>
              rs.filter((r) => bySession.get(sessionId)?.has(r.id) !== true && hostGone(r))
            )
    })
  })
