"""What a hostile program, an odd tool or an odd embedder does to the
package: each ends in one Outcome or one typed exception, and what comes
after it still works. Found by probing the installed package."""

import asyncio
import functools
import math
import multiprocessing
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest

import wasmwire

CATCH = """
try { return ["ok", await %s]; }
catch (e) { return [e.name, e.kind, e.message]; }
"""

DEEP = "let v = []; for (let i = 0; i < 5000; i++) v = [v]; return v"


def test_a_value_deeper_than_pythons_decoder_is_an_invalid_failure(sandbox):
    # json.loads raised RecursionError out of `run`.
    outcome = sandbox.run(DEEP)
    assert (outcome.ok, outcome.kind, outcome.value) == (False, "invalid", None)
    assert "recursion limit" in outcome.message
    with pytest.raises(wasmwire.ExecutionError):
        outcome.unwrap()
    assert sandbox.run("let v = 1; for (let i = 0; i < 100; i++) v = [v]; return v").ok


def test_run_async_settles_when_the_value_is_too_deep(sandbox):
    # The RecursionError was raised in the loop's callback, and the awaiting
    # task waited for ever.
    async def main():
        return await asyncio.wait_for(sandbox.run_async(DEEP), 30)

    outcome = asyncio.run(main())
    assert (outcome.ok, outcome.kind) == (False, "invalid")


@pytest.mark.parametrize("raised", [SystemExit(3), KeyboardInterrupt("kb")], ids=repr)
def test_an_async_tool_raising_systemexit_fails_its_call_and_async_tools_go_on(sandbox, raised):
    # Under a sync run, async tools share one background loop; asyncio let
    # these out of it, its thread ended, and every later async call waited
    # for its wall clock.
    async def boom():
        raise raised

    async def fine():
        return 1

    budget = wasmwire.Budget(wall_clock=20)
    outcome = sandbox.run(CATCH % "boom()", tools=[boom], budget=budget)
    assert outcome.value[:2] == ["ToolError", "unknown"], outcome
    assert type(raised).__name__ in outcome.value[2]
    started = time.monotonic()
    assert sandbox.run("return await fine()", tools=[fine], budget=budget).value == 1
    assert time.monotonic() - started < 10


def test_the_background_loop_outlives_a_callback_that_raises_keyboardinterrupt(sandbox):
    async def fine():
        return 2

    assert sandbox.run("return await fine()", tools=[fine]).value == 2

    def interrupt():
        raise KeyboardInterrupt("from a callback")

    wasmwire._tools._background_loop().call_soon_threadsafe(interrupt)
    outcome = sandbox.run(
        "return await fine()", tools=[fine], budget=wasmwire.Budget(wall_clock=20)
    )
    assert outcome.value == 2, outcome
    assert outcome.elapsed < 10


def test_a_cancellederror_a_tool_raises_itself_is_its_failure(sandbox):
    async def odd():
        raise asyncio.CancelledError()

    outcome = sandbox.run(CATCH % "odd()", tools=[odd])
    assert outcome.value[1] == "unknown", outcome
    assert "CancelledError" in outcome.value[2]


def _in_forked_child(sandbox, results):
    async def later():
        return "async"

    results.put(
        [
            sandbox.run("while (true) {}", budget=wasmwire.Budget(wall_clock=0.3)).kind,
            sandbox.run("return await later()", tools=[later]).value,
            wasmwire.Sandbox().run("return 3").value,
        ]
    )


def test_a_forked_child_holds_the_wall_clock_and_serves_async_tools(sandbox):
    # The parent's runtime, epoch ticker and tool loop are threads, which a
    # fork does not copy: the child's wall clock never fired, and an async
    # tool waited for a loop nobody ran.
    async def warm():
        return 0

    assert sandbox.run("return await warm()", tools=[warm]).value == 0
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_in_forked_child, args=(sandbox, results))
    child.start()
    child.join(60)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail("the forked child did not finish in 60 s")
    assert child.exitcode == 0
    assert results.get(timeout=5) == ["limit", "async", 3]
    # And the parent's own sandbox is as it was.
    assert sandbox.run("return await warm()", tools=[warm]).value == 0
    assert sandbox.running == 0


