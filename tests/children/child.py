"""A small process child for the end-to-end suites, well-behaved or hostile.

Run by the process backend: call channel on stdin/stdout, Start on fd 3,
Result on fd 4. Every mode first reads its Start. The behaviour is picked by
the words after the script's name, or, when there are none, by the words of
the Start's program: so one Sandbox (one command) can run a different
hostile child on every execution, and the suite can check that the same
Sandbox still works after each. See MODES at the end for the list.
"""
import json
import os
import struct
import sys
import threading
import time

calls_out = sys.stdout.buffer
calls_in = sys.stdin.buffer


def read_exact(f, n):
    data = b""
    while len(data) < n:
        chunk = f.read(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_frame(f):
    head = read_exact(f, 4)
    if head is None:
        return None
    (n,) = struct.unpack(">I", head)
    return json.loads(read_exact(f, n))


def frame_bytes(payload):
    return struct.pack(">I", len(payload)) + payload


def frame(obj):
    return frame_bytes(json.dumps(obj).encode())


def send(f, obj):
    f.write(frame(obj))
    f.flush()


start_in = os.fdopen(3, "rb", buffering=0)
result_out = os.fdopen(4, "wb", buffering=0)


def result(start_msg, **fields):
    msg = {"v": 1, "result_id": start_msg["result_id"], "ok": True}
    msg.update(fields)
    send(result_out, msg)


def call(tool, args, id="1"):
    send(calls_out, {"v": 1, "id": id, "tool": tool, "args": json.dumps(args)})
    return read_frame(calls_in)


def wait_to_be_stopped():
    time.sleep(60)


# --- well-behaved ------------------------------------------------------------


def mode_echo(s):
    r = call("echo", {"program": s["program"], "tools": [b["name"] for b in s.get("bindings", [])]})
    result(s, value=r["value"], calls=1, bytes=len(r["value"].encode()))


# --- bad frames and payloads on the call channel -------------------------------


def mode_raw(s, hex):
    # Raw bytes on the call channel, then wait to be stopped.
    calls_out.write(bytes.fromhex(hex))
    calls_out.flush()
    wait_to_be_stopped()


def mode_payload(s, hex):
    # One correctly framed payload of arbitrary bytes on the call channel.
    calls_out.write(frame_bytes(bytes.fromhex(hex)))
    calls_out.flush()
    wait_to_be_stopped()


def mode_truncated_call_frame(s):
    # A prefix promising 100 bytes, 7 of them, then EOF on the call channel
    # (the child stays alive and sends no Result).
    calls_out.write(struct.pack(">I", 100) + b'{"v":1,')
    calls_out.flush()
    os.close(1)  # sys.stdout's own close() leaves fd 1 open
    wait_to_be_stopped()


def mode_promise_then_trickle(s):
    # A header promising 16 MiB, then one byte at a time.
    calls_out.write(struct.pack(">I", 16 * 1024 * 1024))
    calls_out.flush()
    while True:
        calls_out.write(b" ")
        calls_out.flush()
        time.sleep(0.05)


def mode_version(s, v):
    send(calls_out, {"v": int(v), "id": "1", "tool": "echo", "args": "{}"})
    wait_to_be_stopped()


# --- ids ---------------------------------------------------------------------


def mode_duplicate_id(s):
    send(calls_out, {"v": 1, "id": "7", "tool": "never"})
    send(calls_out, {"v": 1, "id": "7", "tool": "never"})
    wait_to_be_stopped()


def mode_float_ids(s):
    # Ids that are equal as numbers but not as strings, all in flight at once
    # (each call waits 200 ms in the `delay` tool). Ids are strings: each must
    # be answered once, with its own value.
    ids = ["1", "1.0", "1e0", "01", " 1"]
    for i, id in enumerate(ids):
        args = json.dumps({"ms": 200, "value": i})
        send(calls_out, {"v": 1, "id": id, "tool": "delay", "args": args})
    got = {}
    for _ in ids:
        r = read_frame(calls_in)
        got.setdefault(r["id"], []).append(r.get("value", r.get("kind")))
    result(s, value=json.dumps(got))


def mode_id_reuse_after_answer(s):
    # An id may be used again once its call has been answered.
    first = call("echo", "a", id="same")
    second = call("echo", "b", id="same")
    result(s, value=json.dumps([first["value"], second["value"]]))


# --- floods --------------------------------------------------------------------


def requests(n, tool="echo"):
    return b"".join(
        frame({"v": 1, "id": str(i), "tool": tool, "args": json.dumps(i)}) for i in range(n)
    )


def mode_flood(s, n):
    # N requests written without waiting for any answer; a thread reads the
    # answers as they come. Reports how they were answered.
    n = int(n)
    answers = {}

    def read_all():
        for _ in range(n):
            r = read_frame(calls_in)
            if r is None:
                return
            answers.setdefault(r["id"], []).append("ok" if r["ok"] else r["kind"])

    reader = threading.Thread(target=read_all)
    reader.start()
    calls_out.write(requests(n))
    calls_out.flush()
    reader.join()
    kinds = {}
    for got in answers.values():
        for k in got:
            kinds[k] = kinds.get(k, 0) + 1
    report = {
        "sent": n,
        "answered_ids": len(answers),
        "answered_twice": sum(1 for got in answers.values() if len(got) > 1),
        "kinds": kinds,
    }
    result(s, value=json.dumps(report))


def mode_flood_unread(s, n):
    # N requests and never a read of an answer; then the Result.
    n = int(n)
    calls_out.write(requests(n))
    calls_out.flush()
    result(s, value=json.dumps({"sent": n}))
    wait_to_be_stopped()


def mode_stderr_flood(s):
    # Far more console output than the cap, then a normal Result.
    line = b"e" * 1023 + b"\n"
    for _ in range(10 * 1024):
        sys.stderr.buffer.write(line)
    sys.stderr.flush()
    result(s, value="1")


# --- the start channel ---------------------------------------------------------


def mode_silent(s):
    wait_to_be_stopped()


def mode_wrong_result_id(s):
    send(result_out, {"v": 1, "result_id": s["result_id"] + "-not", "ok": True, "value": "1"})
    wait_to_be_stopped()


def mode_result_payload(s, hex):
    # One correctly framed payload of arbitrary bytes as the Result. The text
    # RESULT_ID in it is replaced with the Start's result_id.
    payload = bytes.fromhex(hex).replace(b"RESULT_ID", s["result_id"].encode())
    result_out.write(frame_bytes(payload))
    wait_to_be_stopped()


def mode_result_raw(s, hex):
    # Raw bytes on the Result channel.
    result_out.write(bytes.fromhex(hex))
    wait_to_be_stopped()


def mode_two_results(s):
    # Two Results in one write; the first is the answer.
    first = {"v": 1, "result_id": s["result_id"], "ok": True, "value": '"first"'}
    second = {"v": 1, "result_id": s["result_id"], "ok": True, "value": '"second"'}
    result_out.write(frame(first) + frame(second))
    wait_to_be_stopped()


def mode_close_result_channel(s):
    # Closes its Result channel without a Result, and stays alive.
    result_out.close()
    wait_to_be_stopped()


def mode_lie_about_counts(s):
    result(s, value="1", calls=99, bytes=12345)


def mode_counts_off_by(s, calls, bytes):
    # Makes one call, then reports its counts off by `calls` and `bytes`.
    r = call("echo", {"n": 1})
    read = len(r["value"].encode())
    result(s, value="1", calls=1 + int(calls), bytes=read + int(bytes))


def mode_ignore_eof(s):
    result(s, value="1")
    while True:
        time.sleep(1)


def mode_orphan(s):
    # A grandchild that keeps every channel open and outlives its parent.
    # The Result carries its pid, so the suite can check it was killed.
    pid = os.fork()
    if pid == 0:
        while True:
            time.sleep(1)
    result(s, value=json.dumps({"grandchild": pid}))
    os._exit(0)


# --- the process tree ----------------------------------------------------------


def wait_for_file(path, seconds=10):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.005)


