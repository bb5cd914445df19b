"""The server side of SASL/OAUTHBEARER (RFC 7628, KIP-255) as a Kafka 4.0 broker runs it:
OAuthBearerSaslServer with either of Kafka's validator callback handlers,

- UnsecuredValidator: OAuthBearerUnsecuredValidatorCallbackHandler, the broker's default: an
  unsecured JWS (header.claims. with an empty signature), the principal claim (sub) required,
  exp required, iat optional, unsecuredValidatorAllowableClockSkewMs (default 0) and
  unsecuredValidatorRequiredScope;
- JwksValidator: OAuthBearerValidatorCallbackHandler (KIP-768): a signed JWT whose key the JWKS
  endpoint (sasl.oauthbearer.jwks.endpoint.url) publishes, "none" refused, exp and iat required,
  sasl.oauthbearer.expected.issuer / expected.audience, sasl.oauthbearer.clock.skew.seconds (30).

A refused token is answered as Kafka does: the error JSON {"status":...} (with "scope" when a
required scope is missing) as the server's challenge; the client's %x01 then ends the exchange
with SASL_AUTHENTICATION_FAILED carrying that JSON as the message.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .jose import Jws, MalformedToken, parse, rs256_valid
from .sasl_mechanisms import AuthenticationRefused, InvalidCredentials

OAUTHBEARER = "OAUTHBEARER"
# OAuthBearerClientInitialResponse's grammar (RFC 7628 3.1).
_SEPARATOR = "\x01"
_CLIENT_INITIAL = re.compile(
    r"n,(?:a=(?P<authzid>(?:[\x01-\x7f](?<![=,\x01])|=2C|=3D)+))?,\x01(?P<kvpairs>(?:[A-Za-z]+=[\x21-\x7e \t\r\n]+\x01)*)\x01"
)
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_.a-zA-Z0-9]+)")


class TokenRejected(Exception):
    """The validator's callback.error(status, scope, openid-configuration)."""

    def __init__(self, reason: str, scope: str | None = None):
        super().__init__(reason)
        self.status = "insufficient_scope" if scope is not None else "invalid_token"
        self.scope = scope


class Validator(Protocol):
    def validate(self, token: str) -> str:
        """The token's principal name, or TokenRejected."""
        ...


def _seconds(claims: dict[str, Any], name: str, required: bool) -> float | None:
    value = claims.get(name)
    if value is None:
        if required:
            raise TokenRejected(f"Required claim missing: {name}")
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TokenRejected(f"The {name} claim is not a number")
    return float(value)


def _scope(claims: dict[str, Any], name: str) -> set[str]:
    value = claims.get(name)
    if isinstance(value, str):
        return set(value.split())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return set(value)
    return set()


def _required_scope(token_scope: set[str], required: list[str]) -> None:
    """OAuthBearerValidationUtils.validateScope: the failure scope is the Java list's toString."""
    for element in required:
        if element not in token_scope:
            raise TokenRejected(f"The provided scope was missing a required scope ({element})", scope=f"[{', '.join(required)}]")


class UnsecuredValidator:
    """OAuthBearerUnsecuredValidatorCallbackHandler."""

    def __init__(
        self,
        required_scope: Iterable[str] = (),
        allowable_clock_skew_ms: int = 0,
        principal_claim: str = "sub",
        scope_claim: str = "scope",
        now: Callable[[], float] = time.time,
    ):
        self.required_scope = list(required_scope)
        self.skew_s = allowable_clock_skew_ms / 1000
        self.principal_claim, self.scope_claim = principal_claim, scope_claim
        self._now = now

    def validate(self, token: str) -> str:
        # OAuthBearerUnsecuredJws: Java's split drops the empty third part, so exactly two remain.
        parts = token.split(".")
        if len(parts) != 3 or parts[2]:
            raise TokenRejected("Unsecured JWS compact serializations must have 3 dot-separated values and the 3rd must be empty")
        try:
            claims = parse(token).claims
        except MalformedToken as e:
            raise TokenRejected(str(e)) from None
        principal = claims.get(self.principal_claim)
        if not isinstance(principal, str) or not principal:
            raise TokenRejected(f"No principal name in JWT claim: {self.principal_claim}")
        now = self._now()
        iat = _seconds(claims, "iat", required=False)
        if iat is not None and iat > now + self.skew_s:
            raise TokenRejected("The token was issued in the future")
        exp = _seconds(claims, "exp", required=True)
        assert exp is not None
        if now > exp + self.skew_s:
            raise TokenRejected("The token has expired")
        if iat is not None and exp <= iat:
            raise TokenRejected("The token expires before it was issued")
        _required_scope(_scope(claims, self.scope_claim), self.required_scope)
        return principal


