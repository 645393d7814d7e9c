"""A server the kit did not start: what it says about itself, as a run manifest records it (`ServerInfo`), and the
`external` launcher that adopts it (`harness reproduce --launcher external --base-url ...`; `harness run
--base-url ...` records the same description).

vLLM answers GET /version (at the API root, beside /v1) with its release, and lists each served model at GET
/v1/models with the weights it loaded (`root`), its context length (`max_model_len`) and `owned_by: "vllm"`. The
server is recorded as vLLM only when it says so (its /version answers and the model entry is owned by vllm, or the
run's client profile is vllm's); nothing is guessed from the URL or the model name. What the kit cannot know of such
a server (its flags, environment, kernels, image) stays unrecorded, and the comparison says "not recorded"."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from harness.model.client import api_key_from_env, auth_problem
from harness.model.preflight import listed_models
from harness.model.prerequisites import Check
from harness.model.server_info import ServedModel, ServerInfo
from harness.model.serving import Launcher, LauncherSettingsError, LaunchOptions, poll_models

VLLM_PROFILES = ("vllm", "vllm-seeded")


def served_vllm_version(base_url: str, timeout: float = 10.0, *, api_key_env: str | None = None) -> str | None:
    """The version a running vLLM server reports at GET /version (its root, beside /v1); None if it does not. The
    API key goes with it as with every request of the run (vLLM itself asks none for /version)."""
    root = base_url[:-3] if base_url.endswith("/v1") else base_url
    key = api_key_from_env(api_key_env)
    try:
        resp = httpx.get(
            f"{root}/version", timeout=timeout, headers={"Authorization": f"Bearer {key}"} if key else None
        )
        return str(resp.json().get("version")) if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None


def served_model(entries: list[dict], model_id: str) -> ServedModel | None:
    """The model's entry of GET /v1/models (listed_models), typed; None when the server does not list it."""
    entry = next((e for e in entries if e.get("id") == model_id), None)
    if entry is None:
        return None
    length = entry.get("max_model_len")
    return ServedModel(
        id=model_id,
        root=entry.get("root") if isinstance(entry.get("root"), str) else None,
        max_model_len=length if isinstance(length, int) else None,
        owned_by=entry.get("owned_by") if isinstance(entry.get("owned_by"), str) else None,
    )


def endpoint_info(
    base_url: str,
    model_id: str,
    server_profile: str,
    entries: list[dict],
    *,
    launcher: str = "external",
    api_key_env: str | None = None,
) -> ServerInfo:
    """A running server as it describes itself (module docstring); `entries`: its GET /v1/models (listed_models)."""
    model = served_model(entries, model_id)
    version = served_vllm_version(base_url, api_key_env=api_key_env)
    is_vllm = version is not None and (
        (model is not None and model.owned_by == "vllm") or server_profile in VLLM_PROFILES
    )
    return ServerInfo(
        launcher=launcher,
        base_url=base_url,
        model_id=model_id,
        server_profile=server_profile,
        server="vLLM" if is_vllm else None,
        server_version=version if is_vllm else None,
        served_model=model,
        facts={
            "note": "started and stopped outside the kit: its version and served model are what it "
            "answered at GET /version and GET /v1/models; its flags, environment and weights' "
            "revision are not known to the kit",
            "version_answer": version,
        },
    )


@dataclass
class ExternalLauncher(Launcher):
    """A server the kit does not start: an OpenAI-compatible endpoint already running at `base_url` (a shared
    cluster server, say). start() and stop() do nothing; wait_ready() polls its /models for the model id and asks it
    what it is (endpoint_info)."""

    name = "external"
    summary = "an OpenAI-compatible server already running at --base-url (never started or stopped by the kit)"

    base_url: str = "http://127.0.0.1:8000/v1"
    model_id: str = ""
    server_profile: str = "plain"
    _said: ServerInfo | None = field(default=None, init=False, repr=False)

    # ---- the kind ----
    @classmethod
    def known_models(cls, named: list[str]) -> list[str]:
        return [n for n in named if n != "all"]

    @classmethod
    def resolve_models(cls, names: list[str]) -> list[str]:
        if not names or "all" in names:
            raise LauncherSettingsError(
                "the external launcher serves what runs at --base-url: name the served model "
                "id(s) with --models (MODELS=)"
            )
        return list(dict.fromkeys(names))

    @classmethod
    def check_config(cls, *, base_url: str | None, deterministic: bool) -> None:
        if not base_url:
            raise LauncherSettingsError("the external launcher needs --base-url (BASE_URL=), e.g. http://host:8000/v1")
        if deterministic:
            raise LauncherSettingsError(
                "--deterministic is a vLLM launcher option; an external server is configured where it runs"
            )

    @classmethod
    def for_model(cls, key: str, options: LaunchOptions) -> ExternalLauncher:
        if not options.base_url:
            raise LauncherSettingsError("the external launcher needs --base-url")
        return cls(
            base_url=options.base_url.rstrip("/"), model_id=key, server_profile=options.server_profile or "plain"
        )

    @classmethod
    def prerequisites(cls, models: list[str], options: LaunchOptions) -> list[Check]:
        """The server answers GET /models (with $OPENAI_API_KEY, as the run's client sends it) and lists every model
        id the run names."""
        base_url = options.base_url
        try:
            key = api_key_from_env()
            resp = httpx.get(
                f"{str(base_url).rstrip('/')}/models",
                timeout=10.0,
                headers={"Authorization": f"Bearer {key}"} if key else None,
            )
            listed = [m.get("id") for m in resp.json().get("data", [])] if resp.status_code == 200 else []
            seen = (
                f"lists {listed}"
                if resp.status_code == 200
                else auth_problem(resp.status_code, "GET /models", bool(key), None)
                if resp.status_code in (401, 403)
                else f"HTTP {resp.status_code}"
            )
        except (httpx.HTTPError, ValueError) as exc:
            listed, seen = [], f"no answer ({type(exc).__name__})"
        missing = [m for m in models if m not in listed]
        return [
            Check(
                f"external server {base_url}",
                not missing,
                seen + (f"; missing {missing}" if missing else ""),
                "start the server, or name the model ids it serves with --models",
            )
        ]

    @classmethod
    def weights_bytes(cls, key: str) -> int | None:
        return 0

    # ---- one server ----
    def start(self) -> None:
        pass

    def wait_ready(self, timeout: float = 300.0) -> None:
        poll_models(self.base_url, self.model_id, timeout)
        self._said = endpoint_info(
            self.base_url, self.model_id, self.server_profile, listed_models(self.base_url, api_key_env=None)
        )

    def stop(self) -> None:
        pass

    def describe(self) -> ServerInfo:
        """Once ready, what the server said about itself (endpoint_info); before, only where it is."""
        return self._said or ServerInfo(
            launcher=self.name,
            base_url=self.base_url,
            model_id=self.model_id,
            server_profile=self.server_profile,
            facts={"note": "started and stopped outside the kit; its weights' revision is not known to it"},
        )
