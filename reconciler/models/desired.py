"""What the manifests declare for one cluster, resolved: defaults applied, shared rules and
overrides merged, config values normalised to Kafka's strings.

Built by `reconciler.manifests`; read by the planner and the policy checks. Every piece keeps the
manifest position it came from, so a diagnostic can point at the line to change.
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import Enum
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from reconciler.models.trusted import trusted
from reconciler.units import epoch_ms


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceRef(_Model):
    file: str
    line: int
    column: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    @classmethod
    def at(cls, file: str, line: int, column: int) -> SourceRef:
        """SourceRef(file=file, line=line, column=column), not validated: for positions the YAML
        reader counted (a manifest of 10,000 topics asks for tens of thousands)."""
        return trusted(cls, {"file": file, "line": line, "column": column})


class _Rule(_Model):
    name: str | None = None  # set when the rule is a shared, named one
    source: SourceRef | None = None


class BeforeOffset(_Rule):
    """Delete records before `offset` in every partition, or before per-partition offsets."""

    kind: Literal["before_offset"] = "before_offset"
    offset: int | None = None
    partitions: dict[int, int] = Field(default_factory=dict)

    def describe(self) -> str:
        if self.partitions:
            return "before offsets " + ", ".join(f"p{p}:{o}" for p, o in sorted(self.partitions.items()))
        return f"before offset {self.offset}"


class BeforeTime(_Rule):
    """Delete records whose offset is below the first record at or after `timestamp`."""

    kind: Literal["before_time"] = "before_time"
    timestamp: datetime  # timezone-aware

    @property
    def timestamp_ms(self) -> int:
        return epoch_ms(self.timestamp)

    def describe(self) -> str:
        return f"before {self.timestamp.isoformat().replace('+00:00', 'Z')}"


class KeepLast(_Rule):
    kind: Literal["keep_last"] = "keep_last"
    records: int

    def describe(self) -> str:
        return f"all but the last {self.records} records"


class Everything(_Rule):
    kind: Literal["everything"] = "everything"

    def describe(self) -> str:
        return "everything"


class ConsumedBy(_Rule):
    """Delete what every one of the named consumer groups has committed past."""

    kind: Literal["consumed_by"] = "consumed_by"
    groups: list[str]

    def describe(self) -> str:
        return "consumed by " + ", ".join(self.groups)


TruncationRule = Annotated[BeforeOffset | BeforeTime | KeepLast | Everything | ConsumedBy, Field(discriminator="kind")]


class UndeclaredConfigs(str, Enum):
    """What to do with config keys set on the topic in the cluster but absent from the manifest."""

    REPORT = "report"
    REMOVE = "remove"


class TopicState(str, Enum):
    PRESENT = "present"
    ABSENT = "absent"  # explicit opt-in: delete the topic if it exists


class RetentionStepping(str, Enum):
    """What a retention cut beyond the policy's max_retention_decrease does."""

    REFUSE = "refuse"  # the plan has an error
    GRADUAL = "gradual"  # each apply lowers retention one allowed step, until the declared value


class DesiredTopic(_Model):
    name: str
    state: TopicState = TopicState.PRESENT
    partitions: int
    replication_factor: int
    configs: dict[str, str] = Field(default_factory=dict)  # normalised Kafka strings
    undeclared_configs: UndeclaredConfigs = UndeclaredConfigs.REPORT
    protected: bool = False
    retention_stepping: RetentionStepping = RetentionStepping.REFUSE
    # partition -> brokers (first: preferred leader), pinned by the manifest; other partitions are placed.
    replica_assignment: dict[int, list[int]] = Field(default_factory=dict)
    truncate: list[TruncationRule] = Field(default_factory=list)
    source: SourceRef | None = None
    # Bytes per day the topic is expected to take in (all partitions): what creating it costs in
    # disk is estimated from it (reconciler.plan.capacity). None: not declared.
    expected_bytes_per_day: int | None = None
    # With state absent: delete only if shown idle this long (docs/idle-topics.md). None: no guard.
    delete_only_if_idle_for_ms: int | None = Field(default=None, exclude_if=lambda v: v is None)
    owner: str | None = None  # the Team that owns it (reconciler.manifests.owners); None: nobody

    @classmethod
    def resolved(
        cls,
        name: str,
        state: TopicState,
        partitions: int,
        replication_factor: int,
        configs: dict[str, str],
        undeclared_configs: UndeclaredConfigs,
        protected: bool,
        retention_stepping: RetentionStepping,
        replica_assignment: dict[int, list[int]],
        truncate: list[TruncationRule],
        source: SourceRef,
        expected_bytes_per_day: int | None = None,
        delete_only_if_idle_for_ms: int | None = None,
        owner: str | None = None,
    ) -> DesiredTopic:
        """For the manifest loader only: its values come from document models that validated them
        (strict types and ranges) and from the merge, so they are not validated again; the
        containers are the topic's own (the loader builds them for it)."""
        return trusted(
            cls,
            {
                "name": name,
                "state": state,
                "partitions": partitions,
                "replication_factor": replication_factor,
                "configs": configs,
                "undeclared_configs": undeclared_configs,
                "protected": protected,
                "retention_stepping": retention_stepping,
                "replica_assignment": replica_assignment,
                "truncate": truncate,
                "source": source,
                "expected_bytes_per_day": expected_bytes_per_day,
                "delete_only_if_idle_for_ms": delete_only_if_idle_for_ms,
                "owner": owner,
            },
        )


