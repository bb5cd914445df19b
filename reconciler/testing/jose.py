"""JSON Web Tokens for the test cluster's OAUTHBEARER listeners and its OIDC provider: unsecured
JWS (alg "none", RFC 7515 appendix A.5, what Kafka's unsecured login and validator use) and RS256
(RFC 7518 3.3, RSASSA-PKCS1-v1_5 with SHA-256) with the public key published as a JWKS (RFC 7517).

RSA is done here with Python's integers (key generation by Miller-Rabin, signatures by modular
exponentiation) so the test package needs no cryptography library; it is for tests, not secrets.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from dataclasses import dataclass
from typing import Any

# DER of DigestInfo for SHA-256 (RFC 8017 9.2, note 1), before the 32 bytes of the hash.
_SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")
_SMALL_PRIMES = [p for p in range(3, 2000, 2) if all(p % q for q in range(3, int(p**0.5) + 1, 2))]


class MalformedToken(ValueError):
    """Not a compact JWS with JSON header and claims."""


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError as e:
        raise MalformedToken(f"not base64url: {e}") from None


def _json_part(text: str) -> dict[str, Any]:
    try:
        value = json.loads(b64url_decode(text))
    except ValueError as e:
        raise MalformedToken(f"not JSON: {e}") from None
    if not isinstance(value, dict):
        raise MalformedToken("not a JSON object")
    return value


def _part(value: dict[str, Any]) -> str:
    return b64url(json.dumps(value, separators=(",", ":")).encode())


def unsecured_token(claims: dict[str, Any]) -> str:
    """header.claims. with {"alg":"none"}: Kafka's OAuthBearerUnsecuredLoginCallbackHandler's form."""
    return f"{_part({'alg': 'none'})}.{_part(claims)}."


@dataclass(frozen=True)
class Jws:
    header: dict[str, Any]
    claims: dict[str, Any]
    signing_input: bytes
    signature: bytes


def parse(token: str) -> Jws:
    parts = token.split(".")
    if len(parts) != 3:
        raise MalformedToken(f"{len(parts)} dot-separated parts, not 3")
    return Jws(_json_part(parts[0]), _json_part(parts[1]), f"{parts[0]}.{parts[1]}".encode(), b64url_decode(parts[2]))


def _probably_prime(n: int) -> bool:
    if any(n % p == 0 for p in _SMALL_PRIMES):
        return n in _SMALL_PRIMES
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for _ in range(40):
        x = pow(secrets.randbelow(n - 3) + 2, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(bits: int) -> int:
    while True:
        candidate = secrets.randbits(bits) | (1 << (bits - 1)) | (1 << (bits - 2)) | 1
        if _probably_prime(candidate):
            return candidate


@dataclass(frozen=True)
class RsaKey:
    """An RSA key pair with its JWKS key id."""

    kid: str
    n: int
    e: int
    d: int

    @classmethod
    def generate(cls, kid: str, bits: int = 2048) -> RsaKey:
        e = 65537
        while True:
            p, q = _prime(bits // 2), _prime(bits // 2)
            phi = (p - 1) * (q - 1)
            if p != q and phi % e and (p * q).bit_length() == bits:
                return cls(kid, p * q, e, pow(e, -1, phi))

    @property
    def size(self) -> int:
        return (self.n.bit_length() + 7) // 8

    def jwk(self) -> dict[str, str]:
        """The public key as a JWK (RFC 7518 6.3.1)."""
        return {
            "kty": "RSA",
            "use": "sig",
            "alg": "RS256",
            "kid": self.kid,
            "n": b64url(self.n.to_bytes(self.size, "big")),
            "e": b64url(self.e.to_bytes(3, "big")),
        }

    def sign(self, claims: dict[str, Any]) -> str:
        header = _part({"alg": "RS256", "typ": "JWT", "kid": self.kid})
        signing_input = f"{header}.{_part(claims)}"
        message = int.from_bytes(_encoded(signing_input.encode(), self.size), "big")
        return f"{signing_input}.{b64url(pow(message, self.d, self.n).to_bytes(self.size, 'big'))}"


def _encoded(message: bytes, size: int) -> bytes:
    """EMSA-PKCS1-v1_5 (RFC 8017 9.2) of `message` with SHA-256."""
    t = _SHA256_DIGEST_INFO + hashlib.sha256(message).digest()
    return b"\x00\x01" + b"\xff" * (size - len(t) - 3) + b"\x00" + t


def rs256_valid(jws: Jws, jwk: dict[str, Any]) -> bool:
    """Does the RS256 signature of `jws` verify with the public JWK?"""
    try:
        n = int.from_bytes(b64url_decode(jwk["n"]), "big")
        e = int.from_bytes(b64url_decode(jwk["e"]), "big")
    except (KeyError, TypeError, MalformedToken):
        return False
    size = (n.bit_length() + 7) // 8
    if len(jws.signature) != size:
        return False
    return pow(int.from_bytes(jws.signature, "big"), e, n).to_bytes(size, "big") == _encoded(jws.signing_input, size)
