"""Ed25519 signing keys as OpenSSH writes them: the private key a researcher already has (`~/.ssh/id_ed25519`, the
`openssh-key-v1` format) or one the kit makes (`harness keygen`), and the allowed-signers file that names whose
public keys a verifier trusts (the format of ssh-keygen(1)'s ALLOWED SIGNERS section:
`principal[,principal...] [options] ssh-ed25519 <base64> [comment]`, `#` comments).

Keys are parsed and serialised by the `cryptography` package (hash-locked in requirements.lock); nothing here does
cryptography by hand. A key is named by its OpenSSH fingerprint (`SHA256:` and the unpadded base64 of the sha256
of the public key's wire blob, as `ssh-keygen -l` prints it): the DSSE signature's `keyid`.
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes, PublicKeyTypes

KEY_TYPE = "ssh-ed25519"
PASSPHRASE_ENV = "HARNESS_SIGNING_PASSPHRASE"  # the passphrase of an encrypted private key, when it has one


class SigningKeyError(ValueError):
    """A key or allowed-signers file that cannot be used (the message names the file, and the line)."""


def fingerprint(public: Ed25519PublicKey) -> str:
    """`SHA256:...` as `ssh-keygen -l` prints it."""
    blob = base64.b64decode(public_line(public).split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def public_line(public: Ed25519PublicKey, comment: str = "") -> str:
    """`ssh-ed25519 <base64> [comment]`, the .pub file's line."""
    line = public.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    return f"{line} {comment}".rstrip()


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """An OpenSSH (or PEM PKCS#8) ed25519 private key; an encrypted one takes its passphrase from
    $HARNESS_SIGNING_PASSPHRASE. Any other key type is refused by name."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SigningKeyError(f"{path}: cannot read the private key ({exc.strerror})") from None
    passphrase = os.environ.get(PASSPHRASE_ENV)
    password = passphrase.encode() if passphrase else None
    key: PrivateKeyTypes
    try:
        if b"BEGIN OPENSSH PRIVATE KEY" in data:
            key = serialization.load_ssh_private_key(data, password=password)
        else:
            key = serialization.load_pem_private_key(data, password=password)
    except TypeError as exc:  # encrypted without a passphrase, or a passphrase for a plain key
        raise SigningKeyError(f"{path}: {exc} (an encrypted key takes its passphrase from ${PASSPHRASE_ENV})") from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise SigningKeyError(f"{path}: not an OpenSSH or PEM private key the kit can read ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(
            f"{path}: a {type(key).__name__.replace('PrivateKey', '')} key; result sets are signed with "
            "ed25519 only (ssh-keygen -t ed25519, or `harness keygen`)"
        )
    return key


def generate(path: Path, comment: str) -> tuple[Path, str]:
    """A new ed25519 key: the private half at `path` (OpenSSH format, mode 0600, never overwritten), the public half
    at `path`.pub; returns the .pub path and the key's fingerprint."""
    path = Path(path)
    if path.exists():
        raise SigningKeyError(f"{path}: exists; the kit never overwrites a private key")
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(private)
    pub = path.with_name(path.name + ".pub")
    pub.write_text(public_line(key.public_key(), comment) + "\n")
    return pub, fingerprint(key.public_key())


@dataclass(frozen=True)
class AllowedSigner:
    """One trusted public key: its principals, the key, where it was read."""

    principals: tuple[str, ...]
    key: Ed25519PublicKey
    where: str  # "FILE:LINE"

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key)


def read_allowed_signers(path: Path) -> list[AllowedSigner]:
    """Every ed25519 key of an allowed-signers file; a line that is not one is an error naming the line."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise SigningKeyError(f"{path}: cannot read the allowed signers ({exc.strerror})") from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        where = f"{path}:{number}"
        at = next((i for i, f in enumerate(fields) if f.startswith(("ssh-", "ecdsa-", "sk-"))), None)
        if at is None or at == 0 or at + 1 >= len(fields):
            raise SigningKeyError(f"{where}: not 'principals [options] ssh-ed25519 <base64> [comment]'")
        if fields[at] != KEY_TYPE:
            raise SigningKeyError(f"{where}: a {fields[at]} key; result sets are signed with ed25519 only")
        try:
            public: PublicKeyTypes = serialization.load_ssh_public_key(f"{fields[at]} {fields[at + 1]}".encode())
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise SigningKeyError(f"{where}: not a readable ssh-ed25519 public key ({exc})") from None
        if not isinstance(public, Ed25519PublicKey):
            raise SigningKeyError(f"{where}: not an ed25519 public key ({type(public).__name__})")
        out.append(AllowedSigner(tuple(fields[0].split(",")), public, where))
    if not out:
        raise SigningKeyError(f"{path}: no ssh-ed25519 key in it")
    return out
