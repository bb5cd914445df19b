"""What a failed connection tells the user: one paragraph per cause, from the step at which the
preflight stopped and what the socket, TLS or the broker said there, naming the setting to fix.

TLS failures are told apart by the ssl module's exception types and OpenSSL's reasons (the
alert a broker sent), SASL failures by the broker's own answer. Secrets never appear.
"""

from __future__ import annotations

import errno
import json
import socket
import ssl
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import kafka.errors as Errors

from reconciler.errors import ClusterError
from reconciler.kafka.preflight import ClosedByBroker, Failure, NotKafka, Step, TlsRecordReceived

if TYPE_CHECKING:
    from reconciler.kafka.oauth import Tokens

UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE = 33, 34
# OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH and X509_V_ERR_IP_ADDRESS_MISMATCH.
_NAME_MISMATCH = {62, 64}
_EXPIRED = 10
# Alerts a broker sends about the client's certificate: none sent (TLS 1.3's certificate_required,
# or bad_certificate) or not trusted / not acceptable.
_CLIENT_CERTIFICATE_ALERTS = {
    "TLSV13_ALERT_CERTIFICATE_REQUIRED",
    "SSLV3_ALERT_BAD_CERTIFICATE",
    "TLSV1_ALERT_UNKNOWN_CA",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN",
    "SSLV3_ALERT_CERTIFICATE_EXPIRED",
    "SSLV3_ALERT_CERTIFICATE_REVOKED",
    "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE",
    "TLSV1_ALERT_ACCESS_DENIED",
}
# What OpenSSL reports when the other end does not answer a ClientHello with TLS.
_NOT_TLS_REASONS = {
    "WRONG_VERSION_NUMBER",
    "RECORD_LAYER_FAILURE",
    "PACKET_LENGTH_TOO_LONG",
    "HTTP_REQUEST",
    "UNKNOWN_PROTOCOL",
    "UNEXPECTED_EOF_WHILE_READING",
}
_CLOSED = (ConnectionError, ClosedByBroker, ssl.SSLEOFError, ssl.SSLZeroReturnError)


def connection_failure(cluster: str, failures: Sequence[Failure], settings: Mapping[str, Any]) -> ClusterError:
    """The error for a cluster none of whose bootstrap servers got through: the first that was
    reached says why (they are usually alike); when none was reached, all are listed."""
    reached = [f for f in failures if f.reached]
    if not reached:
        reasons = "; ".join(f"{f.server}: {_describe(f.error)}" for f in failures)
        return ClusterError(
            f"cannot reach cluster {cluster}: none of its bootstrap servers answered ({reasons}). Check the host "
            "names and ports (or --bootstrap-servers / RECONCILE_BOOTSTRAP_SERVERS), that the brokers are running, "
            "and that this machine can reach them (DNS, firewall, VPN).",
            retriable=True,
        )
    failure = reached[0]
    text, retriable = _explain(cluster, failure, settings)
    return ClusterError(_without_secrets(text, settings), retriable=retriable)


def _explain(cluster: str, f: Failure, settings: Mapping[str, Any]) -> tuple[str, bool]:
    tls = settings["security_protocol"].endswith("SSL")
    if f.step is Step.TLS:
        return _tls_handshake(cluster, f, settings), False
    if f.step is Step.API_VERSIONS:
        if tls and _client_certificate_alert(f.error):
            return _client_certificate(cluster, f, settings), False
        if tls and not settings.get("ssl_certfile") and isinstance(f.error, _CLOSED):
            return (
                f"cluster {cluster}: {f.server} closed the connection right after the TLS handshake, before "
                f"answering ({_describe(f.error)}). A broker that requires a client certificate (mutual TLS, "
                f"ssl.client.auth=required) does this: set security.ssl_certfile and ssl_keyfile for {cluster}. "
                "Otherwise the brokers' logs say why.",
                False,
            )
        if isinstance(f.error, TlsRecordReceived):
            return (
                f"cluster {cluster}: {f.server} answered with TLS: the port speaks TLS. Set security.protocol to "
                f"SSL (or SASL_SSL) for {cluster}, with ssl_cafile naming the CA that signed the brokers' "
                "certificates.",
                False,
            )
    if f.step is Step.SASL_HANDSHAKE:
        return _sasl_handshake(cluster, f, settings), False
    if f.step is Step.SASL_AUTHENTICATE:
        return _sasl_authenticate(cluster, f, settings), False
    return (
        f"cluster {cluster}: {f.server} accepted a connection but did not answer {f.step.value} "
        f"({_answer(f)}). If its listener needs TLS or SASL, set `security` for {cluster} in the manifests; "
        "otherwise check the brokers' logs.",
        True,
    )


