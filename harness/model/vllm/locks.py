"""The pinned vLLM release, its models and their serving flags: `containers/vllm/` read and written in one place.

Generation config. Unless started with `--generation-config vllm`, vLLM fills every sampling field a request
leaves unset from the model's `generation_config.json` (Qwen2.5-7B-Instruct: top_p 0.8, top_k 20,
repetition_penalty 1.05). At temperature 0 vLLM resets top_p/top_k/min_p for greedy sampling, so only
repetition_penalty changes greedy output; at temperature 0.7 all of them apply. `auto` has been vLLM's default
since 0.8; the paper names no vLLM version, so that it ran `auto` is an assumption (stated in the plan).

Deterministic mode. `VLLM_BATCH_INVARIANT=1`, `--attention-backend FLASH_ATTN` (0.32.0 has no
VLLM_ATTENTION_BACKEND; a selected backend without batch-invariance support is refused at start) and prefix caching
off. A model whose pinned release path is not batch-invariant (serving.json `deterministic.refused`) is refused by
name: a manifest never claims a determinism the release does not give.

The image. `VLLM_IMAGE` chooses which image serves: `own` (the default), the kit's own image built from
requirements-vllm-gpu.lock by `make vllm-image` and named by that lock's sha256 (image.lock.json `own`, with the
record of the kit's build: its content, the rootfs sha256, and docker's image id), or `upstream`, the official
`vllm/vllm-openai` image by its registry digest (the top-level fields of image.lock.json; `make pin-images WRITE=1`
resolves the digest on a networked box).

Writing. `update_model_pins`, `update_image_pin` and `update_own_build` are the only writers of the lock files
(`harness serve pin-models` / `pin-images` resolve the revisions and digests on a networked machine, `harness serve
vllm-image record` hands over a build of the kit's image).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness.core.paths import REPO_ROOT

DEFAULT_VLLM_DIR = REPO_ROOT / "containers" / "vllm"
FULL_REVISION = re.compile(r"^[0-9a-f]{40}$")
FULL_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
UNRESOLVED_DIGEST = "<digest not resolved: make pin-images WRITE=1 on a networked machine>"
IMAGE_LOCK = "image.lock.json"
GPU_LOCK = REPO_ROOT / "requirements-vllm-gpu.lock"  # the kit's own image's Python packages (make vllm-image)
IMAGE_ENV = "VLLM_IMAGE"
IMAGE_CHOICES = ("own", "upstream")
MODELS_LOCK = "models.lock.json"
SERVING = "serving.json"


class PinError(ValueError):
    """A model or image is not pinned to a full revision or digest; the message names the file and entry."""


class DeterminismRefused(PinError):
    """Deterministic mode asked for a model the pinned vLLM release cannot serve batch-invariantly."""


def vllm_dir() -> Path:
    """Directory of the three lock/config files: $MATHSOLVER_VLLM_DIR or containers/vllm."""
    env = os.environ.get("MATHSOLVER_VLLM_DIR")
    return Path(env) if env else DEFAULT_VLLM_DIR


def load_json(name: str) -> dict:
    path = vllm_dir() / name
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise PinError(f"{path} missing") from None
    except json.JSONDecodeError as exc:
        raise PinError(f"{path}: invalid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise PinError(f"{path}: expected a JSON object")
    return data


def write_json(name: str, data: dict) -> Path:
    """Rewrite one lock file (atomically; two-space indent and a final newline, as committed)."""
    path = vllm_dir() / name
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)
    return path


def image_lock() -> dict:
    lock = load_json(IMAGE_LOCK)
    for key in ("image", "tag"):
        if not lock.get(key):
            raise PinError(f"{vllm_dir() / IMAGE_LOCK}: field {key!r} missing")
    return lock


def image_choice() -> str:
    """Which image serves: $VLLM_IMAGE (`own`, the default, or `upstream`)."""
    choice = os.environ.get(IMAGE_ENV) or "own"
    if choice not in IMAGE_CHOICES:
        raise PinError(
            f"{IMAGE_ENV}={choice!r}: choose one of {', '.join(IMAGE_CHOICES)} (own: the kit's image, "
            "make vllm-image; upstream: vllm/vllm-openai by digest, make pin-images)"
        )
    return choice


def own_image() -> dict:
    """image.lock.json `own`: the kit's image, checked against the lock it is named by (PinError when the lock file
    changed since the entry was written: the recorded build would then be of other packages)."""
    lock = image_lock()
    own = lock.get("own")
    where = vllm_dir() / IMAGE_LOCK
    if not isinstance(own, dict) or not own.get("image") or not own.get("lock_sha256"):
        raise PinError(f"{where}: no `own` image entry (image, lock_sha256)")
    try:
        digest = hashlib.sha256(GPU_LOCK.read_bytes()).hexdigest()
    except OSError:
        raise PinError(f"{GPU_LOCK} missing: the kit's image is named by it") from None
    if digest != own["lock_sha256"] or own.get("tag") != digest[:16]:
        raise PinError(
            f"{where}: `own` names {GPU_LOCK.name} sha256 {own['lock_sha256'][:16]}..., the file is "
            f"{digest[:16]}...: rebuild and record the image (make vllm-image WRITE=1)"
        )
    return own


def image_reference(*, planned: bool = False, choice: str | None = None) -> str:
    """The image that serves (`choice`, else $VLLM_IMAGE). The kit's own: `mathsolver-vllm:<lock sha256[:16]>`, built
    on the box by `make vllm-image`. Upstream's: `image:tag@sha256:...`; docker pulls by the digest (the tag is kept
    for reading). A lock whose upstream digest is not resolved yet (`digest: null`) is refused, except for a plan
    (`planned`), which shows the reference with a placeholder no docker can pull."""
    if (choice or image_choice()) == "own":
        own = own_image()
        return f"{own['image']}:{own['tag']}"
    lock = image_lock()
    digest = lock.get("digest")
    if not digest and planned:
        return f"{lock['image']}:{lock['tag']}@{UNRESOLVED_DIGEST}"
    if not FULL_DIGEST.match(str(digest or "")):
        raise PinError(
            f"{vllm_dir() / IMAGE_LOCK}: digest {digest!r} is not a full sha256 digest; "
            "run `make pin-images WRITE=1` (harness serve pin-images --write) on a machine that reaches "
            "Docker Hub"
        )
    return f"{lock['image']}:{lock['tag']}@{digest}"


def _models() -> dict:
    models = load_json(MODELS_LOCK).get("models")
    if not isinstance(models, dict) or not models:
        raise PinError(f"{vllm_dir() / MODELS_LOCK}: no 'models' object")
    return models


def model_entry(key: str) -> dict:
    """The lock entry of a model key, pinned or not (PinError for an unknown key)."""
    models = _models()
    if key not in models:
        raise PinError(f"unknown model {key!r}; {vllm_dir() / MODELS_LOCK} has {', '.join(models)}")
    return models[key]


def model_lock(key: str) -> dict:
    """The lock entry, only if it is pinned to a full 40-character commit: the kit refuses to serve otherwise."""
    entry = model_entry(key)
    if not FULL_REVISION.match(str(entry.get("revision") or "")):
        raise PinError(
            f"{vllm_dir() / MODELS_LOCK}: {key} ({entry.get('repo')}) is not pinned to a full "
            f"40-character commit (got {entry.get('revision')!r}); run `make pin-models` on a networked "
            "machine. The kit refuses to serve an unpinned model."
        )
    return entry


def all_model_keys() -> list[str]:
    return list(_models())


def serving_config() -> dict:
    return load_json(SERVING)


def deterministic_refusal(key: str) -> str | None:
    """Why deterministic mode is refused for model `key` on the pinned release (None: it is not)."""
    return (serving_config().get("deterministic", {}).get("refused") or {}).get(key)


def serving_flags(key: str, *, generation_config: str = "auto", deterministic: bool = False) -> dict:
    """The resolved flag set for one model: defaults, then the model's own overrides, then the options."""
    serving = serving_config()
    why = deterministic_refusal(key) if deterministic else None
    if why:
        raise DeterminismRefused(
            f"DETERMINISTIC=1 refused for {key}: {why}. Leave {key} out of MODELS or run without DETERMINISTIC=1"
        )
    if key not in serving.get("models", {}):
        raise PinError(f"{vllm_dir() / SERVING}: no serving flags for model {key!r}")
    choices = serving.get("generation_config_choices", {})
    if generation_config not in choices:
        raise PinError(f"--generation-config must be one of {', '.join(sorted(choices))}, not {generation_config!r}")
    flags = {**serving["defaults"], **serving["models"][key], "generation_config": generation_config}
    flags["deterministic"] = bool(deterministic)
    if deterministic:
        flags["enable_prefix_caching"] = False
    return flags


