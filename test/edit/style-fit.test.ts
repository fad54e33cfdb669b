/**
 * An edit fitted to the file's own style: the file has trailing whitespace the model's oldString
 * left out, or one blank line more or fewer inside the edited stretch. Whatever the model did not
 * mean to change must come back byte-identical. Seeded cases over the corpus's real files, read
 * and written as bytes (BOM and CRLF kept).
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { applyEditToBytes } from "../../src/edit/apply.ts"

const FILES = NodePath.join(import.meta.dirname, "../fixtures/edits/files")
const decoder = new TextDecoder("utf-8", { ignoreBOM: true })
const encoder = new TextEncoder()

/** mulberry32: small, seeded, uniform enough for picking lines. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

type Drift = "trailing" | "blank more" | "blank fewer" | "trailing and blank more"
type Change = "modify" | "insert after" | "delete"

interface Case {
  readonly file: string
  readonly before: string
  readonly oldString: string
  readonly newString: string
  /** The file's lines after the intended edit. */
  readonly after: ReadonlyArray<string>
  /** Index in `after` of the changed line, whose trailing whitespace either way is right. */
  readonly changed: number | undefined
}

const strip = (line: string) => line.replace(/[ \t]+$/, "")
const blank = (line: string) => line.trim() === ""

const makeCase = (file: string, source: string, next: () => number, drift: Drift, change: Change) => {
  const pick = (n: number) => Math.floor(next() * n)
  const crlf = source.includes("\r\n")
  const bom = source.startsWith("\uFEFF")
  const lines = source
    .replace(/^\uFEFF/, "")
    .split(crlf ? "\r\n" : "\n")
    .map((l) => (!blank(l) && pick(3) === 0 ? l + ["  ", "\t", " "][pick(3)]! : l))
  const size = 3 + pick(5)
  const start = pick(Math.max(1, lines.length - size - 1))
  const region = lines.slice(start, start + size)
  const targets = region.flatMap((l, i) => (blank(l) ? [] : [i]))
  if (targets.length === 0) return undefined
  const at = targets[pick(targets.length)]!
  // The model's view of the stretch: trailing whitespace gone, a blank line added or dropped.
  const sent: Array<{ text: string; from: number | undefined }> = region.map((l, i) => ({ text: strip(l), from: i }))
  if (drift === "blank more" || drift === "trailing and blank more") {
    sent.splice(1 + pick(sent.length - 1), 0, { text: "", from: undefined })
  }
  if (drift === "blank fewer") {
    const inner = sent.flatMap((s, i) => (s.text === "" && i > 0 && i < sent.length - 1 ? [i] : []))
    if (inner.length === 0) return undefined
    sent.splice(inner[pick(inner.length)]!, 1)
  }
  const k = sent.findIndex((s) => s.from === at)
  const line = sent[k]!.text
  const indent = /^\s*/.exec(line)![0]
  const modified = `${indent}X_${line.slice(indent.length)}`
  const added = `${indent}added_line()`
  const newSent = sent.map((s) => s.text)
  const after = [...lines]
  let changed: number | undefined
  if (change === "modify") {
    newSent[k] = modified
    after[start + at] = modified
    changed = start + at
  } else if (change === "insert after") {
    newSent.splice(k + 1, 0, added)
    after.splice(start + at + 1, 0, added)
  } else {
    newSent.splice(k, 1)
    after.splice(start + at, 1)
  }
  const oldString = sent.map((s) => s.text).join("\n")
  const newString = newSent.join("\n")
  // A stretch whose stripped lines occur twice is a different question (which one?): skip it.
  const stripped = lines.map(strip).join("\n")
  const needle = region.map(strip).join("\n")
  if (stripped.indexOf(needle) !== stripped.lastIndexOf(needle)) return undefined
  const before = (bom ? "\uFEFF" : "") + lines.join(crlf ? "\r\n" : "\n")
  return { file, before, oldString, newString, after, changed } satisfies Case
}

const cases = (() => {
  const next = random(20261202)
  const drifts: ReadonlyArray<Drift> = ["trailing", "blank more", "blank fewer", "trailing and blank more"]
  const changes: ReadonlyArray<Change> = ["modify", "insert after", "delete"]
  const out: Array<Case & { readonly drift: Drift; readonly change: Change }> = []
  for (const file of NodeFs.readdirSync(FILES).sort()) {
    const source = NodeFs.readFileSync(NodePath.join(FILES, file), "utf8")
    for (let n = 0; n < 60; n++) {
      const drift = drifts[n % drifts.length]!
      const change = changes[Math.floor(n / drifts.length) % changes.length]!
      const c = makeCase(file, source, next, drift, change)
      if (c !== undefined) out.push({ ...c, drift, change })
    }
  }
  return out
})()

describe("an edit fitted to the file's trailing whitespace and blank lines", () => {
  it("has enough cases of every drift and change to mean something", () => {
    for (const drift of ["trailing", "blank more", "blank fewer", "trailing and blank more"]) {
      expect(cases.filter((c) => c.drift === drift).length, drift).toBeGreaterThanOrEqual(20)
    }
  })

  it("leaves every line the model did not mean to change byte-identical", () => {
    const wrong: Array<string> = []
    for (const c of cases) {
      const outcome = applyEditToBytes(encoder.encode(c.before), { oldString: c.oldString, newString: c.newString })
      // Refusing a stretch the file holds twice after fitting is never wrong; landing elsewhere is.
      if (outcome._tag === "Ambiguous") continue
      if (outcome._tag !== "Applied") {
        wrong.push(`${c.file} (${c.drift}, ${c.change}): ${outcome._tag}`)
        continue
      }
      const text = decoder.decode(outcome.bytes)
      const crlf = c.before.includes("\r\n")
      expect(text.startsWith("\uFEFF"), c.file).toBe(c.before.startsWith("\uFEFF"))
      const got = text.replace(/^\uFEFF/, "").split(crlf ? "\r\n" : "\n")
      const same =
        got.length === c.after.length &&
        got.every((line, i) => (i === c.changed ? strip(line) === strip(c.after[i]!) : line === c.after[i]))
      if (!same) {
        const i = got.findIndex((line, j) =>
          j === c.changed ? strip(line) !== strip(c.after[j]!) : line !== c.after[j]
        )
        wrong.push(
          `${c.file} (${c.drift}, ${c.change}) line ${i + 1}: ${JSON.stringify(got[i])} want ${JSON.stringify(c.after[i])}`
        )
      }
    }
    expect(wrong).toEqual([])
  })
})
