import { describe, expect, it } from "@effect/vitest"
import { DEFAULT_WIRING, wiringFor } from "../../src/surface/models.ts"

describe("wiringFor", () => {
  it.each([
    ["gpt-5", "apply_patch", "openai-responses"],
    ["gpt-5-codex", "apply_patch", "openai-responses"],
    ["openai/gpt-5.1-mini", "apply_patch", "openai-responses"],
    ["codex-mini-latest", "apply_patch", "openai-responses"],
    ["o3", "apply_patch", "openai-responses"],
    ["openai/o4-mini", "apply_patch", "openai-responses"],
    ["gpt-4.1", "edit", "openai"],
    ["gpt-4o-mini", "edit", "openai"],
    ["gpt-oss-120b", "edit", "openai"],
    ["claude-sonnet-4-5", "edit", "anthropic"],
    ["anthropic/Claude-Opus-4.1", "edit", "anthropic"],
    ["gemini-2.5-pro", "edit", "gemini"],
    ["qwen3-coder-480b", "edit", "openai"],
    ["llama-3.3-70b", "edit", "openai"]
  ] as const)("%s gets %s and the %s dialect", (model, edit, provider) => {
    const w = wiringFor(model)
    expect(w).toMatchObject({ model, edit, provider })
    expect(w.hide).toEqual([edit === "edit" ? "apply_patch" : "edit"])
  })

  it("takes the first matching rule of a custom table; no match falls back to the default catch-all", () => {
    const table = [
      { pattern: "my-patch-model*", edit: "apply_patch", provider: "openai-strict" },
      { pattern: "claude*", edit: "edit", provider: "anthropic" }
    ] as const
    expect(wiringFor("MY-PATCH-MODEL-v2", table)).toMatchObject({ edit: "apply_patch", provider: "openai-strict" })
    expect(wiringFor("deepseek-chat", table)).toMatchObject(DEFAULT_WIRING.at(-1)!)
    // Regex characters in a pattern are literal.
    expect(wiringFor("gpt-5x", [{ pattern: "gpt-5.", edit: "apply_patch", provider: "openai" }])).toMatchObject({
      edit: "edit"
    })
  })
})
