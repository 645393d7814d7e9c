"""The FAKE vLLM server behind tests/model/fake_docker/docker: lists one model, answers every chat with a program
and a final answer. Never a model."""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, MODEL, REQUESTS = int(sys.argv[1]), sys.argv[2], sys.argv[3]
REPLY = "```python\nanswer = 1.0\n```\nFinal answer: 1\n{\"x\": 1}"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _send(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/version":
            self._send({"version": "0.32.0"})
            return
        self._send({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with open(REQUESTS, "a") as f:
            f.write(json.dumps(sorted(req)) + "\n")
        self._send({"model": MODEL, "choices": [{"message": {"role": "assistant", "content": REPLY},
                                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5}})


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
