"""OAUTHBEARER tokens for kafka-python: from an OIDC token endpoint with the client credentials
grant (KIP-768's settings for Kafka's own clients), from a file another tool keeps fresh
(workload identity in CI), or from an environment variable.

A token is kept until a fifth of its lifetime is left (Kafka's sasl.login.refresh.window.factor
of 0.8), so a long apply asks again instead of failing when the first token expires; a file is
read again whenever it changes. Tokens are secrets: no message shows one, only claims that are
not (sub, iss, aud, scope and the times).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from kafka.net.sasl.oauth import AbstractTokenProvider

from reconciler.errors import ClusterError, ReconcilerError, shortened
from reconciler.models.desired import token_endpoint_problem

# Kafka's sasl.login.refresh.window.factor: a new token once 80% of the old one's lifetime passed.
REFRESH_WINDOW_FACTOR = 0.8
# Kafka's sasl.oauthbearer.clock.skew.seconds: how far apart two clocks may be before it matters.
CLOCK_SKEW_S = 30
# Kafka's sasl.login.connect.timeout.ms and read timeout are unset; a stuck endpoint must not hang apply.
ENDPOINT_TIMEOUT_S = 10.0
# The claims a message may show: none of them grants anything.
_SHOWN_CLAIMS = ("sub", "iss", "aud", "scope", "scp", "client_id", "azp")


def claims_of(token: str) -> dict[str, Any]:
    """The payload of a JWT (header.payload.signature, base64url), or {} for a token that is
    not one (an opaque token is still sent; the broker decides)."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (binascii.Error, ValueError):
        return {}
    return claims if isinstance(claims, dict) else {}


