"""The server side of the SASL mechanisms a Kafka 4.0 broker offers with its built-in callback
handlers: PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677), as Kafka's PlainSaslServer
and ScramSaslServer implement them. No wire format here: handlers/sasl.py carries the tokens."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

PLAIN = "PLAIN"
SCRAM_SHA_256 = "SCRAM-SHA-256"
SCRAM_SHA_512 = "SCRAM-SHA-512"
SUPPORTED = (PLAIN, SCRAM_SHA_256, SCRAM_SHA_512)
_SCRAM_HASHES = {SCRAM_SHA_256: "sha256", SCRAM_SHA_512: "sha512"}
# kafka-configs.sh --add-config 'SCRAM-SHA-256=[password=...]' stores 4096 iterations, also
# ScramMechanism's minimum for both hashes.
SCRAM_ITERATIONS = 4096


class InvalidCredentials(Exception):
    """Kafka's SaslException: the client is told only the generic "invalid credentials" message
    (SaslServerAuthenticator keeps the reason from unauthenticated clients)."""


class AuthenticationRefused(Exception):
    """Kafka's SaslAuthenticationException: its message goes to the client as it is."""


def generic_failure_message(mechanism: str) -> str:
    """SaslServerAuthenticator.handleSaslToken's answer to any SaslException."""
    return f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"


def handshake_mechanisms(enabled: Iterable[str]) -> list[str]:
    """The mechanism list SaslHandshake answers with, in Kafka's order: SaslServerAuthenticator
    copies sasl.enabled.mechanisms into a java.util.HashSet and back into a list, so the order is
    that HashSet's (bucket by String.hashCode, then insertion order within a bucket)."""
    names = list(dict.fromkeys(enabled))
    capacity = max(int(len(names) / 0.75) + 1, 16)
    buckets = 1 << (capacity - 1).bit_length()
    return sorted(names, key=lambda name: _java_hash_bucket(name, buckets))  # sorted() is stable


def _java_hash_bucket(name: str, buckets: int) -> int:
    h = 0
    for ch in name:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (buckets - 1)


class PlainServer:
    """PlainSaslServer with PlainServerCallbackHandler's user table."""

    mechanism = PLAIN

    def __init__(self, users: Mapping[str, str]):
        self._users = users
        self.authorization_id: str | None = None

    @property
    def complete(self) -> bool:
        return self.authorization_id is not None

    def evaluate_response(self, token: bytes) -> bytes:
        # authzid NUL authcid NUL passwd
        parts = token.decode("utf-8", "replace").split("\0")
        if len(parts) != 3:
            raise InvalidCredentials(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
        authzid, username, password = parts
        if not username or not password:
            raise InvalidCredentials("Authentication failed: username or password not specified")
        if self._users.get(username) != password:
            raise AuthenticationRefused("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise AuthenticationRefused(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self.authorization_id = username
        return b""


@dataclass(frozen=True)
class ScramCredential:
    """What Kafka stores for a SCRAM user (never the password)."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


@functools.cache
def scram_credential(mechanism: str, username: str, password: str) -> ScramCredential:
    """The user's credential, made once per process with a random salt as kafka-configs.sh does,
    so every connection sees the same salt."""
    del username  # part of the cache key only: two users with one password get different salts
    hash_name = _SCRAM_HASHES[mechanism]
    salt = secrets.token_bytes(32)
    salted = hashlib.pbkdf2_hmac(hash_name, password.encode("utf-8"), salt, SCRAM_ITERATIONS)
    client_key = hmac.new(salted, b"Client Key", hash_name).digest()
    return ScramCredential(
        salt, hashlib.new(hash_name, client_key).digest(), hmac.new(salted, b"Server Key", hash_name).digest(), SCRAM_ITERATIONS
    )


# ScramMessages.ClientFirstMessage / ClientFinalMessage, loosely: a gs2 header without channel
# binding, then the attributes Kafka reads.
_CLIENT_FIRST = re.compile(r"n,(?:a=(?P<authzid>[^,]*))?,(?P<bare>n=(?P<saslname>[^,]*),r=(?P<nonce>[^,]+)(?:,.*)?)")
_CLIENT_FINAL = re.compile(r"(?P<without_proof>c=[^,]*,r=(?P<nonce>[^,]+)(?:,.*)?),p=(?P<proof>[^,]+)")


class ScramServer:
    """ScramSaslServer: client-first -> server-first (nonce, salt, iterations), client-final with
    the proof -> server-final with the server signature."""

    def __init__(self, mechanism: str, users: Mapping[str, str]):
        self.mechanism = mechanism
        self._hash = _SCRAM_HASHES[mechanism]
        self._users = users
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self._credential: ScramCredential | None = None
        self._username = ""
        self.authorization_id: str | None = None

    @property
    def complete(self) -> bool:
        return self.authorization_id is not None

    def evaluate_response(self, token: bytes) -> bytes:
        if self._credential is None:
            return self._client_first(token.decode("utf-8", "replace"))
        return self._client_final(token.decode("utf-8", "replace"))

    def _client_first(self, message: str) -> bytes:
        match = _CLIENT_FIRST.fullmatch(message)
        if match is None:
            raise InvalidCredentials("Invalid SCRAM client first message format")
        # ScramFormatter.username: saslname escapes ',' and '=' as =2C and =3D.
        username = match["saslname"].replace("=2C", ",").replace("=3D", "=")
        password = self._users.get(username)
        if password is None:
            raise InvalidCredentials("Authentication failed: Invalid user credentials")
        if match["authzid"] and match["authzid"] != username:
            raise AuthenticationRefused(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self._credential = scram_credential(self.mechanism, username, password)
        self._username = username
        # ScramFormatter.secureRandomString: 130 random bits in base 36.
        self._nonce = match["nonce"] + _base36(secrets.randbits(130))
        self._client_first_bare = match["bare"]
        salt = base64.b64encode(self._credential.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={self._credential.iterations}"
        return self._server_first.encode()

    def _client_final(self, message: str) -> bytes:
        credential = self._credential
        assert credential is not None
        match = _CLIENT_FINAL.fullmatch(message)
        if match is None:
            raise InvalidCredentials("Invalid SCRAM client final message format")
        if match["nonce"] != self._nonce:
            raise InvalidCredentials("Invalid client nonce in the final client message.")
        auth_message = ",".join((self._client_first_bare, self._server_first, match["without_proof"])).encode()
        try:
            proof = base64.b64decode(match["proof"], validate=True)
        except ValueError as exc:
            raise InvalidCredentials("Invalid SCRAM client final message format") from exc
        client_signature = hmac.new(credential.stored_key, auth_message, self._hash).digest()
        client_key = bytes(a ^ b for a, b in zip(proof, client_signature))
        if len(proof) != len(client_signature) or not hmac.compare_digest(
            hashlib.new(self._hash, client_key).digest(), credential.stored_key
        ):
            raise InvalidCredentials("Invalid client credentials")
        server_signature = hmac.new(credential.server_key, auth_message, self._hash).digest()
        self.authorization_id = self._username
        return b"v=" + base64.b64encode(server_signature)


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        number, digit = divmod(number, 36)
        text = digits[digit] + text
        if not number:
            return text


def new_server(mechanism: str, users: Mapping[str, str]) -> PlainServer | ScramServer:
    return PlainServer(users) if mechanism == PLAIN else ScramServer(mechanism, users)
