"""wasmwire: run untrusted JavaScript in WebAssembly children that call
your Python tools.

A model writes a short program instead of making dozens of tool calls;
wasmwire runs it in a QuickJS evaluator compiled to WebAssembly (wasmtime),
which can reach nothing but the tools you give it, under a budget: a wall
clock, a memory cap, a call quota and a byte quota.

.. code-block:: python

    import wasmwire

    sandbox = wasmwire.Sandbox()          # built once, shared

    def get_load(host: str) -> dict:
        return {"host": host, "load": 0.42}

    outcome = sandbox.run(
        'const r = await get_load("db1"); return r.load * 2',
        tools=[wasmwire.Tool(get_load, signature="get_load(host)")],
        budget=wasmwire.Budget(wall_clock=2.0, max_calls=10),
    )
    print(outcome.value)                  # 0.84

The rest of the interface: :class:`Sandbox` (``run``, ``run_async``,
``prompt``), :class:`Budget`, :class:`Outcome`, :class:`Tool` /
:func:`tool` / :class:`Tools`, :class:`ToolError` (raised by a tool to fail
with a class), and the exceptions for what cannot start
(:class:`SandboxError` and its subclasses).
"""

from ._errors import (
    KINDS,
    BudgetError,
    ExecutionError,
    ProgramError,
    SandboxError,
    ToolDefinitionError,
    ToolError,
    retryable,
)
from ._sandbox import DEFAULT_MAX_MEMORY, DEFAULT_WALL_CLOCK, Budget, Outcome, Sandbox
from ._tools import Tool, Tools, tool

__all__ = [
    "KINDS",
    "DEFAULT_MAX_MEMORY",
    "DEFAULT_WALL_CLOCK",
    "Budget",
    "BudgetError",
    "ExecutionError",
    "Outcome",
    "ProgramError",
    "Sandbox",
    "SandboxError",
    "Tool",
    "ToolDefinitionError",
    "ToolError",
    "Tools",
    "retryable",
    "tool",
]
