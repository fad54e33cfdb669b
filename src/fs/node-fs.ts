/**
 * Whether a FileSystem is Node's own, as far as a layer that calls node:fs in its place cares:
 * a native layer may bypass a FileSystem only when the methods it bypasses are Node's (the
 * same functions in every instance). A FileSystem that replaces any of them (an in-memory one,
 * a wrapper that logs reads or writes) must be gone through.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Context, Effect, FileSystem, Layer } from "effect"

let nodeFs: FileSystem.FileSystem | undefined

export const sameAsNode = (fs: FileSystem.FileSystem, methods: ReadonlyArray<keyof FileSystem.FileSystem>): boolean => {
  nodeFs ??= Context.get(Effect.runSync(Effect.scoped(Layer.build(NodeFileSystem.layer))), FileSystem.FileSystem)
  const node = nodeFs
  return methods.every((method) => fs[method] === node[method])
}
