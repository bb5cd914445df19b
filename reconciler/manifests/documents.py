"""The manifest documents as written in YAML, one model per `kind`, strict and closed.

These describe the file format and give `reconcile schema` its JSON Schema. Every limit a schema
can state about one document is stated here (ranges, Kafka's int16/int32/int64 bounds, the topic
name's pattern and length, enums, non-empty and repeat-free lists, each config key's values), so
an editor and the loader refuse the same documents. What needs other documents or the merged
topic (names defined twice, references, a partition beyond the topic's count) is checked after
this, by the modules of reconciler.manifests.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, WithJsonSchema
from pydantic.config import JsonDict, JsonValue
from pydantic_core import PydanticCustomError

from reconciler.errors import shown, shown_text
from reconciler.kafka_configs import INT_MAX, LONG_MAX, TOPIC_NAME_CHARACTERS, TOPIC_NAME_MAX
from reconciler.manifests.config_values import configs_schema
from reconciler.models.desired import (
    AWS_SETTINGS,
    ENV_REFERENCE,
    HOST_OR_REFERENCE,
    KERBEROS_SETTINGS,
    OAUTH_ENDPOINT_SETTINGS,
    OAUTH_SOURCES,
    ClientSecurity,
)
from reconciler.units import DURATION_TEXT_PATTERN, SIZE_TEXT_PATTERN, parse_bytes, parse_duration_ms

__all__ = [
    "DOC_MODELS",
    "RULE_KINDS",
    "ClusterDoc",
    "PolicyDoc",
    "RuleEntry",
    "TeamDoc",
    "TopicDoc",
    "TopicTemplateDoc",
    "TruncationRuleDoc",
    "manifest_json_schema",
]

INT16_MAX = 2**15 - 1
# kafka_configs.is_topic_name as a JSON Schema pattern (editors check names with it): "." and ".."
# are the names of those characters that are refused.
_NAME, _NOT_DOT = f"[{TOPIC_NAME_CHARACTERS}]", f"[{TOPIC_NAME_CHARACTERS.replace('.', '')}]"
TOPIC_NAME_PATTERN = rf"^(?:{_NOT_DOT}{_NAME}*|\.{_NOT_DOT}{_NAME}*|\.\.{_NAME}+)$"
# RFC 3339 with a timezone (a space or lower-case t and z allowed, as RFC 3339 notes).
RFC3339_PATTERN = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
    r"(?:[Zz]|[-+][0-9]{2}:[0-9]{2})$"
)
# A port, 1 to 65535, in at most five digits (leading zeros allowed, as the adapter reads them).
_PORT = (
    r"(?:0{0,4}[1-9]|0{0,3}[1-9][0-9]|0{0,2}[1-9][0-9]{2}|0?[1-9][0-9]{3}|[1-5][0-9]{4}|6[0-4][0-9]{3}"
    r"|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
)
_SERVER = rf"(?:{HOST_OR_REFERENCE}):{_PORT}"
# One bootstrap_servers entry: servers separated by commas, blanks between commas ignored.
SERVER_LIST_PATTERN = rf"^\s*(?:{_SERVER}\s*)?(?:,\s*(?:{_SERVER}\s*)?)*$"
# A secret is only ever a reference to an environment variable, read when connecting.
SECRET_PATTERN = rf"^{ENV_REFERENCE.pattern}$"

MANIFEST_ERROR = "manifest"  # a refusal worded for the manifest already (ctx["message"])


def refusal(message: str) -> PydanticCustomError:
    """A validation error whose message is final: the loader shows it as it is."""
    return PydanticCustomError(MANIFEST_ERROR, "{message}", {"message": message})


# --- checks a schema states with a keyword pydantic has no constraint for ---------------------------


def repeated_names(names: list[str], what: str, each: str) -> str | None:
    """Why a list names something twice, or None. Linear time: lists may be long."""
    if len(set(names)) == len(names):
        return None  # the usual case, said without a loop
    seen: set[str] = set()
    repeated: set[str] = set()
    for name in names:
        (repeated if name in seen else seen).add(name)
    if not repeated:
        return None
    ordered = sorted(repeated)
    listed = ", ".join(shown_text(name, 40) for name in ordered[:5])
    more = f" and {len(ordered) - 5:,} more" if len(ordered) > 5 else ""
    return f"{what} names {listed}{more} more than once; list each {each} once"


def _listed_once(what: str, each: str) -> AfterValidator:
    def check(names: list[str]) -> list[str]:
        problem = repeated_names(names, what, each)
        if problem:
            raise refusal(problem)
        return names

    return AfterValidator(check)


def _ids_once(what: str) -> AfterValidator:
    def check(ids: list[int]) -> list[int]:
        problem = repeated_names([str(i) for i in ids], what, "broker")
        if problem:
            raise refusal(problem)
        return ids

    return AfterValidator(check)


def _parsed_by(parse: Callable[[str], int], setting: str, minimum: int = 0, below: str = "") -> AfterValidator:
    """The text, kept as written, when `parse` reads it to `minimum` or more (a number written
    without a unit has the same range: Field(ge=minimum, le=LONG_MAX)); else why not, naming
    `setting`. `below` says why a smaller value is refused."""

    def check(text: str) -> str:
        try:
            value = parse(text)
        except ValueError as e:
            raise refusal(f"{setting}: {e}") from None
        if value < minimum:
            raise refusal(f"{setting}: {below or f'input should be greater than or equal to {minimum}'} (got {shown(text)})")
        return text

    return AfterValidator(check)


def _is_true(value: bool) -> bool:
    if value is not True:
        raise refusal("everything: false means nothing; remove the rule instead")
    return value


_CLUSTER_ID_PATTERN = r"^\S+$"


def _one_word_id(text: str) -> str:
    if not re.fullmatch(_CLUSTER_ID_PATTERN, text):
        raise refusal(
            f"cluster_id {shown(text)} is not a cluster id; write the id the cluster answers with (`reconcile "
            "import` writes it; `kafka-cluster.sh cluster-id` prints it), or leave the setting out"
        )
    return text


def rfc3339(text: str) -> datetime | str:
    """The time an RFC 3339 text names (naive when it has no timezone), or why it names none."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        return f"before_time {shown(text)} is not an RFC 3339 time; write e.g. 2026-10-01T00:00:00Z"
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if hour is None:
        return f"before_time {text} is a date; write a time with a timezone (e.g. {text}T00:00:00Z)"
    try:
        tz = None
        if zone is not None and zone in "Zz":
            tz = timezone.utc
        elif zone is not None:
            sign = -1 if zone[0] == "-" else 1
            tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
        # Finer than microseconds is cut off: an earlier instant, so never more is deleted.
        micro = int((fraction or "0")[:6].ljust(6, "0"))
        when = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzinfo=tz)
    except ValueError as e:  # e.g. day is out of range for month
        return f"before_time {shown(text)} is not an RFC 3339 time ({e}); write e.g. 2026-10-01T00:00:00Z"
    if when.tzinfo is None:
        return f"before_time {when.isoformat()} has no timezone; add one (e.g. Z for UTC) so it means the same instant everywhere"
    return when