def write_pid(path):
    # Atomically, so a reader never sees a half-written pid.
    with open(path + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(path + ".tmp", path)


def mode_leave_group(s):
    # A grandchild that moves to a process group of its own and keeps every
    # channel open; the child sends a valid Result and stays alive.
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        time.sleep(60)
        os._exit(0)
    result(s, value=json.dumps({"grandchild": pid}))
    wait_to_be_stopped()


def mode_setsid_daemon(s, path):
    # A daemon: fork, setsid() in the child, fork again, the middle process
    # exits (the grandchild is handed to init or a subreaper), the grandchild
    # closes every channel and writes its pid to PATH. Then a valid Result.
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        for fd in range(0, 5):
            try:
                os.close(fd)
            except OSError:
                pass
        write_pid(path)
        time.sleep(60)
        os._exit(0)
    os.waitpid(pid, 0)
    wait_for_file(path)
    result(s, value=json.dumps({"daemon": int(open(path).read())}))


def mode_fork_memory(s, n, mib):
    # N children, each touching MIB MiB and then holding it; the child waits
    # until every one holds its memory (or died) and reports how many did.
    n, size = int(n), int(mib) << 20
    r, w = os.pipe()
    kids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os.close(r)
            block = bytearray(size)
            for i in range(0, size, 4096):
                block[i] = 1
            os.write(w, b"x")
            time.sleep(60)
            os._exit(0)
        kids.append(pid)
    os.close(w)
    held = 0
    while held < n:
        if not os.read(r, 1):
            break
        held += 1
    result(s, value=json.dumps({"held": held, "mib": held * int(mib)}))
    wait_to_be_stopped()


def mode_oom_then_ok(s, mib):
    # One child touches MIB MiB (past the cap), is ended by the OOM killer,
    # and the moment it is reaped an ok Result goes out: the Result races
    # the parent's noticing of the kill, and must lose.
    size = int(mib) << 20
    pid = os.fork()
    if pid == 0:
        block = bytearray(size)
        for i in range(0, size, 4096):
            block[i] = 1
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    result(s, value=json.dumps({"killed": os.WIFSIGNALED(status)}))
    wait_to_be_stopped()


def mode_marker(s, path):
    # Writes its pid to PATH and a setsid() grandchild's to PATH.grandchild,
    # then waits to be stopped: for the CLI's signal tests.
    pid = os.fork()
    if pid == 0:
        os.setsid()
        write_pid(path + ".grandchild")
        time.sleep(60)
        os._exit(0)
    wait_for_file(path + ".grandchild")
    write_pid(path)
    wait_to_be_stopped()


def mode_exit_mid_frame(s):
    result_out.write(struct.pack(">I", 100) + b'{"v":1,')
    sys.exit(0)


def mode_exit_without_result(s):
    sys.exit(3)


# --- hostile load: floods that never end, answers never read ---------------


def mode_flood_no_result(s, n, tool="echo"):
    # N requests, never a read of an answer, never a Result: only the wall
    # clock can end it. Written a thousand at a time as they are made, so
    # the first reach the parent at once (made all first, 100,000 took
    # most of a 2 s wall clock on a loaded machine, and none arrived).
    n = int(n)
    for start in range(0, n, 1000):
        calls_out.write(
            b"".join(
                frame({"v": 1, "id": str(i), "tool": tool, "args": json.dumps(i)})
                for i in range(start, min(start + 1000, n))
            )
        )
        calls_out.flush()
    wait_to_be_stopped()


def mode_flood_forever(s, tool="echo"):
    # Requests forever, one after another as fast as they can be written,
    # with every answer read by a thread; never a Result.
    def read_all():
        while read_frame(calls_in) is not None:
            pass

    threading.Thread(target=read_all, daemon=True).start()
    i = 0
    while True:
        calls_out.write(frame({"v": 1, "id": str(i), "tool": tool, "args": json.dumps(i)}))
        i += 1
        if i % 64 == 0:
            calls_out.flush()


def mode_big_calls_unread(s, n, tool, args_mib):
    # N calls with ARGS_MIB MiB of args each, all written at once, and never
    # a read of an answer; then the Result (a valid one, if it gets out).
    args = json.dumps("a" * (int(args_mib) << 20))
    for i in range(int(n)):
        calls_out.write(frame({"v": 1, "id": str(i), "tool": tool, "args": args}))
    calls_out.flush()
    result(s, value=json.dumps({"sent": int(n)}))
    wait_to_be_stopped()


def mode_call_never_then_limit(s, *words):
    # A call to `never`, in flight once `echo` (sent after it) is answered;
    # then a `limit` Result whose error is WORDS.
    send(calls_out, {"v": 1, "id": "1", "tool": "never", "args": "{}"})
    call("echo", {}, id="2")
    send(result_out, {"v": 1, "result_id": s["result_id"], "ok": False, "kind": "limit",
                      "error": " ".join(words), "calls": 2})
    wait_to_be_stopped()


def mode_result_ok_with_kind(s):
    result(s, value="1", kind="limit")


def mode_result_not_json(s):
    result(s, value="this is not JSON")


def mode_result_huge_error(s, mib):
    send(result_out, {"v": 1, "result_id": s["result_id"], "ok": False, "kind": "invalid",
                      "error": "e" * (int(mib) << 20)})


# --- the environment, signals, a pid to check -----------------------------------


def mode_environ(s):
    # The whole environment the child was given, as the Result's value.
    result(s, value=json.dumps(dict(os.environ)))


def mode_kill_self(s, signal_name):
    # Kills itself with SIGNAL_NAME (SIGKILL, SIGSEGV, ...) before any Result.
    import signal
    os.kill(os.getpid(), getattr(signal, signal_name))
    wait_to_be_stopped()


def mode_ignore_eof_with_pid(s):
    # As ignore_eof, with its pid in the Result so the suite can check that
    # it was killed.
    result(s, value=json.dumps({"pid": os.getpid()}))
    while True:
        time.sleep(1)


MODES = {name[len("mode_"):]: f for name, f in globals().items() if name.startswith("mode_")}


def main():
    s = read_frame(start_in)
    if s is None:
        sys.exit(0)
    words = sys.argv[1:] or s["program"].split()
    MODES[words[0]](s, *words[1:])


main()
