"""DSSE envelopes (Dead Simple Signing Envelope, protocol v1.0: github.com/secure-systems-lab/dsse, protocol.md and
envelope.md), signed with ed25519.

What is signed is never the JSON envelope but the Pre-Authentication Encoding of the payload type and the payload
bytes, as the spec defines it:

    PAE(type, body) = "DSSEv1" + SP + LEN(type) + SP + type + SP + LEN(body) + SP + body
    SP = one space (0x20); LEN(s) = the byte length of s as ASCII decimal, no leading zeros

The envelope is JSON: {"payload": base64(body), "payloadType": type, "signatures": [{"keyid": ..., "sig":
base64(signature)}]} (standard base64 with padding; a verifier also accepts URL-safe). The signature itself is
`cryptography`'s Ed25519 (RFC 8032): no hand-written crypto.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.verify.keys import AllowedSigner, fingerprint

INTOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"


class EnvelopeError(ValueError):
    """An envelope that is not a DSSE envelope, or whose signature no trusted key verifies."""


def pae(payload_type: str, payload: bytes) -> bytes:
    """The spec's Pre-Authentication Encoding (the bytes an envelope's signatures sign)."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def sign(payload: bytes, key: Ed25519PrivateKey, payload_type: str = INTOTO_PAYLOAD_TYPE) -> dict:
    """An envelope holding `payload` with one ed25519 signature, keyid the key's OpenSSH fingerprint."""
    signature = key.sign(pae(payload_type, payload))
    return {
        "payload": base64.b64encode(payload).decode(),
        "payloadType": payload_type,
        "signatures": [{"keyid": fingerprint(key.public_key()), "sig": base64.b64encode(signature).decode()}],
    }


def _b64(value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise EnvelopeError(f"{what} is not a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        try:
            return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        except (binascii.Error, ValueError):
            raise EnvelopeError(f"{what} is not base64") from None


@dataclass(frozen=True)
class Verified:
    """A verified envelope: its payload and the allowed signer whose key verified it."""

    payload_type: str
    payload: bytes
    signer: AllowedSigner


def verify(envelope: dict, allowed: list[AllowedSigner]) -> Verified:
    """The payload, when a signature verifies under one of the allowed keys; EnvelopeError saying why not."""
    if (
        not isinstance(envelope, dict)
        or not isinstance(envelope.get("payloadType"), str)
        or not isinstance(envelope.get("signatures"), list)
    ):
        raise EnvelopeError("not a DSSE envelope (payload, payloadType, signatures)")
    payload = _b64(envelope.get("payload"), "payload")
    message = pae(envelope["payloadType"], payload)
    keyids = []
    for entry in envelope["signatures"]:
        if not isinstance(entry, dict):
            continue
        sig = _b64(entry.get("sig"), "a signature's sig")
        keyids.append(str(entry.get("keyid")))
        for signer in allowed:
            try:
                signer.key.verify(sig, message)
            except InvalidSignature:
                continue
            return Verified(envelope["payloadType"], payload, signer)
    known = {s.fingerprint for s in allowed}
    if keyids and not known & set(keyids):
        raise EnvelopeError(f"signed by {', '.join(keyids)}, no key of the allowed signers")
    raise EnvelopeError(
        "no signature verifies under the allowed signers' keys (the envelope was changed after signing)"
    )


def dumps(envelope: dict) -> str:
    return json.dumps(envelope, indent=1, sort_keys=True) + "\n"
