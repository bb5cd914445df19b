"""A small OIDC provider for tests, served over real HTTP(S) on the loopback interface: a token
endpoint for the client credentials grant (RFC 6749 4.4, client authentication by HTTP Basic as
Kafka's HttpAccessTokenRetriever sends it) and a JWKS endpoint with the key that signs its tokens.

    with OidcProvider(clients={"reconciler": "s3cret"}, tls=True) as idp:
        idp.token_url, idp.jwks_url, idp.ca_file, idp.issuer

Tokens are RS256 JWTs (iss, sub = the client id, aud, scope, iat, exp, jti), or unsecured JWS
(alg "none") with `signed=False`, for a broker with Kafka's unsecured validator. Failures are
RFC 6749 5.2's: 401 invalid_client, 400 unsupported_grant_type / invalid_scope / invalid_request.
"""

from __future__ import annotations

import base64
import json
import secrets
import ssl
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .cluster import HOST
from .jose import RsaKey, unsecured_token
from .tls import TestCertificates, generate_certificates


class OidcProvider:
    __test__ = False

    def __init__(
        self,
        clients: Mapping[str, str],
        tls: bool = True,
        audience: str = "kafka",
        allowed_scopes: Iterable[str] | None = None,
        lifetime_s: float = 3600,
        signed: bool = True,
    ):
        self.clients = dict(clients)
        self.audience = audience
        self.allowed_scopes = None if allowed_scopes is None else set(allowed_scopes)
        self.lifetime_s = lifetime_s  # changeable between requests
        self.clock_offset_s = 0.0  # the provider's clock minus the real one: a skewed issuer
        self.signed = signed
        self.issued: list[dict[str, Any]] = []  # the claims of every token issued, in order
        self.tokens: list[str] = []  # and the tokens, for tests that look for them where they must not be
        self.key = RsaKey.generate("test-key-1")
        self._directory = tempfile.TemporaryDirectory(prefix="test-oidc-") if tls else None
        self.certificates: TestCertificates | None = None
        self._server = ThreadingHTTPServer((HOST, 0), _handler(self))
        self._server.daemon_threads = True
        try:
            if self._directory is not None:
                self.certificates = generate_certificates(Path(self._directory.name))
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(self.certificates.server_certfile, self.certificates.server_keyfile)
                self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        except BaseException:
            self.close()
            raise
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True, name="test-oidc")

    @property
    def issuer(self) -> str:
        scheme = "https" if self.certificates else "http"
        return f"{scheme}://{HOST}:{self._server.server_address[1]}"

    @property
    def token_url(self) -> str:
        return f"{self.issuer}/oauth2/token"

    @property
    def jwks_url(self) -> str:
        return f"{self.issuer}/oauth2/jwks"

    @property
    def ca_file(self) -> str | None:
        return str(self.certificates.ca_file) if self.certificates else None

    def __enter__(self) -> OidcProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()
        if self._directory is not None:
            self._directory.cleanup()

    def token_for(self, client_id: str, scope: str | None) -> str:
        now = time.time() + self.clock_offset_s
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": client_id,
            "aud": self.audience,
            "iat": int(now),
            "exp": int(now + self.lifetime_s),
            "jti": secrets.token_hex(8),
        }
        if scope:
            claims["scope"] = scope
        token = self.key.sign(claims) if self.signed else unsecured_token(claims)
        self.issued.append(claims)
        self.tokens.append(token)
        return token

    def answer(self, path: str, authorization: str | None, body: bytes) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON body) for a POST to the token endpoint."""
        if path != urllib.parse.urlsplit(self.token_url).path:
            return 404, {"error": "not_found"}
        client = _basic(authorization)
        if client is None or self.clients.get(client[0]) != client[1]:
            return 401, {"error": "invalid_client", "error_description": "Client authentication failed"}
        form = dict(urllib.parse.parse_qsl(body.decode("utf-8", "replace")))
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        scope = form.get("scope")
        if scope and self.allowed_scopes is not None and not set(scope.split()) <= self.allowed_scopes:
            return 400, {"error": "invalid_scope", "error_description": f"Scope {scope} is not allowed for {client[0]}"}
        token = self.token_for(client[0], scope)
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": int(self.lifetime_s)}


def _basic(authorization: str | None) -> tuple[str, str] | None:
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, colon, password = base64.b64decode(value, validate=True).decode().partition(":")
    except ValueError:
        return None
    return (urllib.parse.unquote(user), urllib.parse.unquote(password)) if colon else None


def _handler(provider: OidcProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == urllib.parse.urlsplit(provider.jwks_url).path:
                self._send(200, {"keys": [provider.key.jwk()]})
            else:
                self._send(404, {"error": "not_found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            status, answer = provider.answer(self.path, self.headers.get("Authorization"), self.rfile.read(length))
            self._send(status, answer)

        def _send(self, status: int, answer: dict[str, Any]) -> None:
            body = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if status == 401:
                self.send_header("WWW-Authenticate", 'Basic realm="test"')
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a test's output is its own

    return Handler