def throughput_assumption(key: str) -> dict:
    """The stated H100 throughput assumption for a model (dry-run time estimate)."""
    table = serving_config().get("throughput_assumptions", {})
    if key not in table.get("models", {}):
        raise PinError(f"{vllm_dir() / SERVING}: no throughput assumption for model {key!r}")
    return {
        **table["models"][key],
        "deterministic_slowdown": table.get("deterministic_slowdown", 1.0),
        "source": table.get("source", ""),
    }


def contract() -> dict:
    """The pinned release's serving contract (image.lock.json `contract`, extracted from the vLLM wheel)."""
    from harness.model.vllm.contract import ContractError, load_contract

    name = image_lock().get("contract")
    if not name:
        raise PinError(f"{vllm_dir() / IMAGE_LOCK}: field 'contract' missing")
    try:
        return load_contract(vllm_dir() / name)
    except ContractError as exc:
        raise PinError(str(exc)) from None


def contract_pin(platform: str = "cuda") -> dict:
    """What a server description records of the contract its command was checked against."""
    c = contract()
    return {
        "file": image_lock().get("contract"),
        "vllm_version": c["vllm_version"],
        "wheel": c.get("wheel"),
        "wheel_sha256": c["wheel_sha256"],
        "platform": platform,
    }


# --------------------------------------------------------------------------- writing (pin-models, pin-images)


