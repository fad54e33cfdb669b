/**
 * src/process-wide: each entry made once per process, on first use; a second declaration of a
 * name shares the first's value; a reset makes every entry again on its next use. And the
 * process's entries are the documented ones, each declared by the module that uses it.
 */
import { describe, expect, it } from "vitest"
import "../../src/edit/file-lock.ts"
import "../../src/edit/write-native.ts"
import "../../src/jobs/jobs.ts"
import "../../src/read-state/read-state.ts"
import "../../src/sandbox/availability.ts"
import { processWide, processWideNames, resetProcessWide } from "../../src/process-wide/process-wide.ts"

describe("process-wide state", () => {
  it("is made once, shared by a second declaration, and made again after a reset", () => {
    let made = 0
    const first = processWide("test counter", () => ({ n: ++made }))
    expect(made).toBe(0)
    const value = first.get()
    expect(first.get()).toBe(value)
    expect(processWide("test counter", () => ({ n: -1 })).get()).toBe(value)
    expect(made).toBe(1)
    resetProcessWide()
    const again = first.get()
    expect(again).not.toBe(value)
    expect(again.n).toBe(2)
  })

  it("holds exactly the documented entries", () => {
    expect(
      processWideNames()
        .filter((n) => !n.startsWith("test "))
        .sort()
    ).toEqual(["live job hosts", "lock folder", "path locks", "recovered staging folders", "sandbox probes"])
  })
})