# Also dates alone and times without a zone, to say what is missing.
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"([Zz]|[-+][0-9]{2}:[0-9]{2})?)?"
)


def _real_time(text: str) -> str:
    """The pattern admits 2026-02-30; the calendar does not."""
    when = rfc3339(text)
    if isinstance(when, str):
        raise refusal(when)
    return text


def split_servers(value: list[str] | str) -> list[str]:
    """The servers of a bootstrap_servers value: list entries and comma-separated parts, blanks left out."""
    entries = [value] if isinstance(value, str) else value
    return [server.strip() for entry in entries for server in entry.split(",") if server.strip()]


def _names_a_server(value: list[str] | str) -> list[str] | str:
    if not split_servers(value):
        raise refusal("bootstrap_servers is empty")
    return value


# --- field types -----------------------------------------------------------------------------------

# CreateTopics carries the partition count as an int32 and the replication factor as an int16.
Partitions = Annotated[int, Field(ge=1, le=INT_MAX)]
ReplicationFactor = Annotated[int, Field(ge=1, le=INT16_MAX)]
Offset = Annotated[int, Field(ge=0, le=LONG_MAX)]
PartitionNumber = Annotated[int, Field(ge=0)]
TopicName = Annotated[str, Field(min_length=1, max_length=TOPIC_NAME_MAX, pattern=TOPIC_NAME_PATTERN)]
TopicStateName = Literal["present", "absent"]
UndeclaredName = Literal["report", "remove"]

