"""Stubs of the extension module (python/src): the package's own modules
wrap it, and nothing outside the package should need it."""

from collections.abc import Callable
from typing import Any

KINDS: list[tuple[str, bool, str]]
DEFAULT_WALL_CLOCK: float
DEFAULT_MAX_MEMORY: int
RESERVED_WORDS: list[str]

_BudgetArgs = tuple[float, int, int, int]
_OutcomeTuple = tuple[
    bool, str | None, str | None, str | None, str, int, int, float, bool, int
]

def shutdown() -> None: ...

class Tools:
    def __init__(self, specs: list[tuple[Any, ...]]) -> None: ...
    def typescript(self) -> str: ...
    def names(self) -> list[str]: ...
    def __len__(self) -> int: ...

class Answer:
    def __call__(self, answered: tuple[bool, str, str]) -> None: ...

class Running:
    def cancel(self) -> None: ...

class Sandbox:
    def __init__(
        self,
        max_in_flight: int,
        max_call_deadline: float | None,
        console_cap: int,
        max_held: int,
    ) -> None: ...
    @property
    def running(self) -> int: ...
    def prompt(self, tools: Tools, budget: _BudgetArgs) -> str: ...
    def run(
        self, program: str, tools: Tools, budget: _BudgetArgs, language: str | None
    ) -> _OutcomeTuple: ...
    def spawn(
        self,
        program: str,
        tools: Tools,
        budget: _BudgetArgs,
        language: str | None,
        caller_loop: Any,
        deliver: Callable[[bool, Any], None],
    ) -> Running: ...
