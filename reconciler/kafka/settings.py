"""A cluster's connection settings as kafka-python wants them, with `${ENV_VAR}` references
resolved at connect time (so secrets live in the CI environment, never in Git)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from reconciler.errors import ReconcilerError, shown
from reconciler.models.desired import ENV_REFERENCE, HOST_PORT, ClientSecurity, ClusterSpec

if TYPE_CHECKING:
    from reconciler.kafka.oauth import Tokens


def resolve_references(value: str | None, where: str, cluster: str, env: Mapping[str, str]) -> str | None:
    if value is None:
        return None

    def lookup(match: re.Match) -> str:
        name = match.group(1)
        if name not in env:
            raise ReconcilerError(
                f"cluster {cluster}: {where} refers to ${{{name}}}, but the environment variable {name} is not "
                f"set. Export it (for example from a CI secret) and run again."
            )
        return env[name]

    return ENV_REFERENCE.sub(lookup, value)


def bootstrap_servers(spec: ClusterSpec, env: Mapping[str, str] | None = None) -> list[str]:
    """The cluster's bootstrap servers with `${ENV_VAR}` references resolved, each checked to be
    host:port: an address from the environment or --bootstrap-servers is not seen by the loader."""
    env = os.environ if env is None else env
    servers = []
    for server in spec.bootstrap_servers:
        value = (resolve_references(server, "bootstrap_servers", spec.name, env) or "").strip()
        match = HOST_PORT.match(value)
        if match is None or not 1 <= int(match.group("port")) <= 65535:
            raise ReconcilerError(
                f"cluster {spec.name}: bootstrap server {shown(value)} is not host:port with a port from 1 to 65535 (e.g. "
                "kafka-1.example.com:9092); fix bootstrap_servers in the manifests, --bootstrap-servers or "
                "RECONCILE_BOOTSTRAP_SERVERS."
            )
        servers.append(value)
    if not servers:
        raise ReconcilerError(
            f"cluster {spec.name} has no bootstrap servers; set bootstrap_servers in the manifests "
            "or pass --bootstrap-servers HOST:PORT."
        )
    return servers


def client_settings(spec: ClusterSpec, env: Mapping[str, str] | None = None) -> dict:
    """kafka-python connection settings for the cluster's `security` block."""
    env = os.environ if env is None else env
    security: ClientSecurity = spec.security

    def resolved(field: str) -> str | None:
        return resolve_references(getattr(security, field), f"security.{field}", spec.name, env)

    settings: dict = {"security_protocol": security.protocol}
    if security.protocol.startswith("SASL_"):
        mechanism = security.sasl_mechanism
        if mechanism is None:
            raise ReconcilerError(
                f"cluster {spec.name}: security.protocol is {security.protocol} but no "
                "sasl_mechanism is set; add one (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN, OAUTHBEARER, GSSAPI)."
            )
        settings["sasl_mechanism"] = mechanism
        if mechanism == "OAUTHBEARER":
            settings["sasl_oauth_token_provider"] = _tokens(spec, resolved, env)
            return _with_tls(settings, security, resolved)
        if mechanism == "GSSAPI":
            settings["sasl_kerberos_service_name"] = resolved("kerberos_service_name") or "kafka"
            return _with_tls(settings, security, resolved)
        username, password = resolved("username"), resolved("password")
        if not username or password is None:
            raise ReconcilerError(
                f"cluster {spec.name}: SASL {mechanism} needs security.username and "
                "security.password (as ${ENV_VAR} references)."
            )
        settings["sasl_plain_username"] = username
        settings["sasl_plain_password"] = password
    return _with_tls(settings, security, resolved)


def kerberos_identity(spec: ClusterSpec, env: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """The GSSAPI principal and keytab of the cluster's `security`, references resolved."""
    env = os.environ if env is None else env
    security = spec.security
    return (
        resolve_references(security.kerberos_principal, "security.kerberos_principal", spec.name, env),
        resolve_references(security.kerberos_keytab, "security.kerberos_keytab", spec.name, env),
    )


def _with_tls(settings: dict, security: ClientSecurity, resolved: Callable[[str], str | None]) -> dict:
    if security.protocol.endswith("SSL"):
        settings["ssl_check_hostname"] = security.ssl_check_hostname
        for field in ("ssl_cafile", "ssl_certfile", "ssl_keyfile", "ssl_password"):
            value = resolved(field)
            if value is not None:
                settings[field] = value
    return settings


def _tokens(spec: ClusterSpec, resolved: Callable[[str], str | None], env: Mapping[str, str]) -> Tokens:
    """The OAUTHBEARER token source the `security` block names (ClientSecurity checked that it
    names exactly one, with what it needs). The token modules are imported here, only for a
    cluster that uses them: urllib's HTTP client and the MSK signer would cost every other command."""
    from reconciler.kafka.aws_msk import MskIamTokens
    from reconciler.kafka.oauth import EndpointTokens, FileTokens, VariableTokens

    security = spec.security
    extensions = {
        key: resolve_references(value, f"security.oauth_extensions.{key}", spec.name, env) or ""
        for key, value in security.oauth_extensions.items()
    }
    if security.oauth_token_file:
        return FileTokens(spec.name, resolved("oauth_token_file") or "", extensions=extensions)
    if security.oauth_token:
        return VariableTokens(spec.name, resolved("oauth_token") or "", extensions=extensions)
    if security.aws_msk_iam:
        return MskIamTokens(spec.name, resolved("aws_region"), resolved("aws_profile"), spec.bootstrap_servers)
    return EndpointTokens(
        spec.name,
        resolved("oauth_token_endpoint_url") or "",
        resolved("oauth_client_id") or "",
        resolved("oauth_client_secret") or "",
        scope=resolved("oauth_scope"),
        ca_file=resolved("oauth_ca_file"),
        allow_http=security.oauth_allow_http,
        extensions=extensions,
    )
