"""The budget: each limit held, and budgets that cannot be held refused."""

import asyncio
import sys
import threading
from datetime import timedelta

import pytest

import wasmwire


def test_the_default_budget_is_the_librarys():
    budget = wasmwire.Budget()
    assert budget.wall_clock == 10.0 == wasmwire.DEFAULT_WALL_CLOCK
    assert budget.max_memory == 64 << 20 == wasmwire.DEFAULT_MAX_MEMORY
    assert (budget.max_calls, budget.max_bytes) == (0, 0)
    assert wasmwire.Budget.UNLIMITED == wasmwire.Budget(wall_clock=0, max_memory=0)
    assert wasmwire.Budget(wall_clock=timedelta(milliseconds=250)).wall_clock == 0.25
    with pytest.raises(AttributeError):
        budget.max_calls = 3  # type: ignore[misc]


def test_the_wall_clock_ends_a_program_that_spins(sandbox):
    outcome = sandbox.run("while (true) {}", budget=wasmwire.Budget(wall_clock=0.3))
    assert outcome.kind == "limit"
    assert "wall clock" in outcome.message
    assert 0.3 <= outcome.elapsed < 3


def test_the_wall_clock_holds_while_another_thread_keeps_the_gil(sandbox):
    # A thread that keeps the GIL for a second at a time (a pure-Python loop
    # under a switch interval of 1 s, as one long C call would) held up the
    # run too: the thread that called `run` drove the execution, and took
    # the GIL back between waits to look for a Ctrl-C, so nothing polled the
    # execution, its wall clock included, until it got the GIL.
    stop = threading.Event()

    def hog():
        while not stop.is_set():
            pass

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1.0)
    thread = threading.Thread(target=hog)
    thread.start()
    try:
        outcome = sandbox.run("while (true) {}", budget=wasmwire.Budget(wall_clock=0.1))
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert outcome.kind == "limit" and "wall clock" in outcome.message
    assert 0.1 <= outcome.elapsed < 0.6, outcome.elapsed


def test_the_wall_clock_ends_a_program_waiting_on_a_tool(sandbox):
    async def forever():
        await asyncio.sleep(60)

    outcome = sandbox.run(
        "await forever()", tools=[forever], budget=wasmwire.Budget(wall_clock=0.2)
    )
    assert outcome.kind == "limit" and "wall clock" in outcome.message


def test_the_memory_cap_ends_a_program_that_allocates(sandbox):
    program = 'const a = []; while (true) a.push("x".repeat(1 << 16) + a.length);'
    outcome = sandbox.run(program, budget=wasmwire.Budget(max_memory=16 << 20))
    assert outcome.kind == "limit"
    assert "memory" in outcome.message.lower()
    # The same program is only stopped by the clock without the cap being low.
    assert sandbox.run("return 1", budget=wasmwire.Budget(max_memory=16 << 20)).value == 1


def test_the_call_quota_fails_the_call_over_it(sandbox):
    ran = []

    def tick():
        ran.append(1)
        return len(ran)

    program = """
    const seen = [];
    for (let i = 0; i < 5; i++) {
      try { seen.push(await tick()); } catch (e) { seen.push(e.kind); }
    }
    return seen;
    """
    outcome = sandbox.run(program, tools=[tick], budget=wasmwire.Budget(max_calls=3))
    assert outcome.value == [1, 2, 3, "limit", "limit"]
    assert outcome.calls == 3
    assert len(ran) == 3


def test_the_byte_quota_fails_the_value_over_it(sandbox):
    def blob(n):
        return "x" * n

    tool = wasmwire.Tool(blob, signature="blob(n)")
    program = """
    const a = await blob(10);
    try { await blob(1000); return "sent"; } catch (e) { return [a.length, e.kind, e.message]; }
    """
    outcome = sandbox.run(program, tools=[tool], budget=wasmwire.Budget(max_bytes=100))
    length, kind, message = outcome.value
    assert (length, kind) == (10, "limit")
    assert "bytes" in message
    assert outcome.bytes == 12  # "xxxxxxxxxx" with its quotes, the only value sent


@pytest.mark.parametrize(
    "items, item",
    [
        ({"wall_clock": -1}, "wall_clock"),
        ({"wall_clock": float("inf")}, "wall_clock"),
        ({"wall_clock": "5s"}, "wall_clock"),
        ({"max_memory": -1}, "max_memory"),
        ({"max_calls": 1.5}, "max_calls"),
        ({"max_bytes": 1 << 64}, "max_bytes"),
        ({"max_calls": True}, "max_calls"),
    ],
)
def test_a_malformed_budget_is_a_budget_error_naming_the_item(items, item):
    with pytest.raises(wasmwire.BudgetError) as raised:
        wasmwire.Budget(**items)
    assert raised.value.item == item
    assert isinstance(raised.value, ValueError)


def test_a_budget_the_backend_cannot_hold_is_refused_before_start(sandbox):
    budget = wasmwire.Budget(max_memory=64 << 30)
    with pytest.raises(wasmwire.BudgetError) as raised:
        sandbox.run("return 1", budget=budget)
    error = raised.value
    assert (error.item, error.asked) == ("max_memory", 64 << 30)
    assert error.most is not None and error.most < error.asked
    assert isinstance(error, wasmwire.SandboxError)
    with pytest.raises(wasmwire.BudgetError):
        asyncio.run(sandbox.run_async("return 1", budget=budget))
    assert sandbox.running == 0


def test_a_program_that_cannot_be_sent_is_a_program_error(sandbox):
    with pytest.raises(wasmwire.ProgramError, match="too large"):
        sandbox.run("//" + "x" * (17 << 20))
    with pytest.raises(wasmwire.ProgramError, match="UTF-8"):
        sandbox.run("return '\ud800'")
    with pytest.raises(wasmwire.ProgramError, match="too large"):
        asyncio.run(sandbox.run_async("//" + "x" * (17 << 20)))
    assert sandbox.running == 0


def test_args_whose_tree_would_not_fit_what_the_parent_holds_are_refused(sandbox):
    # 4.9 MB of `[{"":0},...]` are over 300 MB as a tree (and more as
    # Python objects): refused `limit` before they are read, the tool
    # never called.
    called = []

    def put(items):
        called.append(len(items))
        return len(items)

    program = """
    try { return await put(new Array(700000).fill({'': 0})); }
    catch (e) { return [e.kind, e.message]; }
    """
    kind, message = sandbox.run(program, tools=[put]).value
    assert kind == "limit" and "would take about" in message, message
    assert called == []
    assert sandbox.run("return await put(new Array(1000).fill({'': 0}))", tools=[put]).value == 1000
    assert called == [1000]