ConfigValue = str | int | float | bool | list[str | int] | None
# The values each key accepts are checked, with units converted, when the loader normalises them;
# the schema says the same from the same catalogue.
Configs = Annotated[dict[str, ConfigValue], WithJsonSchema(configs_schema())]
RequiredConfigs = Annotated[dict[str, ConfigValue], WithJsonSchema(configs_schema(nullable=True))]

_Name = Annotated[str, Field(min_length=1)]
# An empty list here is a mistake (a topic on no cluster, a rule waiting for no group), never a
# choice; a name listed twice is one too.
ClusterNames = Annotated[
    list[_Name], Field(min_length=1, json_schema_extra={"uniqueItems": True}), _listed_once("clusters", "name")
]
GroupNames = Annotated[
    list[_Name], Field(min_length=1, json_schema_extra={"uniqueItems": True}), _listed_once("consumed_by", "group")
]
# {partition: offset}; JSON object keys are text, so the schema says "digits" where YAML has a number.
PartitionOffsets = Annotated[
    dict[PartitionNumber, Offset], Field(min_length=1, json_schema_extra={"propertyNames": {"pattern": "^[0-9]+$"}})
]
BrokerId = Annotated[int, Field(ge=0, le=INT_MAX)]
# Brokers in the order Kafka keeps them: the first is the partition's preferred leader.
ReplicaList = Annotated[
    list[BrokerId], Field(min_length=1, json_schema_extra={"uniqueItems": True}), _ids_once("the replica list")
]
ReplicaAssignment = Annotated[
    dict[PartitionNumber, ReplicaList], Field(min_length=1, json_schema_extra={"propertyNames": {"pattern": "^[0-9]+$"}})
]
BrokerIds = Annotated[list[BrokerId], Field(json_schema_extra={"uniqueItems": True}), _ids_once("drain_brokers")]
# A size or a duration as text: checked by parsing (the loader's message says what to write); the
# pattern, for editors, is what the parser takes.
_SIZE_PATTERN = Field(json_schema_extra={"pattern": SIZE_TEXT_PATTERN})
_DURATION_PATTERN = Field(json_schema_extra={"pattern": DURATION_TEXT_PATTERN})
# Bytes per second, 1 at least (a zero rate would stop replication), or a size with its unit ("50MiB").
_STOPS_REPLICATION = "0 would stop replication; leave it out for no throttle"
ByteRate = (
    Annotated[int, Field(ge=1, le=LONG_MAX)]
    | Annotated[str, _parsed_by(parse_bytes, "reassignment.throttle", 1, _STOPS_REPLICATION), _SIZE_PATTERN]
)
# Bytes, or a size with its unit ("20GiB"): checked by parsing, as WaitDuration is.
ByteSize = (
    Annotated[int, Field(ge=0, le=LONG_MAX)] | Annotated[str, _parsed_by(parse_bytes, "expected_bytes_per_day"), _SIZE_PATTERN]
)
_EXPECTED = (
    "Expected traffic of the topic, bytes per day over all its partitions (e.g. 20GiB): what creating it costs in disk "
    "is estimated from it (docs/capacity.md)."
)
WaitDuration = (
    Annotated[int, Field(ge=0, le=LONG_MAX)]
    | Annotated[str, _parsed_by(parse_duration_ms, "reassignment.wait"), _DURATION_PATTERN]
)

