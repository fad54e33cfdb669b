/** What the model reads of a job: a state line, then what it printed since the last look. */
import type { JobRecord, JobState } from "../session/job-records.ts"
import type { Job } from "./job.ts"

/** The most of a job's new output one look returns; the rest comes on the next look. */
export const LOOK_BYTES = 30_000

const bytes = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 ** 2).toFixed(1)} MB`

const describe = (s: JobState) =>
  s.state === "running" ? "running" : s.state === "exited" ? `exited with code ${s.code}` : `stopped: ${s.why}`

const quoted = (command: string) => JSON.stringify(command.length > 80 ? `${command.slice(0, 77)}...` : command)

export const stateLine = (job: Job): string =>
  `[${job.id} ${describe(job.state())} · ${bytes(job.size())} of output · ${quoted(job.command)}]`

/** A job of an earlier process of this session (a resumed session): gone, with how it was last seen. */
export const endedLine = (r: JobRecord): string =>
  `[${r.id} ended with the process that ran it · last seen ${describe(r.state)} · ${bytes(r.bytes)} of output · ${quoted(r.command)}]`

/** The most ended jobs one answer names: a session resumed many times keeps every record. */
const ENDED_SHOWN = 10

/** The newest ended jobs' lines, after one line counting the older ones. */
export const endedLines = (ended: ReadonlyArray<JobRecord>): Array<string> => {
  const older = ended.length - ENDED_SHOWN
  const shown = ended.slice(Math.max(0, older)).map(endedLine)
  return older > 0 ? [`[${older} older ended jobs not shown]`, ...shown] : shown
}

/** What a resumed session's model is told about the jobs its earlier processes started. */
export const endedNotice = (ended: ReadonlyArray<JobRecord>): string =>
  ended.length === 0
    ? ""
    : `[background jobs of this session's earlier process ended with it; their output is gone — start again what you still need]\n${endedLines(ended).join("\n")}\n`

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
