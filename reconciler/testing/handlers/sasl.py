"""SASL/PLAIN authentication (SaslHandshake v1 + SaslAuthenticate), for listeners started with
`sasl_users`. Only PLAIN is offered."""
from __future__ import annotations

from .. import errors, protocol

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
MECHANISMS = ["PLAIN"]


def sasl_handshake(ctx, request):
    conn = ctx.connection
    if request.mechanism in MECHANISMS:
        conn.sasl_mechanism = request.mechanism
        code = errors.NONE
    else:
        code = errors.UNSUPPORTED_SASL_MECHANISM
    return protocol.new_response(SASL_HANDSHAKE, ctx.version, error_code=code, mechanisms=MECHANISMS)


def sasl_authenticate(ctx, request):
    conn = ctx.connection
    response = protocol.new_response(SASL_AUTHENTICATE, ctx.version, auth_bytes=b"",
                                     session_lifetime_ms=0, error_message=None)
    if conn.sasl_mechanism is None:
        response.error_code = errors.ILLEGAL_SASL_STATE
        response.error_message = "SaslAuthenticate before SaslHandshake"
        ctx.close_after = True
        return response
    # PLAIN (RFC 4616): authzid NUL authcid NUL password
    parts = bytes(request.auth_bytes).split(b"\0")
    users = ctx.settings.sasl_users or {}
    if len(parts) == 3 and users.get(parts[1].decode("utf-8", "replace")) == parts[2].decode("utf-8", "replace"):
        conn.authenticated = True
        conn.principal = "User:" + parts[1].decode("utf-8", "replace")
        response.error_code = errors.NONE
    else:
        response.error_code = errors.SASL_AUTHENTICATION_FAILED
        response.error_message = "Authentication failed: Invalid username or password"
        # Kafka closes the connection after answering a failed authentication.
        ctx.close_after = True
    return response