# How long a topic must have been idle (docs/idle-topics.md): milliseconds, or e.g. 30d.
_ANY_TOPIC = "a topic idle for 0 ms is any topic; leave the guard out instead"
IdleGuard = (
    Annotated[int, Field(ge=1, le=LONG_MAX)]
    | Annotated[str, _parsed_by(parse_duration_ms, "delete_only_if_idle_for", 1, _ANY_TOPIC), _DURATION_PATTERN]
)
IdleRequirement = (
    Annotated[int, Field(ge=1, le=LONG_MAX)]
    | Annotated[str, _parsed_by(parse_duration_ms, "deletions_require_idle_for", 1, _ANY_TOPIC), _DURATION_PATTERN]
)
IdleAfter = (
    Annotated[int, Field(ge=1, le=LONG_MAX)]
    | Annotated[str, _parsed_by(parse_duration_ms, "idle_after", 1, _ANY_TOPIC), _DURATION_PATTERN]
)
_IDLE_GUARD = (
    "With state: absent, delete the topic only if it has been idle this long (e.g. 30d): no record stamped "
    "within it, no consumer group with live members on it, and at apply time nothing written or committed "
    "since the plan (docs/idle-topics.md)."
)
_ASSIGNMENT = (
    "Pinned replicas per partition ({partition: [broker, ...]}; the first broker is the preferred leader). "
    "Partitions not listed are placed by the planner."
)
# Literal[True] would take 1 for true; a strict bool that must be true does not.
OnlyTrue = Annotated[bool, AfterValidator(_is_true), Field(json_schema_extra={"const": True})]
RFC3339Time = Annotated[str, Field(pattern=RFC3339_PATTERN), AfterValidator(_real_time)]
ServerList = Annotated[str, Field(pattern=SERVER_LIST_PATTERN)]
# Blank entries between commas are ignored, but at least one server must be named.
BootstrapServers = (
    Annotated[list[ServerList], AfterValidator(_names_a_server), Field(json_schema_extra={"contains": {"pattern": _SERVER}})]
    | Annotated[ServerList, AfterValidator(_names_a_server), Field(json_schema_extra={"allOf": [{"pattern": _SERVER}]})]
)
Secret = Annotated[str, Field(pattern=SECRET_PATTERN)]
DeleteFraction = Annotated[float, Field(gt=0, le=1)]
DiskUsage = Annotated[float, Field(gt=0, le=1)]
DestructiveLimit = Annotated[int, Field(ge=1, le=INT_MAX)]
# Kafka's are 22 characters of base64url; other brokers speaking the protocol use other forms.
ClusterId = Annotated[
    str, AfterValidator(_one_word_id), Field(max_length=255, json_schema_extra={"pattern": _CLUSTER_ID_PATTERN})
]
# Below 1% per apply a cut would take hundreds of applies; 1 would allow any cut (leave it out instead).
RetentionDecrease = Annotated[float, Field(ge=0.01, lt=1)]
RetentionSteppingName = Literal["refuse", "gradual"]
_STEPPING = (
    "A retention.ms/retention.bytes cut beyond the policy's max_retention_decrease: refuse (default, a plan "
    "error) or gradual (each apply lowers it one allowed step until the declared value)."
)


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# --- teams (docs/teams.md) -----------------------------------------------------------------------

TEAM_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
TeamName = Annotated[str, Field(min_length=1, max_length=100, pattern=TEAM_NAME_PATTERN)]
# GitHub's forms: a user (1 to 39 letters, digits and single inner hyphens) or an organisation's
# team (@org/team-slug), as CODEOWNERS takes them.
_GITHUB_LOGIN = r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}"
REVIEW_HANDLE_PATTERN = rf"^@{_GITHUB_LOGIN}(?:/[A-Za-z0-9][A-Za-z0-9_-]*)?$"


def _review_handle(text: str) -> str:
    if not re.fullmatch(REVIEW_HANDLE_PATTERN, text):
        raise refusal(
            f"review {shown(text)} is not a GitHub user (@name) or team (@org/team) as CODEOWNERS takes them; "
            "write e.g. @acme/payments"
        )
    return text


