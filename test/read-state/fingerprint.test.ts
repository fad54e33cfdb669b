import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { changedLines, Fingerprinter, fingerprint } from "../../src/read-state/fingerprint.ts"

const text = (s: string) => new TextEncoder().encode(s)

describe("fingerprint", () => {
  it("is the SHA-1, size and per-line hashes of the bytes, however they arrive", () => {
    const bytes = text("alpha\nbeta\n\ngamma without newline")
    const whole = fingerprint(bytes)
    expect(whole.size).toBe(bytes.length)
    expect(whole.hash).toBe(createHash("sha1").update(bytes).digest("hex"))
    expect(whole.lines).toHaveLength(4)
    // Every split point, and every byte on its own: the same fingerprint.
    for (let cut = 0; cut <= bytes.length; cut++) {
      const split = new Fingerprinter().update(bytes.subarray(0, cut)).update(bytes.subarray(cut)).digest()
      expect(split).toEqual(whole)
    }
    const bytewise = new Fingerprinter()
    for (const b of bytes) bytewise.update(Uint8Array.of(b))
    expect(bytewise.digest()).toEqual(whole)
    expect(fingerprint(new Uint8Array(0))).toEqual({
      size: 0,
      hash: createHash("sha1").digest("hex"),
      lines: new Uint32Array(0)
    })
  })

  it("names the lines that changed", () => {
    const before = fingerprint(text("a\nb\nc\nd\n"))
    expect(changedLines(before, fingerprint(text("a\nB\nc\nd\n")))).toBe("line 2 changed")
    expect(changedLines(before, fingerprint(text("a\nb\nX\nY\nZ\nd\n")))).toBe(
      "lines 3-5 changed; it is 2 lines longer"
    )
    expect(changedLines(before, fingerprint(text("a\nb\n")))).toBe(
      "lines were removed after line 2; it is 2 lines shorter"
    )
  })
})
