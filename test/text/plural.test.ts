import { describe, expect, it } from "vitest"
import { plural } from "../../src/text/plural.ts"

describe("plural", () => {
  it("agrees with its count", () => {
    expect(plural(0, "file")).toBe("0 files")
    expect(plural(1, "file")).toBe("1 file")
    expect(plural(2, "file")).toBe("2 files")
    expect(plural(1, "match", "matches")).toBe("1 match")
    expect(plural(3, "entry", "entries")).toBe("3 entries")
  })
})
