"""The official Python MCP SDK (2.x, `mcp` on PyPI) as a client of `freecode-tools mcp`, both eras.

    python3 bench/python-sdk-client.py PROJECT_DIR [URL TOKEN]

For each protocol era (2025-11-25 with its `initialize` handshake, 2026-07-28 stateless) it
starts `freecode-tools mcp` over stdio in PROJECT_DIR (and, given the URL and token that
`freecode-tools mcp --http 0` printed there, connects over streamable HTTP too), then: lists the
tools, reads `hello.txt` (made here), writes a new file (no approval in the default mode),
writes into `.vscode/` (a control path: always asks) answering "Yes, this once", and writes
there again answering "No". The SDK's own elicitation handler answers both eras' questions: an
elicitation request in 2025, an InputRequiredResult retried with its requestState in 2026.

Prints one JSON line per run and exits 1 if any check failed. It needs the SDK importable
(`pip install 'mcp>=2'`); docs/mcp.md says how it was run on a machine without PyPI.
"""

import asyncio
import json
import os
import sys

import httpx2
import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

CLI = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "entry", "cli.js")


def text_of(result) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


class Person:
    """Answers each approval with the next choice given (matched against the form's options)."""

    def __init__(self) -> None:
        self.choice = "Yes, this once"
        self.asked = 0

    async def __call__(self, context, params):
        self.asked += 1
        props = (getattr(params, "requested_schema", None) or {}).get("properties", {})
        content = {}
        for key, schema in props.items():
            options = schema.get("enum") or [o.get("const") for o in schema.get("oneOf", [])]
            if options:
                content[key] = next(o for o in options if o == self.choice)
        return types.ElicitResult(action="accept", content=content)


async def run(server, mode: str, tag: str, root: str) -> dict:
    person = Person()
    checks = {}
    async with Client(server, mode=mode, elicitation_callback=person) as client:
        tools = await client.list_tools()
        checks["tools listed"] = any(t.name == "read" for t in tools.tools)
        read = await client.call_tool("read", {"filePath": "hello.txt"})
        checks["read"] = not read.is_error and "hello from python" in text_of(read)
        asked = person.asked
        plain = await client.call_tool("write", {"filePath": f"made-{tag}.txt", "content": tag})
        checks["plain write, not asked"] = not plain.is_error and person.asked == asked
        allowed = await client.call_tool("write", {"filePath": f".vscode/{tag}-yes.json", "content": "{}\n"})
        checks["control write asked once, allowed"] = (
            not allowed.is_error and person.asked == asked + 1 and os.path.exists(f"{root}/.vscode/{tag}-yes.json")
        )
        person.choice = "No"
        refused = await client.call_tool("write", {"filePath": f".vscode/{tag}-no.json", "content": "{}\n"})
        checks["control write refused"] = refused.is_error and not os.path.exists(f"{root}/.vscode/{tag}-no.json")
        protocol = client.protocol_version
    return {"run": tag, "protocol": protocol, "checks": checks, "ok": all(checks.values())}


async def main() -> int:
    root = os.path.realpath(sys.argv[1])
    url, token = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else (None, None)
    with open(f"{root}/hello.txt", "w") as f:
        f.write("hello from python\n")
    runs = []
    for mode in ["legacy", "2026-07-28"]:
        stdio = StdioServerParameters(command=os.environ.get("FREECODE_NODE", "node"), args=[CLI, "mcp"], cwd=root)
        runs.append(await run(stdio, mode, f"stdio-{mode}", root))
        if url:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
            runs.append(await run(streamable_http_client(url, http_client=http), mode, f"http-{mode}", root))
    for r in runs:
        print(json.dumps(r))
    return 0 if all(r["ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
