"""Python callables as tools a program can call.

A tool is a plain callable, sync or ``async def``. How the program's call
reaches it:

- **With a signature** (``signature="get_load(host)"`` or
  ``signature=["host"]``) the program calls ``get_load("db1")`` and the
  callable gets keyword arguments: ``get_load(host="db1")``. Arguments that
  do not bind to its parameters fail the call ``invalid``.
- **Derived from the callable**, when it gives none, has no ``params`` and
  is not ``call_only``, and every parameter is an ordinary one
  (positional-or-keyword or keyword-only) named as a JavaScript parameter
  may be: ``def get_logs(host, count)`` is ``get_logs(host, count)``, so
  the program calls ``get_logs("db1", 2)``, and a string stays a string.
  A one-parameter function gets the program's one value under its name.
  Either way, one plain object whose keys are all parameter names is the
  arguments by name: ``get_logs({host: "db1", count: 2})`` is the same
  call (so ``store({record: 5})`` of ``def store(record)`` gets
  ``record=5``).
- **Without one** the program passes one value (usually an object) and the
  callable gets it decoded from JSON as its one positional argument:
  ``search({"q": "x"})`` calls ``search({"q": "x"})``. A call with no
  argument calls the callable with none. The protocol sends a string
  argument as it is (for tools that take text): text that is JSON arrives
  decoded (``"123"`` as ``123``), any other text as the string.
  A ``""`` is no argument, as no argument is.
- ``host.call(name, args)`` sends ``args`` in that last form to any tool.
  With a signature an object is the keyword arguments (a derived one: only
  an object whose keys are all parameter names; any other is the one
  value), and anything else, ``host.call(name, "text")`` included, the one
  positional argument.

The callable's return value is encoded as JSON (a ``str`` becomes a JS
string; ``None`` becomes ``null``); one that is not JSON-serialisable fails
the call ``unknown``. Raise :class:`ToolError` to fail with a class; any
other exception fails the call ``unknown`` with its type and message.

Sync tools run on a thread of a pool of their own (the GIL is held only
while they run). Async tools run on the event loop of the ``run_async``
that started the execution; under a sync ``run`` they run on one
background loop thread owned by this module. When a call's deadline
passes or its execution ends, an async tool's task is cancelled; a sync
tool cannot be interrupted and runs to its end, its answer discarded, and
its call holds its thread until then: an execution's sync calls hold at
most ``max_in_flight`` threads (one more fails ``limit`` at once), and the
process's at most 512 (one more fails ``transient`` at once). See
python/README.md.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import inspect
import json
import os
import re
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
        "_parameters",
        "_named",
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
        self._named = name is not None
        if signature is not None and not isinstance(signature, str):
            signature = f"{self.name}({', '.join(signature)})"
        self.signature: str | None = signature
        self.description: str | None = (
            description if description is not None else inspect.getdoc(fn)
        )
        self.params = dict(params) if params is not None else None
        self.result = dict(result) if result is not None else None
        self.timeout: float | None = _seconds("timeout", timeout)
        self.call_only = call_only
        self.is_async: bool = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)
        )
        try:
            sig: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = None
        self._binds = sig
        self._parameters = _parameter_names(sig)

    def __repr__(self) -> str:
        kind = "async " if self.is_async else ""
        return f"<wasmwire.Tool {kind}{self._signature() or self.name}>"

    def _derives(self) -> bool:
        """Whether the signature is the callable's own parameter names: it
        gives none, has no ``params`` schema (whose properties would be the
        args) and is called by name (a call-only tool is reached only
        through ``host.call``, which passes one value as it is)."""
        return (
            self.signature is None
            and self.params is None
            and not self.call_only
            and self._parameters is not None
        )

    def _signature(self) -> str | None:
        """The signature the program calls: the one given, or the one
        derived from the callable's parameters (see :meth:`_derives`)."""
        if self._derives():
            return f"{self.name}({', '.join(self._parameters or ())})"
        return self.signature

    def _native_spec(self) -> tuple[Any, ...]:
        """What the native Tools registers (see python/src/tools.rs)."""
        if not self._named and (
            not self.name or not (self.call_only or self.name.isidentifier())
        ):
            # A lambda is "<lambda>", a functools.partial has no name: the
            # library's refusal would not say that the name is not the user's.
            raise ToolDefinitionError(
                f"tool {self.fn!r} has no name a program can call it by ({self.name!r}): "
                'give it one with Tool(fn, name="..."), and call_only=True if that name '
                "cannot be a global (a program reaches it as host.call(name, args))",
                tool=self.name,
            )
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
            self._signature(),
            self.description,
            dumps("params", self.params),
            dumps("result", self.result),
            self.timeout,
            self.call_only,
            self.is_async,
            self,
        )

    def _arguments(self, args_text: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call's args as the callable's arguments.

        The protocol sends a program's string argument as it is (for tools
        that take text, as shell commands do), anything else as its JSON
        text, so the text that is not JSON is the string the program passed:
        it is the one argument. No args (``undefined``) are no argument.
        """
        if not args_text:
            return self._bound((), {})
        try:
            value = json.loads(args_text)
        except ValueError:
            return self._bound((args_text,), {})
        except RecursionError:
            raise ToolError(
                "invalid",
                f"{self.name}: the args nest deeper than Python's JSON decoder can read",
            ) from None
        if self._signature() is not None and isinstance(value, dict):
            if self._derives() and not value.keys() <= set(self._parameters or ()):
                # A key that is no parameter's: the program's call of the
                # function sends only parameters, so this is
                # `host.call(name, {...})` passing one value, which the
                # callable gets as it would without a signature.
                return self._bound((value,), {})
            return self._bound((), value)
        return self._bound((value,), {})

    def _bound(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``args`` and ``kwargs``, if the callable takes them; else the
        call fails ``invalid``, naming what did not bind."""
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
            return _deliverable((False, e.message, e.kind))
        except BaseException as e:  # noqa: BLE001 - a tool's SystemExit is its failure
            # On a worker thread no signal raises here: whatever came, the
            # tool raised, and it is described as an async tool's is.
            return _deliverable((False, _describe(e), "unknown"))

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
        future.add_done_callback(lambda done: _deliver(answer, done))
        return future


