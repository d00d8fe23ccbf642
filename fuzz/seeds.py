#!/usr/bin/env python3
"""Seeds the fuzz corpora from the shared test vectors.

    python3 fuzz/seeds.py [CORPUS_DIR]     (default: fuzz/work)

Writes seed-* files into CORPUS_DIR/<target>/ (fuzz/work is git-ignored;
the committed, minimised corpora are in fuzz/corpus), each
shaped as that target reads its input (see the //! pages of
fuzz/fuzz_targets/*.rs). Idempotent: the same seeds get the same names.
"""

import hashlib
import json
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VECTORS = os.path.join(ROOT, "wire", "tests", "vectors", "frames.json")


def frame(payload):
    payload = payload.encode() if isinstance(payload, str) else payload
    return struct.pack(">I", len(payload)) + payload


def frames_of(stream):
    """The complete payloads at the start of a stream."""
    out = []
    while len(stream) >= 4:
        n = struct.unpack(">I", stream[:4])[0]
        if n == 0 or len(stream) < 4 + n:
            break
        out.append(stream[4:4 + n])
        stream = stream[4 + n:]
    return out


def request(id, tool, args="", deadline_ms=0):
    obj = {"v": 1, "id": id, "tool": tool}
    if args:
        obj["args"] = args
    if deadline_ms:
        obj["deadline_ms"] = deadline_ms
    return frame(json.dumps(obj, separators=(",", ":")))


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "fuzz", "work")
    with open(VECTORS, encoding="utf-8") as f:
        vectors = json.load(f)
    seeds = {"frame_decoder": set(), "message_parse": set(), "server_stream": set()}

    streams = [bytes.fromhex(c["stream"]) for c in vectors["decode"]]
    streams += [bytes.fromhex(c["frame"]) for c in vectors["encode"]]
    for s in streams:
        # frame_decoder: [max selector][chunk seed] stream
        seeds["frame_decoder"].add(b"\x00\x07" + s)
        seeds["frame_decoder"].add(b"\x90\x00" + s[:64])
        for p in frames_of(s):
            seeds["message_parse"].add(p)

    calls = [
        request("1", "echo", '{"a":1}') + request("2", "echo", "x"),
        request("1", "sleep", "abc") + request("2", "echo", "x") + request("3", "sleep", "a"),
        request("1", "hang", "", 5) + request("2", "err", "boom") + request("3", "fail", "abcde"),
        request("1", "hang") + request("1", "echo"),
        request("1", "echo", "x") + request("1", "echo", "y"),
        b"".join(request(str(i), "sleep", "a" * (i % 3)) for i in range(10)),
        b"".join(request(str(i), "echo", "v" * i) for i in range(8)),
        request("", "echo"),
        request("1", "echo") + b"\x00\x00\x00\x00",
        request("1", "sleep", "abcd") + b"\xff\xff\xff\xff",
        request("1", "hang") + frame('{"v":2,"id":"2","tool":"t"}'),
    ]
    for c in vectors["decode"]:
        if c["message"] == "Request":
            calls.append(bytes.fromhex(c["stream"]))
    # server_stream: [in-flight cap, deadline][quotas][read size][cancel] stream
    for options in [b"\x00\x00\x3f\x00", b"\x07\x1a\x3f\x00", b"\x2c\x00\x00\x85", b"\x03\x09\x05\x00"]:
        for s in calls:
            seeds["server_stream"].add(options + s)

    for target, items in seeds.items():
        d = os.path.join(corpus, target)
        os.makedirs(d, exist_ok=True)
        for item in items:
            name = "seed-" + hashlib.sha1(item).hexdigest()[:16]
            with open(os.path.join(d, name), "wb") as f:
                f.write(item)
        print("%s: %d seeds" % (target, len(items)))


if __name__ == "__main__":
    main()
