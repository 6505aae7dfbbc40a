#!/usr/bin/env python3
"""An MCP server on the official Python SDK (pip `mcp` 2.x), for lembas' tests.

  peer_server.py               serve on stdio
  peer_server.py http PORT     serve streamable HTTP on http://127.0.0.1:PORT/mcp

PEER_INSTRUCTIONS sets the server's instructions; PEER_DELAY_MS makes it slow to start.
"""
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import ToolAnnotations

delay = int(os.environ.get("PEER_DELAY_MS", "0"))
if delay:
    time.sleep(delay / 1000)

server = MCPServer("lembas-peer", instructions=os.environ.get("PEER_INSTRUCTIONS") or None)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Adds two whole numbers."""
    return a + b


@server.tool()
def note(text: str) -> str:
    """Keeps a note in the folder the server runs in, and says where."""
    with open("notes.txt", "a") as f:
        f.write(text + "\n")
    return f"noted in {os.path.join(os.getcwd(), 'notes.txt')}"


@server.tool()
def fail(why: str) -> str:
    """Always fails, with the reason given."""
    raise ToolError(why)


@server.tool()
def die() -> str:
    """Ends the server's process at once, as a crash would."""
    print("peer: dying on request", file=sys.stderr, flush=True)
    os._exit(3)


# The smallest PNG there is: one transparent pixel.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def snapshot() -> list:
    """Takes a picture of the screen (one pixel) and says so."""
    return ["One pixel, transparent.", Image(data=PIXEL, format="png")]


@server.tool()
def sleep(seconds: float) -> str:
    """Waits, then answers."""
    time.sleep(seconds)
    return "awake"


if len(sys.argv) > 2 and sys.argv[1] == "http":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
else:
    server.run()