class Policy(_Model):
    """Client-side checks in the spirit of KIP-170's TopicManagementPolicy."""

    topic_name_pattern: str | None = None
    min_partitions: int | None = None
    max_partitions: int | None = None
    allowed_replication_factors: list[int] | None = None
    # key -> required value, or None when the key only has to be declared
    required_configs: dict[str, str | None] = Field(default_factory=dict)
    # Largest fraction (0..1] of a partition's records one apply may delete; None = no limit.
    max_delete_fraction: float | None = None
    # Largest share [0.01, 1) by which one apply may lower retention.ms or retention.bytes: the new
    # limit is at least (1 - this) x the current one, rounded up. None = no limit.
    max_retention_decrease: float | None = None
    # Most actions that delete data for good (`Action.destructive`) one plan may hold; None = no limit.
    max_destructive_actions: int | None = None
    # Largest share (0, 1] of a broker's log directory filesystem a plan may project it to use
    # (reconciler.plan.capacity); a warning from 90% of it. None = no limit.
    max_disk_usage: float | None = None
    protected_topic_patterns: list[str] = Field(default_factory=list)
    # Every deletion guarded as by delete_only_if_idle_for, for at least this long. None: not required.
    deletions_require_idle_for_ms: int | None = Field(default=None, exclude_if=lambda v: v is None)
    require_owner: bool = False  # every topic must have an owner (docs/teams.md)
    # Drift lists topics shown idle this long (docs/idle-topics.md); None: idleness is not read.
    idle_after_ms: int | None = Field(default=None, exclude_if=lambda v: v is None)
    # Patterns of topics never called idle (dead-letter and retry topics).
    idle_exempt_topics: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    source: SourceRef | None = None
    # setting -> where its value is written: a plan error about a limit points at that limit
    sources: dict[str, SourceRef] = Field(default_factory=dict)

    def source_of(self, setting: str) -> SourceRef | None:
        return self.sources.get(setting) or self.source


class TeamBudget(_Model):
    """What one team may take of each cluster its topics are on (docs/teams.md); None: no limit."""

    max_topics: int | None = None
    # Partition replicas (partitions x replication factor): what the brokers carry.
    max_partitions: int | None = None
    max_retention_ms: int | None = None  # no topic of the team keeps records longer (unlimited is above it)
    max_disk_bytes: int | None = None  # on all replicas: what its topics hold plus what the plan adds
    name_prefix: str | None = None  # every topic of the team starts with it
    # setting -> where its value is written: a plan error about a limit points at it
    sources: dict[str, SourceRef] = Field(default_factory=dict)


class Team(_Model):
    """An owner of topics: whose review a change to them needs, and its budget."""

    name: str
    review: str  # a GitHub user (@name) or team (@org/team)
    budget: TeamBudget = TeamBudget()
    source: SourceRef | None = None


_UNSUPPORTED_MECHANISMS = {
    "AWS_MSK_IAM": "is the mechanism of AWS's Java library; for Amazon MSK's IAM access control write "
    "sasl_mechanism: OAUTHBEARER with aws_msk_iam: true (AWS's signer for non-Java clients)",
}


def _supported_mechanism(value: object) -> object:
    # Said when the manifest is read, not when a connection fails later.
    if isinstance(value, str) and value in _UNSUPPORTED_MECHANISMS:
        raise ValueError(f"SASL {value} is not supported: it {_UNSUPPORTED_MECHANISMS[value]}")
    return value


