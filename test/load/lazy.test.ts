/** The lazy-module helper: one load shared by every caller, and a failed load tried again. */
import { describe, expect, it } from "vitest"
import { lazyImport, lazyRequire } from "../../src/load/lazy.ts"

describe("lazyImport", () => {
  it("loads nothing until called, then once for every caller, concurrent ones included", async () => {
    let loads = 0
    const load = lazyImport(async () => {
      loads++
      return { value: 42 }
    })
    expect(loads).toBe(0)
    const [a, b] = await Promise.all([load(), load()])
    expect(await load()).toBe(a)
    expect(a).toBe(b)
    expect(a.value).toBe(42)
    expect(loads).toBe(1)
  })

  it("a failed load is not kept: the next call loads again", async () => {
    let loads = 0
    const load = lazyImport(async () => {
      loads++
      if (loads === 1) throw new Error("first load fails")
      return "loaded"
    })
    await expect(load()).rejects.toThrow("first load fails")
    expect(await load()).toBe("loaded")
    expect(loads).toBe(2)
  })

  it("imports a real module", async () => {
    const picomatch = lazyImport(() => import("picomatch"))
    expect((await picomatch()).default.isMatch("a.ts", "*.ts")).toBe(true)
  })
})

describe("lazyRequire", () => {
  it("requires a CommonJS package on first call, the same module after", () => {
    const yaml = lazyRequire<typeof import("yaml")>("yaml")
    expect(yaml().parse("a: 1")).toEqual({ a: 1 })
    expect(yaml()).toBe(yaml())
  })

  it("requires an ESM-only package synchronously", () => {
    const mdream = lazyRequire<typeof import("@mdream/js")>("@mdream/js")
    expect(mdream().htmlToMarkdown("<h1>Hi</h1>", {}).trim()).toBe("# Hi")
  })

  it("a missing package throws where it is first used, naming it", () => {
    const missing = lazyRequire("freecode-no-such-package")
    expect(() => missing()).toThrow(/freecode-no-such-package/)
  })
})
