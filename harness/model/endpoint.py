"""What a server the kit did not start says about itself, as a run manifest records it (`ServerInfo`): a user's own
vLLM endpoint (`harness run --server-profile vllm --base-url ...`, `harness serve reproduce --launcher external`).

vLLM answers GET /version (at the API root, beside /v1) with its release, and lists each served model at GET
/v1/models with the weights it loaded (`root`), its context length (`max_model_len`) and `owned_by: "vllm"`. The
server is recorded as vLLM only when it says so (its /version answers and the model entry is owned by vllm, or the
run's client profile is vllm's); nothing is guessed from the URL or the model name. What the kit cannot know of such
a server (its flags, environment, kernels, image) stays unrecorded, and the comparison says "not recorded"."""
from __future__ import annotations

import httpx

from harness.model.client import api_key_from_env
from harness.model.server_info import ServedModel, ServerInfo

VLLM_PROFILES = ("vllm", "vllm-seeded")


def served_vllm_version(base_url: str, timeout: float = 10.0, *, api_key_env: str | None = None) -> str | None:
    """The version a running vLLM server reports at GET /version (its root, beside /v1); None if it does not. The
    API key goes with it as with every request of the run (vLLM itself asks none for /version)."""
    root = base_url[:-3] if base_url.endswith("/v1") else base_url
    key = api_key_from_env(api_key_env)
    try:
        resp = httpx.get(f"{root}/version", timeout=timeout, headers={"Authorization": f"Bearer {key}"} if key else None)
        return str(resp.json().get("version")) if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None


def served_model(entries: list[dict], model_id: str) -> ServedModel | None:
    """The model's entry of GET /v1/models (listed_models), typed; None when the server does not list it."""
    entry = next((e for e in entries if e.get("id") == model_id), None)
    if entry is None:
        return None
    length = entry.get("max_model_len")
    return ServedModel(id=model_id, root=entry.get("root") if isinstance(entry.get("root"), str) else None,
                       max_model_len=length if isinstance(length, int) else None,
                       owned_by=entry.get("owned_by") if isinstance(entry.get("owned_by"), str) else None)


def endpoint_info(base_url: str, model_id: str, server_profile: str, entries: list[dict], *,
                  launcher: str = "external", api_key_env: str | None = None) -> ServerInfo:
    """A running server as it describes itself (module docstring); `entries`: its GET /v1/models (listed_models)."""
    model = served_model(entries, model_id)
    version = served_vllm_version(base_url, api_key_env=api_key_env)
    is_vllm = version is not None and ((model is not None and model.owned_by == "vllm")
                                       or server_profile in VLLM_PROFILES)
    return ServerInfo(launcher=launcher, base_url=base_url, model_id=model_id, server_profile=server_profile,
                      server="vLLM" if is_vllm else None, server_version=version if is_vllm else None,
                      served_model=model,
                      facts={"note": "started and stopped outside the kit: its version and served model are what it "
                                     "answered at GET /version and GET /v1/models; its flags, environment and weights' "
                                     "revision are not known to the kit",
                             "version_answer": version})
