/** What the model reads of a job: a state line, then what it printed since the last look. */
import type { Job } from "./job.ts"

/** The most of a job's new output one look returns; the rest comes on the next look. */
export const LOOK_BYTES = 30_000

const bytes = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 ** 2).toFixed(1)} MB`

export const stateLine = (job: Job): string => {
  const s = job.state()
  const what =
    s.state === "running" ? "running" : s.state === "exited" ? `exited with code ${s.code}` : `stopped: ${s.why}`
  return `[${job.id} ${what} · ${bytes(job.size())} of output · ${JSON.stringify(job.command.length > 80 ? `${job.command.slice(0, 77)}...` : job.command)}]`
}

/** The state line and the new output, with a line saying how to read on when there is more. */
export const look = (job: Job): string => {
  const { text, left } = job.readNew(LOOK_BYTES)
  const body = text === "" ? "(no new output)\n" : text.endsWith("\n") ? text : `${text}\n`
  const more =
    left > 0
      ? `[${bytes(left)} more not shown yet: call job {"id": "${job.id}"} again to read on]\n`
      : job.state().state === "running"
        ? `[still running: call job {"id": "${job.id}"} to see what it prints next; job {"id": "${job.id}", "stop": true} ends it]\n`
        : ""
  return `${stateLine(job)}\n${body}${more}`
}
