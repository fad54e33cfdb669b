/**
 * The interpreter threads (worker-source.ts): one per program running at once, kept warm while
 * idle (the QuickJS module is loaded once per thread, not per program), replaced after a crash or
 * a kill. Idle threads are unref'd: they never keep the process alive.
 */
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import { PRELUDE } from "./prelude.ts"
import { WORKER_SOURCE } from "./worker-source.ts"

/** Threads kept for the next program; more running at once are made and dropped after. */
const MAX_IDLE = 2

const idle: Array<Worker> = []

const spawn = (): Worker => {
  const require = createRequire(import.meta.url)
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      core: require.resolve("quickjs-emscripten-core"),
      variant: require.resolve("@jitl/quickjs-wasmfile-release-sync"),
      prelude: PRELUDE
    },
    // The program's heap is the interpreter's (its own limit); this bounds the thread around it.
    resourceLimits: { maxOldGenerationSizeMb: 64, stackSizeMb: 4 },
    stdout: true,
    stderr: true
  })
  // The interpreter's own diagnostics (an abort's text) are not the person's output.
  worker.stdout.resume()
  worker.stderr.resume()
  return worker
}

/** A thread for one program: a warm one when there is one. */
export const acquire = (): Worker => {
  const worker = idle.pop() ?? spawn()
  worker.ref()
  return worker
}

/** Gives a thread back after its program ended cleanly; an unhealthy one is ended. */
export const release = (worker: Worker, healthy: boolean): void => {
  worker.removeAllListeners("message")
  worker.removeAllListeners("error")
  worker.removeAllListeners("exit")
  if (!healthy || idle.length >= MAX_IDLE) {
    void worker.terminate()
    return
  }
  worker.unref()
  idle.push(worker)
}

/** Starts a thread ahead of the first program (the module loads while nothing waits). */
export const warm = (): void => {
  if (idle.length === 0) release(spawn(), true)
}
