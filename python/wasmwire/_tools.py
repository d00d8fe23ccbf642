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
import os
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from datetime import timedelta
from typing import Any, Union

from . import _native
from ._errors import ToolDefinitionError, ToolError

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
        for field in ("name", "signature", "description"):
            text = getattr(self, field)
            if isinstance(text, str):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as e:
                    raise ToolDefinitionError(
                        f"tool {self.name!r}: its {field} is not UTF-8 text: {e}", tool=self.name
                    ) from None

        def dumps(which: str, schema: dict[str, Any] | None) -> str | None:
            if schema is None:
                return None
            try:
                return json.dumps(schema, allow_nan=False)
            except (TypeError, ValueError) as e:
                raise ToolDefinitionError(
                    f"tool {self.name!r}: the {which} schema is not JSON: {e}", tool=self.name
                ) from None

        return (
            self.name,
            self.signature,
            self.description,
            dumps("params", self.params),
            dumps("result", self.result),
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
            except RecursionError:
                raise ToolError(
                    "invalid",
                    f"{self.name}: the args nest deeper than Python's JSON decoder can read",
                ) from None
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
            return (False, _describe(e), "unknown")

    async def _answer(self, args_text: str) -> tuple[bool, str, str]:
        """Runs an async tool, on its loop."""
        try:
            args, kwargs = self._arguments(args_text)
            value = await self.fn(*args, **kwargs)
            return _encoded(self.name, value)
        except ToolError as e:
            return (False, e.message, e.kind)
        except asyncio.CancelledError:
            # The call's deadline or the execution's end cancelled the task:
            # that is how it ends. A tool that raised it of its own accord
            # failed like any other.
            if _being_cancelled():
                raise
            return (False, "CancelledError: the tool raised it; nothing cancelled it", "unknown")
        except BaseException as e:  # noqa: BLE001 - a tool's SystemExit is its failure
            # As for a sync tool: KeyboardInterrupt or SystemExit raised by
            # a tool fails its call. Left to the loop, it would stop the
            # loop (asyncio re-raises them), and with it every async tool.
            return (False, _describe(e), "unknown")

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
        return (False, _describe(error), "unknown")
    return done.result()


def _describe(error: BaseException) -> str:
    """``Type: message`` of a tool's exception, even when its ``str`` raises."""
    try:
        text = str(error)
    except Exception as e:  # noqa: BLE001
        text = f"(its message could not be read: {type(e).__name__})"
    return f"{type(error).__name__}: {text}"


def _being_cancelled() -> bool:
    """Whether the running task was asked to cancel (Python 3.11's
    ``Task.cancelling``; before it, any CancelledError counts as a cancel)."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or cancelling() > 0


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
                target=_serve_forever, args=(loop,), name="wasmwire-async-tools", daemon=True
            )
            thread.start()
            _background = loop
        return _background


def _serve_forever(loop: asyncio.AbstractEventLoop) -> None:
    """Runs the background loop for the life of the process. asyncio lets
    a KeyboardInterrupt or SystemExit raised in a callback out of
    ``run_forever``; the loop is run again, so that one callback cannot
    leave every later async tool waiting for a loop that no thread runs."""
    while not loop.is_closed():
        try:
            loop.run_forever()
        except BaseException:  # noqa: BLE001, S112 - the loop must go on
            continue
        return


def _forget_background() -> None:
    """In a forked child: the parent's loop thread is not there, so the
    first async tool starts a loop of the child's own."""
    global _background, _background_lock
    _background = None
    _background_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_background)


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
