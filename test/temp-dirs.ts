/** Real temp folders for a test file, removed after each test. Call once, at the file's top level. */
import * as NFS from "node:fs"
import * as OS from "node:os"
import * as NodePath from "node:path"
import { afterEach } from "vitest"

export const tempDirs = (): ((prefix: string) => string) => {
  const made: Array<string> = []
  afterEach(() => {
    for (const d of made.splice(0)) NFS.rmSync(d, { recursive: true, force: true })
  })
  return (prefix) => {
    const dir = NFS.realpathSync(NFS.mkdtempSync(NodePath.join(OS.tmpdir(), prefix)))
    made.push(dir)
    return dir
  }
}
