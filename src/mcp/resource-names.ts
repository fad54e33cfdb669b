/** The names of the tools that give the model MCP resources (resource-tools.ts). */
export const LIST_RESOURCES_TOOL = "list_mcp_resources"
export const READ_RESOURCE_TOOL = "read_mcp_resource"
