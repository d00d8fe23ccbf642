"""Many executions at once, tools that take their time, cancellation, and
the GIL. Orderings are pinned with events, never with sleep-and-hope."""

import _thread
import asyncio
import signal
import threading
import time

import pytest

import wasmwire


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.001)


def test_a_hundred_executions_at_once_under_asyncio(sandbox):
    async def double(x):
        await asyncio.sleep(0.001)
        return x * 2

    def inc(x):
        return x + 1

    tools = wasmwire.Tools(
        [wasmwire.Tool(double, signature="double(x)"), wasmwire.Tool(inc, signature="inc(x)")]
    )
    program = "const n = %d; return [await double(n), await inc(n), (await Promise.all([1, 2].map(double)))]"

    async def main():
        runs = [sandbox.run_async(program % i, tools=tools) for i in range(100)]
        return await asyncio.gather(*runs)

    outcomes = asyncio.run(main())
    assert [o.value for o in outcomes] == [[2 * i, i + 1, [2, 4]] for i in range(100)]
    assert all(o.calls == 4 for o in outcomes)
    assert sandbox.running == 0


def test_a_slow_async_tool_does_not_block_other_executions(sandbox):
    async def main():
        entered = asyncio.Event()
        release = asyncio.Event()

        async def slow():
            entered.set()
            await release.wait()
            return "slow"

        async def fast():
            return "fast"

        tools = wasmwire.Tools([slow, fast])
        slow_run = asyncio.create_task(sandbox.run_async("return await slow()", tools=tools))
        await entered.wait()
        # The slow call is in its tool; another execution runs to its end.
        fast_outcome = await sandbox.run_async("return await fast()", tools=tools)
        assert fast_outcome.value == "fast"
        assert not slow_run.done()
        release.set()
        return (await slow_run).value

    assert asyncio.run(main()) == "slow"


def test_a_slow_sync_tool_blocks_neither_the_loop_nor_other_executions(sandbox):
    entered = threading.Event()
    release = threading.Event()

    def blocking():
        entered.set()
        release.wait(30)
        return "blocking"

    def quick():
        return "quick"

    tools = wasmwire.Tools([blocking, quick])

    async def main():
        slow_run = asyncio.create_task(sandbox.run_async("return await blocking()", tools=tools))
        while not entered.is_set():  # the loop keeps turning while the tool blocks
            await asyncio.sleep(0.001)
        quick_outcome = await sandbox.run_async("return await quick()", tools=tools)
        assert not slow_run.done()
        release.set()
        return quick_outcome.value, (await slow_run).value

    assert asyncio.run(main()) == ("quick", "blocking")


def test_cancelling_the_task_cancels_the_execution_and_its_tools(sandbox):
    async def main():
        entered = asyncio.Event()
        tool_cancelled = asyncio.Event()

        async def forever():
            entered.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                tool_cancelled.set()
                raise

        task = asyncio.create_task(
            sandbox.run_async(
                "await forever()", tools=[forever], budget=wasmwire.Budget(wall_clock=60)
            )
        )
        await entered.wait()
        assert sandbox.running == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(tool_cancelled.wait(), 5)
        for _ in range(5000):
            if sandbox.running == 0:
                break
            await asyncio.sleep(0.001)
        assert sandbox.running == 0

    asyncio.run(main())


def test_cancelling_a_program_that_spins_ends_it(sandbox):
    async def main():
        task = asyncio.create_task(
            sandbox.run_async("while (true) {}", budget=wasmwire.Budget(wall_clock=60))
        )
        while sandbox.running == 0:
            await asyncio.sleep(0.001)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        while sandbox.running:
            await asyncio.sleep(0.001)
            assert time.monotonic() - started < 5
        # The sandbox is still good.
        assert (await sandbox.run_async("return 1")).value == 1

    asyncio.run(main())


def test_ctrl_c_during_a_sync_run_cancels_the_execution(sandbox):
    # Python's own Ctrl-C handler, whatever this process inherited: a suite
    # started in the background of a shell without job control (`cmd &` in
    # a script) inherits SIGINT ignored, and then `interrupt_main` does
    # nothing and the run went on to its wall clock.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:

        def interrupt_once_running():
            wait_until(lambda: sandbox.running == 1)
            _thread.interrupt_main()  # as a SIGINT would

        interrupter = threading.Thread(target=interrupt_once_running)
        interrupter.start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            sandbox.run("while (true) {}", budget=wasmwire.Budget(wall_clock=60))
        interrupter.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    # Raised only once the execution has ended, long before its wall clock.
    assert sandbox.running == 0
    assert time.monotonic() - started < 10
    assert sandbox.run("return 1").value == 1


def test_the_gil_is_released_while_a_program_runs(sandbox):
    # If `run` held the GIL, this thread could not run Python while the
    # execution is in flight, and would never see it counted.
    seen_running = threading.Event()
    runner = threading.Thread(
        target=sandbox.run, args=("while (true) {}",), kwargs={"budget": wasmwire.Budget(wall_clock=2)}
    )
    runner.start()
    deadline = time.monotonic() + 5
    while runner.is_alive() and time.monotonic() < deadline:
        if sandbox.running == 1:
            seen_running.set()
            break
    runner.join()
    assert seen_running.is_set()


def test_sync_runs_from_many_threads_at_once(sandbox):
    def square(x):
        return x * x

    tools = wasmwire.Tools([wasmwire.Tool(square, signature="square(x)")])
    results = [None] * 16

    def one(i):
        results[i] = sandbox.run(f"return await square({i})", tools=tools).value

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [i * i for i in range(16)]