ReviewHandle = Annotated[str, AfterValidator(_review_handle), Field(json_schema_extra={"pattern": REVIEW_HANDLE_PATTERN})]
DiskBudget = (
    Annotated[int, Field(ge=1, le=LONG_MAX)]
    | Annotated[
        str,
        _parsed_by(parse_bytes, "budget.max_disk", 1),
        _SIZE_PATTERN,
    ]
)
RetentionCeiling = (
    Annotated[int, Field(ge=1, le=LONG_MAX)]
    | Annotated[str, _parsed_by(parse_duration_ms, "budget.max_retention", 1), _DURATION_PATTERN]
)


class TeamTopics(_Doc):
    """The topics a team owns by name; a topic's own `owner` (or its template's) wins over these."""

    prefixes: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list, description="Topic name prefixes.")
    patterns: list[str] = Field(default_factory=list, description="Regexes searched in the topic name (anchor with ^ and $).")


class TeamBudgetDoc(_Doc):
    max_topics: Annotated[int, Field(ge=1, le=INT_MAX)] | None = Field(None, description="Most topics on each cluster.")
    max_partitions: Annotated[int, Field(ge=1, le=INT_MAX)] | None = Field(
        None, description="Most partition replicas (partitions x replication factor) on each cluster."
    )
    max_retention: RetentionCeiling | None = Field(
        None, description="Longest retention.ms of any of its topics (milliseconds or e.g. 30d); unlimited is above it."
    )
    max_disk: DiskBudget | None = Field(
        None, description="Most bytes on disk on each cluster, all replicas: what its topics hold plus what the plan adds."
    )
    name_prefix: Annotated[str, Field(min_length=1)] | None = Field(None, description="Every topic of the team starts with it.")


class TeamDoc(_Doc):
    kind: Literal["Team"]
    name: TeamName
    review: ReviewHandle = Field(
        examples=["@acme/payments"],
        description="GitHub user (@name) or team (@org/team) whose review changes to its topics need.",
    )
    topics: TeamTopics = Field(default_factory=TeamTopics)
    budget: TeamBudgetDoc = Field(default_factory=TeamBudgetDoc)


class RuleEntry(_Doc):
    """One truncation rule: exactly one of the fields is given."""

    # Said here for the schema; the loader says it with the rule's context (reconciler.manifests.rules).
    model_config = ConfigDict(json_schema_extra={"minProperties": 1, "maxProperties": 1})

    before_offset: Offset | PartitionOffsets | None = Field(
        None, description="Delete records before this offset in every partition, or {partition: offset}."
    )
    before_time: RFC3339Time | None = Field(None, description="Delete records older than this RFC 3339 time (with a timezone).")
    keep_last: Annotated[int, Field(ge=1, le=LONG_MAX)] | None = Field(
        None, description="Keep only the last N records of each partition."
    )
    everything: OnlyTrue | None = Field(None, description="true: delete every record present at plan time.")
    consumed_by: GroupNames | None = Field(None, description="Delete what every one of these consumer groups has committed past.")
    rule: str | None = Field(None, description="Use the shared TruncationRule of this name.")

    def kinds(self) -> list[str]:
        return [k for k in RULE_KINDS if getattr(self, k) is not None]


RULE_KINDS = ("before_offset", "before_time", "keep_last", "everything", "consumed_by", "rule")


class TopicDefaults(_Doc):
    partitions: Partitions | None = None
    replication_factor: ReplicationFactor | None = None
    configs: Configs = Field(default_factory=dict)


class TopicOverride(_Doc):
    """What differs on one cluster."""

    partitions: Partitions | None = None
    replication_factor: ReplicationFactor | None = None
    configs: Configs = Field(default_factory=dict)
    undeclared_configs: UndeclaredName | None = None
    protected: bool | None = None
    retention_stepping: RetentionSteppingName | None = Field(None, description=_STEPPING)
    replica_assignment: ReplicaAssignment | None = Field(None, description=_ASSIGNMENT)
    expected_bytes_per_day: ByteSize | None = Field(None, description=_EXPECTED)
    truncate: list[RuleEntry] | None = Field(None, description="Replaces the topic's rules on this cluster.")


