"""A small process child for the end-to-end suites, well-behaved or hostile.

Run by the process backend: call channel on stdin/stdout, Start on fd 3,
Result on fd 4. The first argument picks the behaviour (see MODES below).
"""
import json
import os
import struct
import sys
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


def frame(obj):
    data = json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data


def send(f, obj):
    f.write(frame(obj))
    f.flush()


start_in = os.fdopen(3, "rb", buffering=0)
result_out = os.fdopen(4, "wb", buffering=0)


def start():
    return read_frame(start_in)


def result(start_msg, **fields):
    msg = {"v": 1, "result_id": start_msg["result_id"], "ok": True}
    msg.update(fields)
    send(result_out, msg)


def call(tool, args, id="1"):
    send(calls_out, {"v": 1, "id": id, "tool": tool, "args": json.dumps(args)})
    return read_frame(calls_in)


def mode_echo():
    s = start()
    r = call("echo", {"program": s["program"], "tools": [b["name"] for b in s.get("bindings", [])]})
    result(s, value=r["value"], calls=1, bytes=len(r["value"].encode()))


def mode_raw():
    # Raw bytes (hex) on the call channel, then wait to be stopped.
    start()
    calls_out.write(bytes.fromhex(sys.argv[2]))
    calls_out.flush()
    time.sleep(60)


def mode_promise_then_trickle():
    # A header promising 16 MiB, then one byte at a time.
    start()
    calls_out.write(struct.pack(">I", 16 * 1024 * 1024))
    calls_out.flush()
    while True:
        calls_out.write(b" ")
        calls_out.flush()
        time.sleep(0.05)


def mode_version():
    start()
    send(calls_out, {"v": int(sys.argv[2]), "id": "1", "tool": "echo", "args": "{}"})
    time.sleep(60)


def mode_duplicate_id():
    start()
    send(calls_out, {"v": 1, "id": "7", "tool": "never"})
    send(calls_out, {"v": 1, "id": "7", "tool": "never"})
    time.sleep(60)


def mode_silent():
    start()
    time.sleep(60)


def mode_wrong_result_id():
    s = start()
    send(result_out, {"v": 1, "result_id": s["result_id"] + "-not", "ok": True, "value": "1"})
    time.sleep(60)


def mode_lie_about_counts():
    s = start()
    result(s, value="1", calls=99, bytes=12345)


def mode_ignore_eof():
    s = start()
    result(s, value="1")
    while True:
        time.sleep(1)


def mode_exit_mid_frame():
    start()
    result_out.write(struct.pack(">I", 100) + b'{"v":1,')
    sys.exit(0)


def mode_exit_without_result():
    start()
    sys.exit(3)


MODES = {name[len("mode_"):]: f for name, f in globals().items() if name.startswith("mode_")}
MODES[sys.argv[1]]()
