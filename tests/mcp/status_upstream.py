"""An upstream MCP server over streamable HTTP whose `tools/call` of
`status` answers with the HTTP status its `code` names (and, for some,
the headers that go with it), for the failures the SDK's own servers do
not give on purpose: a 401 with a challenge, a 429 with Retry-After, a
503. Everything else is answered as a plain server would.

    python status_upstream.py PORT     serves 127.0.0.1:PORT/mcp
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HEADERS = {
    401: {"WWW-Authenticate": 'Bearer realm="upstream", error="invalid_token"'},
    429: {"Retry-After": "7"},
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=None, content_type="application/json"):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Mcp-Session-Id", "s1")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.answer(405, b"no event stream", content_type="text/plain")

    def do_DELETE(self):
        self.answer(200)

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        id, method = message.get("id"), message.get("method")
        if id is None:
            self.answer(202)
            return
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "status", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [{
                "name": "status",
                "inputSchema": {"type": "object", "properties": {"code": {"type": "integer"}}},
            }]}
        elif method == "tools/call":
            code = message["params"]["arguments"]["code"]
            if code != 200:
                self.answer(code, b"refused", HEADERS.get(code), content_type="text/plain")
                return
            result = {"content": [{"type": "text", "text": "fine"}]}
        else:
            result = {}
        self.answer(200, json.dumps({"jsonrpc": "2.0", "id": id, "result": result}).encode())


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
