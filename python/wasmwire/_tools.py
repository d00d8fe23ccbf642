"""Python callables as tools a program can call.

A tool is a plain callable, sync or ``async def``. How the program's call
reaches it:

- **With a signature** (``signature="get_load(host)"`` or
  ``signature=["host"]``) the program calls ``get_load("db1")`` and the
  callable gets keyword arguments: ``get_load(host="db1")``. Arguments that
  do not bind to its parameters fail the call ``invalid``.
- **Without one** the program passes one value (usually an object) and the
  callable gets it decoded from JSON as its one positional argument:
  ``search({"q": "x"})`` calls ``search({"q": "x"})``. A call with no
  argument calls the callable with none.

The callable's return value is encoded as JSON (a ``str`` becomes a JS
string; ``None`` becomes ``null``); one that is not JSON-serialisable fails
the call ``unknown``. Raise :class:`ToolError` to fail with a class; any
other exception fails the call ``unknown`` with its type and message.

Sync tools run on a thread of the runtime's blocking pool (the GIL is held
only while they run). Async tools run on the event loop of the
``run_async`` that started the execution; under a sync ``run`` they run on
one background loop thread owned by this module. When a call's deadline
passes or its execution ends, an async tool's task is cancelled; a sync
tool cannot be interrupted and runs to its end, its answer discarded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from datetime import timedelta
from typing import Any, Union

from . import _native
from ._errors import ToolError

#: What a tool's callable may be: sync or async, any arguments.
ToolFunction = Callable[..., Any]


class Tool:
    """One tool: a callable and how the program sees it.

    ``name`` defaults to the callable's ``__name__`` and ``description`` to
    its docstring. ``params`` and ``result`` are JSON Schemas (as Python
    dicts): every call's args are checked against ``params`` before the
    callable runs (a call that does not fit fails ``invalid``, naming the
    field and the rule), and both appear in the program's declarations
    (:meth:`Tools.typescript`). ``timeout`` (seconds or a ``timedelta``)
    bounds each call: past it the call fails ``transient``. ``call_only``
    lets a name that cannot be a global (``search-docs``) be reached as
    ``host.call("search-docs", args)``.
    """

    __slots__ = (
        "fn",
        "name",
        "signature",
        "description",
        "params",
        "result",
        "timeout",
        "call_only",
        "is_async",
        "_binds",
    )

    def __init__(
        self,
        fn: ToolFunction,
        *,
        name: str | None = None,
        signature: str | Sequence[str] | None = None,
        description: str | None = None,
        params: Mapping[str, Any] | None = None,
        result: Mapping[str, Any] | None = None,
        timeout: float | timedelta | None = None,
        call_only: bool = False,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"a tool must be callable, not {type(fn).__name__}")
        self.fn = fn
        self.name: str = name if name is not None else getattr(fn, "__name__", "")
        if signature is not None and not isinstance(signature, str):
            signature = f"{self.name}({', '.join(signature)})"
        self.signature: str | None = signature
        self.description: str | None = (
            description if description is not None else inspect.getdoc(fn)
        )
        self.params = dict(params) if params is not None else None
        self.result = dict(result) if result is not None else None
        if isinstance(timeout, timedelta):
            timeout = timeout.total_seconds()
        self.timeout: float | None = float(timeout) if timeout is not None else None
        self.call_only = call_only
        self.is_async: bool = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)
        )
        try:
            sig: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = None
        self._binds = sig

    def __repr__(self) -> str:
        kind = "async " if self.is_async else ""
        return f"<wasmwire.Tool {kind}{self.signature or self.name}>"

    def _native_spec(self) -> tuple[Any, ...]:
        """What the native Tools registers (see python/src/tools.rs)."""
        dumps = json.dumps
        return (
            self.name,
            self.signature,
            self.description,
            dumps(self.params) if self.params is not None else None,
            dumps(self.result) if self.result is not None else None,
            self.timeout,
            self.call_only,
            self.is_async,
            self,
        )

    def _arguments(self, args_text: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call's args as the callable's arguments."""
        if not args_text.strip():
            args: tuple[Any, ...] = ()
            kwargs: dict[str, Any] = {}
        else:
            try:
                value = json.loads(args_text)
            except ValueError as e:
                raise ToolError("invalid", f"{self.name}: args are not JSON: {e}") from None
            if self.signature is not None and isinstance(value, dict):
                args, kwargs = (), value
            else:
                args, kwargs = (value,), {}
        if self._binds is not None:
            try:
                self._binds.bind(*args, **kwargs)
            except TypeError as e:
                raise ToolError("invalid", f"{self.name}: {e}") from None
        return args, kwargs

    def _invoke(self, args_text: str) -> tuple[bool, str, str]:
        """Runs a sync tool: ``(ok, value JSON or message, kind)``."""
        try:
            args, kwargs = self._arguments(args_text)
            value = self.fn(*args, **kwargs)
            if inspect.isawaitable(value):
                _discard(value)
                raise ToolError(
                    "unknown",
                    f"{self.name} returned an awaitable from a plain function; "
                    "declare it `async def`",
                )
            return _encoded(self.name, value)
        except ToolError as e:
            return (False, e.message, e.kind)
        except Exception as e:
            return (False, f"{type(e).__name__}: {e}", "unknown")

    async def _answer(self, args_text: str) -> tuple[bool, str, str]:
        """Runs an async tool, on its loop."""
        try:
            args, kwargs = self._arguments(args_text)
            value = await self.fn(*args, **kwargs)
            return _encoded(self.name, value)
        except ToolError as e:
            return (False, e.message, e.kind)
        except Exception as e:
            return (False, f"{type(e).__name__}: {e}", "unknown")

    def _schedule(
        self,
        args_text: str,
        loop: asyncio.AbstractEventLoop | None,
        answer: Callable[[tuple[bool, str, str]], None],
    ) -> concurrent.futures.Future[tuple[bool, str, str]]:
        """Schedules an async tool on ``loop`` (or the background loop);
        ``answer`` gets its answer, on the loop's thread."""
        coroutine = self._answer(args_text)
        try:
            future = asyncio.run_coroutine_threadsafe(coroutine, loop or _background_loop())
        except BaseException:
            coroutine.close()
            raise
        future.add_done_callback(lambda done: answer(_settled(done)))
        return future