def _deliver(
    answer: Callable[[tuple[bool, str, str]], None],
    done: concurrent.futures.Future[tuple[bool, str, str]],
) -> None:
    """Hands an async tool's answer to the call. Whatever fails on the way
    is the call's `unknown` failure: an exception left in this callback is
    only logged, and the program would wait for its wall clock."""
    try:
        answer(_deliverable(_settled(done)))
    except BaseException as e:  # noqa: BLE001 - handed on as the answer
        try:
            message = _deliverable((False, _describe(e), "unknown"))[1]
        except BaseException:  # noqa: BLE001
            message = type(e).__name__
        answer((False, f"the tool's answer could not be delivered: {message}", "unknown"))


#: Words JavaScript reserves, which a signature's parameter may not be
#: (the library's own list): a callable with a parameter of these names
#: gets no derived signature.
_RESERVED_WORDS = frozenset(_native.RESERVED_WORDS)


def _parameter_names(sig: inspect.Signature | None) -> tuple[str, ...] | None:
    """The names a signature is derived from, when every parameter of the
    callable is an ordinary one (positional-or-keyword or keyword-only, so
    that it can be passed by name) whose name a JavaScript function's
    parameter can have; ``None`` otherwise (positional-only, ``*args``,
    ``**kwargs``, a reserved word, or no signature to read).

    Only what the program could set before there was a derived signature,
    or must set: the first parameter (which got the program's one value)
    and those without a default. A default, or an argument a
    ``functools.partial`` froze (it shows as a keyword-only default), is
    the host's choice, which the program must not override:
    ``partial(delete_file, dry_run=True)`` stays a dry run, and
    ``def read(path, root="/srv")`` keeps its root."""
    if sig is None:
        return None
    ordinary = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    names = []
    for at, parameter in enumerate(sig.parameters.values()):
        if parameter.kind not in ordinary or parameter.name in _RESERVED_WORDS:
            return None
        first = at == 0 and parameter.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
        if first or parameter.default is inspect.Parameter.empty:
            names.append(parameter.name)
    return tuple(names)


#: A surrogate code point: Python text may hold one alone (from
#: ``surrogateescape``, or ``"\udce9"`` itself); UTF-8 text, which is what
#: crosses to Rust, cannot.
_SURROGATE = re.compile("[\ud800-\udfff]")


#: The most a frame carries (wire's ``MAX_FRAME_BYTES``): a value's JSON
#: past it is refused by the parent whatever it holds.
_MAX_FRAME = 16 * 1024 * 1024

#: The characters ``json.dumps`` writes escaped, and how long each becomes.
_ESCAPES = [(chr(c), 6) for c in range(0x20) if chr(c) not in "\b\f\n\r\t"] + [
    (c, 2) for c in '"\\\b\f\n\r\t'
]


