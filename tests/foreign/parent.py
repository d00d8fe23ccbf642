#!/usr/bin/env python3
"""A wire parent written from docs/protocol.md alone, with Python's standard
library, driving the native child (`wasmwire-guest`) as a foreign parent
would: Start on fd 3, Result on fd 4, Requests on the child's stdout,
Responses on its stdin, console on its stderr.

It checks the basics (a tool call, answers out of order, pacing, every
failure kind and whether it is retryable, the version check, the frame cap)
and what a Go parent sends (`null` for empty slices, maps and pointers;
signed integers; durations in nanoseconds), the child's own wall clock, and
every way a parent can end a run early (closing the start channel, the call
channel, or both).

    python3 tests/foreign/parent.py target/release/wasmwire-guest [NAME ...]

Runs every check (or the named ones) and exits 1 if any failed. Every wait
has a deadline: a child that hangs fails the check, it does not hang it.
"""

import json
import os
import select
import struct
import subprocess
import sys
import threading
import time

MAX_FRAME_BYTES = 16 * 1024 * 1024
# How long any one wait may take before the check fails. Generous: the
# machine may be busy; the figures printed are what was seen.
PATIENCE = 20.0
# How far past its cause a stop (wall clock, cancel) may come.
GRACE = 2.0

KINDS = {  # docs/protocol.md section 5: kind -> retryable
    "transient": True,
    "rate_limited": True,
    "invalid": False,
    "not_found": False,
    "denied": False,
    "limit": False,
    "cancelled": False,
    "unknown": False,
}


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def frame(payload):
    """One frame: a 4-byte big-endian length, then the payload."""
    if isinstance(payload, dict):
        payload = json.dumps(payload, separators=(",", ":")).encode()
    return struct.pack(">I", len(payload)) + payload