class JwksValidator:
    """OAuthBearerValidatorCallbackHandler with a JWKS endpoint: keys fetched once, and again for
    a key id not seen (RefreshingHttpsJwks)."""

    def __init__(
        self,
        jwks_url: str,
        expected_issuer: str | None = None,
        expected_audience: Iterable[str] = (),
        clock_skew_s: int = 30,
        ca_file: str | None = None,
        sub_claim: str = "sub",
        now: Callable[[], float] = time.time,
    ):
        self.jwks_url = jwks_url
        self.expected_issuer = expected_issuer
        self.expected_audience = list(expected_audience)
        self.clock_skew_s = clock_skew_s
        self.sub_claim = sub_claim
        self._ca_file = ca_file
        self._now = now
        self._keys: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def _key(self, kid: str) -> dict[str, Any]:
        with self._lock:
            if kid not in self._keys:
                context = ssl.create_default_context(cafile=self._ca_file) if self.jwks_url.startswith("https") else None
                with urllib.request.urlopen(self.jwks_url, timeout=10, context=context) as answer:
                    keys = json.loads(answer.read()).get("keys", [])
                self._keys = {k["kid"]: k for k in keys if isinstance(k, dict) and "kid" in k}
            if kid not in self._keys:
                raise TokenRejected(f"Unable to find a suitable verification key for kid {kid}")
            return self._keys[kid]

    def validate(self, token: str) -> str:
        try:
            jws: Jws = parse(token)
        except MalformedToken as e:
            raise TokenRejected(str(e)) from None
        if jws.header.get("alg") != "RS256":
            # AlgorithmConstraints.DISALLOW_NONE (and only RS256 keys are published here)
            raise TokenRejected(f"'{jws.header.get('alg')}' is not a permitted algorithm")
        if not rs256_valid(jws, self._key(str(jws.header.get("kid")))):
            raise TokenRejected("JWS signature is invalid")
        claims, now = jws.claims, self._now()
        exp = _seconds(claims, "exp", required=True)
        iat = _seconds(claims, "iat", required=True)
        assert exp is not None and iat is not None
        if now >= exp + self.clock_skew_s:
            raise TokenRejected("The JWT is no longer valid")
        nbf = _seconds(claims, "nbf", required=False)
        if nbf is not None and now + self.clock_skew_s < nbf:
            raise TokenRejected("The JWT is not yet valid")
        if self.expected_issuer is not None and claims.get("iss") != self.expected_issuer:
            raise TokenRejected("Issuer (iss) claim value is not the expected one")
        if self.expected_audience:
            audience = claims.get("aud")
            given = audience if isinstance(audience, list) else [audience]
            if not set(self.expected_audience) & {a for a in given if isinstance(a, str)}:
                raise TokenRejected("Audience (aud) claim is not one of the expected values")
        principal = claims.get(self.sub_claim)
        if not isinstance(principal, str) or not principal:
            raise TokenRejected(f"No {self.sub_claim} claim")
        return principal


class OAuthBearerServer:
    """OAuthBearerSaslServer."""

    mechanism = OAUTHBEARER

    def __init__(self, validator: Validator, extensions_seen: list[dict[str, str]] | None = None):
        self._validator = validator
        self._error: str | None = None
        self._extensions_seen = extensions_seen
        self.authorization_id: str | None = None

    @property
    def complete(self) -> bool:
        return self.authorization_id is not None

    def evaluate_response(self, response: bytes) -> bytes:
        if response == b"\x01" and self._error is not None:
            raise AuthenticationRefused(self._error)
        self._error = None
        match = _CLIENT_INITIAL.fullmatch(response.decode("utf-8", "replace"))
        if match is None:
            raise InvalidCredentials("Invalid OAUTHBEARER client first message")
        pairs = dict(pair.split("=", 1) for pair in match["kvpairs"].split(_SEPARATOR) if pair)
        auth = pairs.pop("auth", None)
        if auth is None:
            raise InvalidCredentials("Invalid OAUTHBEARER client first message: 'auth' not specified")
        found = _AUTH.fullmatch(auth)
        if found is None or found["scheme"].lower() != "bearer":
            raise InvalidCredentials("Invalid scheme in OAUTHBEARER client first message")
        try:
            principal = self._validator.validate(found["token"])
        except TokenRejected as rejected:
            # OAuthBearerSaslServer.jsonErrorResponse, spacing included.
            self._error = f'{{"status":"{rejected.status}"' + (f', "scope":"{rejected.scope}"' if rejected.scope else "") + "}"
            return self._error.encode()
        authzid = match["authzid"]
        if authzid and authzid != principal:
            raise AuthenticationRefused(
                f"Authentication failed: Client requested an authorization id ({authzid}) that is different from "
                f"the token's principal name ({principal})"
            )
        if self._extensions_seen is not None:
            self._extensions_seen.append(pairs)
        self.authorization_id = principal
        return b""
