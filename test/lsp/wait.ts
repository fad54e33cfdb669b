/** Waiting on what a server process did, paced by looking, never by a fixed sleep. */
import { Effect, Schedule } from "effect"

/** Whether a process runs (signal 0 reaches it). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits for `happened` to hold, looking every 20 ms; dies after a minute, naming `what`. */
export const eventually = (what: string, happened: () => boolean): Effect.Effect<void> =>
  Effect.suspend(() => (happened() ? Effect.void : Effect.fail(new Error(`gave up waiting: ${what}`)))).pipe(
    Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 3000 }),
    Effect.orDie
  )