def test_a_positive_duration_under_a_nanosecond_is_a_nanosecond_not_none(sandbox):
    # 4e-10 s rounded to 0 ns, which is no limit: the loop ran on.
    outcome = sandbox.run("while (true) {}", budget=wasmwire.Budget(wall_clock=4e-10))
    assert outcome.kind == "limit" and "wall clock" in outcome.message, (outcome.kind, outcome.message)

    async def slow():
        await asyncio.sleep(30)

    tool = wasmwire.Tool(slow, timeout=1e-12)
    outcome = sandbox.run(CATCH % "slow()", tools=[tool], budget=wasmwire.Budget(wall_clock=20))
    assert outcome.value[1] == "transient", outcome
    assert outcome.elapsed < 10


def test_durations_out_of_range_are_refused_with_the_typed_error(sandbox):
    for bad in (1e300, float(2**64), math.inf, -1.0):
        with pytest.raises(wasmwire.BudgetError) as raised:
            wasmwire.Budget(wall_clock=bad)
        assert raised.value.item == "wall_clock"
    # Long but countable: runs (the library added it to the clock and panicked).
    assert sandbox.run("return 1", budget=wasmwire.Budget(wall_clock=2.0**63)).value == 1

    def f():
        return 1

    for bad in (-1.0, math.nan, 1e300):
        with pytest.raises(wasmwire.ToolDefinitionError, match="timeout") as raised:
            wasmwire.Tools([wasmwire.Tool(f, timeout=bad)])
        assert raised.value.tool == "f"


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"params": {"type": "object", "maximum": math.nan}}, "params schema is not JSON"),
        ({"params": {"type": "object", "properties": {"a": {1, 2}}}}, "params schema is not JSON"),
        ({"result": {"type": "nope"}}, "result schema is not a usable JSON Schema"),
        ({"name": "bad\ud800"}, "name is not UTF-8"),
        ({"description": "d\udfff"}, "description is not UTF-8"),
    ],
    ids=["nan", "set", "result", "name", "description"],
)
def test_a_bad_schema_or_text_is_a_tool_definition_error(options, why):
    def f():
        return 1

    with pytest.raises(wasmwire.ToolDefinitionError, match=why) as raised:
        wasmwire.Tools([wasmwire.Tool(f, **options)])
    assert raised.value.tool == options.get("name", "f")


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_args_deeper_than_pythons_decoder_fail_the_call_invalid(sandbox, is_async):
    # They failed `unknown` with "RecursionError: maximum recursion depth exceeded".
    def take(value):
        return "ran"

    async def take_async(value):
        return "ran"

    tool = wasmwire.Tool(take_async if is_async else take, name="take")
    program = "let v = []; for (let i = 0; i < 5000; i++) v = [v];\n" + CATCH % "take(v)"
    outcome = sandbox.run(program, tools=[tool])
    assert outcome.value[1] == "invalid", outcome
    assert "deeper than Python's JSON decoder" in outcome.value[2]
    assert sandbox.run(CATCH % "take([[1]])", tools=[tool]).value == ["ok", "ran"]


def test_text_too_long_as_json_fails_limit_before_it_is_written(sandbox):
    # json.dumps made 96 MB of JSON of 16 MB of NUL, per call, before the
    # parent refused it past a frame: 64 such calls took 4.2 GiB.
    def big():
        return "\0" * 3_000_000

    def fits():
        return '"' * 1_000_000

    outcome = sandbox.run(
        CATCH % "big()", tools=[wasmwire.Tool(big), wasmwire.Tool(fits)]
    )
    assert outcome.value[1] == "limit", outcome
    assert "18000002 characters as a JSON string" in outcome.value[2]
    outcome = sandbox.run(
        "return (await fits()).length", tools=[wasmwire.Tool(big), wasmwire.Tool(fits)]
    )
    assert outcome.value == 1_000_000, outcome


