"""SaslHandshake (v0-1) and SaslAuthenticate (v0-2) for listeners started with `sasl_users` or
`oauth` or `kerberos`, as Kafka's SaslServerAuthenticator answers them: the enabled mechanisms,
PLAIN, SCRAM, OAUTHBEARER and GSSAPI exchanges,
and a failed step answered with SASL_AUTHENTICATION_FAILED before the connection is closed.
Once authenticated, or on a listener without SASL, KafkaApis answers both with ILLEGAL_SASL_STATE."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka.protocol.api_message import ApiMessage

from .. import errors, protocol
from ..gssapi_server import GSSAPI
from ..oauthbearer import OAUTHBEARER, OAuthBearerServer
from ..sasl_mechanisms import AuthenticationRefused, InvalidCredentials, generic_failure_message, new_server
from ..server import CloseConnection

if TYPE_CHECKING:
    from ..context import RequestContext

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


def sasl_handshake(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    if ctx.connection.authenticated or not ctx.settings.sasl:
        # KafkaApis answers once the connection is authenticated (no re-authentication by default).
        return protocol.new_response(SASL_HANDSHAKE, ctx.version, error_code=errors.ILLEGAL_SASL_STATE, mechanisms=[])
    enabled = ctx.settings.handshake_mechanisms
    if request.mechanism in enabled:
        settings = ctx.settings
        if request.mechanism == OAUTHBEARER and settings.oauth is not None:
            ctx.connection.sasl_server = OAuthBearerServer(settings.oauth, settings.oauth_extensions_seen)
        elif request.mechanism == GSSAPI and settings.kerberos is not None:
            ctx.connection.sasl_server = settings.kerberos.new_server()
        else:
            ctx.connection.sasl_server = new_server(request.mechanism, settings.sasl_users or {})
        code = errors.NONE
    else:
        code = errors.UNSUPPORTED_SASL_MECHANISM
        # UnsupportedSaslMechanismException is an authentication failure: answer, then close.
        ctx.close_after = True
    return protocol.new_response(SASL_HANDSHAKE, ctx.version, error_code=code, mechanisms=enabled)


def sasl_authenticate(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    conn = ctx.connection
    response = protocol.new_response(SASL_AUTHENTICATE, ctx.version, auth_bytes=b"", session_lifetime_ms=0, error_message=None)
    if conn.authenticated or not ctx.settings.sasl:
        response.error_code = errors.ILLEGAL_SASL_STATE
        response.error_message = "SaslAuthenticate request received after successful authentication"
        return response
    server = conn.sasl_server
    if server is None:
        # SaslServerAuthenticator: "Unexpected Kafka request of type SASL_AUTHENTICATE during SASL
        # handshake." is an InvalidRequestException, which closes the connection unanswered.
        raise CloseConnection("SaslAuthenticate before SaslHandshake")
    try:
        response.auth_bytes = server.evaluate_response(bytes(request.auth_bytes))
    except (InvalidCredentials, AuthenticationRefused) as failure:
        response.error_code = errors.SASL_AUTHENTICATION_FAILED
        response.error_message = (
            str(failure) if isinstance(failure, AuthenticationRefused) else generic_failure_message(server.mechanism)
        )
        ctx.close_after = True
        return response
    response.error_code = errors.NONE
    if server.complete:
        conn.authenticated = True
        conn.principal = f"User:{server.authorization_id}"
    return response
