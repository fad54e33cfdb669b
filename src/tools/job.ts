/**
 * `job`: the model's handle on its background jobs (bash with `run_in_background`). With an id it
 * returns what the job printed since the last look and its state; `input` writes to its stdin
 * (data for the program, not a new command), `eof` closes it, `stop` ends the job's whole process
 * tree. Without an id it lists the session's jobs. A job an earlier process of a resumed session
 * ran is named as ended, with how it was last seen.
 */
import { Effect, Schema } from "effect"
import { Jobs } from "../jobs/jobs.ts"
import { endedLine, endedLines, look, stateLine } from "../jobs/view.ts"
import { fail } from "../tool/errors.ts"
import { defineTool } from "../tool/tool.ts"

/** After writing input, how long to wait for the program's answer before looking. */
const ANSWER_MS = 300

const Parameters = Schema.Struct({
  id: Schema.optionalKey(Schema.String.annotate({ description: "The job id bash returned; omit to list jobs." })),
  input: Schema.optionalKey(Schema.String.annotate({ description: "Text to write to the job's stdin (add \\n)." })),
  eof: Schema.optionalKey(Schema.Boolean.annotate({ description: "Close the job's stdin." })),
  stop: Schema.optionalKey(Schema.Boolean.annotate({ description: "Stop the job and everything it started." }))
})

export const JobTool = defineTool({
  id: "job",
  description:
    "Follow a background job started by bash with run_in_background: its new output and state; write input to its stdin; stop it. No id: list the jobs.",
  parameters: Parameters,
  concurrencySafe: false,
  // Not `mutates`: a call acts only on a job whose command was analysed and approved when bash
  // started it, and its input is data for that program (docs/permissions.md). It writes session
  // state, so it is still not read-only to a client nor served by the read-only profile.
  mutates: false,
  truncate: "tail",
  permissions: { operations: ["session.write"] },
  execute: ({ id, input, eof, stop }, ctx) =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      if (id === undefined) {
        const lines = [...endedLines(yield* jobs.ended(ctx.sessionId)), ...jobs.list(ctx.sessionId).map(stateLine)]
        return {
          title: "jobs",
          output: lines.length === 0 ? "No background jobs in this session." : `${lines.join("\n")}\n`
        }
      }
      const job = jobs.get(ctx.sessionId, id)
      if (job === undefined) {
        const earlier = (yield* jobs.ended(ctx.sessionId)).find((r) => r.id === id)
        if (earlier !== undefined) {
          const again = `bash {"command": ${JSON.stringify(earlier.command)}, "run_in_background": true}`
          const line = `${endedLine(earlier)}\nIt ran in an earlier process of this session and ended with it; its output is gone.`
          if (stop === true && input === undefined && eof !== true)
            return { title: `${id} already ended`, output: `${line}\n`, metadata: { jobId: id, ended: true } }
          return yield* fail(`${line} Start it again with ${again} if you still need it.`)
        }
        const known = jobs.list(ctx.sessionId).map((j) => j.id)
        return yield* fail(
          `No job "${id}" in this session${known.length === 0 ? "" : ` (jobs: ${known.join(", ")})`}; start one with bash {"command": …, "run_in_background": true}.`
        )
      }
      if (input !== undefined || eof === true) {
        if (!job.write(input ?? "", eof === true)) {
          return yield* fail(`${id} no longer reads input (${stateLine(job)}).`)
        }
        yield* Effect.sleep(ANSWER_MS)
      }
      if (stop === true) yield* Effect.promise(() => job.stop("stopped by the model"))
      return {
        title: `${id}${stop === true ? " stopped" : ""}`,
        output: look(job),
        metadata: { jobId: id, ...job.state() }
      }
    })
})