# Waits, in a tool, for the interpreter to begin exiting (this atexit hook
# is registered after wasmwire's, so it runs first), then keeps the tool
# busy in Python while the interpreter would finalize under it.
STILL_RUNNING_AT_EXIT = """
import atexit, threading, time, wasmwire
exiting = threading.Event()
def busy():
    exiting.wait(30)
    t = time.monotonic()
    while time.monotonic() - t < 0.3:
        pass
    return 1
outcome = wasmwire.Sandbox().run(
    "try { await busy() } catch (e) { return e.kind }",
    tools=[wasmwire.Tool(busy, timeout=0.05)],
)
atexit.register(exiting.set)
print(outcome.value)
"""


def test_the_interpreter_exits_cleanly_while_a_sync_tool_still_runs():
    # The tool ran on, on a runtime thread, after its call gave up; the
    # interpreter finalized under it: "Fatal Python error:
    # PyGILState_Release", SIGABRT.
    ended = subprocess.run(
        [sys.executable, "-c", STILL_RUNNING_AT_EXIT], capture_output=True, text=True, timeout=60
    )
    assert "Fatal Python error" not in ended.stderr, ended.stderr
    assert (ended.returncode, ended.stdout) == (0, "transient\n"), ended.stderr


# As above, but the tool never ends, and a Ctrl-C comes while exit waits:
# the interpreter went on to finalize under the tool (SIGABRT).
INTERRUPTED_AT_EXIT = """
import atexit, os, signal, threading, time, wasmwire
# Python's own handler, whatever this process inherited (a shell without
# job control starts background commands with SIGINT ignored).
signal.signal(signal.SIGINT, signal.default_int_handler)
exiting = threading.Event()
def busy():
    exiting.wait(30)
    while True:
        sum(range(1000))
outcome = wasmwire.Sandbox().run(
    "try { await busy() } catch (e) { return e.kind }",
    tools=[wasmwire.Tool(busy, timeout=0.05)],
)
def interrupt():
    while True:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
def begin_exit():
    exiting.set()
    threading.Thread(target=interrupt, daemon=True).start()
atexit.register(begin_exit)
print(outcome.value, flush=True)
"""


def test_a_ctrl_c_while_exit_waits_for_a_sync_tool_exits_130_at_once():
    ended = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_AT_EXIT], capture_output=True, text=True, timeout=60
    )
    assert "Fatal Python error" not in ended.stderr, ended.stderr
    assert (ended.returncode, ended.stdout) == (130, "transient\n"), ended.stderr


def test_run_async_after_the_exit_hook_is_refused_not_left_waiting():
    # An atexit hook registered before `import wasmwire` runs after its
    # exit hook: the outcome of run_async could never be delivered (it
    # waited for ever).
    script = """
import asyncio, atexit
def late():
    try:
        asyncio.run(sandbox.run_async("return 5"))
        print("delivered")
    except RuntimeError as e:
        print("refused:", e)
    print(sandbox.run("return 6").value)
atexit.register(late)
import wasmwire
sandbox = wasmwire.Sandbox()
"""
    ended = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert ended.returncode == 0, ended.stderr
    lines = ended.stdout.splitlines()
    assert lines[0].startswith("refused: the Python interpreter is exiting"), ended.stdout
    assert lines[1] == "6", ended.stdout


SURROGATE_ANSWER = """
try { const v = await %s(); return ["ok", v, JSON.stringify(v)]; }
catch (e) { return [e.kind, e.message]; }
"""


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_an_answer_with_a_lone_surrogate_reaches_the_program(sandbox, is_async):
    # An async tool's answer could not become Rust text: the done-callback
    # raised UnicodeEncodeError (only logged) and the call waited for the
    # wall clock (for ever under Budget.UNLIMITED).
    def value():
        return {"caf\udce9": ["\udce9", "\ud83d\ude00"]}

    def failure():
        raise wasmwire.ToolError("denied", "no caf\udce9 for you")

    async def value_async():
        return value()

    async def failure_async():
        return failure()

    tools = [
        wasmwire.Tool(value_async if is_async else value, name="value"),
        wasmwire.Tool(failure_async if is_async else failure, name="failure"),
    ]
    budget = wasmwire.Budget(wall_clock=10)
    outcome = sandbox.run(SURROGATE_ANSWER % "value", tools=tools, budget=budget)
    # The same JS string: a lone surrogate is one JS code unit; the pair
    # is one character (JS strings are UTF-16).
    expected = {"caf\udce9": ["\udce9", "\U0001f600"]}
    assert outcome.value == ["ok", expected, '{"caf\\udce9":["\\udce9","\U0001f600"]}'], outcome
    outcome = sandbox.run(SURROGATE_ANSWER % "failure", tools=tools, budget=budget)
    assert outcome.value == ["denied", "no caf\ufffd for you"], outcome
    assert outcome.elapsed < 5