def _when(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _number(claims: Mapping[str, Any], name: str) -> float | None:
    value = claims.get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class Tokens(AbstractTokenProvider):
    """kafka-python's token provider: the current token, fetched or read again when due."""

    def __init__(
        self, cluster: str, setting: str, extensions: Mapping[str, str] | None = None, now: Callable[[], float] = time.time
    ):
        super().__init__()
        self.cluster = cluster
        self.setting = setting  # the `security` setting the tokens come from, for messages
        self._extensions = dict(extensions or {})
        self._now = now
        self._lock = threading.Lock()
        self._token: str | None = None
        self._claims: dict[str, Any] = {}
        self._refresh_at = 0.0
        self.fetched = 0  # how many tokens were fetched or read: a refresh is visible

    def token(self) -> str:
        with self._lock:
            if self._token is None or self._due():
                token, lifetime_end = self._next()
                now = self._now()
                self._token, self._claims = token, claims_of(token)
                self._refresh_at = now + (lifetime_end - now) * REFRESH_WINDOW_FACTOR if lifetime_end else float("inf")
                self.fetched += 1
            return self._token

    def extensions(self) -> dict[str, str]:
        return dict(self._extensions)

    @property
    def claims(self) -> dict[str, Any]:
        """The current token's claims (empty before the first token, or for an opaque token)."""
        with self._lock:
            return dict(self._claims)

    def secrets(self) -> list[str]:
        """What no message may show: the current token, and what it was fetched with."""
        return [self._token] if self._token else []

    def describe_claims(self) -> str:
        """The claims a message may show, and the token's times against this machine's clock."""
        claims, now = self.claims, self._now()
        parts = [f"{name} {json.dumps(claims[name])}" for name in _SHOWN_CLAIMS if name in claims]
        for name, meaning in (("iat", "issued"), ("nbf", "valid from"), ("exp", "expires")):
            at = _number(claims, name)
            if at is not None:
                delta = at - now
                parts.append(f"{meaning} {_when(at)} ({abs(delta):.0f} s {'from now' if delta >= 0 else 'ago'})")
        return ", ".join(parts) if parts else "not a JWT, so its claims are not known here"

    def clock_problem(self) -> str | None:
        """Why the current token is not valid now by this machine's clock, or None."""
        claims, now = self.claims, self._now()
        exp, iat, nbf = _number(claims, "exp"), _number(claims, "iat"), _number(claims, "nbf")
        if exp is not None and exp <= now:
            return f"it expired at {_when(exp)}, {now - exp:.0f} s ago by this machine's clock"
        for at, what in ((nbf, "valid from"), (iat, "issued at")):
            if at is not None and at > now + CLOCK_SKEW_S:
                return (
                    f"it is {what} {_when(at)}, {at - now:.0f} s in the future by this machine's clock: the clocks of "
                    "this machine and the token's issuer differ (check NTP on both)"
                )
        return None

    def _due(self) -> bool:
        return self._now() >= self._refresh_at

    def _next(self) -> tuple[str, float | None]:
        """A new token and the end of its lifetime (epoch seconds; None: not known)."""
        raise NotImplementedError

    def _lifetime_end(self, token: str) -> float | None:
        return _number(claims_of(token), "exp")


class VariableTokens(Tokens):
    """A token from an environment variable (security.oauth_token): one for the whole run."""

    def __init__(self, cluster: str, value: str, **kwargs: Any):
        super().__init__(cluster, "security.oauth_token", **kwargs)
        self._value = value.strip()

    def _next(self) -> tuple[str, float | None]:
        end = self._lifetime_end(self._value)
        if self._token is not None and (end is None or end > self._now()):
            return self._value, end  # nothing newer to take: the same token, until it expires
        if self._token is not None:
            raise ReconcilerError(
                f"cluster {self.cluster}: the token in the environment variable that security.oauth_token refers "
                "to has expired during this run; give a fresh one (or use oauth_token_file or a token endpoint, "
                "which are refreshed) and run again."
            )
        _refuse_stale(self, self._value, "the environment variable that security.oauth_token refers to")
        return self._value, end


class FileTokens(Tokens):
    """A token from a file another tool writes (a Kubernetes projected service account token, a
    CI system's OIDC token): read again whenever it changed, and when the last one is due."""

    def __init__(self, cluster: str, path: str, **kwargs: Any):
        super().__init__(cluster, "security.oauth_token_file", **kwargs)
        self.path = path
        self._seen: tuple[int, int] | None = None

    def _due(self) -> bool:
        return super()._due() or self._stat() != self._seen

    def _stat(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size

    def _next(self) -> tuple[str, float | None]:
        where = f"security.oauth_token_file ({self.path})"
        try:
            with open(self.path, encoding="utf-8") as file:
                token = file.read().strip()
        except (OSError, UnicodeDecodeError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else "it is not UTF-8 text"
            raise ReconcilerError(
                f"cluster {self.cluster}: cannot read the token in {where}: {reason}. Check the path and that "
                "the tool providing the token (workload identity, a projected service account token) has written it."
            ) from None
        if not token:
            raise ReconcilerError(
                f"cluster {self.cluster}: {where} is empty; the tool providing the token has not written one yet."
            )
        self._seen = self._stat()
        _refuse_stale(self, token, where)
        return token, self._lifetime_end(token)


def _refuse_stale(tokens: Tokens, token: str, where: str) -> None:
    """A given token that has expired is bad input: said before any connection is tried."""
    exp = _number(claims_of(token), "exp")
    now = tokens._now()
    if exp is not None and exp <= now:
        raise ReconcilerError(
            f"cluster {tokens.cluster}: the token in {where} expired at {_when(exp)} ({now - exp:.0f} s ago by this "
            "machine's clock). Give a fresh token (the tool that writes it must refresh it), or check this "
            "machine's clock if the token should still be valid. Nothing was sent to the cluster."
        )


class EndpointTokens(Tokens):
    """The client credentials grant (RFC 6749 4.4) as Kafka's HttpAccessTokenRetriever sends it:
    a POST with the client id and secret as HTTP Basic credentials, grant_type and scope in the
    form body; the answer's access_token, with its lifetime from the JWT's exp or expires_in."""

    def __init__(
        self,
        cluster: str,
        url: str,
        client_id: str,
        client_secret: str,
        scope: str | None = None,
        ca_file: str | None = None,
        allow_http: bool = False,
        timeout_s: float = ENDPOINT_TIMEOUT_S,
        **kwargs: Any,
    ):
        super().__init__(cluster, "security.oauth_token_endpoint_url", **kwargs)
        problem = token_endpoint_problem(url, allow_http)
        if problem:
            raise ReconcilerError(f"cluster {cluster}: {problem}. Nothing was sent.")
        self.url = url
        self._client_id, self._client_secret, self._scope = client_id, client_secret, scope
        self._ca_file = ca_file
        self._timeout_s = timeout_s

    def secrets(self) -> list[str]:
        return [*super().secrets(), self._client_secret]

    def _next(self) -> tuple[str, float | None]:
        answer = self._post()
        token = answer.get("access_token")
        if not isinstance(token, str) or not token:
            raise ClusterError(
                f"cluster {self.cluster}: the token endpoint {self.url} answered without an access_token "
                f"(keys: {', '.join(sorted(answer)) or 'none'}). Check security.oauth_token_endpoint_url: it must be "
                "the identity provider's token endpoint."
            )
        end = self._lifetime_end(token)
        expires_in = _number(answer, "expires_in")
        if end is None and expires_in is not None:
            end = self._now() + expires_in
        self._token_claims_check(token)
        return token, end

    def _token_claims_check(self, token: str) -> None:
        probe = Tokens(self.cluster, self.setting, now=self._now)
        probe._claims = claims_of(token)
        problem = probe.clock_problem()
        if problem:
            raise ReconcilerError(
                f"cluster {self.cluster}: the token endpoint {self.url} gave a token that is not valid now: "
                f"{problem}. Brokers would refuse it; fix the clock (NTP) and run again."
            )

    def _post(self) -> dict[str, Any]:
        form = {"grant_type": "client_credentials"}
        if self._scope:
            form["scope"] = self._scope
        quote = urllib.parse.quote
        basic = base64.b64encode(f"{quote(self._client_id, safe='')}:{quote(self._client_secret, safe='')}".encode()).decode()
        request = urllib.request.Request(
            self.url,
            data=urllib.parse.urlencode(form).encode(),
            headers={
                "Authorization": f"Basic {basic}",
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
            method="POST",
        )
        context = ssl.create_default_context(cafile=self._ca_file) if self.url.lower().startswith("https") else None
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_s, context=context) as response:
                body = response.read()
        except urllib.error.HTTPError as e:
            raise self._refused(e.code, e.read()) from None
        except urllib.error.URLError as e:
            raise self._unreachable(e.reason) from None
        except (OSError, ValueError) as e:
            raise self._unreachable(e) from None
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise ClusterError(
                f"cluster {self.cluster}: the token endpoint {self.url} did not answer with a JSON object; check "
                "security.oauth_token_endpoint_url (the identity provider's token endpoint, not its login page)."
            )
        return answer

    def _refused(self, status: int, body: bytes) -> ClusterError:
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        fields = answer if isinstance(answer, dict) else {}
        error = fields.get("error")
        description = fields.get("error_description")
        said = f'"{error}"' if isinstance(error, str) else "no error field"
        if isinstance(description, str) and description:
            said += f": {shortened(description.replace(self._client_secret, '***'), 200)}"
        hints = {
            "invalid_client": "the identity provider does not accept security.oauth_client_id with the secret in the "
            "environment variable that security.oauth_client_secret refers to",
            "unauthorized_client": "the client may not use the client credentials grant; enable it (a service "
            "account) for security.oauth_client_id at the identity provider",
            "invalid_scope": "security.oauth_scope asks for a scope the client may not have",
            "invalid_grant": "the identity provider refused the grant for this client",
        }
        hint = hints.get(error) if isinstance(error, str) else None
        if hint is None:
            hint = (
                "the client id or secret is not accepted"
                if status == 401
                else "check the token endpoint's URL and the client's settings at the identity provider"
            )
        return ClusterError(
            f"cluster {self.cluster}: the token endpoint {self.url} refused the client credentials request with HTTP "
            f"{status} ({said}): {hint}. Nothing was sent to the cluster.",
            retriable=status >= 500,
        )

    def _unreachable(self, reason: object) -> ClusterError:
        if isinstance(reason, ssl.SSLCertVerificationError):
            trust = (
                f"security.oauth_ca_file ({self._ca_file}) does not hold the CA that signed it"
                if self._ca_file
                else "only this machine's CAs are trusted; set security.oauth_ca_file to the PEM file of the CA that signed it"
            )
            return ClusterError(
                f"cluster {self.cluster}: the TLS certificate of the token endpoint {self.url} is not trusted "
                f"({reason.verify_message}): {trust}."
            )
        if isinstance(reason, ssl.SSLError):
            return ClusterError(
                f"cluster {self.cluster}: the TLS handshake with the token endpoint {self.url} failed "
                f"({reason.reason or reason}); check that the URL's port speaks https."
            )
        if isinstance(reason, FileNotFoundError) or (isinstance(reason, OSError) and reason.filename):
            return ClusterError(f"cluster {self.cluster}: cannot read security.oauth_ca_file ({self._ca_file}): {reason}.")
        text = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return ClusterError(
            f"cluster {self.cluster}: cannot reach the token endpoint {self.url} ({text}). Check "
            "security.oauth_token_endpoint_url and that this machine can reach the identity provider (DNS, "
            "firewall, proxy).",
            retriable=True,
        )