def _encoded(name: str, value: Any) -> tuple[bool, str, str]:
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        return (False, f"{name}: the value is not JSON-serialisable: {e}", "unknown")
    return (True, text, "")


def _settled(done: concurrent.futures.Future[tuple[bool, str, str]]) -> tuple[bool, str, str]:
    if done.cancelled():
        return (False, "the tool's task was cancelled", "cancelled")
    error = done.exception()
    if error is not None:
        return (False, f"{type(error).__name__}: {error}", "unknown")
    return done.result()


def _discard(awaitable: Awaitable[Any]) -> None:
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()


_background: asyncio.AbstractEventLoop | None = None
_background_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    """The loop async tools run on under a sync ``run``: one daemon thread,
    started on first use."""
    global _background
    with _background_lock:
        if _background is None or _background.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="wasmwire-async-tools", daemon=True
            )
            thread.start()
            _background = loop
        return _background


def tool(
    fn: ToolFunction | None = None,
    *,
    name: str | None = None,
    signature: str | Sequence[str] | None = None,
    description: str | None = None,
    params: Mapping[str, Any] | None = None,
    result: Mapping[str, Any] | None = None,
    timeout: float | timedelta | None = None,
    call_only: bool = False,
) -> Any:
    """Makes a :class:`Tool` of a function; usable bare (``@tool``) or with
    the options of :class:`Tool` (``@tool(signature="get_load(host)")``)."""

    def make(f: ToolFunction) -> Tool:
        return Tool(
            f,
            name=name,
            signature=signature,
            description=description,
            params=params,
            result=result,
            timeout=timeout,
            call_only=call_only,
        )

    return make if fn is None else make(fn)


#: What ``tools=`` accepts: a :class:`Tools`, or tools and plain callables.
ToolsLike = Union["Tools", Iterable[Union[Tool, ToolFunction]], None]


class Tools:
    """A set of tools, registered once and shared by many executions.

    Built from :class:`Tool` objects and plain callables (a plain callable
    is ``Tool(fn)``). Registration checks every name, signature and schema
    and raises :class:`ToolDefinitionError` for the first bad one. Passing a
    list to ``Sandbox.run`` builds a ``Tools`` for that run; build one
    yourself to pay for it once.
    """

    __slots__ = ("_tools", "_native")

    def __init__(self, tools: Iterable[Tool | ToolFunction] = ()) -> None:
        self._tools = tuple(t if isinstance(t, Tool) else Tool(t) for t in tools)
        self._native = _native.Tools([t._native_spec() for t in self._tools])

    def typescript(self) -> str:
        """The TypeScript declarations a program is written against."""
        return self._native.typescript()

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def __repr__(self) -> str:
        return f"<wasmwire.Tools {', '.join(self._native.names())}>"


def _native_tools(tools: ToolsLike) -> _native.Tools:
    if isinstance(tools, Tools):
        return tools._native
    return Tools(tools or ())._native
