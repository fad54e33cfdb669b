/**
 * A running job's output as live `tool_output` events tagged with its id, so a UI can show a
 * dev server's log as it prints. The follower reads the job's file with a cursor of its own
 * (the model's looks keep theirs), and only while somebody listens: nobody listening, nothing
 * is read. Like a foreground bash call's live output, a look shows the newest part of what
 * arrived, never more than SHOW_CHARS; offsets count every character, so a UI knows where the
 * window sits in the job's whole output.
 */
import { type FileHandle, open } from "node:fs/promises"
import { Effect } from "effect"
import { type ToolEvents, windows } from "../events/events.ts"
import { tailOf } from "../text/cut.ts"
import type { Job } from "./job.ts"

/** How often a running job's file is looked at (as a foreground call's). */
export const FOLLOW_MS = 100
/** One look reads at most this much, so a job writing fast never keeps a look going. */
const LOOK_BYTES = 16 * 1024 * 1024
const CHUNK = 1024 * 1024
/** Of what arrived since the last look, the UI is shown at most this much, the newest. */
const SHOW_CHARS = 64 * 1024

export interface FollowTarget {
  readonly sessionId: string
  /** The bash call that started the job. */
  readonly callId: string
  readonly events: ToolEvents["Service"]
  /** Characters per event. */
  readonly windowChars: number
}

/** Follows `job` until it exits and its last output has gone out (when anyone listens). */
export const followJob = (job: Job, target: FollowTarget): Effect.Effect<void> =>
  Effect.acquireUseRelease(
    Effect.promise(() => open(job.file, "r").catch(() => undefined)),
    (handle) => (handle === undefined ? Effect.promise(() => job.exited) : follow(job, target, handle)),
    (handle) => Effect.promise(() => handle?.close().catch(() => undefined) ?? Promise.resolve())
  )

const follow = Effect.fnUntraced(function* (
  job: Job,
  target: FollowTarget,
  handle: FileHandle
): Effect.fn.Return<void> {
  const decoder = new TextDecoder("utf-8")
  const buffer = Buffer.allocUnsafe(CHUNK)
  let bytes = 0
  let chars = 0

  /** Reads what arrived (at most LOOK_BYTES) and publishes its newest part; true at the end of the file. */
  const look = Effect.gen(function* () {
    let text = ""
    let atEnd = false
    const from = bytes
    while (bytes - from < LOOK_BYTES) {
      const { bytesRead } = yield* Effect.promise(() => handle.read(buffer, 0, CHUNK, bytes))
      if (bytesRead > 0) {
        const piece = buffer.subarray(0, bytesRead)
        const decoded = decoder.decode(piece, { stream: true })
        chars += decoded.length
        bytes += bytesRead
        text = tailOf(text + decoded, SHOW_CHARS)
      }
      if (bytesRead < CHUNK) {
        atEnd = true
        break
      }
    }
    if (text !== "") {
      const at = chars - text.length
      yield* Effect.forEach(
        windows(text, target.windowChars),
        (w) => target.events.publish({ ...base(job, target), offset: at + w.offset, chunk: w.chunk }),
        { discard: true }
      )
    }
    return atEnd
  })

  while (job.state().state === "running") {
    yield* Effect.raceFirst(
      Effect.sleep(FOLLOW_MS),
      Effect.promise(() => job.exited)
    )
    if (target.events.listening()) yield* look
  }
  // The job has stopped writing: what it printed last goes out too, then how it ended.
  if (!target.events.listening()) return
  while (!(yield* look)) {}
  yield* target.events.publish({ ...base(job, target), offset: chars, chunk: "", jobState: job.state() })
})

const base = (job: Job, target: FollowTarget) =>
  ({
    type: "tool_output",
    sessionId: target.sessionId,
    callId: target.callId,
    tool: "bash",
    phase: "live",
    jobId: job.id
  }) as const
