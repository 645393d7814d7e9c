"""FAKE model server, NOT a model: an OpenAI-compatible HTTP server on 127.0.0.1 that answers from a
script. Used by the model-client and arm tests (fault paths: 5xx, 4xx, delays, malformed bodies) and
by scripts/bench_executor.py (a stand-in model whose replies are benchmark input, never results).

    with FakeModelServer([(503, {"error": "busy"}, 0), (200, completion("Final answer: 4"), 0)]) as srv:
        ...  # srv.url is "http://127.0.0.1:<port>/v1"; srv.requests holds the JSON bodies received

POST /v1/chat/completions pops the next (status, body, delay_s) of the script (body: a dict sent as
JSON, or bytes sent as they are); when the script is empty it answers 200 with `reply(raw_request_body)`
(default: `completion()`), or with the status of a `(status, body)` pair `reply` returns. GET answers the model list. Connections are kept alive (HTTP/1.1).

With `api_key`, the fake demands it as an OpenAI server does: a request without `Authorization: Bearer
<api_key>` gets 401 (OpenAI's error body), and one carrying a key in `forbidden_keys` gets 403. `auth` lists
the Authorization header of every request (None when absent).
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_MODEL = "scripted-model"


def completion(text: str = "Final answer: 4", finish: str = "stop", model: str = FAKE_MODEL,
               prompt_tokens: int = 12, completion_tokens: int = 5) -> dict:
    """An OpenAI chat.completion body with one choice."""
    return {"id": "x", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


class FakeModelServer:
    """The scripted fake server (module docstring). `requests` lists the JSON bodies received, in order."""

    def __init__(self, script: Iterable[tuple[int, Any, float]] = (), *,
                 reply: Callable[[bytes], dict] | None = None, model: str = FAKE_MODEL, port: int = 0,
                 api_key: str | None = None, forbidden_keys: Iterable[str] = ()):
        self.script = list(script)
        self.auth: list[str | None] = []
        forbidden = {f"Bearer {k}" for k in forbidden_keys}
        self.requests: list[dict] = []
        self.model = model
        outer = self
        answer = reply or (lambda raw: completion(model=model))

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                return None

            def _send(self, status: int, payload: Any) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test): nothing to answer
                    pass

            def _refused(self) -> bool:
                got = self.headers.get("Authorization")
                outer.auth.append(got)
                if api_key is None:
                    return False
                if got in forbidden:
                    self._send(403, {"error": {"message": "forbidden", "type": "permission_error"}})
                    return True
                if got != f"Bearer {api_key}":
                    self._send(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                               "code": "invalid_api_key"}})
                    return True
                return False

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self._refused():
                    return
                outer.requests.append(json.loads(raw))
                if outer.script:
                    status, payload, delay = outer.script.pop(0)
                else:
                    payload, delay = answer(raw), 0
                    status, payload = payload if isinstance(payload, tuple) else (200, payload)
                if delay:
                    time.sleep(delay)
                self._send(status, payload)

            def do_GET(self):
                if self._refused():
                    return
                self._send(200, {"object": "list", "data": [{"id": outer.model, "object": "model"}]})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "FakeModelServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
