"""The exceptions of wasmwire.

Two families, kept apart on purpose:

- An execution that **cannot start** raises a :class:`SandboxError`
  (a budget the backend cannot hold, a program too large to send, a tool
  that cannot be registered). Nothing ran.
- Everything that happens **once it has started** ends in an
  :class:`~wasmwire.Outcome` (its ``kind`` and ``message`` say how it
  failed); :meth:`Outcome.unwrap` turns a failure into an
  :class:`ExecutionError` for callers who prefer exceptions.

A tool fails a call with a chosen class by raising :class:`ToolError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _native

#: The closed set of failure classes, from the protocol's one table.
KINDS: tuple[str, ...] = tuple(name for name, _, _ in _native.KINDS)
_RETRYABLE: frozenset[str] = frozenset(name for name, retryable, _ in _native.KINDS if retryable)


def retryable(kind: str | None) -> bool:
    """Whether a failure of class ``kind`` may succeed if tried again."""
    return kind in _RETRYABLE


def _rebuilt(cls: Callable[..., Any], args: tuple[Any, ...], named: dict[str, Any]) -> Any:
    """``cls(*args, **named)``: what ``__reduce__`` names to make a value
    again whose class takes named items (for pickle and copy: a process
    pool hands errors back to its parent)."""
    return cls(*args, **named)


class SandboxError(Exception):
    """An execution could not start (or a sandbox could not be built)."""


class BudgetError(SandboxError, ValueError):
    """A budget item is malformed, or more than the backend can hold.

    ``item`` names it (``wall_clock``, ``max_memory``, ``max_calls``,
    ``max_bytes``); ``asked`` and ``most`` are set when the backend holds
    the item only up to a ceiling.
    """

    def __init__(
        self, message: str, *, item: str, asked: int | None = None, most: int | None = None
    ) -> None:
        super().__init__(message)
        self.item = item
        self.asked = asked
        self.most = most

    def __reduce__(self) -> tuple[Any, ...]:
        named = {"item": self.item, "asked": self.asked, "most": self.most}
        return (_rebuilt, (type(self), (str(self),), named))


class ProgramError(SandboxError, ValueError):
    """The program cannot be sent: too large for a frame, or not UTF-8 text."""


class ToolDefinitionError(SandboxError, ValueError):
    """A tool cannot be registered: a name a program could not call, a bad
    signature or schema, a name taken twice. ``tool`` names it."""

    def __init__(self, message: str, *, tool: str) -> None:
        super().__init__(message)
        self.tool = tool

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (type(self), (str(self),), {"tool": self.tool}))


class ToolError(Exception):
    """Raised by a tool to fail a call with a failure class.

    The program's ``await`` rejects with a ``ToolError`` of the same
    ``kind`` and ``message``. ``kind`` must be one of :data:`KINDS`; any
    other exception a tool raises fails the call ``unknown``.
    """

    def __init__(self, kind: str, message: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown failure kind {kind!r}; one of {', '.join(KINDS)}")
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kind, self.message))

    @property
    def retryable(self) -> bool:
        """Whether the program may retry the call."""
        return retryable(self.kind)


class ExecutionError(Exception):
    """Why an execution has no value (:meth:`Outcome.unwrap`).

    ``kind`` is the failure class, ``None`` when the child broke the
    protocol.
    """

    def __init__(self, kind: str | None, message: str) -> None:
        super().__init__(f"{kind or 'protocol violation'}: {message}")
        self.kind = kind
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kind, self.message))

    @property
    def retryable(self) -> bool:
        """Whether running the program again may succeed."""
        return retryable(self.kind)