def test_an_async_answer_that_cannot_be_delivered_is_an_unknown_failure(sandbox, monkeypatch):
    # Whatever fails while the answer is handed over must still answer.
    def broken(done):
        raise LookupError("lost on the way")

    monkeypatch.setattr(wasmwire._tools, "_settled", broken)

    async def fine():
        return 1

    outcome = sandbox.run(CATCH % "fine()", tools=[fine], budget=wasmwire.Budget(wall_clock=10))
    assert outcome.value[:2] == ["ToolError", "unknown"], outcome
    assert "could not be delivered" in outcome.value[2] and "lost on the way" in outcome.value[2]


ABANDONING = """
let n = 0;
for (let round = 0; round < 40; round++) {
  const calls = [];
  for (let i = 0; i < 50; i++) {
    calls.push(host.call("slow", undefined, { deadlineMs: 1 }).catch((e) => e.kind));
  }
  n += (await Promise.all(calls)).filter((kind) => kind === "transient" || kind === "limit").length;
}
return n
"""


def test_calls_abandoned_before_their_sync_tool_starts_never_run_it(sandbox):
    # Each abandoned call still ran its tool later, on the blocking pool all
    # executions share: 2,000 calls that gave up in 1 ms held its 512 threads
    # for seconds after the run, and other runs' tools waited behind them.
    ran = []
    sleeping = []

    def slow():
        ran.append(1)
        sleeping.append(1)
        time.sleep(0.2)
        sleeping.pop()
        return 1

    def after():
        return "after"

    outcome = sandbox.run(ABANDONING, tools=[slow], budget=wasmwire.Budget(wall_clock=30))
    # Each call gave up (`transient`), or found its execution's threads for
    # sync calls all held by tools still running (`limit`, at once).
    assert outcome.value == 2000, outcome
    assert sandbox.run("return await after()", tools=[after]).value == "after"
    # Those whose thread started them within their 1 ms (at most 64 at a
    # time: the execution's max_in_flight); none of the rest.
    assert len(ran) < 1000, len(ran)
    # Their threads are back before the next test counts them.
    wait_until(lambda: not sleeping)


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.001)


def threads_now():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


# Gives up on 64 calls of a sync tool at a time, 2 ms after making them,
# until one is refused `limit` (or 5 s have passed).
ABANDONING_STUCK = """
const kinds = {}, messages = {};
const t = Date.now();
while (!kinds.limit && Date.now() - t < 5000) {
  const calls = [];
  for (let i = 0; i < 64; i++) {
    calls.push(host.call("stuck", undefined, { deadlineMs: 2 }).catch((e) => {
      kinds[e.kind] = (kinds[e.kind] || 0) + 1;
      messages[e.kind] = e.message;
    }));
  }
  await Promise.all(calls);
}
return { kinds, messages }
"""


