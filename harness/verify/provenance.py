"""Signed result sets: an in-toto Statement v1 (github.com/in-toto/attestation, spec/v1/statement.md) about a result
set, in a DSSE envelope (harness.verify.dsse) signed with ed25519, written into the set as `provenance.dsse.json`
(core.sums.SIGNATURE_FILE, which no sums file lists: it signs them). `harness sign` writes it, `harness verify
--signed-by KEYS` checks it.

The statement:
- subject: every file of the set's sums (its SHA256SUMS, or the committed list's entries for a committed set), by
  its path in the set and its sha256;
- predicateType PREDICATE_TYPE, predicate:
  - `runs`: per run manifest of the set (sorted by run id), what produced it: the kit's commit (and whether the
    checkout was dirty), the dataset (name, content sha256, revision), the model and its revision (the record keys'
    and the server's), the executor's policy hash and image (name, image id, rootfs sha256), the launcher, the
    server's version (its /version) and image. `harness verify` re-derives this part from the set's manifests.
  - `datasets`: each dataset's pins entry (checksums/datasets.json: revision, source) as the signing checkout had it;
  - `images`: the kit's vLLM serving image as containers/vllm/image.lock.json records it (own image, its lock's
    sha256, its rootfs; upstream's reference), the executor image as the runs name it;
  - `locks`: the sha256 of every lock file of the signing checkout (requirements*.lock, containers/*/*lock*);
  - `signer_checkout`: the commit and dirty flag of the checkout that signed.
  The last four are what the signer attests; a verifier reads them, it cannot re-derive them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.core.hashing import file_sha256
from harness.core.paths import REPO_ROOT
from harness.core.sums import SIGNATURE_FILE, SumsError, covered_files, sums_for
from harness.data.pins import load_pins
from harness.run.manifest import ManifestError, RunManifest, run_manifests
from harness.verify import dsse
from harness.verify.keys import AllowedSigner

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "urn:mathsolver-kit:result-set-provenance:v1"


class ProvenanceError(ValueError):
    """A set that cannot be signed or whose signature does not hold (the message names the set or the file)."""


def _shown(path: Path) -> str:
    path = Path(path).resolve()
    return path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else str(path)


def subjects(result_set: Path) -> list[dict]:
    """Every file of the set's sums: {"name": path in the set, "digest": {"sha256": ...}}, sorted by name."""
    result_set = Path(result_set).resolve()
    try:
        found = sums_for(result_set)
    except SumsError as exc:
        raise ProvenanceError(str(exc)) from None
    if found is None:
        raise ProvenanceError(
            f"{_shown(result_set)}: no sums cover it (`harness checksums update --results "
            f"{_shown(result_set)}` writes them); a set is signed as its sums list it"
        )
    out = []
    for rel, digest in found.entries.items():
        path = (found.base / rel).resolve()
        if path.is_relative_to(result_set):
            out.append({"name": path.relative_to(result_set).as_posix(), "digest": {"sha256": digest}})
    if not out:
        raise ProvenanceError(f"{_shown(result_set)}: its sums ({_shown(found.source)}) list no file of it")
    return sorted(out, key=lambda s: s["name"])


def run_facts(manifest: RunManifest) -> dict:
    """What produced one run, from its manifest (the part of the predicate a verifier re-derives)."""
    server, executor = manifest.server, manifest.executor
    return {
        "run_id": manifest.run_id,
        "kit": {"commit": manifest.origin.git.commit, "dirty": manifest.origin.git.dirty},
        "dataset": {
            "name": manifest.dataset.name,
            "sha256": manifest.dataset.sha256,
            "revision": manifest.dataset.revision,
        },
        "model": {
            "id": manifest.model.id,
            "revision": manifest.model.revision,
            "served_revision": server.revision if server else None,
        },
        "executor": None
        if executor is None
        else {
            "policy_hash": executor.policy_hash,
            "backend": executor.backend,
            "image": executor.image,
            "image_id": executor.image_id,
            "rootfs_sha256": executor.rootfs_sha256,
        },
        "launcher": server.launcher if server else None,
        "server_version": server.server_version if server else None,
        "server_image": server.image if server else None,
        "synthetic": manifest.synthetic,
    }


def runs(result_set: Path) -> list[dict]:
    try:
        found = run_manifests(result_set)
    except ManifestError as exc:
        raise ProvenanceError(str(exc)) from None
    return [run_facts(m) for m in sorted(found, key=lambda m: m.run_id)]


def _git(*args: str) -> str | None:
    try:
        r = subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def lock_files(root: Path = REPO_ROOT) -> dict[str, str]:
    """{path: sha256} of every lock file of the checkout: requirements*.lock and containers/*/*lock*."""
    paths = sorted(root.glob("requirements*.lock")) + sorted(p for p in root.glob("containers/*/*lock*") if p.is_file())
    return {p.relative_to(root).as_posix(): file_sha256(p) for p in paths}


def _vllm_image(root: Path = REPO_ROOT) -> dict | None:
    path = root / "containers" / "vllm" / "image.lock.json"
    if not path.is_file():
        return None
    lock = json.loads(path.read_text())
    own = lock.get("own") or {}
    build = own.get("build") or {}
    return {
        "own": {
            "image": f"{own.get('image')}:{own.get('tag')}",
            "lock": own.get("lock"),
            "lock_sha256": own.get("lock_sha256"),
            "image_id": build.get("image_id"),
            "rootfs_sha256": build.get("rootfs_sha256"),
        },
        "upstream": {"image": f"{lock.get('image')}:{lock.get('tag')}", "digest": lock.get("digest")},
    }