class TopicSettings(_Doc):
    state: TopicStateName | None = Field(None, description="absent: delete the topic (explicit opt-in).")
    partitions: Partitions | None = None
    replication_factor: ReplicationFactor | None = None
    configs: Configs = Field(default_factory=dict)
    undeclared_configs: UndeclaredName | None = Field(
        None, description="Keys set on the cluster but not declared: report (default) or remove."
    )
    protected: bool | None = Field(None, description="Never delete or truncate this topic.")
    retention_stepping: RetentionSteppingName | None = Field(None, description=_STEPPING)
    expected_bytes_per_day: ByteSize | None = Field(None, description=_EXPECTED)
    truncate: list[RuleEntry] = Field(default_factory=list, description="Replaces the template's rules.")
    delete_only_if_idle_for: IdleGuard | None = Field(None, description=_IDLE_GUARD)
    owner: TeamName | None = Field(
        None, description="The Team that owns it (a topic's own owner wins over its template's, which wins over Team rules)."
    )


def _required(*names: str) -> list[JsonValue]:
    return [{"required": [name]} for name in names]


# ClientSecurity's checks of the OAUTHBEARER and GSSAPI settings, as JSON Schema says them.
_SECURITY_SCHEMA: JsonDict = {
    "allOf": [
        {
            "if": {"properties": {"sasl_mechanism": {"const": "OAUTHBEARER"}}, "required": ["sasl_mechanism"]},
            "then": {"oneOf": _required(*OAUTH_SOURCES)},
            "else": {"not": {"anyOf": _required(*OAUTH_SOURCES, *OAUTH_ENDPOINT_SETTINGS, *AWS_SETTINGS)}},
        },
        {
            "dependentRequired": {
                "oauth_token_endpoint_url": ["oauth_client_id", "oauth_client_secret"],
                "kerberos_keytab": ["kerberos_principal"],
            }
        },
        {
            "if": {"not": {"properties": {"sasl_mechanism": {"const": "GSSAPI"}}, "required": ["sasl_mechanism"]}},
            "then": {"not": {"anyOf": _required(*KERBEROS_SETTINGS)}},
        },
        {
            "if": {"not": {"required": ["oauth_token_endpoint_url"]}},
            "then": {"not": {"anyOf": _required(*OAUTH_ENDPOINT_SETTINGS)}},
        },
        {
            "if": {"not": {"properties": {"aws_msk_iam": {"const": True}}, "required": ["aws_msk_iam"]}},
            "then": {"not": {"anyOf": _required(*AWS_SETTINGS)}},
        },
        {
            "if": {"not": {"properties": {"oauth_allow_http": {"const": True}}, "required": ["oauth_allow_http"]}},
            "then": {"properties": {"oauth_token_endpoint_url": {"pattern": r"^(?:[Hh][Tt][Tt][Pp][Ss]://|.*\$\{)"}}},
        },
    ]
}


class SecurityDoc(ClientSecurity):
    """The connection settings as written: secrets only as ${ENV_VAR} references."""

    model_config = ConfigDict(json_schema_extra=_SECURITY_SCHEMA)

    password: Secret | None = None
    ssl_password: Secret | None = None
    oauth_client_secret: Secret | None = None
    oauth_token: Secret | None = None


class ReassignmentDoc(_Doc):
    throttle: ByteRate | None = Field(
        None, description="Replication throttle while replicas are copied, bytes per second (e.g. 50MiB); default: not throttled."
    )
    wait: WaitDuration | None = Field(
        None,
        description="How long apply waits for reassignments to finish before reporting them in progress "
        "(milliseconds or e.g. 10m); default 5m.",
    )


class ClusterDoc(_Doc):
    kind: Literal["Cluster"]
    name: str
    bootstrap_servers: BootstrapServers = Field(
        description="host:port, as a list or separated by commas.", examples=[["kafka-1.example.com:9092"]]
    )
    cluster_id: ClusterId | None = Field(
        None,
        description="The id this cluster answers with (Metadata's cluster_id; `reconcile import` writes it): "
        "every live command refuses a cluster that answers with another id, before it plans anything.",
    )
    security: SecurityDoc | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    ignore_topics: list[str] = Field(default_factory=list, description="Regexes never reported as unmanaged.")
    defaults: TopicDefaults = Field(default_factory=TopicDefaults)
    drain_brokers: BrokerIds = Field(
        default_factory=list, description="Brokers to empty: no replica is placed there and existing ones are moved off."
    )
    reassignment: ReassignmentDoc | None = None


