"""The CPU model server: llama.cpp's own OpenAI-compatible HTTP server on a GGUF, on loopback, run in-process by
xllamacpp (a prebuilt wheel of llama.cpp's server, pinned in requirements-demo.lock: no compiler, installs in
seconds). Started by harness.model.llama_cpp.LlamaCppLauncher with `.venv-server/bin/python`, which has only
xllamacpp: this file imports nothing of the kit.

    .venv-server/bin/python scripts/cpu_model_server.py --model FILE.gguf --alias ID --port 8088 \
        [--host 127.0.0.1] [--ctx 8192] [--threads N] [--parallel 1]

It serves until SIGTERM or SIGINT. The GGUF's own chat template is applied (jinja; no override). `--parallel`
is llama.cpp's slot count: requests beyond it queue in the server. Prints one JSON line `{"listening": ...,
"xllamacpp": version, "system_info": ...}` to stdout when the server is up.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="cpu_model_server.py")
    p.add_argument("--model", required=True, help="GGUF file")
    p.add_argument("--alias", required=True, help="the model id the server lists and answers to")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--ctx", type=int, default=8192, help="context length in tokens, shared by the slots")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--parallel", type=int, default=1, help="slots decoded together (continuous batching)")
    a = p.parse_args(argv)
    if a.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"cpu_model_server: binds to loopback only, not {a.host!r}", file=sys.stderr)
        return 2
    if not os.path.isfile(a.model):
        print(f"cpu_model_server: model file {a.model} does not exist", file=sys.stderr)
        return 2
    import xllamacpp as xlc  # after the checks: a usage error needs no model runtime

    params = xlc.CommonParams()
    params.model.path = a.model
    params.model_alias = {a.alias}
    params.hostnames = [a.host]
    params.port = a.port
    params.n_ctx = a.ctx
    params.n_parallel = a.parallel
    params.cpuparams.n_threads = a.threads
    params.cpuparams_batch.n_threads = a.threads
    params.use_jinja = True
    server = xlc.Server(params)
    print(
        json.dumps(
            {
                "listening": server.listening_address,
                "xllamacpp": xlc.__version__,
                "system_info": xlc.get_system_info().strip(),
            }
        ),
        flush=True,
    )
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    return 0


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})  # delivered to sigwait, not a handler
    raise SystemExit(main())