SaslMechanism = Annotated[
    Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI"], BeforeValidator(_supported_mechanism)
]
# GSSAPI's settings, meaningless with another mechanism.
KERBEROS_SETTINGS = ("kerberos_service_name", "kerberos_principal", "kerberos_keytab")
# Where an OAUTHBEARER token comes from: exactly one of these settings names its source.
OAUTH_SOURCES = ("oauth_token_endpoint_url", "oauth_token_file", "oauth_token", "aws_msk_iam")
# Settings of the client credentials grant (KIP-768), meaningless without a token endpoint.
OAUTH_ENDPOINT_SETTINGS = ("oauth_client_id", "oauth_client_secret", "oauth_scope", "oauth_extensions", "oauth_ca_file")
# Settings of Amazon MSK's IAM signer, meaningless without it.
AWS_SETTINGS = ("aws_region", "aws_profile")
# An AWS region's name (us-east-1, us-gov-west-1, cn-north-1, eusc-de-east-1, us-isob-east-1).
AWS_REGION = re.compile(r"^[a-z]{2,4}(?:-[a-z]+)+-[0-9]{1,2}$")


class SettingError(ValueError):
    """A check of settings that go together, failed for the value of one of them, `key`: the
    manifest error points at that key, not at the block that holds it."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


def token_endpoint_problem(url: str, allow_http: bool) -> str | None:
    """Why a token endpoint URL may not be used, or None: the client secret and the token travel
    over it, so it is https unless plain http is explicitly allowed (a local test endpoint)."""
    scheme, _, rest = url.partition("://")
    if not rest:
        return f"security.oauth_token_endpoint_url is not a URL ({url}); write https://host/path of the token endpoint"
    if scheme.lower() == "https" or (scheme.lower() == "http" and allow_http):
        return None
    if scheme.lower() == "http":
        return (
            f"security.oauth_token_endpoint_url ({url}) is not https: the client secret and the token would "
            "cross the network unencrypted. Use the endpoint's https URL (set security.oauth_allow_http: true "
            "only for a local test endpoint)"
        )
    return f"security.oauth_token_endpoint_url ({url}) must be an https URL, not {scheme}"


class ClientSecurity(_Model):
    """Connection settings; secret values are kept as `${ENV_VAR}` references until connect time."""

    protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: SaslMechanism | None = None
    username: str | None = None
    password: str | None = None
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_password: str | None = None
    ssl_check_hostname: bool = True
    # OAUTHBEARER: a token from an OIDC token endpoint (client credentials), a file, or a variable.
    oauth_token_endpoint_url: str | None = None
    oauth_client_id: str | None = None
    oauth_client_secret: str | None = None
    oauth_scope: str | None = None
    oauth_extensions: dict[str, str] = Field(default_factory=dict)  # SASL extensions (KIP-342)
    oauth_ca_file: str | None = None  # the endpoint's CA (default: the system's trust store)
    oauth_allow_http: bool = False
    oauth_token_file: str | None = None
    oauth_token: str | None = None
    # Amazon MSK with IAM access control: a token signed with the AWS credential chain's keys.
    aws_msk_iam: bool = False
    aws_region: str | None = None  # default: from the brokers' host names (*.kafka.REGION.amazonaws.com)
    aws_profile: str | None = None  # default: the credential chain (AWS_PROFILE, environment, web identity, role)
    # GSSAPI: the brokers' service principal is SERVICE/BROKER-HOST; the client logs in from a keytab
    # as `kerberos_principal`, or uses the ticket cache (KRB5CCNAME, kinit) when no keytab is given.
    kerberos_service_name: str | None = None  # default kafka (the brokers' sasl.kerberos.service.name)
    kerberos_principal: str | None = None
    kerberos_keytab: str | None = None

    @model_validator(mode="after")
    def _kerberos_settings_fit(self) -> ClientSecurity:
        given = [name for name in KERBEROS_SETTINGS if getattr(self, name)]
        if given and self.sasl_mechanism != "GSSAPI":
            raise SettingError(
                given[0],
                f"security.{given[0]} is a GSSAPI setting, but sasl_mechanism is {self.sasl_mechanism or 'not set'}; "
                "set sasl_mechanism: GSSAPI or remove it",
            )
        if self.kerberos_keytab and not self.kerberos_principal:
            raise SettingError(
                "kerberos_keytab",
                "security.kerberos_keytab needs kerberos_principal, the principal to log in as with its keys "
                "(e.g. kafka-reconciler@EXAMPLE.COM)",
            )
        return self

    @model_validator(mode="after")
    def _oauth_settings_fit(self) -> ClientSecurity:
        given = [name for name in (*OAUTH_SOURCES, *OAUTH_ENDPOINT_SETTINGS, *AWS_SETTINGS) if getattr(self, name)]
        if self.sasl_mechanism != "OAUTHBEARER":
            if given:
                raise SettingError(
                    given[0],
                    f"security.{given[0]} is an OAUTHBEARER setting, but sasl_mechanism is "
                    f"{self.sasl_mechanism or 'not set'}; set sasl_mechanism: OAUTHBEARER or remove it",
                )
            return self
        sources = [name for name in OAUTH_SOURCES if getattr(self, name)]
        if len(sources) != 1:
            raise SettingError(
                sources[1] if sources else "sasl_mechanism",  # the second source, or the mechanism that needs one
                "SASL OAUTHBEARER needs exactly one source of tokens: security.oauth_token_endpoint_url (with "
                "oauth_client_id and oauth_client_secret), oauth_token_file, oauth_token or aws_msk_iam: true"
                + (f"; not {' and '.join(sources)} together" if sources else ""),
            )
        aws_only = [name for name in AWS_SETTINGS if getattr(self, name)]
        if aws_only and not self.aws_msk_iam:
            raise SettingError(aws_only[0], f"security.{aws_only[0]} only applies to aws_msk_iam: true; remove it")
        if self.aws_region and not ENV_REFERENCE.search(self.aws_region) and not AWS_REGION.match(self.aws_region):
            raise SettingError(
                "aws_region", f"security.aws_region ({self.aws_region}) is not an AWS region's name, such as eu-west-1"
            )
        url = self.oauth_token_endpoint_url
        if url is None:
            endpoint_only = [name for name in OAUTH_ENDPOINT_SETTINGS if getattr(self, name)]
            if endpoint_only:
                raise SettingError(
                    endpoint_only[0],
                    f"security.{endpoint_only[0]} only applies to a token endpoint, and {sources[0]} is the "
                    "source of tokens; remove it",
                )
            return self
        if not (self.oauth_client_id and self.oauth_client_secret):
            raise SettingError(
                "oauth_token_endpoint_url",
                "security.oauth_token_endpoint_url needs oauth_client_id and oauth_client_secret (the secret as a "
                "${ENV_VAR} reference) for the client credentials grant",
            )
        problem = None if ENV_REFERENCE.search(url) else token_endpoint_problem(url, self.oauth_allow_http)
        if problem:
            raise SettingError("oauth_token_endpoint_url", problem)
        return self


# `${NAME}`: a value read from the environment when connecting (secrets never live in Git).
ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# A bootstrap server once references are resolved: host (or [IPv6]) and port.
_HOST = r"\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+"
HOST_PORT = re.compile(rf"^(?:{_HOST}):(?P<port>\d{{1,5}})$")
# As written in a manifest, where the host may still be a reference.
HOST_OR_REFERENCE = rf"{_HOST}|{ENV_REFERENCE.pattern}"
HOST_PORT_OR_REFERENCE = re.compile(rf"^(?:{HOST_OR_REFERENCE}):(?P<port>[0-9]{{1,5}})$")


DEFAULT_REASSIGNMENT_WAIT_MS = 300_000


class ReassignmentSettings(_Model):
    """How apply runs replica reassignments on a cluster."""

    throttle_bytes_per_s: int | None = None  # leader/follower.replication.throttled.rate; None: not throttled
    wait_ms: int = DEFAULT_REASSIGNMENT_WAIT_MS  # how long apply waits before reporting them in progress


class ClusterSpec(_Model):
    name: str
    bootstrap_servers: list[str]
    # The id the cluster must answer with (Metadata's cluster_id); None: whatever answers is taken.
    cluster_id: str | None = None
    security: ClientSecurity = ClientSecurity()
    labels: dict[str, str] = Field(default_factory=dict)
    # Topic names matching these are never reported as unmanaged (besides internal `__*` ones).
    ignore_topics: list[str] = Field(default_factory=list)
    drain_brokers: list[int] = Field(default_factory=list)  # no replica placed there; existing ones moved off
    reassignment: ReassignmentSettings = ReassignmentSettings()
    source: SourceRef | None = None


class DesiredState(_Model):
    """Everything the manifests say about one cluster."""

    cluster: ClusterSpec
    topics: dict[str, DesiredTopic] = Field(default_factory=dict)
    policy: Policy = Policy()
    teams: dict[str, Team] = Field(default_factory=dict)  # every Team document, by name