def test_sync_calls_given_up_on_starve_no_other_execution(sandbox):
    # A program gave up on a slow sync tool's calls 64 at a time; each
    # tool went on sleeping on a thread of tokio's blocking pool. Within
    # 2-3 s all 512 of its threads slept in abandoned calls, and every
    # other execution waited behind them: its sync and async tools, and
    # the delivery of run_async's outcome (a 2 s run_async of `return 1`
    # answered after 13 s). Now an execution's sync calls hold at most its
    # max_in_flight threads, given up on or not, on a pool of their own.
    release = threading.Event()
    lock = threading.Lock()
    stuck_now = [0]

    def stuck():
        with lock:
            stuck_now[0] += 1
        try:
            release.wait(30)
        finally:
            with lock:
                stuck_now[0] -= 1
        return 1

    def quick():
        return "quick"

    async def quick_async():
        return "quick async"

    tools = wasmwire.Tools([stuck, quick, quick_async])
    budget = wasmwire.Budget(wall_clock=2)
    before = threads_now()
    try:
        hostile = sandbox.run(ABANDONING_STUCK, tools=tools, budget=wasmwire.Budget(wall_clock=10))
        assert hostile.ok, hostile
        held = stuck_now[0]
        assert held > 0  # its tools are still in their callable, holding their threads

        # Other executions, while they sleep: each well within its 2 s.
        async def others():
            ended = []
            for program in ("return 1", "return await quick_async()", "return await quick()"):
                started = time.monotonic()
                run = sandbox.run_async(program, tools=tools, budget=budget)
                outcome = await asyncio.wait_for(run, 5)
                ended.append((outcome.value, time.monotonic() - started))
            return ended

        ended = asyncio.run(others())
        assert [value for value, _ in ended] == [1, "quick async", "quick"], ended
        assert all(took < 1.0 for _, took in ended), ended
        started = time.monotonic()
        outcome = sandbox.run("return await quick()", tools=tools, budget=budget)
        assert outcome.value == "quick", outcome
        assert time.monotonic() - started < 1.0

        # What they cost: the execution's 64 threads at most, and its
        # calls past those were refused `limit`, saying why.
        assert stuck_now[0] == held  # nothing waited for them to end
        assert held <= 64, held
        assert threads_now() - before <= 64 + 16, (before, threads_now())
        assert set(hostile.value["kinds"]) <= {"transient", "limit"}, hostile.value
        assert "no thread for this sync tool call" in hostile.value["messages"]["limit"]
    finally:
        release.set()
    wait_until(lambda: stuck_now[0] == 0)


def test_a_sync_call_past_the_processs_tool_threads_fails_transient_at_once():
    # 600 sync calls in flight at once, none given up on: 512 hold the
    # process's threads for sync tools, and the other 88 fail at once
    # rather than wait for one behind tools that may never return.
    release = threading.Event()
    lock = threading.Lock()
    inside = [0]

    def held():
        with lock:
            inside[0] += 1
        try:
            release.wait(30)
        finally:
            with lock:
                inside[0] -= 1
        return "ran"

    program = """
    const answers = await Promise.all(Array.from({ length: 600 }, () =>
      held().then((v) => v, (e) => e.kind + ": " + e.message)));
    const counts = {};
    for (const a of answers) counts[a.split(":")[0]] = (counts[a.split(":")[0]] || 0) + 1;
    return { counts, refused: answers.find((a) => a !== "ran") }
    """
    wide = wasmwire.Sandbox(max_in_flight=600)
    box = []
    runner = threading.Thread(
        target=lambda: box.append(
            wide.run(program, tools=[held], budget=wasmwire.Budget(wall_clock=20))
        )
    )
    runner.start()
    try:
        wait_until(lambda: inside[0] == 512)
    finally:
        release.set()
        runner.join(30)
    outcome = box[0]
    assert outcome.ok, outcome
    assert outcome.value["counts"] == {"ran": 512, "transient": 88}, outcome.value
    assert "threads for sync tools are held" in outcome.value["refused"]
    wait_until(lambda: inside[0] == 0)


def test_a_max_call_deadline_of_0_is_refused():
    # It made every call fail "call deadline of 0 ms passed", where 0 is
    # "none" for a budget's items and a call's deadlineMs.
    with pytest.raises(ValueError, match="max_call_deadline of 0 would fail every call"):
        wasmwire.Sandbox(max_call_deadline=0)
    with pytest.raises(ValueError, match="max_call_deadline of 0"):
        wasmwire.Sandbox(max_call_deadline=timedelta(0))
    assert wasmwire.Sandbox(max_call_deadline=1e-12).run("return 1").value == 1