def predicate(result_set: Path) -> dict:
    found = runs(result_set)
    pins = load_pins().get("datasets", {})
    by_sha = {e.get("sha256"): (name, e) for name, e in pins.items() if isinstance(e, dict)}
    datasets = []
    for sha in sorted({r["dataset"]["sha256"] for r in found}):
        name, entry = by_sha.get(sha, (None, {}))
        datasets.append({"sha256": sha, "pin": name, "revision": entry.get("revision"), "source": entry.get("source")})
    executors = sorted({json.dumps(r["executor"], sort_keys=True) for r in found if r["executor"]})
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "runs": found,
        "datasets": datasets,
        "images": {"executor": [json.loads(e) for e in executors], "vllm": _vllm_image()},
        "locks": lock_files(),
        "signer_checkout": {"commit": _git("rev-parse", "HEAD"), "dirty": None if status is None else bool(status)},
    }


def statement(result_set: Path) -> dict:
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects(result_set),
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate(result_set),
    }


def sign_set(result_set: Path, key: Ed25519PrivateKey) -> Path:
    """Write the set's signed statement (SIGNATURE_FILE in the set); its path. Refused when a file differs from
    its sums or is not in them: a set is signed as it is, with sums that say so."""
    body = statement(result_set)
    root = Path(result_set).resolve()
    listed = {s["name"]: s["digest"]["sha256"] for s in body["subject"]}
    for name, digest in sorted(listed.items()):
        if not (root / name).is_file() or file_sha256(root / name) != digest:
            raise ProvenanceError(
                f"{_shown(root)}/{name}: differs from its sums (`harness checksums update` first, "
                "if the change is meant)"
            )
    for path in covered_files(root):
        if path.relative_to(root).as_posix() not in listed:
            raise ProvenanceError(f"{_shown(path)}: not in the set's sums (`harness checksums update` first)")
    payload = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    target = Path(result_set) / SIGNATURE_FILE
    target.write_text(dsse.dumps(dsse.sign(payload, key)))
    return target


def _first_difference(signed: object, now: object, path: str) -> str | None:
    """The first field path where two JSON values differ, with both values."""
    if isinstance(signed, dict) and isinstance(now, dict):
        for key in sorted(set(signed) | set(now)):
            found = _first_difference(signed.get(key, "<absent>"), now.get(key, "<absent>"), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(signed, list) and isinstance(now, list):
        for i, (a, b) in enumerate(zip(signed, now)):
            found = _first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(signed) != len(now):
            return f"{path}: {len(signed)} entries signed, {len(now)} now"
        return None
    return None if signed == now else f"{path}: signed {signed!r}, the manifests say {now!r}"


def check_signed(result_set: Path, allowed: list[AllowedSigner]) -> str:
    """The set's signature, every subject's digest, then the provenance against its manifests: a note naming the
    signer when all hold, else ProvenanceError naming the first thing that differs (the file, or the field)."""
    result_set = Path(result_set).resolve()
    shown = _shown(result_set)
    envelope_path = result_set / SIGNATURE_FILE
    if not envelope_path.is_file():
        raise ProvenanceError(f"{shown}: not signed (no {SIGNATURE_FILE}; `harness sign {shown} --key KEY` signs it)")
    try:
        envelope = json.loads(envelope_path.read_text())
        verified = dsse.verify(envelope, allowed)
    except (json.JSONDecodeError, dsse.EnvelopeError) as exc:
        raise ProvenanceError(f"{_shown(envelope_path)}: {exc}") from None
    try:
        statement_ = json.loads(verified.payload)
    except json.JSONDecodeError:
        raise ProvenanceError(f"{_shown(envelope_path)}: the signed payload is not JSON") from None
    if (
        verified.payload_type != dsse.INTOTO_PAYLOAD_TYPE
        or statement_.get("_type") != STATEMENT_TYPE
        or statement_.get("predicateType") != PREDICATE_TYPE
    ):
        raise ProvenanceError(
            f"{_shown(envelope_path)}: not this kit's in-toto statement ({verified.payload_type}, "
            f"{statement_.get('_type')}, {statement_.get('predicateType')})"
        )
    signed = {s["name"]: s["digest"]["sha256"] for s in statement_.get("subject", [])}
    for name, digest in sorted(signed.items()):
        path = result_set / name
        if not path.is_file():
            raise ProvenanceError(f"{shown}/{name}: signed but missing")
        if file_sha256(path) != digest:
            raise ProvenanceError(
                f"{shown}/{name}: sha256 {file_sha256(path)[:16]}... differs from the signed "
                f"{digest[:16]}... (changed after signing)"
            )
    for path in covered_files(result_set):
        name = path.relative_to(result_set).as_posix()
        if name not in signed:
            raise ProvenanceError(f"{shown}/{name}: not among the signed files (added after signing)")
    difference = _first_difference(statement_["predicate"].get("runs"), runs(result_set), "predicate.runs")
    if difference:
        raise ProvenanceError(f"{shown}: provenance differs from its manifests: {difference}")
    return (
        f"signature: {shown}: {len(signed)} files and the provenance of {len(statement_['predicate']['runs'])} "
        f"run(s) signed by {','.join(verified.signer.principals)} ({verified.signer.fingerprint}, "
        f"{verified.signer.where})"
    )