class FrameIn:
    """Frames read from a raw fd, each read bounded by a deadline."""

    def __init__(self, fd, name):
        self.fd = fd
        self.name = name
        self.buf = b""
        self.eof = False

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failed(f"timed out waiting on {self.name}")
        ready, _, _ = select.select([self.fd], [], [], left)
        if not ready:
            raise Failed(f"timed out waiting on {self.name}")
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.eof = True
        self.buf += chunk

    def read(self, timeout=PATIENCE):
        """The next payload as a dict, or None at a clean EOF."""
        deadline = time.monotonic() + timeout
        while len(self.buf) < 4:
            if self.eof:
                check(not self.buf, f"{self.name}: EOF inside a length prefix")
                return None
            self._fill(deadline)
        (n,) = struct.unpack(">I", self.buf[:4])
        check(0 < n <= MAX_FRAME_BYTES, f"{self.name}: bad frame length {n}")
        while len(self.buf) < 4 + n:
            check(not self.eof, f"{self.name}: EOF inside a frame")
            self._fill(deadline)
        payload, self.buf = self.buf[4 : 4 + n], self.buf[4 + n :]
        msg = json.loads(payload)
        check(isinstance(msg, dict), f"{self.name}: not an object: {payload!r}")
        check(msg.get("v") == 1 and type(msg.get("v")) is int, f"{self.name}: v is not 1: {msg}")
        return msg

    def at_eof(self, timeout=PATIENCE):
        """Whether the stream ends with nothing more in it."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            self._fill(deadline)
        return not self.buf


class Child:
    """One native child with its four channels."""

    def __init__(self, binary, start_file=None):
        # fd 3 is a pipe the parent writes the Start into, or, given
        # start_file, that file opened for reading.
        if start_file is None:
            r3, self.w3 = os.pipe()
        else:
            r3, self.w3 = os.open(start_file, os.O_RDONLY), None
        self.r4, w4 = os.pipe()

        def fds_3_and_4():
            # Move out of the way first: r3 or w4 may already be 3 or 4.
            a, b = os.dup(r3), os.dup(w4)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=fds_3_and_4,
            close_fds=False,  # our pipes are not inheritable; 3 and 4 are
        )
        os.close(r3)
        os.close(w4)
        self.requests = FrameIn(self.proc.stdout.fileno(), "the call channel")
        self.results = FrameIn(self.r4, "the Result channel")
        self.console = []
        self.console_changed = threading.Condition()
        threading.Thread(target=self._read_console, daemon=True).start()

    def _read_console(self):
        for line in self.proc.stderr:
            with self.console_changed:
                self.console.append(line.decode(errors="replace").rstrip("\n"))
                self.console_changed.notify_all()

    def wait_console(self, text, timeout=PATIENCE):
        """Waits until the child writes a console line containing `text`."""
        with self.console_changed:
            ok = self.console_changed.wait_for(
                lambda: any(text in line for line in self.console), timeout
            )
        check(ok, f"the child never wrote {text!r} (console: {self.console})")

    def start(self, start):
        """Sends the Start (a dict, or raw payload bytes) and keeps fd 3 open."""
        os.write(self.w3, frame(start))

    def respond(self, response):
        self.proc.stdin.write(frame(response))
        self.proc.stdin.flush()

    def request(self, timeout=PATIENCE):
        req = self.requests.read(timeout)
        check(req is not None, "the call channel closed before a Request")
        return req

    def result(self, timeout=PATIENCE):
        result = self.results.read(timeout)
        check(result is not None, "the child sent no Result")
        return result

    def close_start(self):
        if self.w3 is not None:
            os.close(self.w3)
            self.w3 = None

    def close_calls(self):
        if not self.proc.stdin.closed:
            self.proc.stdin.close()

    def close_results(self):
        if self.r4 is not None:
            os.close(self.r4)
            self.r4 = None

    def exited(self, timeout=PATIENCE):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise Failed("the child did not exit")

    def finish(self):
        """After the Result: exactly one, then everything closes."""
        check(self.results.at_eof(), "a second frame after the Result")
        self.close_start()
        self.close_calls()
        code = self.exited()
        check(code == 0, f"the child exited {code} after its Result")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.close_start()
        self.close_results()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass


def start_msg(program, bindings=None, budget=None, **extra):
    start = {"v": 1, "program": program, "result_id": "r-foreign"}
    if bindings is not None:
        start["bindings"] = bindings
    if budget is not None:
        start["budget"] = budget
    start.update(extra)
    return start


def serve(child, tools, until_result=True):
    """Answers every Request with tools[tool](args) -> (ok, value_or_kind, error)
    until the Result arrives; returns (Result, Requests seen)."""
    seen = []
    deadline = time.monotonic() + PATIENCE
    while True:
        left = deadline - time.monotonic()
        check(left > 0, "no Result in time")
        ready, _, _ = select.select([child.requests.fd, child.results.fd], [], [], left)
        if child.requests.fd in ready and not child.requests.eof:
            child.requests._fill(deadline)
            while len(child.requests.buf) >= 4:
                (n,) = struct.unpack(">I", child.requests.buf[:4])
                if len(child.requests.buf) < 4 + n:
                    break
                req = child.requests.read()
                seen.append(req)
                child.respond(tools(req))
        if child.results.fd in ready:
            return child.result(), seen


def ok(req, value):
    return {"v": 1, "id": req["id"], "ok": True, "value": value}


def fail(req, kind, error="e"):
    return {"v": 1, "id": req["id"], "ok": False, "kind": kind, "error": error}


def expect_ok(result, value):
    check(result["ok"] is True and "kind" not in result, f"not ok: {result}")
    check(json.loads(result["value"]) == value, f"value {result.get('value')!r}, want {value!r}")


def expect_fail(result, kind, *texts):
    check(result["ok"] is False, f"ok, want {kind}: {result}")
    check(result.get("kind") == kind, f"kind {result.get('kind')!r}, want {kind!r}: {result}")
    for text in texts:
        check(text in result.get("error", ""), f"error lacks {text!r}: {result}")
    check(result["result_id"] == "r-foreign", f"result_id: {result}")


CHECKS = []


def case(f):
    CHECKS.append(f)
    return f


# ------------------------------------------------------------------ basics


@case
def a_program_returns_its_value(child):
    child.start(start_msg("return 1 + 1"))
    expect_ok(child.result(), 2)
    child.finish()


@case
def a_tool_call_with_a_signature(child):
    child.start(start_msg("return await add(2, 3)", [{"name": "add", "signature": "add(a, b)"}]))
    result, seen = serve(child, lambda r: ok(r, str(sum(json.loads(r["args"]).values()))))
    expect_ok(result, 5)
    check([r["tool"] for r in seen] == ["add"], f"requests: {seen}")
    check(json.loads(seen[0]["args"]) == {"a": 2, "b": 3}, f"args: {seen[0]}")
    check((result.get("calls"), result.get("bytes")) == (1, 1), f"counts: {result}")
    child.finish()


@case
def answers_out_of_order_are_matched_by_id(child):
    program = "return await Promise.all([t(1), t(2), t(3)])"
    child.start(start_msg(program, [{"name": "t"}]))
    reqs = [child.request() for _ in range(3)]
    check(len({r["id"] for r in reqs}) == 3, f"ids not unique: {reqs}")
    for r in reversed(reqs):
        child.respond(ok(r, str(int(r["args"]) * 10)))
    expect_ok(child.result(), [10, 20, 30])
    child.finish()


@case
def calls_are_paced_to_max_inflight(child):
    program = "return await Promise.all([1, 2, 3, 4].map((n) => t(n)))"
    child.start(start_msg(program, [{"name": "t"}], max_inflight=1))
    for n in range(4):
        req = child.request()
        # Nothing more may come while this one is unanswered.
        ready, _, _ = select.select([child.requests.fd], [], [], 0.2)
        check(not ready or child.requests.buf, "a second call while one was in flight")
        child.respond(ok(req, req["args"]))
    result = child.result()
    expect_ok(result, [1, 2, 3, 4])
    check(result.get("calls") == 4, f"calls: {result}")
    child.finish()


@case
def thousands_of_calls_answered_end_in_their_value(child):
    # The native child reads its answers on a thread of its own and frees
    # them on the run's: its count of what it holds for the program ran
    # below zero once, and about the thousandth call was refused as if the
    # child held 16 EiB ("memory limit", kind `limit`), under any
    # `max_memory`.
    # A string argument is sent as its text (none when empty): echoed back
    # as a JSON string.
    program = (
        "let n = 0; for (let i = 0; i < 3000; i++) n += (await t('x'.repeat(i % 200))).length;"
        " const all = await Promise.all(Array.from({length: 2000}, (_, i) => t('y'.repeat(500))));"
        " return [n, all.length]"
    )
    budget = {"max_memory": 64 << 20, "wall_clock": 60_000_000_000}
    child.start(start_msg(program, [{"name": "t"}], budget=budget, max_inflight=500))
    result, seen = serve(child, lambda r: ok(r, json.dumps(r.get("args", ""))))
    want = sum(i % 200 for i in range(3000))
    expect_ok(result, [want, 2000])
    check(len(seen) == 5000 and result.get("calls") == 5000, f"calls: {len(seen)}, {result}")
    child.finish()


@case
def every_failure_kind_reaches_the_program_with_retryable(child):
    program = (
        "const out = {};\n"
        f"for (const k of {json.dumps(list(KINDS))}) {{\n"
        "  try { await t(k) } catch (e) { out[k] = [e.name, e.kind, e.retryable, e.tool] }\n"
        "}\n"
        "return out"
    )
    child.start(start_msg(program, [{"name": "t"}]))
    result, _ = serve(child, lambda r: fail(r, r["args"], "because"))
    expect_ok(result, {k: ["ToolError", k, retry, "t"] for k, retry in KINDS.items()})
    child.finish()


@case
def an_uncaught_tool_error_ends_the_run_with_its_kind(child):
    child.start(start_msg("await t()", [{"name": "t"}]))
    result, _ = serve(child, lambda r: fail(r, "denied", "no"))
    expect_fail(result, "denied", "no")
    child.finish()


@case
def a_program_error_is_invalid(child):
    child.start(start_msg("return (", None))
    expect_fail(child.result(), "invalid", "SyntaxError")
    child.finish()


@case
def a_start_of_another_version_is_refused_naming_both(child):
    child.start({"v": 2, "program": "return 1", "result_id": "r-foreign"})
    result = child.result()
    check(result["ok"] is False and "kind" not in result, f"not a protocol error: {result}")
    check("2" in result["error"] and "1" in result["error"], f"versions not named: {result}")
    child.finish()


@case
def a_response_of_another_version_is_a_protocol_error(child):
    child.start(start_msg("return await t()", [{"name": "t"}]))
    req = child.request()
    child.respond({"v": 2, "id": req["id"], "ok": True, "value": "1"})
    result = child.result()
    check(result["ok"] is False and "kind" not in result, f"not a protocol error: {result}")
    check("version 2" in result["error"], f"{result}")
    child.finish()


@case
def a_response_to_no_call_is_a_protocol_error(child):
    child.start(start_msg("return await t()", [{"name": "t"}]))
    child.request()
    child.respond({"v": 1, "id": "no-such-call", "ok": True, "value": "1"})
    result = child.result()
    check(result["ok"] is False and "kind" not in result, f"{result}")
    child.finish()


@case
def a_successful_response_with_a_kind_is_a_protocol_error(child):
    child.start(start_msg("return await t()", [{"name": "t"}]))
    req = child.request()
    child.respond({"v": 1, "id": req["id"], "ok": True, "value": "1", "kind": "limit"})
    result = child.result()
    check(result["ok"] is False and "kind" not in result, f"{result}")
    child.finish()


@case
def a_failed_response_without_a_kind_is_a_protocol_error(child):
    child.start(start_msg("try { await t() } catch (e) { return e.kind }", [{"name": "t"}]))
    req = child.request()
    child.respond({"v": 1, "id": req["id"], "ok": False, "error": "no kind"})
    result = child.result()
    check(result["ok"] is False and "kind" not in result, f"{result}")
    child.finish()


@case
def a_start_split_across_writes_is_one_start(child):
    payload = frame(start_msg("return 'whole'"))
    for part in (payload[:2], payload[2:7], payload[7:]):
        os.write(child.w3, part)
    expect_ok(child.result(), "whole")
    child.finish()


@case
def a_start_with_half_a_surrogate_pair_is_answered_invalid(child):
    # What JavaScript's JSON.stringify (and Python's json) writes of a
    # string cut inside an emoji: "\ud800". The protocol refuses such an
    # escape, and the child refused the Start without a Result, though its
    # result_id was there to read.
    child.start(start_msg("return '\ud83d'.length"))
    expect_fail(child.result(), "invalid", "half of a surrogate pair")
    child.finish()


@case
def a_response_frame_over_the_cap_is_a_protocol_error(child):
    child.start(start_msg("return await t()", [{"name": "t"}]))
    child.request()
    child.proc.stdin.write(struct.pack(">I", MAX_FRAME_BYTES + 1) + b"{")
    child.proc.stdin.flush()
    result = child.result()
    check(result["ok"] is False and "kind" not in result, f"{result}")
    check("over the maximum" in result["error"], f"{result}")
    child.finish()


@case
def a_request_over_the_frame_cap_fails_the_call_as_limit(child):
    program = (
        "try { await t('x'.repeat(17 * 1024 * 1024)) } "
        "catch (e) { return [e.kind, e.retryable] }"
    )
    child.start(start_msg(program, [{"name": "t"}]))
    result, seen = serve(child, lambda r: ok(r, "1"))
    expect_ok(result, ["limit", False])
    check(not seen and "calls" not in result, f"an unsent call was sent or counted: {result}")
    child.finish()


@case
def a_return_value_over_the_frame_cap_is_limit(child):
    child.start(start_msg("return 'x'.repeat(17 * 1024 * 1024)"))
    expect_fail(child.result(), "limit")
    child.finish()


# ------------------------------------------------------- what Go sends


@case
def null_for_every_optional_start_field(child_factory):
    for field, value in [
        ("bindings", None),
        ("budget", None),
        ("max_inflight", None),
        ("budget", {"wall_clock": None, "max_calls": None, "max_bytes": None, "max_memory": None}),
        ("bindings", [{"name": "t", "signature": None}]),
    ]:
        child = child_factory()
        try:
            child.start(start_msg("return typeof t", **{field: value}))
            expect_ok(child.result(), "function" if value and field == "bindings" else "undefined")
            child.finish()
        except Failed as e:
            raise Failed(f"{field}: {json.dumps(value)}: {e}")
        finally:
            child.kill()


@case
def null_for_every_optional_response_field(child):
    program = (
        "const a = await t(); let b; try { await t() } catch (e) { b = [e.kind, e.message] }\n"
        "return [a, b]"
    )
    child.start(start_msg(program, [{"name": "t"}]))
    answers = iter(
        [
            lambda r: {"v": 1, "id": r["id"], "ok": True, "value": None, "kind": None, "error": None},
            lambda r: {"v": 1, "id": r["id"], "ok": False, "value": None, "kind": "denied", "error": None},
        ]
    )
    result, _ = serve(child, lambda r: next(answers)(r))
    expect_ok(result, ["", ["denied", ""]])
    child.finish()


@case
def null_in_a_required_field_is_refused_invalid(child_factory):
    for start in [
        {"v": 1, "program": None, "result_id": "r-foreign"},
        {"v": 1, "program": "1", "bindings": [{"name": None}], "result_id": "r-foreign"},
        {"v": 1, "program": "1", "bindings": [None], "result_id": "r-foreign"},
    ]:
        child = child_factory()
        try:
            child.start(start)
            expect_fail(child.result(), "invalid", "invalid Start")
            child.finish()
        except Failed as e:
            raise Failed(f"{json.dumps(start)}: {e}")
        finally:
            child.kill()


@case
def negative_and_malformed_numbers_are_refused_invalid_naming_the_field(child_factory):
    for field, value, named in [
        ("budget", {"wall_clock": -300000000}, "budget.wall_clock"),
        ("budget", {"max_calls": -1}, "budget.max_calls"),
        ("budget", {"max_bytes": -1}, "budget.max_bytes"),
        ("budget", {"max_memory": -1}, "budget.max_memory"),
        ("max_inflight", -1, "max_inflight"),
        ("max_inflight", 2**32, "max_inflight"),
        ("budget", {"wall_clock": 1.5}, "budget.wall_clock"),
        ("budget", {"max_calls": "10"}, "budget.max_calls"),
        ("budget", [], "budget"),
        ("bindings", {}, "bindings"),
    ]:
        child = child_factory()
        try:
            child.start(start_msg("return 1", **{field: value}))
            expect_fail(child.result(), "invalid", named)
            child.finish()
        except Failed as e:
            raise Failed(f"{field}: {json.dumps(value)}: {e}")
        finally:
            child.kill()


@case
def a_start_without_a_program_is_refused_invalid(child):
    child.start({"v": 1, "result_id": "r-foreign"})
    expect_fail(child.result(), "invalid", "program")
    child.finish()


@case
def a_start_without_a_result_id_gets_no_result_and_a_failed_exit(child):
    child.start({"v": 1, "program": "return 1"})
    check(child.results.at_eof(), "a Result with no result_id to answer")
    code = child.exited()
    check(code == 1, f"exit status {code}")


@case
def wall_clock_in_nanoseconds_stops_a_spinning_program(child):
    began = time.monotonic()
    child.start(start_msg("while (true) {}", budget={"wall_clock": 300_000_000}))
    result = child.result()
    elapsed = time.monotonic() - began
    print(f"    spin under 300 ms: Result after {elapsed * 1000:.1f} ms")
    expect_fail(result, "limit", "wall clock")
    check(0.3 <= elapsed < 0.3 + GRACE, f"elapsed {elapsed:.3f} s")
    child.finish()


@case
def wall_clock_stops_a_program_blocked_on_a_call_never_answered(child):
    began = time.monotonic()
    child.start(start_msg("await t(); return 1", [{"name": "t"}], {"wall_clock": 300_000_000}))
    child.request()
    result = child.result()
    elapsed = time.monotonic() - began
    print(f"    blocked on a call under 300 ms: Result after {elapsed * 1000:.1f} ms")
    expect_fail(result, "limit", "wall clock")
    check(0.3 <= elapsed < 0.3 + GRACE, f"elapsed {elapsed:.3f} s")
    check(result.get("calls") == 1, f"calls: {result}")
    child.finish()


@case
def wall_clock_stops_a_wait_for_a_timer_past_it(child):
    began = time.monotonic()
    program = "await new Promise((r) => setTimeout(r, 1e9))"
    child.start(start_msg(program, budget={"wall_clock": 300_000_000}))
    result = child.result()
    elapsed = time.monotonic() - began
    expect_fail(result, "limit", "wall clock")
    check(elapsed < 0.3 + GRACE, f"elapsed {elapsed:.3f} s")
    child.finish()


@case
def max_memory_holds_the_programs_heap(child):
    program = "const keep = []; for (;;) keep.push(new Array(100000).fill(1.5))"
    child.start(start_msg(program, budget={"max_memory": 64 << 20, "wall_clock": 30_000_000_000}))
    expect_fail(child.result(), "limit", "memory")
    child.finish()


@case
def deep_recursion_is_a_limit(child):
    child.start(start_msg("const f = (n) => f(n + 1) + 1; return f(0)"))
    expect_fail(child.result(), "limit", "stack")
    child.finish()


# ------------------------------------------- a parent ending the run


def spinning(child, bindings=None):
    """Starts a program that says so on its console, then computes forever
    (under a wall clock far past the grace: only the parent can end it)."""
    program = "console.log('spinning'); for (;;) {}"
    child.start(start_msg(program, bindings, {"wall_clock": 60_000_000_000}))
    child.wait_console("spinning")


@case
def closing_the_start_channel_while_computing_cancels(child):
    spinning(child)
    closed = time.monotonic()
    child.close_start()
    result = child.result()
    late = time.monotonic() - closed
    print(f"    fd 3 closed mid-computation: Result {late * 1000:.1f} ms later")
    expect_fail(result, "cancelled", "start channel")
    check(late < GRACE, f"{late:.3f} s")
    child.finish()


@case
def closing_the_start_channel_while_a_call_waits_cancels(child):
    child.start(start_msg("try { await t() } catch (e) { return e.kind }", [{"name": "t"}]))
    child.request()
    child.close_start()
    expect_fail(child.result(), "cancelled")
    child.finish()


@case
def closing_the_call_channel_while_computing_cancels(child):
    spinning(child)
    closed = time.monotonic()
    child.close_calls()
    result = child.result()
    late = time.monotonic() - closed
    print(f"    stdin closed mid-computation: Result {late * 1000:.1f} ms later")
    expect_fail(result, "cancelled", "call channel")
    check(late < GRACE, f"{late:.3f} s")
    child.finish()


@case
def a_program_that_catches_its_cancelled_call_still_ends_cancelled(child):
    program = "try { await t(); return 'answered' } catch (e) { return 'caught ' + e.kind }"
    child.start(start_msg(program, [{"name": "t"}]))
    child.request()
    child.close_calls()
    expect_fail(child.result(), "cancelled")
    child.finish()


@case
def closing_every_channel_mid_run_makes_the_child_exit(child):
    spinning(child)
    child.close_results()
    child.close_start()
    child.close_calls()
    code = child.exited()
    check(code != 0, f"exit status {code}: it could not have sent a Result")


@case
def no_longer_reading_requests_cancels_at_the_next_call(child):
    program = "await t(); try { await t(); return 'answered' } catch (e) { return e.kind }"
    child.start(start_msg(program, [{"name": "t"}]))
    req = child.request()
    # The parent stops reading the call channel, then answers: the child's
    # next Request finds no reader.
    child.proc.stdout.close()
    child.respond(ok(req, "1"))
    expect_fail(child.result(), "cancelled", "call channel")
    child.close_start()
    child.close_calls()
    child.exited()


@case
def closing_the_start_channel_before_a_start_makes_the_child_exit_1(child):
    child.close_start()
    check(child.results.at_eof(), "a Result with no Start")
    code = child.exited()
    check(code == 1, f"exit status {code}")


@case
def a_start_handed_over_in_a_regular_file_runs_to_its_end(child_factory):
    # The end of a file is not a parent closing the start channel.
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".start") as f:
        f.write(frame(start_msg("await null; let n = 0; for (let i = 0; i < 1e6; i++) n++; return n")))
        f.flush()
        child = child_factory(f.name)
        try:
            expect_ok(child.result(), 1000000)
            child.finish()
        finally:
            child.kill()


@case
def a_start_cut_short_makes_the_child_exit_1_without_a_result(child):
    payload = frame(start_msg("return 1"))
    os.write(child.w3, payload[:-3])
    child.close_start()
    check(child.results.at_eof(), "a Result for a Start that never arrived whole")
    code = child.exited()
    check(code == 1, f"exit status {code}")


@case
def bytes_after_the_start_are_a_protocol_violation(child):
    spinning(child)
    os.write(child.w3, b"\x00\x00\x00\x02{}")
    result = child.result()
    check(result["ok"] is False and "kind" not in result, f"{result}")
    check("after its Start" in result["error"], f"{result}")
    child.finish()


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    binary = sys.argv[1]
    wanted = set(sys.argv[2:])
    failed = []
    for check_fn in CHECKS:
        name = check_fn.__name__
        if wanted and name not in wanted:
            continue
        takes_factory = check_fn.__code__.co_varnames[0] == "child_factory"
        child = None if takes_factory else Child(binary)
        began = time.monotonic()
        try:
            check_fn((lambda *a: Child(binary, *a)) if takes_factory else child)
            print(f"ok   {name} ({(time.monotonic() - began) * 1000:.0f} ms)")
        except Exception as e:  # noqa: BLE001 - any error fails this check only
            failed.append(name)
            console = f"\n    console: {child.console}" if child else ""
            what = str(e) if isinstance(e, Failed) else f"{type(e).__name__}: {e}"
            print(f"FAIL {name}: {what}{console}")
        finally:
            if child:
                child.kill()
    print(f"{len(failed)} of {len([c for c in CHECKS if not wanted or c.__name__ in wanted])} checks failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