def test_a_duration_given_as_a_bool_is_refused_and_a_huge_one_said_briefly():
    # True was read as one second, where a budget's items refuse it; 1e300
    # was said with its 301 digits.
    with pytest.raises(TypeError, match="max_call_deadline must be seconds or a timedelta, not bool"):
        wasmwire.Sandbox(max_call_deadline=True)
    with pytest.raises(TypeError, match="timeout must be seconds or a timedelta, not bool"):
        wasmwire.Tool(lambda: 1, name="f", timeout=True)
    with pytest.raises(ValueError, match="max_call_deadline 1e300: ") as raised:
        wasmwire.Sandbox(max_call_deadline=1e300)
    assert len(str(raised.value)) < 200, raised.value
    for name, make in [
        ("max_call_deadline", lambda: wasmwire.Sandbox(max_call_deadline=10**400)),
        ("timeout", lambda: wasmwire.Tool(lambda: 1, name="f", timeout=10**400)),
    ]:
        with pytest.raises(ValueError, match=rf"{name} is past any duration \(too large for a float\)"):
            make()
    with pytest.raises(wasmwire.ToolDefinitionError, match=r"timeout of 1e300 s") as raised:
        wasmwire.Tools([wasmwire.Tool(lambda: 1, name="f", timeout=1e300)])
    assert len(str(raised.value)) < 200, raised.value


def test_a_sync_run_inside_an_async_tool_of_a_sync_run_is_refused(sandbox):
    # The inner run blocked the background loop its own async tools needed:
    # they waited for its wall clock (for ever under Budget.UNLIMITED).
    async def inner():
        return 1

    async def outer():
        return sandbox.run("return await inner()", tools=[inner]).value

    outcome = sandbox.run(CATCH % "outer()", tools=[outer], budget=wasmwire.Budget(wall_clock=10))
    assert outcome.value[:2] == ["ToolError", "unknown"], outcome
    assert "SandboxError" in outcome.value[2] and "await sandbox.run_async(" in outcome.value[2]
    assert outcome.elapsed < 5


def test_any_sync_run_on_the_background_loop_is_refused_its_tools_whatever_they_are(sandbox):
    # Refused only when its own tools were async: one whose tools were
    # sync (one of them running a sandbox with async tools in turn) blocked
    # the loop all the same, and waited out its wall clock (for ever under
    # Budget.UNLIMITED); so did other executions' async tools.
    async def leaf(x):
        return x * 3

    def middle(n):
        return sandbox.run(f"return await leaf({n})", tools=[leaf]).value

    async def outer(n):
        return sandbox.run(f"return await middle({n})", tools=[middle]).value

    outcome = sandbox.run(CATCH % "outer(1)", tools=[outer], budget=wasmwire.Budget(wall_clock=10))
    assert outcome.value[:2] == ["ToolError", "unknown"], outcome
    assert "SandboxError" in outcome.value[2] and "await sandbox.run_async(" in outcome.value[2]
    assert outcome.elapsed < 5

    async def outer_async(n):
        return (await sandbox.run_async(f"return await middle({n})", tools=[middle])).value

    assert sandbox.run("return await outer_async(2)", tools=[outer_async]).value == 6


def test_a_run_async_whose_coroutine_is_closed_cancels_its_execution(sandbox):
    # Only CancelledError cancelled it: a coroutine closed (GeneratorExit),
    # or destroyed with a loop closed under it, left the program running to
    # its wall clock (for ever under Budget.UNLIMITED).
    async def main():
        coroutine = sandbox.run_async("while (true) {}", budget=wasmwire.Budget.UNLIMITED)
        coroutine.send(None)
        assert sandbox.running == 1
        coroutine.close()
        deadline = time.monotonic() + 10
        while sandbox.running and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        assert sandbox.running == 0

    asyncio.run(main())


def test_errors_and_budgets_survive_pickle_and_copy():
    # A process pool hands a job's error back pickled: four of these could
    # not be made again (`item`, `tool` missing), which broke the pool.
    import copy
    import pickle

    errors = [
        wasmwire.ExecutionError("limit", "wall clock"),
        wasmwire.ExecutionError(None, "protocol violation"),
        wasmwire.ToolError("invalid", "bad args"),
        wasmwire.BudgetError("too much", item="max_memory", asked=2, most=1),
        wasmwire.ToolDefinitionError("bad name", tool="x-y"),
        wasmwire.ProgramError("not UTF-8"),
        wasmwire.SandboxError("cannot start"),
    ]
    for error in errors:
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error), (error, again)
        assert again.__dict__ == error.__dict__, (error, again)
    budget = wasmwire.Budget(wall_clock=2.5, max_memory=1 << 20, max_calls=3, max_bytes=4)
    for made in (copy.copy(budget), copy.deepcopy({"b": budget})["b"], pickle.loads(pickle.dumps(budget))):
        assert made == budget and made is not wasmwire.Budget.UNLIMITED
    assert pickle.loads(pickle.dumps(wasmwire.Budget.UNLIMITED)) == wasmwire.Budget.UNLIMITED


