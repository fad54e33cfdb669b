/**
 * The engine of a route with no rules (an Orchestrator used on its own, a test, an embedder
 * without a policy): every call is allowed, and the tool's own checks still decide, since its
 * decision is the declaration's (not a rule's or a person's), so a tool that asks still asks.
 * A real PermissionEngineShape, so the call path gates every route the same way; it costs a
 * constant answer per call and holds nothing.
 */
import { Effect } from "effect"
import { ConfigError } from "../config/error.ts"
import type { Searchability } from "../tool/tool.ts"
import type { Decision, PermissionEngineShape, Policy } from "./engine.ts"

/** The policy name of the allow-all engine's decisions: no policy made them, so a result does not report them. */
export const NO_POLICY = "none"

const ALLOWED: Decision = {
  behavior: "allow",
  by: "declaration",
  policy: NO_POLICY,
  reason: "No permission rules apply here; the tool's own checks decide."
}
const allowed = Effect.succeed(ALLOWED)

/** Hides nothing. */
const everything: Searchability = () => "ok"

const open: Policy = { name: NO_POLICY, mode: "default", allow: [], ask: [], deny: [], tools: () => true }

const noProfiles = (name: string) =>
  Effect.fail(
    new ConfigError({ message: `profile "${name}": this tool system has no permission rules, so it has no profiles` })
  )

export const allowAllEngine: PermissionEngineShape = {
  decide: () => allowed,
  grant: () => Effect.void,
  profile: noProfiles,
  makeProfile: noProfiles,
  mode: "default",
  searchable: () => everything,
  alwaysRefused: () => undefined,
  project: open
}

/** Whether a searchability hides nothing (the allow-all engine's): a search need not consult it per file. */
export const hidesNothing = (s: Searchability): boolean => s === everything