class PolicyDoc(_Doc):
    kind: Literal["Policy"]
    clusters: ClusterNames | None = Field(None, description="Clusters it applies to (default: all).")
    topic_name_pattern: str | None = None
    min_partitions: int | None = None
    max_partitions: int | None = None
    allowed_replication_factors: Annotated[list[int], Field(min_length=1)] | None = None
    required_configs: RequiredConfigs = Field(default_factory=dict)
    max_delete_fraction: DeleteFraction | None = Field(
        None, description="Largest fraction (0, 1] of a partition's records one apply may delete."
    )
    max_retention_decrease: RetentionDecrease | None = Field(
        None,
        description="Largest share [0.01, 1) by which one apply may lower retention.ms or retention.bytes: the "
        "new limit must be at least (1 - this) x the current one. A cut from unlimited passes only "
        "when it deletes nothing yet.",
    )
    max_destructive_actions: DestructiveLimit | None = Field(
        None,
        description="Most actions that delete data for good (topic deletions, truncations, retention cuts) one "
        "plan may hold; a plan with more is an error.",
    )
    max_disk_usage: DiskUsage | None = Field(
        None,
        description="Largest share (0, 1] of a broker's log directory filesystem a plan may project it to use "
        "(docs/capacity.md); a warning from 90% of it.",
    )
    protected_topic_patterns: list[str] = Field(default_factory=list)
    deletions_require_idle_for: IdleRequirement | None = Field(
        None,
        description="Every topic deletion is guarded as by delete_only_if_idle_for with at least this duration "
        "(e.g. 30d): a topic not shown idle that long is not deleted (docs/idle-topics.md).",
    )
    require_owner: bool | None = Field(None, description="true: every topic must have an owner (docs/teams.md).")
    idle_after: IdleAfter | None = Field(
        None,
        description="Snapshots and drift reports read each topic's evidence of activity, and drift lists the topics "
        "shown idle this long (e.g. 30d): no record stamped within it, no consumer group with live members "
        "(docs/idle-topics.md).",
    )
    idle_exempt_topics: list[str] = Field(
        default_factory=list,
        description="Regular expressions of topics never called idle (dead-letter and retry topics, often empty "
        "and still needed); internal topics never are.",
    )


class TruncationRuleDoc(RuleEntry):
    # kind, name and exactly one rule, which is not a reference to another shared rule
    model_config = ConfigDict(json_schema_extra={"minProperties": 3, "maxProperties": 3, "not": {"required": ["rule"]}})

    kind: Literal["TruncationRule"]
    name: str


class TopicTemplateDoc(TopicSettings):
    kind: Literal["TopicTemplate"]
    name: str


class TopicDoc(TopicSettings):
    kind: Literal["Topic"]
    name: TopicName = Field(examples=["orders.v1"])
    clusters: ClusterNames | Literal["all"] | None = Field(None, description="Default: every cluster.")
    template: str | None = None
    replica_assignment: ReplicaAssignment | None = Field(None, description=_ASSIGNMENT)
    overrides: dict[str, TopicOverride] = Field(default_factory=dict, description="Per cluster name.")


AnyDoc = ClusterDoc | PolicyDoc | TruncationRuleDoc | TopicTemplateDoc | TopicDoc | TeamDoc
DOC_MODELS: dict[str, type[AnyDoc]] = {
    "Cluster": ClusterDoc,
    "Policy": PolicyDoc,
    "Team": TeamDoc,
    "TruncationRule": TruncationRuleDoc,
    "TopicTemplate": TopicTemplateDoc,
    "Topic": TopicDoc,
}


def manifest_json_schema() -> dict[str, Any]:
    adapter: TypeAdapter[AnyDoc] = TypeAdapter(Annotated[AnyDoc, Field(discriminator="kind")])
    schema = adapter.json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "kafka-reconciler manifest document"
    return schema