def test_sandbox_options_and_budgets_of_the_wrong_shape_are_refused_in_pythons_words(sandbox):
    # A dict for a budget raised AttributeError ('_args'); max_in_flight=0
    # built a Sandbox whose every run raised, -1 an OverflowError.
    with pytest.raises(TypeError, match="budget must be a wasmwire.Budget"):
        sandbox.run("return 1", budget={"wall_clock": 1})
    for value in (0, -1, 1 << 64):
        with pytest.raises(ValueError, match="max_in_flight must be between 1"):
            wasmwire.Sandbox(max_in_flight=value)
    with pytest.raises(ValueError, match="max_held must be between 1"):
        wasmwire.Sandbox(max_held=0)
    with pytest.raises(TypeError, match="console_cap must be an int"):
        wasmwire.Sandbox(console_cap=1.5)
    import weakref

    assert weakref.ref(sandbox)() is sandbox


def test_a_sync_tool_raising_an_unprintable_base_exception_is_described_as_an_async_one_is(
    sandbox, capfd
):
    class Unprintable(BaseException):
        def __str__(self):
            raise RuntimeError("no words")

    def sync_tool():
        raise Unprintable()

    async def async_tool():
        raise Unprintable()

    said = []
    for tool in (sync_tool, async_tool):
        outcome = sandbox.run(CATCH % f"{tool.__name__}()", tools=[tool])
        said.append(outcome.value)
    assert said[0] == said[1] and said[0][1] == "unknown", said
    assert "Exception ignored" not in capfd.readouterr().err


def test_a_tool_exception_whose_message_raises_system_exit_fails_only_its_call(sandbox):
    # Under run_async, the SystemExit left the tool's wrapper and stopped
    # the caller's event loop (the program's catch never ran); under run,
    # the call failed naming SystemExit, which the tool never raised.
    class Odd(Exception):
        def __str__(self):
            raise SystemExit(3)

    class Words(str):
        def __format__(self, spec):
            raise KeyboardInterrupt

        def __add__(self, other):
            raise KeyboardInterrupt

        def __radd__(self, other):
            raise KeyboardInterrupt

    class Formatted(Exception):
        def __str__(self):
            return Words("formatted")

    def sync_odd():
        raise Odd()

    async def async_odd():
        raise Odd()

    async def async_formatted():
        raise Formatted()

    async def both():
        tools = [sync_odd, async_odd, async_formatted]
        return [
            (await sandbox.run_async(CATCH % f"{tool.__name__}()", tools=tools)).value
            for tool in tools
        ]

    said = asyncio.run(both())
    said += [sandbox.run(CATCH % f"{tool}()", tools=[sync_odd, async_odd]).value for tool in ("sync_odd", "async_odd")]
    for _name, kind, message in said[:2] + said[3:]:
        assert kind == "unknown" and message.endswith("Odd: (its message could not be read: SystemExit)"), said
    assert said[2][2].endswith("Formatted: formatted") and said[2][1] == "unknown", said


def test_a_callable_without_a_name_is_refused_in_pythons_words():
    # The library's advice named Tool::call_only and --call-only.
    for unnamed in (lambda x: x, functools.partial(print, 1)):
        with pytest.raises(wasmwire.ToolDefinitionError, match='name="..."'):
            wasmwire.Tools([unnamed])
    with pytest.raises(wasmwire.ToolDefinitionError, match=r"\(call_only=True\)") as raised:
        wasmwire.Tools([wasmwire.Tool(print, name="search-docs")])
    assert "Tool::call_only" not in str(raised.value)
    assert wasmwire.Tools([wasmwire.Tool(lambda x: x, name="echo")]).typescript()
