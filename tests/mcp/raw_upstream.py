"""An upstream MCP server written line by line, for answers the SDK's own
servers never write but others do: `tools/call` of `odd` answers with the
line its `mode` names, each one JSON text serde_json does not read into
values, or JSON that is no JSON-RPC answer. With `--flood`, once its tools
are listed it sends `ping` requests as fast as it can, and reads the
answers only when it reads a call.
"""

import json
import sys
import threading

FLOOD = "--flood" in sys.argv


def flood():
    n = 0
    while True:
        n += 1
        send({"jsonrpc": "2.0", "id": f"ping{n}", "method": "ping"})

# {id} is the call's id.
ANSWERS = {
    # What JavaScript's JSON.stringify and Python's json.dumps write for a
    # string cut through an emoji.
    "lone_surrogate": '{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"caf\\ud83d"}}]}}}}',
    # What Python's json.dumps writes for float("nan").
    "nan": '{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"structuredContent":{{"a":NaN}}}}}}',
    "past_a_double": '{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"structuredContent":{{"a":1e400}}}}}}',
    "error_not_an_error": '{{"jsonrpc":"2.0","id":{id},"error":{{"code":"x","message":5}}}}',
    "fine": '{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"caf\\ud83d\\ude00"}}]}}}}',
}


WRITING = threading.Lock()


def send(message):
    write(json.dumps(message))


def write(line):
    with WRITING:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    id, method = message.get("id"), message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": [{
            "name": "odd",
            "inputSchema": {"type": "object", "properties": {"mode": {"type": "string"}}},
        }]}})
        if FLOOD:
            FLOOD = False
            threading.Thread(target=flood, daemon=True).start()
    elif method == "tools/call":
        mode = message["params"]["arguments"]["mode"]
        write(ANSWERS[mode].format(id=json.dumps(id)))
    elif id is not None and method is not None:
        send({"jsonrpc": "2.0", "id": id, "result": {}})
