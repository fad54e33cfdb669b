/**
 * The world the shell corpus runs in: a temp project with an input file, a file deny rules must
 * protect, stand-ins for programs that must never run (each touches every `…/pwned-*` argument
 * it is given, so running it leaves the marker), and the corpus with its placeholders filled.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

export interface CorpusCase {
  readonly id: number
  /** allow: must be allowed; refuse: must not be; deny: a deny rule must refuse it; safe: harmless, refusing it is an over-refusal. */
  readonly expect: "allow" | "refuse" | "deny" | "safe"
  readonly command: string
  readonly why: string
}

interface CorpusFile {
  readonly rules: { readonly permissions: { readonly allow: Array<string>; readonly deny: Array<string> } }
  readonly cases: ReadonlyArray<CorpusCase>
}

export const corpus = JSON.parse(
  NodeFs.readFileSync(NodePath.join(import.meta.dirname, "../fixtures/shell/corpus.json"), "utf8")
) as CorpusFile

// PATH is set here so a stand-in still works when a case points PATH at it (PATH=evil ls).
const TOUCH_MARKERS = `#!/bin/bash
PATH=/usr/bin:/bin
for a in "$@"; do case "$a" in */pwned-*) touch "$a";; esac; done
echo "stand-in $(basename "$0") $*"
`

export const makeShellWorld = () => {
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-shell-")))
  const write = (rel: string, text: string, mode = 0o644) => {
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(dir, rel)), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(dir, rel), text, { mode })
  }
  write("input.txt", "b\na\nc\n")
  write("victim", "deny rules must keep this file\n")
  for (const name of ["npm", "git", "lsof", "lsx"]) write(`bin/${name}`, TOUCH_MARKERS, 0o755)
  for (const name of ["ls", "git"]) write(`evil/${name}`, TOUCH_MARKERS, 0o755)
  write("evil.sh", TOUCH_MARKERS, 0o755)
  const marker = (id: number) => NodePath.join(dir, `pwned-${id}`)
  const fill = (c: CorpusCase) => c.command.replaceAll("{M}", marker(c.id)).replaceAll("{D}", dir)
  /** Every marker file that exists (there must be none). */
  const markers = () => NodeFs.readdirSync(dir).filter((n) => n.startsWith("pwned-"))
  const env = { PATH: `${dir}/bin:/usr/bin:/bin`, HOME: dir, LANG: "C" }
  return {
    dir,
    marker,
    fill,
    markers,
    env,
    victimExists: () => NodeFs.existsSync(NodePath.join(dir, "victim")),
    cleanup: () => NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}