def _tls_handshake(cluster: str, f: Failure, settings: Mapping[str, Any]) -> str:
    e = f.error
    cafile = settings.get("ssl_cafile")
    if isinstance(e, ssl.SSLCertVerificationError):
        if e.verify_code in _NAME_MISMATCH:
            host = f.server.rsplit(":", 1)[0]
            return (
                f"cluster {cluster}: the TLS certificate of {f.server} is not valid for the name {host} "
                f"({e.verify_message}). Connect with a name the certificate lists (bootstrap_servers or "
                f"--bootstrap-servers), or set security.ssl_check_hostname: false for {cluster} if you accept "
                "that the brokers' identity is not checked."
            )
        if e.verify_code == _EXPIRED:
            return (
                f"cluster {cluster}: the TLS certificate of {f.server} has expired ({e.verify_message}); the "
                "brokers need a renewed certificate."
            )
        trust = (
            f"security.ssl_cafile ({cafile}) does not hold the CA that signed it: set it to that CA's PEM file"
            if cafile
            else "security.ssl_cafile is not set, so only this machine's CAs are trusted: set it to "
            "the PEM file of the CA that signed the brokers' certificates"
        )
        return f"cluster {cluster}: the TLS certificate of {f.server} is not trusted ({e.verify_message}); {trust}."
    if _client_certificate_alert(e):
        return _client_certificate(cluster, f, settings)
    if isinstance(e, (*_CLOSED, TimeoutError)) or (isinstance(e, ssl.SSLError) and e.reason in _NOT_TLS_REASONS):
        return (
            f"cluster {cluster}: {f.server} did not answer the TLS handshake ({_describe(e)}): the port does not "
            f"speak TLS. If it is a plaintext listener set security.protocol to PLAINTEXT (or SASL_PLAINTEXT) for "
            f"{cluster}; otherwise use the port of the brokers' TLS listener."
        )
    return (
        f"cluster {cluster}: the TLS handshake with {f.server} failed ({_describe(e)}). Check that the brokers "
        "and this client share a TLS version (1.2 or 1.3) and, with mutual TLS, security.ssl_certfile and "
        "ssl_keyfile."
    )


def _client_certificate(cluster: str, f: Failure, settings: Mapping[str, Any]) -> str:
    certfile = settings.get("ssl_certfile")
    if not certfile:
        return (
            f"cluster {cluster}: {f.server} requires a client certificate (mutual TLS) and refused the "
            f"connection without one ({_describe(f.error)}). Set security.ssl_certfile and ssl_keyfile for "
            f"{cluster} to the client's certificate and key (PEM files)."
        )
    return (
        f"cluster {cluster}: {f.server} refused the client certificate in security.ssl_certfile ({certfile}) "
        f"({_describe(f.error)}). It must be signed by a CA the brokers trust (their ssl.truststore) and be "
        "valid now."
    )


def _sasl_handshake(cluster: str, f: Failure, settings: Mapping[str, Any]) -> str:
    mechanism = settings.get("sasl_mechanism")
    if f.error_code == UNSUPPORTED_SASL_MECHANISM:
        return (
            f"cluster {cluster}: the brokers' listener at {f.server} does not enable SASL mechanism {mechanism} "
            f"(it enables: {', '.join(f.mechanisms) or 'none'}); set security.sasl_mechanism for {cluster} to "
            "one of them."
        )
    if f.error_code == ILLEGAL_SASL_STATE:
        return (
            f"cluster {cluster}: the listener at {f.server} is not a SASL listener (SaslHandshake answered "
            f"ILLEGAL_SASL_STATE); set security.protocol to PLAINTEXT or SSL for {cluster}, or use the port of "
            "the brokers' SASL listener."
        )
    return (
        f"cluster {cluster}: {f.server} did not answer the SASL handshake ({_answer(f)}): the listener may not be "
        f"a SASL listener. Check security.protocol for {cluster} and the port."
    )


def _sasl_authenticate(cluster: str, f: Failure, settings: Mapping[str, Any]) -> str:
    mechanism = settings.get("sasl_mechanism")
    tokens = _token_source(settings)
    if tokens is not None:
        return _token_refused(cluster, f, tokens)
    if mechanism == "GSSAPI":
        return (
            f"cluster {cluster}: {f.server} refused the Kerberos ticket for "
            f"{settings.get('sasl_kerberos_service_name')}/{f.server.rsplit(':', 1)[0]} with "
            f'"{f.broker_message or _answer(f)}": the broker\'s keytab does not hold the key the KDC issued that '
            "ticket with (a service principal whose keys changed since the keytab was exported), the clocks of "
            "the brokers and the KDC differ by more than 5 minutes, or the broker maps the principal to no local "
            "name (sasl.kerberos.principal.to.local.rules). The brokers' logs say which."
        )
    who = f"{settings.get('sasl_plain_username')!r} (SASL {mechanism})"
    if f.error_code:
        per_mechanism = (
            f", and that the user has {mechanism} credentials on the brokers (SCRAM credentials are kept per mechanism)"
            if mechanism and mechanism.startswith("SCRAM")
            else ""
        )
        return (
            f"cluster {cluster}: authentication failed at {f.server}: the broker refused the credentials of "
            f'{who} with "{f.broker_message or "no reason"}" ({_error_name(f.error_code)}). Check '
            f"security.username and the password in the environment variable that security.password of "
            f"{cluster} refers to{per_mechanism}."
        )
    return (
        f"cluster {cluster}: SASL authentication of {who} with {f.server} did not complete ({_answer(f)}). "
        "Check the brokers' logs."
    )