def _too_long_as_json(value: str) -> int | None:
    """The length of ``value`` as a JSON string, when it is past a frame;
    counted, not written: escaping makes six characters of a control
    character, and 64 tools returning 16 MB of them made 6 GB of JSON at
    once, before the parent could refuse any."""
    if len(value) * 6 + 2 <= _MAX_FRAME:
        return None
    length = len(value) + 2 + sum(value.count(c) * (w - 1) for c, w in _ESCAPES)
    return length if length > _MAX_FRAME else None


def _encoded(name: str, value: Any) -> tuple[bool, str, str]:
    if isinstance(value, str) and (length := _too_long_as_json(value)) is not None:
        return (
            False,
            f"{name}: the value, {len(value)} characters of text, is at least {length} "
            f"characters as a JSON string: more than a frame carries ({_MAX_FRAME} bytes)",
            "limit",
        )
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        return (False, f"{name}: the value is not JSON-serialisable: {e}", "unknown")
    # A surrogate can only be inside a JSON string here, where its escape
    # means the same code unit: the program's JSON.parse makes the same JS
    # string of it (JS strings are UTF-16 and may hold one alone).
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return (True, text, "")


def _deliverable(answered: tuple[bool, str, str]) -> tuple[bool, str, str]:
    """An answer that can cross to Rust: a failure's message with a lone
    surrogate is repaired (U+FFFD; a pair becomes its character). A value's
    are escaped already (:func:`_encoded`)."""
    ok, text, kind = answered
    if not ok and _SURROGATE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return (ok, text, kind)


def _settled(done: concurrent.futures.Future[tuple[bool, str, str]]) -> tuple[bool, str, str]:
    if done.cancelled():
        return (False, "the tool's task was cancelled", "cancelled")
    error = done.exception()
    if error is not None:
        return (False, _describe(error), "unknown")
    return done.result()


def _seconds(name: str, value: float | timedelta | None) -> float | None:
    """A duration given as seconds or a timedelta, as seconds; ``None`` as
    it is. A bool is refused (``True`` read as one second), as a budget's
    items refuse it."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be seconds or a timedelta, not {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} is past any duration (too large for a float)") from None


def _describe(error: BaseException) -> str:
    """``Type: message`` of a tool's exception, even when reading its
    message raises, ``SystemExit`` or ``KeyboardInterrupt`` too: they
    escaped to the caller's event loop and stopped it, or named themselves
    in place of the exception the tool raised. The text is made of plain
    ``str``s, so that no ``__format__`` or ``__add__`` of the tool's runs."""
    try:
        text = str.__str__(str(error))
    except BaseException as e:  # noqa: BLE001
        text = "(its message could not be read: " + _type_name(e) + ")"
    return _type_name(error) + ": " + text


def _type_name(value: object) -> str:
    """The name of ``value``'s type, as a plain ``str``, whatever its
    metaclass does."""
    try:
        return str.__str__(type(value).__name__)
    except BaseException:  # noqa: BLE001
        return "an exception"


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
_background_thread: threading.Thread | None = None
_background_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    """The loop async tools run on under a sync ``run``: one daemon thread,
    started on first use."""
    global _background, _background_thread
    with _background_lock:
        if _background is None or _background.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=_serve_forever, args=(loop,), name="wasmwire-async-tools", daemon=True
            )
            thread.start()
            _background, _background_thread = loop, thread
        return _background


def _on_background_loop() -> bool:
    """Whether this thread is the background loop's: an async tool of a
    sync ``run`` is running here. A sync ``run`` made here blocks the loop,
    so async tools of its own would wait for it for ever."""
    return _background_thread is not None and threading.current_thread() is _background_thread


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
    global _background, _background_thread, _background_lock
    _background = None
    _background_thread = None
    _background_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_background)


# Sync tools run on the runtime's threads, which the interpreter does not
# know of: one still running (its call may have given up long ago) when the
# interpreter finalizes aborts the process. As the interpreter waits for
# its non-daemon threads at exit, this waits for the sync tools running
# (without the GIL), and no tool starts after it (python/src/lib.rs).
atexit.register(_native.shutdown)


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


def _tools_of(tools: ToolsLike) -> Tools:
    return tools if isinstance(tools, Tools) else Tools(tools or ())


def _native_tools(tools: ToolsLike) -> _native.Tools:
    return _tools_of(tools)._native
