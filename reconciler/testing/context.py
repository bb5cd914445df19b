"""What the request pipeline (dispatch) gives every handler: the broker's settings and the
request's context. Its own module, so that the handlers and the pipeline that calls them do not
import each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .authorizer import SUPPORTED_OPERATIONS, Authorizer
from .sasl_mechanisms import SUPPORTED as SASL_MECHANISMS
from .sasl_mechanisms import handshake_mechanisms

if TYPE_CHECKING:
    from .gssapi_server import KerberosAcceptor
    from .oauthbearer import Validator
    from .server import Connection
    from .state import ClusterState


@dataclass
class ClusterSettings:
    disabled_apis: frozenset[int] = frozenset()
    sasl_users: dict[str, str] | None = None
    # None: no authorizer configured, every request is allowed (Kafka without authorizer.class.name).
    authorizer: Authorizer | None = None
    # sasl.enabled.mechanisms of the listener (used when sasl_users or oauth is set).
    sasl_mechanisms: tuple[str, ...] = SASL_MECHANISMS
    # OAUTHBEARER's validator callback handler; the SASL extensions of each accepted login.
    oauth: Validator | None = None
    oauth_extensions_seen: list[dict[str, str]] = field(default_factory=list)
    # GSSAPI's acceptor (the brokers' keytab)
    kerberos: KerberosAcceptor | None = None

    @property
    def sasl(self) -> bool:
        """Is the listener a SASL one (SASL_PLAINTEXT or SASL_SSL)?"""
        return self.sasl_users is not None or self.oauth is not None or self.kerberos is not None

    # API key -> the highest version spoken: a broker of an older Kafka (DescribeLogDirs 3: before 3.3).
    max_versions: dict[int, int] = field(default_factory=dict)

    @property
    def handshake_mechanisms(self) -> list[str]:
        return handshake_mechanisms(self.sasl_mechanisms)


@dataclass
class RequestContext:
    """What a handler may use besides the request itself."""

    state: ClusterState
    settings: ClusterSettings
    connection: Connection
    broker_id: int
    api_key: int
    version: int
    # The APIs this broker answers (ApiVersions lists them).
    api_keys: list[int]
    # False when an injected error must keep the operation from taking effect.
    apply: bool = True
    # Set by a handler that wants the connection closed after its answer (failed SASL).
    close_after: bool = field(default=False)

    def allowed(self, operation: int, resource_type: int, name: str) -> bool:
        """AuthHelper.authorize: may this connection's principal do `operation` on the resource?"""
        authorizer = self.settings.authorizer
        return authorizer is None or authorizer.authorize(self.connection.principal, self._host(), operation, resource_type, name)

    def authorized_operations(self, resource_type: int, name: str) -> set[int]:
        """KIP-430's bitfield as a set: every supported operation when there is no authorizer."""
        authorizer = self.settings.authorizer
        if authorizer is None:
            return set(SUPPORTED_OPERATIONS[resource_type])
        return authorizer.authorized_operations(self.connection.principal, self._host(), resource_type, name)

    def may_write_some_topic(self) -> bool:
        authorizer = self.settings.authorizer
        return authorizer is None or authorizer.may_write_some_topic(self.connection.principal, self._host())

    def _host(self) -> str:
        try:
            return str(self.connection.sock.getpeername()[0])
        except OSError:
            return ""
