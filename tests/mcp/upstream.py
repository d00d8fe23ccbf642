"""The MCP tests' own upstream server (the official Python SDK's MCPServer,
formerly FastMCP), spoken to by `wasmwire mcp` as a client.

    python upstream.py                  stdio
    python upstream.py http PORT        streamable HTTP on 127.0.0.1:PORT/mcp

UPSTREAM_MARKS, when set, is a directory where `wait_forever` records that
it started and that it was cancelled, so a test can wait on those facts
instead of on time.
"""

import os
import sys
from pathlib import Path

from typing import Annotated

import anyio
from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult

server = MCPServer("upstream")


class Sum(BaseModel):
    """The sum of two numbers."""

    sum: int


@server.tool()
def add(a: int, b: int) -> Sum:
    """Adds two integers."""
    return Sum(sum=a + b)


@server.tool(name="get-user")
def get_user(user_id: str) -> str:
    """A user's name, as text. Fails `not_found` for anyone but u1."""
    if user_id != "u1":
        raise ToolError(f"kind: not_found\nno user {user_id}")
    return "Ada"


@server.tool()
def fail_plain() -> str:
    """Always fails, naming no kind."""
    raise ToolError("it broke")


@server.tool()
def crash() -> str:
    """Exits the whole server in the middle of the call."""
    sys.stdout.flush()
    os._exit(3)


@server.tool()
def pid() -> int:
    """This server process's id."""
    return os.getpid()


def _mark(name: str) -> None:
    marks = os.environ.get("UPSTREAM_MARKS")
    if marks:
        Path(marks, name).write_text("1")


@server.tool()
async def wait_forever() -> str:
    """Never answers; records its start and its cancellation."""
    _mark("started")
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        _mark("cancelled")
        raise
    return "unreachable"


@server.tool()
def deep(levels: int) -> CallToolResult:
    """An answer whose structured content nests `levels` lists deep."""
    value: object = 1
    for _ in range(levels):
        value = [value]
    return CallToolResult(content=[], structured_content={"v": value})


@server.tool()
def huge(n: int) -> str:
    """A text of `n` characters: past 16 MiB, an answer longer than rmcp reads."""
    return "h" * n


@server.tool()
def greet(
    # A pattern with a lookahead, in the schema only (pydantic itself, like
    # wasmwire, matches patterns with a linear-time engine, which has none).
    user: Annotated[str, Field(json_schema_extra={"pattern": "^(?!admin)[a-z]+$"})],
    times: int,
) -> str:
    """Greets `user` `times` times."""
    return " ".join([f"hi {user}"] * times)


@server.tool(name="delete")
def delete_tool() -> str:
    """A tool whose name is a reserved word in JavaScript."""
    return "deleted"


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
