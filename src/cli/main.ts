#!/usr/bin/env node
/**
 * The `freecode-tools` executable: the CLI on the live tool system (layers/live.ts, loaded when a
 * command builds one).
 * Runs directly on Node 24 (`node src/cli/main.ts`) and built (`dist/src/cli/main.js`).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Exit, Layer, Logger } from "effect"
import { NativeFileSystem } from "../fs/node-fs.ts"
import { runCli } from "./app.ts"
import { EXIT_TERMINATED } from "./errors.ts"
import { Interrupts } from "./interrupts.ts"
import { Io } from "./io.ts"
import { ToolSystemFactory } from "./system.ts"

/** Exit code of a process killed by SIGPIPE: whoever read our output has gone. */
const EXIT_BROKEN_PIPE = 141

const services = Layer.mergeAll(
  // Logs (a skipped skill, an unusable store entry) go to stderr: stdout carries only results,
  // and for `mcp` nothing but protocol messages.
  Logger.layer([Logger.withConsoleError(Logger.formatSimple)]),
  NodeServices.layer,
  // Said explicitly: the CLI's FileSystem is Node's own, so the native file layers may bypass it.
  Layer.succeed(NativeFileSystem, true),
  Io.layerNode,
  Interrupts.layerSigint,
  // Every tool's module loads only for a command that builds a tool system, not for --version or --help.
  ToolSystemFactory.layer((root) =>
    Layer.unwrap(
      Effect.promise(() => import("../../layers/live.ts")).pipe(Effect.map((m) => m.ToolSystem.layer({ root })))
    )
  )
)

for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(EXIT_BROKEN_PIPE)
    throw error
  })
}

const fiber = Effect.runFork(runCli(process.argv.slice(2)).pipe(Effect.provide(services)))

// The fiber may wait on nothing Node counts as pending work (a Deferred); keep the process up.
const keepAlive = setInterval(() => {}, 2 ** 31 - 1)
// SIGTERM interrupts the run, so scopes close and child process groups are killed.
const onSigterm = () => fiber.interruptUnsafe()
process.on("SIGTERM", onSigterm)

fiber.addObserver((exit) => {
  clearInterval(keepAlive)
  process.off("SIGTERM", onSigterm)
  const code = Exit.isSuccess(exit) ? exit.value : EXIT_TERMINATED
  // Exit only once both streams have flushed (stdin may still hold the event loop open).
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)))
})
