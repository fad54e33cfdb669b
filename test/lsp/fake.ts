/** The scripted server (fake-server.mjs) as the protocol and client tests start it. */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, FileSystem } from "effect"
import type { ServerSpec } from "../../src/lsp/servers.ts"

export const FAKE = new URL("./fake-server.mjs", import.meta.url).pathname

export type FakeMode = "asks" | "hang" | "crash" | "refuse"

/** How the fake server starts in `mode`, logging its starts to `log`. */
export const fakeCommand = (mode: FakeMode, log: string) => ({ command: process.execPath, args: [FAKE, mode, log] })

/** The fake server as a table entry, for `.fake` files. */
export const fakeSpec = (mode: FakeMode, log: string): ServerSpec => ({
  id: "fake",
  extensions: { fake: "fake" },
  rootMarkers: [],
  resolve: () => Effect.succeed(fakeCommand(mode, log))
})

/** A temp project (removed with the scope) with `a.fake`, and the path of the fake server's start log. */
export const fakeProject = (prefix: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped({ prefix })
    writeFileSync(join(root, "a.fake"), "first text\n")
    return { root, file: join(root, "a.fake"), log: join(root, "starts.log") }
  })
