/** The project a session works in: relative paths resolve against its root. */
import * as NodePath from "node:path"
import { Context, Layer } from "effect"

export class Workspace extends Context.Service<Workspace, { readonly root: string }>()("freecode/Workspace") {
  static readonly layer = (root: string) => Layer.succeed(Workspace, Workspace.of({ root: NodePath.resolve(root) }))
}
