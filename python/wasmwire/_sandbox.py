"""The Sandbox, its budgets and the outcome of an execution."""

from __future__ import annotations

import asyncio
import json
import math
import sys
from datetime import timedelta
from typing import Any, ClassVar

from . import _native
from ._errors import (
    BudgetError,
    ExecutionError,
    ProgramError,
    SandboxError,
    _rebuilt,
    retryable,
)
from ._tools import ToolsLike, Tools, _native_tools, _on_background_loop, _seconds, _tools_of

#: The wall clock of a budget that does not set one: 10 s.
DEFAULT_WALL_CLOCK: float = _native.DEFAULT_WALL_CLOCK
#: The memory cap of a budget that does not set one: 64 MiB.
DEFAULT_MAX_MEMORY: int = _native.DEFAULT_MAX_MEMORY

_U64 = (1 << 64) - 1
#: A duration's limit: whole seconds must fit 64 bits.
_MAX_SECONDS = float(1 << 64)


class Budget:
    """What one execution may spend. Each item 0 means no limit on it.

    The default is safe, not unlimited: a 10 s wall clock and 64 MiB, no
    call or byte quota. No limit at all is :attr:`Budget.UNLIMITED`.

    - ``wall_clock``: seconds (``float``) or a ``timedelta``, for the whole
      execution.
    - ``max_memory``: bytes the child may use (at most the pool's slot,
      1 GiB by default; more raises :class:`BudgetError` when run).
    - ``max_calls``: tool calls the parent accepts.
    - ``max_bytes``: bytes of tool values the parent sends to the program.

    A negative, non-finite or non-integer item raises :class:`BudgetError`
    here, naming it. A positive ``wall_clock`` too short for a nanosecond
    is a nanosecond, never 0 (none).
    """

    __slots__ = ("wall_clock", "max_memory", "max_calls", "max_bytes")

    UNLIMITED: ClassVar[Budget]

    wall_clock: float
    max_memory: int
    max_calls: int
    max_bytes: int

    def __init__(
        self,
        *,
        wall_clock: float | timedelta = DEFAULT_WALL_CLOCK,
        max_memory: int = DEFAULT_MAX_MEMORY,
        max_calls: int = 0,
        max_bytes: int = 0,
    ) -> None:
        if isinstance(wall_clock, timedelta):
            wall_clock = wall_clock.total_seconds()
        if isinstance(wall_clock, bool) or not isinstance(wall_clock, (int, float)):
            raise BudgetError(
                f"wall_clock must be seconds or a timedelta, not {type(wall_clock).__name__}",
                item="wall_clock",
            )
        if not math.isfinite(wall_clock) or not 0 <= wall_clock < _MAX_SECONDS:
            raise BudgetError(
                f"wall_clock must be finite, at least 0 and under 2**64 seconds, not {wall_clock}",
                item="wall_clock",
            )
        object.__setattr__(self, "wall_clock", float(wall_clock))
        for item, value in (
            ("max_memory", max_memory),
            ("max_calls", max_calls),
            ("max_bytes", max_bytes),
        ):
            if isinstance(value, bool) or not isinstance(value, int):
                raise BudgetError(
                    f"{item} must be an int, not {type(value).__name__}", item=item
                )
            if not 0 <= value <= _U64:
                raise BudgetError(f"{item} must be between 0 and 2**64 - 1, not {value}", item=item)
            object.__setattr__(self, item, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Budget is immutable; make another")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Budget):
            return NotImplemented
        return self._args() == other._args()

    def __hash__(self) -> int:
        return hash(self._args())

    def __repr__(self) -> str:
        return (
            f"Budget(wall_clock={self.wall_clock!r}, max_memory={self.max_memory!r}, "
            f"max_calls={self.max_calls!r}, max_bytes={self.max_bytes!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Copied and pickled by its items (the default restores the slots
        # one by one, which an immutable Budget refuses).
        named = {
            "wall_clock": self.wall_clock,
            "max_memory": self.max_memory,
            "max_calls": self.max_calls,
            "max_bytes": self.max_bytes,
        }
        return (_rebuilt, (Budget, (), named))

    def _args(self) -> tuple[float, int, int, int]:
        """What the native side takes."""
        return (self.wall_clock, self.max_calls, self.max_bytes, self.max_memory)


def _budget_args(budget: Budget | None) -> tuple[float, int, int, int]:
    if budget is None:
        return _DEFAULT_ARGS
    if not isinstance(budget, Budget):
        raise TypeError(
            f"budget must be a wasmwire.Budget (Budget(wall_clock=..., ...)), "
            f"not {type(budget).__name__}"
        )
    return budget._args()


Budget.UNLIMITED = Budget(wall_clock=0, max_memory=0)
_DEFAULT_ARGS = Budget()._args()


class Outcome:
    """How an execution ended: always exactly one of these.

    ``ok`` and ``value`` (the program's value decoded from JSON, ``None``
    for nothing) when it finished; otherwise ``kind`` (the failure class,
    ``None`` when the child broke the protocol) and ``message``. Always:
    ``console`` (its console output, capped), ``calls`` and ``bytes`` (the
    parent's counts of tool calls accepted and value bytes sent),
    ``elapsed`` (seconds), ``counts_disagree`` (the child's own counts
    cannot be true: fewer calls, or more bytes, than the parent's) and ``held_peak`` (the most bytes the parent held for it).

    A value nested deeper than Python's JSON decoder recurses (about 1,000
    levels: the interpreter's recursion limit) cannot be handed over: the
    outcome is then an ``invalid`` failure that says so.
    """

    __slots__ = (
        "ok",
        "value",
        "kind",
        "message",
        "console",
        "calls",
        "bytes",
        "elapsed",
        "counts_disagree",
        "held_peak",
    )

    ok: bool
    value: Any
    kind: str | None
    message: str | None
    console: str
    calls: int
    bytes: int
    elapsed: float
    counts_disagree: bool
    held_peak: int

    def __init__(self, native: tuple[Any, ...]) -> None:
        (
            self.ok,
            value,
            self.kind,
            self.message,
            self.console,
            self.calls,
            self.bytes,
            self.elapsed,
            self.counts_disagree,
            self.held_peak,
        ) = native
        self.value = None
        if value is not None:
            # The parent checked that the value is JSON; it may still nest
            # deeper than Python's decoder recurses (its recursion limit).
            # Then the program's value cannot be handed over, and the
            # execution is a failure that says so, as the CLI's and the MCP
            # server's are.
            try:
                self.value = json.loads(value)
            except RecursionError:
                self.ok, self.kind = False, "invalid"
                self.message = (
                    "the program's value nests deeper than Python's JSON decoder can read "
                    f"(its recursion limit is {sys.getrecursionlimit()}); return a flatter value"
                )

    @property
    def retryable(self) -> bool:
        """Whether running the program again may succeed (its kind says so)."""
        return retryable(self.kind)

    @property
    def protocol_violation(self) -> bool:
        """Whether the execution ended because the child broke the protocol."""
        return not self.ok and self.kind is None

    def unwrap(self) -> Any:
        """The value, or :class:`ExecutionError` with the kind and message."""
        if not self.ok:
            raise ExecutionError(self.kind, self.message or "")
        return self.value

    def __repr__(self) -> str:
        if self.ok:
            return f"<Outcome ok value={self.value!r} calls={self.calls} bytes={self.bytes}>"
        return f"<Outcome {self.kind or 'protocol violation'}: {self.message!r} calls={self.calls}>"


class Sandbox:
    """Runs untrusted programs in WebAssembly children and serves their
    tool calls from Python.

    Built once (the engine, the compiled guest and its pre-instantiation
    are shared) and shared by every thread and task: run as many executions
    at once as you like. The options are the library's
    ``SandboxOptions``: ``max_in_flight`` calls at once per execution (and
    threads its sync tools hold at once, calls given up on whose tool still
    runs included: python/README.md),
    ``max_call_deadline`` (seconds, ``None`` for none; 0 would fail every
    call and raises ``ValueError``) for any one call, ``console_cap`` bytes
    of console kept per execution, ``max_held`` bytes the parent holds at
    most for one execution.
    """

    __slots__ = ("_native", "__weakref__")

    def __init__(
        self,
        *,
        max_in_flight: int = 64,
        max_call_deadline: float | timedelta | None = None,
        console_cap: int = 1 << 20,
        max_held: int = 64 << 20,
    ) -> None:
        for name, value, least in (
            ("max_in_flight", max_in_flight, 1),
            ("console_cap", console_cap, 0),
            ("max_held", max_held, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
            if not least <= value <= _U64:
                why = " (0 would refuse every tool call)" if least else ""
                raise ValueError(f"{name} must be between {least} and 2**64 - 1, not {value}{why}")
        self._native = _native.Sandbox(
            max_in_flight, _seconds("max_call_deadline", max_call_deadline), console_cap, max_held
        )

    @property
    def running(self) -> int:
        """Executions started and not yet ended."""
        return self._native.running

    def run(
        self,
        program: str,
        *,
        tools: ToolsLike = None,
        budget: Budget | None = None,
        language: str | None = None,
    ) -> Outcome:
        """Runs ``program`` to its end, blocking this thread (without the GIL).

        ``language`` is ``"javascript"`` (the default) or ``"typescript"``.
        A Ctrl-C (KeyboardInterrupt) cancels the execution, waits for it to
        end (a few ms) and is raised. Raises :class:`SandboxError` only when
        the execution cannot start.
        """
        if _on_background_loop():
            # Whatever its own tools: it blocks the one loop every async
            # tool of every sync run waits on, its own (through a sync tool
            # that runs a sandbox in turn) and other executions' alike.
            raise SandboxError(
                "Sandbox.run was called from an async tool of a sync run: it would block "
                "the loop that every async tool of a sync run waits on; make the tool "
                "`await sandbox.run_async(...)` instead"
            )
        native = _tools_of(tools)._native
        args = _budget_args(budget)
        try:
            ended = self._native.run(program, native, args, language)
        except UnicodeEncodeError as e:
            raise ProgramError(f"the program is not UTF-8 text: {e}") from None
        return Outcome(ended)

    async def run_async(
        self,
        program: str,
        *,
        tools: ToolsLike = None,
        budget: Budget | None = None,
        language: str | None = None,
    ) -> Outcome:
        """Runs ``program`` without blocking the event loop.

        Async tools run on this loop; sync tools on a worker thread.
        Cancelling the awaiting task cancels the execution.
        """
        native = _native_tools(tools)
        args = _budget_args(budget)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Outcome] = loop.create_future()

        def deliver(ok: bool, payload: Any) -> None:
            # Called from a runtime thread when the execution has ended.
            loop.call_soon_threadsafe(_settle, future, ok, payload)

        try:
            running = self._native.spawn(program, native, args, language, loop, deliver)
        except UnicodeEncodeError as e:
            raise ProgramError(f"the program is not UTF-8 text: {e}") from None
        try:
            return await future
        except BaseException:
            # Cancelled, or the coroutine closed or destroyed with its loop
            # (GeneratorExit, not CancelledError): the execution must not
            # run on for no one. (One that ended already is left as it is.)
            running.cancel()
            raise

    def prompt(self, tools: ToolsLike = None, budget: Budget | None = None) -> str:
        """What a model needs to write a program for this sandbox: the rules,
        ``budget``'s limits and the tools' declarations."""
        return self._native.prompt(_native_tools(tools), _budget_args(budget))

    def __repr__(self) -> str:
        return f"<wasmwire.Sandbox running={self.running}>"


def _settle(future: asyncio.Future[Outcome], ok: bool, payload: Any) -> None:
    if future.done():  # cancelled by the caller: nobody is waiting
        return
    if not ok:
        future.set_exception(payload)
        return
    # Whatever reading the outcome raises goes to the awaiting task: an
    # exception left in this callback would leave it waiting for ever.
    try:
        outcome = Outcome(payload)
    except BaseException as e:  # noqa: BLE001 - handed on, not swallowed
        future.set_exception(e)
        return
    future.set_result(outcome)


