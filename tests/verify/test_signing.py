"""Signed result sets (issue 48, part 4): `harness sign` writes an in-toto statement in a DSSE envelope signed with
ed25519, `harness verify --signed-by` checks the signature, every signed digest and the provenance against the set's
manifests, naming the first thing that differs; the committed sets are signed with the key checksums/allowed_signers
names."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.cli import main
from harness.core.paths import REPO_ROOT
from harness.core.sums import COMMITTED_SUMS, SIGNATURE_FILE, read_sums, write_own_sums
from harness.verify import dsse
from harness.verify.keys import SigningKeyError, generate, load_private_key, read_allowed_signers
from harness.verify.provenance import ProvenanceError, check_signed, sign_set, statement

ALLOWED = REPO_ROOT / "checksums" / "allowed_signers"
COMMITTED_SETS = sorted(p for p in (REPO_ROOT / "results").iterdir() if p.is_dir())


@pytest.fixture
def signed_set(tmp_path):
    """A copy of the committed gold-solve set with its own SHA256SUMS, signed with a new kit key; (set, key
    file, allowed-signers file)."""
    root = tmp_path / "root"
    result_set = root / "gold-solve"
    shutil.copytree(
        REPO_ROOT / "results" / "gold-solve", result_set, ignore=shutil.ignore_patterns(".cache", SIGNATURE_FILE)
    )
    write_own_sums(result_set)
    key = tmp_path / "keys" / "id_ed25519"
    pub, _ = generate(key, "tester")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text("# test\ntester " + " ".join(pub.read_text().split()[:2]) + "\n")
    sign_set(result_set, load_private_key(key))
    return result_set, key, allowed


def _verify(root: Path, allowed: Path):
    return CliRunner().invoke(main, ["verify", "--results", str(root), "--signed-by", str(allowed), "--skip-tables"])


def test_pae_is_the_spec_encoding():
    # the worked example of DSSE's protocol.md
    assert (
        dsse.pae("http://example.com/HelloWorld", b"hello world")
        == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )
    assert dsse.pae("t", "é".encode()) == "DSSEv1 1 t 2 é".encode()  # lengths in bytes, not characters


def test_a_signed_set_verifies_and_names_its_signer(signed_set):
    result_set, _, allowed = signed_set
    note = check_signed(result_set, read_allowed_signers(allowed))
    assert note.startswith(
        f"signature: {result_set}: 28 files and the provenance of 1 run(s) signed by tester (SHA256:"
    )
    envelope = json.loads((result_set / SIGNATURE_FILE).read_text())
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    payload = json.loads(base64.b64decode(envelope["payload"]))
    assert payload["_type"] == "https://in-toto.io/Statement/v1"
    sums = read_sums(result_set / "SHA256SUMS")
    assert {s["name"]: s["digest"]["sha256"] for s in payload["subject"]} == sums
    run = payload["predicate"]["runs"][0]
    assert run["dataset"]["sha256"] == "d653fe0b83289259f2eaa90784234a066bfec0414d502d28590de19a14239604"
    assert set(run) >= {"kit", "model", "executor", "launcher", "server_version"}
    assert "requirements.lock" in payload["predicate"]["locks"]
    assert payload["predicate"]["images"]["vllm"]["own"]["lock"] == "requirements-vllm-gpu.lock"
    r = _verify(result_set.parent, allowed)
    assert r.exit_code == 0 and "verify OK" in r.output, r.output


def test_an_edited_record_with_rewritten_sums_is_refused_naming_the_record(signed_set):
    result_set, _, allowed = signed_set
    record_file = result_set / "library" / "gold-lib" / "seed42.jsonl"
    lines = record_file.read_text().splitlines(keepends=True)
    record = json.loads(lines[0])
    record["latency_ms"] = (record["latency_ms"] or 0) + 1  # a field no rescoring recomputes
    lines[0] = json.dumps(record) + "\n"
    record_file.write_text("".join(lines))
    write_own_sums(result_set)  # the sums agree with the edit
    r = _verify(result_set.parent, allowed)
    assert r.exit_code == 1, r.output
    problems = [line for line in r.output.splitlines() if line.startswith(("SIGNATURE", "CHANGED", "RESCORE"))]
    assert problems == [
        f"SIGNATURE {result_set}/library/gold-lib/seed42.jsonl: sha256 "
        f"{problems[0].split('sha256 ')[1][:16]}... differs from the signed "
        f"{problems[0].split('the signed ')[1][:16]}... (changed after signing)"
    ], r.output


def test_a_file_added_or_removed_after_signing_is_named(signed_set):
    result_set, _, allowed = signed_set
    keys = read_allowed_signers(allowed)
    (result_set / "tables" / "extra.md").write_text("added\n")
    with pytest.raises(ProvenanceError, match=r"tables/extra\.md: not among the signed files"):
        check_signed(result_set, keys)
    (result_set / "tables" / "extra.md").unlink()
    victim = sorted((result_set / "tables").iterdir())[0]
    victim.unlink()
    with pytest.raises(ProvenanceError, match=rf"tables/{victim.name}: signed but missing"):
        check_signed(result_set, keys)


def test_provenance_that_disagrees_with_the_manifests_is_named_by_field(signed_set):
    result_set, key, allowed = signed_set
    forged = statement(result_set)
    forged["predicate"]["runs"][0]["model"]["revision"] = "abc123"
    payload = json.dumps(forged).encode()
    (result_set / SIGNATURE_FILE).write_text(dsse.dumps(dsse.sign(payload, load_private_key(key))))
    with pytest.raises(
        ProvenanceError,
        match=r"provenance differs from its manifests: predicate\.runs\[0\]\.model\."
        r"revision: signed 'abc123', the manifests say None",
    ):
        check_signed(result_set, read_allowed_signers(allowed))


def test_another_key_or_a_changed_envelope_is_refused(signed_set, tmp_path):
    result_set, _, allowed = signed_set
    other_pub, _ = generate(tmp_path / "other" / "id_ed25519", "other")
    other = tmp_path / "other_signers"
    other.write_text("other " + " ".join(other_pub.read_text().split()[:2]) + "\n")
    with pytest.raises(ProvenanceError, match=r"provenance\.dsse\.json: signed by SHA256:\S+, no key of the allowed"):
        check_signed(result_set, read_allowed_signers(other))
    envelope = json.loads((result_set / SIGNATURE_FILE).read_text())
    body = json.loads(base64.b64decode(envelope["payload"]))
    body["subject"][0]["digest"]["sha256"] = "0" * 64
    envelope["payload"] = base64.b64encode(json.dumps(body).encode()).decode()
    (result_set / SIGNATURE_FILE).write_text(json.dumps(envelope))
    with pytest.raises(ProvenanceError, match="no signature verifies under the allowed signers' keys"):
        check_signed(result_set, read_allowed_signers(allowed))
    (result_set / SIGNATURE_FILE).unlink()
    with pytest.raises(ProvenanceError, match=r"not signed \(no provenance\.dsse\.json; `harness sign"):
        check_signed(result_set, read_allowed_signers(allowed))


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="OpenSSH's ssh-keygen is not installed")
def test_a_researchers_openssh_key_signs_and_ssh_keygen_agrees_on_its_fingerprint(signed_set, tmp_path):
    result_set, _, _ = signed_set
    key = tmp_path / "ssh" / "id_ed25519"
    key.parent.mkdir()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "me@lab", "-f", str(key)], check=True)
    allowed = tmp_path / "allowed"
    allowed.write_text('me@lab namespaces="file" ' + " ".join(Path(f"{key}.pub").read_text().split()[:2]) + "\n")
    r = CliRunner().invoke(main, ["sign", str(result_set), "--key", str(key)])
    assert r.exit_code == 0, r.output
    note = check_signed(result_set, read_allowed_signers(allowed))
    ssh_fp = subprocess.run(
        ["ssh-keygen", "-l", "-f", f"{key}.pub"], capture_output=True, text=True, check=True
    ).stdout.split()[1]
    assert f"signed by me@lab ({ssh_fp}, " in note


def test_keys_other_than_ed25519_and_keys_in_the_checkout_are_refused(tmp_path):
    rsa_key = tmp_path / "id_rsa"
    rsa_key.write_bytes(
        rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
        )
    )
    with pytest.raises(SigningKeyError, match=r"id_rsa: a RSA key; result sets are signed with ed25519 only"):
        load_private_key(rsa_key)
    allowed = tmp_path / "allowed"
    allowed.write_text("someone ssh-rsa AAAAB3NzaC1yc2E= x\n")
    with pytest.raises(SigningKeyError, match=r"allowed:1: a ssh-rsa key"):
        read_allowed_signers(allowed)
    r = CliRunner().invoke(main, ["keygen", "--out", str(REPO_ROOT / "runs" / "key")])
    assert r.exit_code == 1 and "inside the kit's checkout" in r.output
    key = tmp_path / "k"
    generate(key, "x")
    assert key.stat().st_mode & 0o777 == 0o600
    with pytest.raises(SigningKeyError, match="never overwrites"):
        generate(key, "x")
    Ed25519PrivateKey.generate()  # (the library the kit signs with)


@pytest.mark.parametrize("result_set", COMMITTED_SETS, ids=[p.name for p in COMMITTED_SETS])
def test_the_committed_sets_are_signed_by_the_committed_key(result_set):
    """Fails when a committed set changes without a re-sign (`harness sign results/SET --key KEY`, the maintainers'
    key) or when its signature file is missing."""
    note = check_signed(result_set, read_allowed_signers(ALLOWED))
    assert "signed by mathsolver-kit-results" in note
    listed = read_sums(COMMITTED_SUMS)
    assert f"results/{result_set.name}/{SIGNATURE_FILE}" not in listed  # it signs the sums' files; none lists it


def test_a_set_whose_files_differ_from_its_sums_is_not_signed(signed_set):
    result_set, key, _ = signed_set
    (result_set / "tables" / "extra.md").write_text("added\n")
    with pytest.raises(ProvenanceError, match=r"tables/extra\.md: not in the set's sums"):
        sign_set(result_set, load_private_key(key))
    (result_set / "tables" / "extra.md").unlink()
    record_file = result_set / "library" / "gold-lib" / "seed42.jsonl"
    record_file.write_text(record_file.read_text() + "\n")
    r = CliRunner().invoke(main, ["sign", str(result_set), "--key", str(key)])
    assert r.exit_code == 1 and "library/gold-lib/seed42.jsonl: differs from its sums" in r.output, r.output
