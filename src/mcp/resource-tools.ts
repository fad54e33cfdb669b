/**
 * MCP resources as tools, through the one call path: `list_mcp_resources` (what the connected
 * servers offer: resources and templates) and `read_mcp_resource` (one URI from one server).
 * McpClients registers them only while some connected server has resources. Listing only reads
 * names, so it runs without asking; reading brings a server's content into the conversation,
 * so it asks unless a rule allows that server (`read_mcp_resource(server:docs)`,
 * docs/permissions.md) — the servers a read touches are what it declares.
 */
import { Effect, Schema } from "effect"
import { fail } from "../tool/errors.ts"
import { defineTool } from "../tool/tool.ts"
import type { McpLink } from "./link.ts"
import { LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL } from "./resource-names.ts"
import { describeListing, listResources, listResourceTemplates, readResource } from "./resources.ts"

/** The connected servers that have resources, in config order. */
export type ResourceServers = () => ReadonlyArray<McpLink>

const unknownServer = (name: string, servers: ReadonlyArray<McpLink>) =>
  fail(
    `No connected MCP server named "${name}" has resources. ${
      servers.length === 0 ? "None has now." : `Servers with resources: ${servers.map((s) => s.server).join(", ")}.`
    }`
  )

const ListParameters = Schema.Struct({
  server: Schema.optionalKey(
    Schema.String.annotate({ description: "Only this MCP server's resources (default: every server's)." })
  )
})

export const makeListResourcesTool = (servers: ResourceServers) =>
  defineTool({
    id: LIST_RESOURCES_TOOL,
    // Comes and goes with servers: sorted with their tools, after the fixed ones.
    source: "mcp",
    description: `List the resources (files, documents, records) that connected MCP servers offer, and their URI templates. Read one with ${READ_RESOURCE_TOOL}.`,
    parameters: ListParameters,
    concurrencySafe: true,
    mutates: false,
    retrySafe: true,
    interruptBehavior: "cancel",
    timeout: "2 minutes",
    permissions: { operations: ["mcp.call"] },
    execute: ({ server }) =>
      Effect.gen(function* () {
        const all = servers()
        const chosen = server === undefined ? all : all.filter((s) => s.server === server)
        if (chosen.length === 0) return yield* unknownServer(server ?? "", all)
        const sections = yield* Effect.forEach(
          chosen,
          (link) =>
            Effect.all([listResources(link), listResourceTemplates(link)]).pipe(
              Effect.map(([resources, templates]) => `${link.server}:\n${describeListing(resources, templates)}`),
              // One server failing leaves the others' lists.
              Effect.catch((e) => Effect.succeed(`${link.server}: listing failed: ${e.message}`))
            ),
          { concurrency: "unbounded" }
        )
        return { title: "MCP resources", output: sections.join("\n\n") }
      })
  })

const ReadParameters = Schema.Struct({
  server: Schema.String.annotate({ description: "The MCP server, as list_mcp_resources names it." }),
  uri: Schema.String.annotate({ description: "The resource's URI (a template's placeholders filled in)." })
})

export const makeReadResourceTool = (servers: ResourceServers) =>
  defineTool({
    id: READ_RESOURCE_TOOL,
    source: "mcp",
    description: `Read one resource of a connected MCP server by its URI (from ${LIST_RESOURCES_TOOL}, a filled-in template, or a resource link in a tool's answer).`,
    parameters: ReadParameters,
    concurrencySafe: true,
    mutates: false,
    retrySafe: true,
    interruptBehavior: "cancel",
    timeout: "10 minutes",
    permissions: { operations: ["mcp.resource"], requiresApproval: true },
    // What the rules see: the server whose content comes in.
    paths: ({ server }) => [server],
    execute: ({ server, uri }, ctx) =>
      Effect.suspend(() => {
        const all = servers()
        const link = all.find((s) => s.server === server)
        return link === undefined
          ? Effect.fail(unknownServer(server, all))
          : readResource(link, uri, ctx.canSeeImages, ctx.sessionId)
      })
  })
