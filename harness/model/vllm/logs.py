"""What a vLLM 0.32.0 server logs at start-up that a run records: the sampling defaults it applies and its version.

The defaults are logged once ("Default vLLM sampling parameters have been overridden by the model's
`generation_config.json`: `{...}`", vllm/config/model.py `get_diff_sampling_param`, the same dict for the chat and
completion endpoints):

    WARNING ... [model.py:1891] Default vLLM sampling parameters have been overridden by the model's
    `generation_config.json`: `{'repetition_penalty': 1.05, 'temperature': 0.7, 'top_k': 20, 'top_p': 0.8}`. If this
    is not intended, please relaunch vLLM instance with `--generation-config vllm`.

With --generation-config vllm (or a generation_config.json without sampling fields) there is no such line.
"""

from __future__ import annotations

import ast
import re

_OVERRIDE_LINE = re.compile(r"Default vLLM sampling parameters have been overridden by (.+?): `(\{.*?\})`")
# vllm/entrypoints/serve/utils/api_utils.py log_version_and_model: plain, or inside the start-up logo
_VERSION_LINE = re.compile(
    r"vLLM server version\s+v?([0-9][^\s,]*)|\bversion\s+(?:\x1b\[[0-9;]*m)?v?([0-9]+\.[0-9][^\s\x1b]*)"
)


def logged_sampling_defaults(log_text: str) -> dict | None:
    """{'source', 'chat', 'completion', 'override_warning'} from the server log; None if it logged none
    (then requests get vLLM's neutral defaults)."""
    m = _OVERRIDE_LINE.search(log_text)
    if not m:
        return None
    source, text = m.groups()
    try:
        value = ast.literal_eval(text)
        if not isinstance(value, dict):
            raise ValueError(text)
    except (ValueError, SyntaxError):
        value = {"unparsed": text}
    return {"source": source, "chat": value, "completion": value, "override_warning": True}


def logged_vllm_version(log_text: str) -> str | None:
    m = _VERSION_LINE.search(log_text)
    return (m.group(1) or m.group(2)) if m else None


# The kernels a 0.32.0 server says it chose, once each at start-up (INFO):
#   vllm/platforms/cuda.py:446                        "Using AttentionBackendEnum.FLASH_ATTN backend."
#   vllm/v1/attention/backends/flash_attn.py:1117-1120 "Using FlashAttention version 2"
#   vllm/v1/sample/ops/topk_topp_sampler.py:96-99     "FlashInfer top-p/top-k sampling disabled via VLLM_USE_FLASHINFER_SAMPLER=0."  # noqa: E501
#                                             :124    "Using FlashInfer for top-p & top-k sampling."
#                                             :131-134 "FlashInfer top-p/top-k sampling unavailable: <why>; falling back. ..."  # noqa: E501
_BACKEND_LINE = re.compile(r"Using (?:AttentionBackendEnum\.)?([A-Z][A-Z0-9_]+) backend")
_FA_LINE = re.compile(r"Using FlashAttention version (\d+)")
_SAMPLER_LINES = (
    (re.compile(r"FlashInfer top-p/top-k sampling disabled via VLLM_USE_FLASHINFER_SAMPLER=0"), "native"),
    (re.compile(r"Using FlashInfer for top-p & top-k sampling"), "flashinfer"),
    (
        re.compile(r"FlashInfer top-p/top-k sampling unavailable: (.*?); falling back"),
        "native (FlashInfer unavailable)",
    ),
)


def logged_kernels(log_text: str) -> dict:
    """{'attention_backend', 'flash_attn_version', 'sampler'} as the server logged them (each None when it logged
    nothing: the CPU platform logs no sampler choice and runs no FlashAttention). `sampler` is "native" (vLLM's own
    top-k/top-p sampler), "flashinfer", or "native (FlashInfer unavailable): <why>"."""
    backend = _BACKEND_LINE.search(log_text)
    fa = _FA_LINE.search(log_text)
    sampler = None
    for pattern, name in _SAMPLER_LINES:
        m = pattern.search(log_text)
        if m:
            sampler = f"{name}: {m.group(1)}" if m.groups() else name
            break
    return {
        "attention_backend": backend.group(1) if backend else None,
        "flash_attn_version": int(fa.group(1)) if fa else None,
        "sampler": sampler,
    }
