/** Small real tools that exercise each rule of the orchestrator. */
import { Deferred, type Duration, Effect, Schema } from "effect"
import { fail, TransientFailure } from "../../src/tool/errors.ts"
import { defineTool } from "../../src/tool/tool.ts"

export const Echo = defineTool({
  id: "echo",
  description: "Echo text back.",
  parameters: Schema.Struct({
    text: Schema.String,
    times: Schema.optionalKey(Schema.Int),
    loud: Schema.optionalKey(Schema.Boolean)
  }),
  concurrencySafe: true,
  execute: ({ text, times, loud }) =>
    Effect.succeed({
      title: "echo",
      output: (loud ? text.toUpperCase() : text).repeat(times ?? 1),
      metadata: { times: times ?? 1 }
    })
})

/** Prints `lines` numbered lines. */
export const Lines = defineTool({
  id: "lines",
  description: "Print numbered lines.",
  parameters: Schema.Struct({ lines: Schema.Int }),
  concurrencySafe: true,
  execute: ({ lines }) =>
    Effect.succeed({ title: "lines", output: Array.from({ length: lines }, (_, i) => `line ${i + 1}`).join("\n") })
})

/** Fails transiently the first `failures` times it runs (counted per tool instance). */
export const flaky = (id: string, retrySafe: boolean, failures: number) => {
  const runs = { count: 0 }
  const tool = defineTool({
    id,
    description: "Fails transiently, then succeeds.",
    parameters: Schema.Struct({}),
    retrySafe,
    execute: () =>
      Effect.suspend(() => {
        runs.count++
        return runs.count <= failures
          ? Effect.fail(new TransientFailure({ message: `busy (run ${runs.count})` }))
          : Effect.succeed({ title: id, output: `ok on run ${runs.count}` })
      })
  })
  return { tool, runs }
}

/** Emits some output, then waits forever (or until cancelled or timed out). */
export const hang = (id: string, interruptBehavior: "cancel" | "block", timeout: Duration.Input) =>
  defineTool({
    id,
    description: "Prints, then hangs.",
    parameters: Schema.Struct({ finishAfterMs: Schema.optionalKey(Schema.Int) }),
    interruptBehavior,
    timeout,
    execute: ({ finishAfterMs }, ctx) =>
      Effect.gen(function* () {
        yield* ctx.emit("started\n")
        yield* ctx.emit("working\n")
        if (finishAfterMs === undefined) return yield* Effect.never
        yield* Effect.sleep(`${finishAfterMs} millis`)
        return { title: id, output: "started\nworking\nfinished\n" }
      })
  })

export const Boom = defineTool({
  id: "boom",
  description: "Has a bug.",
  parameters: Schema.Struct({}),
  execute: () => Effect.die(new Error("undefined is not a function"))
})

/** A bug that shows only after the tool has waited: its fiber dies while the timeout is armed. */
export const LateBoom = defineTool({
  id: "late_boom",
  description: "Has a bug, later.",
  parameters: Schema.Struct({}),
  execute: () => Effect.andThen(Effect.sleep("5 millis"), Effect.die(new Error("x is undefined")))
})

export const Guarded = defineTool({
  id: "guarded",
  description: "Asks before it runs; refuses paths under /etc.",
  parameters: Schema.Struct({ path: Schema.String }),
  permissions: { operations: ["file.write"], requiresApproval: true },
  mutates: true,
  paths: ({ path }) => [path],
  checkPermissions: ({ path }) =>
    Effect.succeed(
      path.startsWith("/etc")
        ? { behavior: "deny" as const, reason: "writes under /etc are never allowed" }
        : { behavior: "allow" as const }
    ),
  validateInput: ({ path }) =>
    path === "" ? Effect.fail(fail("path must not be empty; give a file path")) : Effect.void,
  execute: ({ path }) => Effect.succeed({ title: "guarded", output: `wrote ${path}` })
})

export const Small = defineTool({
  id: "small",
  description: "Declares a small result budget.",
  parameters: Schema.Struct({}),
  maxResultSizeChars: 200,
  execute: () =>
    Effect.succeed({ title: "small", output: Array.from({ length: 100 }, (_, i) => `row ${i}`).join("\n") })
})

/**
 * Concurrency-safe reads that meet at a latch: each waits until `expected` of them have
 * started, so they only finish if they really run at the same time. Every step is logged.
 */
export const makeLatchTools = (expected: number) =>
  Effect.gen(function* () {
    const log: Array<string> = []
    const started = { count: 0 }
    const all = yield* Deferred.make<void>()
    const Meet = defineTool({
      id: "meet",
      description: "Concurrency-safe; waits for its peers.",
      parameters: Schema.Struct({ tag: Schema.String, alone: Schema.optionalKey(Schema.Boolean) }),
      concurrencySafe: true,
      execute: ({ tag, alone }) =>
        Effect.gen(function* () {
          log.push(`start ${tag}`)
          started.count++
          if (started.count === expected) yield* Deferred.succeed(all, undefined)
          if (alone !== true) yield* Deferred.await(all).pipe(Effect.timeout("2 seconds"), Effect.orDie)
          log.push(`end ${tag}`)
          return { title: tag, output: tag }
        })
    })
    const Write = defineTool({
      id: "write_thing",
      description: "Mutates; runs alone.",
      parameters: Schema.Struct({ tag: Schema.String }),
      mutates: true,
      execute: ({ tag }) =>
        Effect.sync(() => {
          log.push(`write ${tag}`)
          return { title: tag, output: tag }
        })
    })
    return { Meet, Write, log }
  })

/** Declares paths with a bug: the function throws. */
export const BadPaths = defineTool({
  id: "bad_paths",
  description: "Its paths function throws.",
  parameters: Schema.Struct({}),
  paths: () => {
    throw new Error("cannot read properties of undefined")
  },
  execute: () => Effect.succeed({ title: "never", output: "never" })
})

/** Its validateInput dies. */
export const BadValidate = defineTool({
  id: "bad_validate",
  description: "Its validateInput dies.",
  parameters: Schema.Struct({}),
  validateInput: () => Effect.die("validator bug"),
  execute: () => Effect.succeed({ title: "never", output: "never" })
})

/** Returns an image-sized value in its metadata, as read does for a model that can see images. */
export const Picture = defineTool({
  id: "picture",
  description: "Returns a large image in metadata.",
  parameters: Schema.Struct({}),
  concurrencySafe: true,
  execute: () =>
    Effect.succeed({
      title: "picture",
      output: "Image: shot.png (png)",
      metadata: { image: { mimeType: "image/png", data: "A".repeat(200_000) }, width: 640 }
    })
})
