/**
 * realPathBelow looks only at the components below a real base, where realPath asks realpath(3)
 * about every one: for every kind of path below the base (plain, a link in the middle or at the
 * end, a link out of the base, a missing tail, a file used as a directory, `..`) both must say
 * the same real path.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { realPathBelow as realPathBelowWith, realPath as realPathWith } from "../../src/permission/containment.ts"
import { FS_MODES, nodeWith } from "../fs/layers.ts"

const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-real-")))
const root = `${base}/project`
const outside = `${base}/outside`
NodeFs.mkdirSync(`${root}/src/deep`, { recursive: true })
NodeFs.mkdirSync(outside)
NodeFs.writeFileSync(`${root}/src/deep/a.ts`, "a\n")
NodeFs.writeFileSync(`${outside}/secret.txt`, "s\n")
NodeFs.symlinkSync(outside, `${root}/src/out`)
NodeFs.symlinkSync(`${root}/src/deep`, `${root}/alias`)
NodeFs.symlinkSync("a.ts", `${root}/src/deep/link.ts`)
afterAll(() => NodeFs.rmSync(base, { recursive: true, force: true }))

const cases: ReadonlyArray<readonly [string, string]> = [
  ["the root itself", root],
  ["a plain file", `${root}/src/deep/a.ts`],
  ["a plain directory", `${root}/src/deep`],
  ["a link out of the root, in the middle", `${root}/src/out/secret.txt`],
  ["a link out of the root, at the end", `${root}/src/out`],
  ["a link inside the root, in the middle", `${root}/alias/a.ts`],
  ["a relative link at the end", `${root}/src/deep/link.ts`],
  ["a missing file", `${root}/src/deep/new.ts`],
  ["a missing directory and file", `${root}/src/none/new.ts`],
  ["a missing file behind a link", `${root}/src/out/new.txt`],
  ["a file used as a directory", `${root}/src/deep/a.ts/x`],
  ["a path with ..", `${root}/src/deep/../out/secret.txt`],
  ["a path outside the base", `${outside}/secret.txt`]
]

for (const mode of FS_MODES) {
  describe(`realPathBelow (${mode})`, () => {
    const layer = nodeWith(mode)
    const realPath = (abs: string) => LocalFs.use((fs) => realPathWith(fs, abs))
    const realPathBelow = (base: string, abs: string) => LocalFs.use((fs) => realPathBelowWith(fs, base, abs))
    for (const [what, abs] of cases) {
      it.effect(`agrees with realpath(3): ${what}`, () =>
        Effect.gen(function* () {
          const expected = yield* realPath(abs)
          expect(yield* realPathBelow(root, abs)).toBe(expected)
        }).pipe(Effect.provide(layer))
      )
    }

    it.effect("follows a link out of the root to where it leads", () =>
      Effect.gen(function* () {
        expect(yield* realPathBelow(root, `${root}/src/out/secret.txt`)).toBe(`${outside}/secret.txt`)
        expect(yield* realPathBelow(root, `${root}/alias/a.ts`)).toBe(`${root}/src/deep/a.ts`)
      }).pipe(Effect.provide(layer))
    )

    it.effect("sees a link that replaced a directory since the last call", () =>
      Effect.gen(function* () {
        const dir = `${root}/swapped-${mode}`
        NodeFs.mkdirSync(dir)
        NodeFs.writeFileSync(`${dir}/f.txt`, "f\n")
        expect(yield* realPathBelow(root, `${dir}/f.txt`)).toBe(`${dir}/f.txt`)
        NodeFs.rmSync(dir, { recursive: true })
        NodeFs.symlinkSync(outside, dir)
        expect(yield* realPathBelow(root, `${dir}/secret.txt`)).toBe(`${outside}/secret.txt`)
      }).pipe(Effect.provide(layer))
    )
  })
}
