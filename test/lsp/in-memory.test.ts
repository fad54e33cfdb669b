/**
 * Over an in-memory FileSystem, a language server's workspace root, its program and the
 * workspace's TypeScript are found in that FileSystem (LocalFs's platform layer), not on the
 * host's disk: no such project exists there, so every answer below could only come from memory.
 * An owner the file system cannot tell counts as someone else's (a node_modules above the
 * project is then not used), and a package.json that is not JSON is named, not thrown.
 */
import * as NodeFs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { MemoryFileSystem } from "../../src/fs/memory.ts"
import { serversFromConfig } from "../../src/lsp/config.ts"
import { exists, findUp, isProjectProgram } from "../../src/lsp/place.ts"
import { SERVERS, workspaceRootFor } from "../../src/lsp/servers.ts"
import { LspClients } from "../../src/lsp/service.ts"

const root = "/memory-lsp"
const typescript = SERVERS.find((s) => s.id === "typescript")!

/** LocalFs's platform layer over an in-memory FileSystem holding `files`. */
const memory = (files: Record<string, string>) =>
  LocalFs.layerPlatform.pipe(Layer.provide(MemoryFileSystem.layer(files)))

describe("language servers over an in-memory file system", () => {
  it.effect("the workspace root is the nearest folder with a marker in memory; else the project root", () =>
    Effect.gen(function* () {
      expect(NodeFs.existsSync(root)).toBe(false)
      expect(yield* workspaceRootFor(typescript, `${root}/pkg/src/a.ts`, root)).toBe(`${root}/pkg`)
      expect(yield* workspaceRootFor(typescript, `${root}/other/b.ts`, root)).toBe(root)
      expect(yield* exists(`${root}/pkg/package.json`)).toBe(true)
      expect(yield* exists(`${root}/dangling`)).toBe(false)
    }).pipe(
      Effect.provide(
        memory({ [`${root}/pkg/package.json`]: "{}", [`${root}/pkg/src/a.ts`]: "", [`${root}/other/b.ts`]: "" })
      )
    )
  )

  it.effect("the workspace's TypeScript 7 in memory: tsc --lsp when trusted, refused with why when not", () =>
    Effect.gen(function* () {
      const place = { projectRoot: root, trusted: true }
      expect(yield* typescript.resolve(root, place)).toEqual({
        command: `${root}/node_modules/.bin/tsc`,
        args: ["--lsp", "--stdio"]
      })
      const refused = yield* typescript.resolve(root, { projectRoot: root, trusted: false })
      expect(refused).toEqual({ missing: expect.stringContaining(`${root} is not trusted`) })
      expect(yield* isProjectProgram(place, `${root}/node_modules/.bin/tsc`)).toBe(true)
      expect(yield* isProjectProgram(place, "/usr/bin/tsc")).toBe(false)
    }).pipe(
      Effect.provide(
        memory({
          [`${root}/node_modules/typescript/package.json`]: JSON.stringify({ version: "7.0.1" }),
          [`${root}/node_modules/.bin/tsc`]: "#!/bin/sh\n",
          [`${root}/a.ts`]: ""
        })
      )
    )
  )

  it.effect("a node_modules above the project whose owner memory cannot tell is not used", () =>
    Effect.gen(function* () {
      const place = { projectRoot: `${root}/project`, trusted: true }
      expect(yield* findUp(`${root}/project`, "typescript/package.json", place)).toBeUndefined()
      // Inside the project, ownership is not asked.
      expect(yield* findUp(`${root}/project`, ".bin/tsc", place)).toBe(`${root}/project/node_modules/.bin/tsc`)
    }).pipe(
      Effect.provide(
        memory({
          [`${root}/node_modules/typescript/package.json`]: JSON.stringify({ version: "7.0.1" }),
          [`${root}/project/node_modules/.bin/tsc`]: "#!/bin/sh\n"
        })
      )
    )
  )

  it.effect("a package.json that is not JSON is named in the reason, not thrown", () =>
    Effect.gen(function* () {
      expect(yield* typescript.resolve(root, { projectRoot: root, trusted: true })).toEqual({
        missing: `${root}/node_modules/typescript/package.json is not valid JSON; reinstall typescript`
      })
    }).pipe(Effect.provide(memory({ [`${root}/node_modules/typescript/package.json`]: "{ version: 7" })))
  )

  it.effect("a configured server's program, by path, is looked for in memory", () =>
    Effect.gen(function* () {
      const [present, absent] = serversFromConfig(
        {
          servers: {
            lua: { command: ["tools/lua-ls", "--stdio"], extensions: ["lua"] },
            gone: { command: ["tools/none"], extensions: ["none"] }
          }
        },
        []
      )
      const place = { projectRoot: root, trusted: true }
      expect(yield* present!.resolve(root, place)).toEqual({ command: `${root}/tools/lua-ls`, args: ["--stdio"] })
      expect(yield* absent!.resolve(root, place)).toEqual({ missing: `${root}/tools/none does not exist` })
      expect(yield* present!.resolve(root, { projectRoot: root, trusted: false })).toEqual({
        missing: expect.stringContaining("is not trusted")
      })
    }).pipe(Effect.provide(memory({ [`${root}/tools/lua-ls`]: "#!/bin/sh\n" })))
  )

  it.live("LspClients finds the workspace root and looks for the server in memory, and says what is missing", () =>
    Effect.gen(function* () {
      const clients = yield* LspClients
      const error = yield* clients.open(`${root}/pkg/a.ts`, root).pipe(Effect.flip)
      expect(error.message).toBe(
        `No typescript language server for ${root}/pkg: no TypeScript in the workspace's node_modules ` +
          "(install typescript@7, or typescript-language-server). Use grep and read instead."
      )
    }).pipe(
      Effect.provide(
        LspClients.layerWith({ trusted: true }).pipe(
          Layer.provide(memory({ [`${root}/pkg/package.json`]: "{}", [`${root}/pkg/a.ts`]: "export {}\n" }))
        )
      )
    )
  )
})