@dataclass(frozen=True)
class PinUpdate:
    """What one pin-models or pin-images pass found and did: entries changed, entries confirmed, the file written."""

    changed: list[str]
    confirmed: list[str]
    written: Path | None


def update_model_pins(resolved: dict[str, str], *, write: bool, today: str) -> PinUpdate:
    """Set the resolved `main` commits (model key -> 40-hex sha) against models.lock.json: a changed revision is
    replaced (with where it came from), an equal one marked re-resolved; written only with `write`."""
    lock = load_json(MODELS_LOCK)
    changed, confirmed = [], []
    for key, sha in resolved.items():
        entry = lock["models"][key]
        if sha == entry.get("revision"):
            if entry.get("revision_confidence") != "re-resolved":
                entry["revision_confidence"] = "re-resolved"
                entry["revision_resolved_on"] = today
                confirmed.append(key)
            continue
        changed.append(key)
        entry["revision"] = sha
        entry["revision_source"] = f"`harness serve pin-models`: main resolved with HfApi().model_info on {today}"
        entry["revision_confidence"] = "re-resolved"
        entry["revision_resolved_on"] = today
    written = write_json(MODELS_LOCK, lock) if write and (changed or confirmed) else None
    return PinUpdate(changed, confirmed, written)


def update_own_build(build: dict) -> Path:
    """Record a build of the kit's image (harness serve vllm-image record: the maintainers' build) in image.lock.json
    `own.build`: what `make reproduce DRY_RUN=1` shows and a box's own build is compared with."""
    own = own_image()
    lock = image_lock()
    lock["own"] = {**own, "build": build}
    return write_json(IMAGE_LOCK, lock)


def update_image_pin(digest: str, *, write: bool, today: str) -> PinUpdate:
    """Set the digest docker resolved for the locked tag against image.lock.json (written only with `write`)."""
    lock = image_lock()
    ref = f"{lock['image']}:{lock['tag']}"
    if digest == lock.get("digest"):
        if lock.get("digest_confidence") == "re-resolved":
            return PinUpdate([], [], None)
        lock["digest_confidence"] = "re-resolved"
        lock["digest_resolved_on"] = today
        return PinUpdate([], [ref], write_json(IMAGE_LOCK, lock) if write else None)
    lock.update(
        digest=digest,
        reference=f"{ref}@{digest}",
        digest_confidence="re-resolved",
        digest_resolved_on=today,
        digest_source=f"`harness serve pin-images` on {today}: docker pull {ref}, then docker inspect RepoDigests",
    )
    return PinUpdate([ref], [], write_json(IMAGE_LOCK, lock) if write else None)