def _token_source(settings: Mapping[str, Any]) -> Tokens | None:
    """The OAUTHBEARER token source in `settings`, if one is configured (only then is
    reconciler.kafka.oauth imported: see settings._tokens)."""
    tokens = settings.get("sasl_oauth_token_provider")
    if tokens is None:
        return None
    from reconciler.kafka.oauth import Tokens

    return tokens if isinstance(tokens, Tokens) else None


def _token_refused(cluster: str, f: Failure, tokens: Tokens) -> str:
    """The broker's OAUTHBEARER refusal: its error JSON (RFC 7628 3.2.2: status, scope) names
    the cause; the token's own claims, against this machine's clock, say which one."""
    from reconciler.kafka.aws_msk import MskIamTokens

    try:
        answer = json.loads(f.broker_message or "")
    except ValueError:
        answer = None
    status = answer.get("status") if isinstance(answer, dict) else None
    scope = answer.get("scope") if isinstance(answer, dict) else None
    said = f'"{f.broker_message}"' if f.broker_message else _answer(f)
    if isinstance(tokens, MskIamTokens):
        return (
            f"cluster {cluster}: {f.server} refused the AWS identity of access key {tokens.access_key_id} (IAM, "
            f"{tokens.region}) with {said}. Its IAM policy must allow kafka-cluster:Connect on the cluster's ARN "
            "(and kafka-cluster:* actions on topics and groups for what the reconciler does), the keys must be "
            "current, and this machine's clock right to within 5 minutes."
        )
    head = f"cluster {cluster}: {f.server} refused the OAUTHBEARER token from {tokens.setting} with {said}"
    claims = f"The token's claims: {tokens.describe_claims()}."
    if status == "insufficient_scope":
        return (
            f"{head}: the token lacks a scope the brokers require ({scope}). Ask for it with security.oauth_scope, "
            f"or grant it to the client at the identity provider. {claims}"
        )
    problem = tokens.clock_problem()
    if problem:
        return f"{head}: {problem}. {claims}"
    return (
        f"{head}: the brokers do not accept this token. Kafka's validator checks the signature against the "
        "identity provider's keys (sasl.oauthbearer.jwks.endpoint.url), the issuer and audience it expects, the "
        "sub claim and the expiry, allowing sasl.oauthbearer.clock.skew.seconds of difference between clocks (the "
        "unsecured validator allows none: a token issued a moment ago looks issued in the future to a broker whose "
        f"clock is behind). Compare with the brokers' settings. {claims}"
    )


def _client_certificate_alert(error: BaseException | None) -> bool:
    return isinstance(error, ssl.SSLError) and error.reason in _CLIENT_CERTIFICATE_ALERTS


def _answer(f: Failure) -> str:
    return _error_name(f.error_code) if f.error_code else _describe(f.error)


def _error_name(code: int) -> str:
    return f"{Errors.for_code(code).__name__}, error {code}"


def _describe(error: BaseException | None) -> str:
    """A short reason: the OS's words and errno name, OpenSSL's reason, or the exception's text."""
    if error is None:
        return "no answer in time"
    if isinstance(error, ssl.SSLCertVerificationError):
        return error.verify_message or str(error.reason)
    if isinstance(error, ssl.SSLError) and error.reason:
        return error.reason
    if isinstance(error, socket.gaierror):
        return f"host name not found: {error.strerror}"
    if isinstance(error, TimeoutError):
        return "no answer in time"
    if isinstance(error, OSError) and error.errno is not None and error.errno in errno.errorcode:
        return f"{error.strerror} ({errno.errorcode[error.errno]})"
    if isinstance(error, (ClosedByBroker, NotKafka)):
        return str(error)
    return str(error) or type(error).__name__


def _without_secrets(text: str, settings: Mapping[str, Any]) -> str:
    secrets = [settings.get(key) for key in ("sasl_plain_password", "ssl_password")]
    tokens = _token_source(settings)
    if tokens is not None:
        secrets += tokens.secrets()
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text
