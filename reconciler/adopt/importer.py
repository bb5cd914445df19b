"""`reconcile import`: manifests that describe a cluster as it is, so the first plan is empty.

Pure: the observed state, the manifests already loaded (if any) and the texts of the files already
in the manifest directory come in; {relative path: YAML text} and what was skipped come out. The
use case `reconciler.app.import_cluster` reads, verifies and writes.

What is imported, and why:
- partitions and replication factor, always explicit (a cluster's defaults may change later);
- configs whose source is DYNAMIC_TOPIC_CONFIG, and only those: a value the topic inherits from
  the brokers is left out, so it keeps following them. Durations and sizes are written in the
  friendly form the loader reads back to the same integer (`7d`, `50GiB`); -1 stays -1.
- never truncation points: what may be deleted is a decision, not a fact about the cluster.

The empty-plan guarantee is checked here with the planner itself, on the desired state the
loader will build from the written files: each topic gets its Cluster document's default configs
merged in, as the loader does. A default key the topic does not set on itself would be pinned on
the topic by the first plan (the manifest format has no way to opt a topic out of a default), so
such topics are held back and reported, like topics that break the manifests' policy. Writing the
default value explicitly would not help: the planner pins every declared key the topic only
inherits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Literal

import yaml

from reconciler import kafka_configs, units
from reconciler.errors import ReconcilerError
from reconciler.kafka_configs import ConfigType, Unit
from reconciler.manifests.yaml_source import plain_reads_as_text
from reconciler.models.desired import ClusterSpec, DesiredState, DesiredTopic, Policy
from reconciler.models.observed import ObservedState, ObservedTopic, is_internal_topic
from reconciler.models.plan import AlterConfigs, ConfigChange, Severity
from reconciler.plan.planner import plan as make_plan
from reconciler.plan.policy import violations as policy_violations

if TYPE_CHECKING:
    from reconciler.manifests import Manifests

GroupBy = Literal["prefix", "none", "owner"]
SkipReason = Literal["internal", "ignored", "filtered", "managed", "file-exists", "held-back"]

HEADER_MARK = "# Imported by `reconcile import`"
_CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)")


@dataclass(frozen=True)
class ImportOptions:
    topics: str | None = None  # regex searched in the name: only matching topics
    exclude: tuple[str, ...] = ()  # regexes searched in the name: never imported
    group_by: GroupBy = "prefix"
    overwrite: bool = False
    bootstrap_servers: tuple[str, ...] = ()  # for a new Cluster document; default: the snapshot's brokers
    live: bool = False  # only changes the header's wording
    now: datetime | None = None  # header time when the observed state has none


@dataclass(frozen=True)
class Skipped:
    topic: str
    reason: SkipReason
    detail: str = ""


@dataclass(frozen=True)
class LeftOut:
    """A config key set on an imported topic that the manifest cannot declare."""

    topic: str
    key: str
    why: str


@dataclass
class ImportResult:
    cluster: str
    # Every generated file, relative path -> text, sorted by path.
    files: dict[str, str] = field(default_factory=dict)
    # Generated files that exist with the same content apart from the header's time: left as they are,
    # so that importing again produces no diff.
    unchanged: list[str] = field(default_factory=list)
    # Existing files that are rewritten (--overwrite), with the topics of this cluster they declared.
    replaced: dict[str, list[str]] = field(default_factory=dict)
    # What rewriting those files removes and the import does not write again.
    dropped: list[str] = field(default_factory=list)
    topics: dict[str, str] = field(default_factory=dict)  # imported topic -> its file
    cluster_file: str | None = None  # set when a Cluster document is written
    skipped: list[Skipped] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)

    def to_write(self) -> dict[str, str]:
        return {path: text for path, text in self.files.items() if path not in self.unchanged}


def import_cluster(
    observed: ObservedState,
    manifests: Manifests | None = None,
    existing_files: Mapping[str, str] | None = None,
    options: ImportOptions = ImportOptions(),
) -> ImportResult:
    """Manifests for `observed`'s topics that the manifests do not declare yet.

    `manifests` is the loaded manifest directory (reconciler.manifests.Manifests) or None when it
    is empty; `existing_files` maps the relative path of every file in it to its text.
    """
    existing = dict(existing_files or {})
    cluster = observed.cluster
    known = manifests if manifests is not None and cluster in manifests.clusters else None
    desired = known.desired_state(cluster) if known is not None else None
    spec = desired.cluster if desired else _new_cluster(observed, options)
    defaults = dict(known.default_configs.get(cluster, {})) if known is not None else {}
    policy = desired.policy if desired else Policy()
    managed = dict(desired.topics) if desired else {}
    result = ImportResult(cluster=cluster)

    wanted = _select(observed, spec, options, result)
    owner = known.owner_by_rules if known is not None and options.group_by == "owner" else None
    targets = {name: _topic_file(cluster, name, options.group_by, owner(name) if owner else None) for name in wanted}
    cluster_file = None if known is not None else f"clusters/{_file_safe(cluster)}.yaml"
    if cluster_file is not None and cluster_file in existing and not options.overwrite:
        raise ReconcilerError(
            f"the manifests have no Cluster document for {cluster}, and {cluster_file} already exists; add "
            f"a `kind: Cluster` document named {cluster} to the manifests, or pass --overwrite to replace "
            "that file."
        )

    # With --overwrite, an existing file the import writes is replaced as a whole, so topics it
    # declared are imported again; a replaced file can free topics bound for further files.
    rewritten: set[str] = set()
    while True:
        freed = {n for n, t in managed.items() if t.source is not None and t.source.file in rewritten}
        candidates = [
            n
            for n in wanted
            if n not in managed
            or n in freed
            or (options.overwrite and (source := managed[n].source) is not None and source.file == targets[n])
        ]
        now_rewritten = {targets[n] for n in candidates if targets[n] in existing} if options.overwrite else set()
        if cluster_file is not None and cluster_file in existing:
            now_rewritten.add(cluster_file)
        if now_rewritten == rewritten:
            break
        rewritten = now_rewritten

    importing = []
    for name in wanted:
        if name in managed and name not in freed:
            source = managed[name].source
            result.skipped.append(Skipped(name, "managed", f"already declared at {source}" if source else "already declared"))
        elif targets[name] in existing and not options.overwrite:
            result.skipped.append(
                Skipped(
                    name, "file-exists", f"not written, its file {targets[name]} exists; pass --overwrite to rewrite that file"
                )
            )
        else:
            importing.append(name)

    topics: dict[str, tuple[ObservedTopic, dict[str, str]]] = {}
    for name in importing:
        topic = observed.topics[name]
        topics[name] = (topic, _declared_configs(topic, result))
    held = _held_back(topics, managed, freed, defaults, spec, policy, observed)
    for name, why in sorted(held.items()):
        result.skipped.append(Skipped(name, "held-back", f"held back: {why}"))
        del topics[name]
    result.left_out = [x for x in result.left_out if x.topic in topics]

    when = _when(observed, options)
    header = _header(cluster, when, options.live)
    by_file: dict[str, list[str]] = {}
    for name in sorted(topics):
        by_file.setdefault(targets[name], []).append(name)
        result.topics[name] = targets[name]
    for path, names in sorted(by_file.items()):
        docs = [_topic_doc(cluster, topics[n][0], topics[n][1], [x for x in result.left_out if x.topic == n]) for n in names]
        result.files[path] = header + "---\n".join(docs)
    if cluster_file is not None:
        result.cluster_file = cluster_file
        result.files[cluster_file] = header + _cluster_doc(spec)
    result.files = dict(sorted(result.files.items()))

    not_imported = {s.topic: s for s in result.skipped}
    for path in sorted(rewritten):
        declared = sorted(n for n, t in managed.items() if t.source is not None and t.source.file == path)
        result.replaced[path] = declared
        result.dropped.extend(_dropped(path, existing[path], cluster, result.topics, not_imported))
    result.unchanged = [p for p, text in result.files.items() if p in existing and _body(existing[p]) == _body(text)]
    result.skipped.sort(key=lambda s: (s.topic, s.reason))
    return result


# --- which topics ------------------------------------------------------------------------------


def _select(observed: ObservedState, spec: ClusterSpec, options: ImportOptions, result: ImportResult) -> list[str]:
    try:
        only = re.compile(options.topics) if options.topics is not None else None
        excluded = [(p, re.compile(p)) for p in options.exclude]
    except re.error as e:
        raise ReconcilerError(f"{e.pattern!r} is not a valid regular expression: {e}.") from e
    ignored = [(p, re.compile(p)) for p in spec.ignore_topics]
    wanted = []
    for name in sorted(observed.topics):
        topic = observed.topics[name]
        cluster_pattern = next((p for p, r in ignored if r.search(name)), None)
        option_pattern = next((p for p, r in excluded if r.search(name)), None)
        if is_internal_topic(name, topic):
            result.skipped.append(Skipped(name, "internal", "internal topic"))
        elif cluster_pattern is not None:
            result.skipped.append(Skipped(name, "ignored", f"matches the Cluster document's ignore_topics {cluster_pattern!r}"))
        elif option_pattern is not None:
            result.skipped.append(Skipped(name, "ignored", f"matches --exclude {option_pattern!r}"))
        elif only is not None and not only.search(name):
            result.skipped.append(Skipped(name, "filtered", f"does not match --topics {options.topics!r}"))
        elif not topic.partitions or topic.replication_factor < 1:
            # Metadata without partitions or replicas (a topic being created or deleted) says
            # nothing a manifest could declare.
            result.skipped.append(
                Skipped(
                    name, "held-back", "held back: the cluster reported no partitions or replicas for it; import it again later"
                )
            )
        else:
            wanted.append(name)
    return wanted


def _declared_configs(topic: ObservedTopic, result: ImportResult) -> dict[str, str]:
    """The configs set on the topic that a manifest can declare, as Kafka strings."""
    declared = {}
    for key, config in sorted(topic.explicit_configs().items()):
        if key not in kafka_configs.TOPIC_CONFIGS:
            why = "not a topic config the manifest format knows; it stays on the topic and plans report it"
        elif config.value is None:
            why = (
                "sensitive: the cluster does not reveal its value, so it cannot be written; it stays on "
                "the topic, and plans report it until you declare it by hand"
            )
        elif (error := kafka_configs.value_error(key, config.value)) is not None:
            why = f"the manifest format would refuse its value ({error}); it stays on the topic"
        else:
            declared[key] = config.value
            continue
        result.left_out.append(LeftOut(topic.name, key, why))
    return declared


def _held_back(
    topics: dict[str, tuple[ObservedTopic, dict[str, str]]],
    managed: dict[str, DesiredTopic],
    freed: set[str],
    defaults: dict[str, str],
    spec: ClusterSpec,
    policy: Policy,
    observed: ObservedState,
) -> dict[str, str]:
    """Topics whose manifest would not plan empty or would not load, with the reason."""
    held: dict[str, str] = {}
    staying = {n for n in managed if n not in freed}
    folded = {n.replace(".", "_"): n for n in staying}
    for name in sorted(topics):
        other = folded.get(name.replace(".", "_"))
        if other is not None:
            held[name] = (
                f"its name collides with {other!r} ('.' and '_' are the same to Kafka's metrics), "
                "so the manifests could not declare both"
            )
        else:
            folded[name.replace(".", "_")] = name
    wants = {}
    for name, (topic, configs) in topics.items():
        wants[name] = DesiredTopic(
            name=name,
            partitions=len(topic.partitions),
            replication_factor=topic.replication_factor,
            configs=dict(sorted({**defaults, **configs}.items())),
        )
    state = DesiredState(cluster=spec, topics=dict(sorted(wants.items())), policy=policy)
    for name, reasons in policy_violations(state).items():
        held.setdefault(name, reasons[0])
    planned = make_plan(state, observed)
    for action in planned.actions:
        if action.topic in held:
            continue
        if isinstance(action, AlterConfigs):
            reasons = [_change_reason(c, defaults, topics[action.topic][1]) for c in action.changes]
            held[action.topic] = "; ".join(reasons)
        else:  # not expected: partitions and replication factor are copied as they are
            held[action.topic] = f"a plan would still {action.kind.facts.label} ({action.reason})"
    for diagnostic in planned.diagnostics:
        if diagnostic.severity is Severity.ERROR and diagnostic.topic in wants and diagnostic.topic not in held:
            held[diagnostic.topic] = diagnostic.message
    return held


def _change_reason(change: ConfigChange, defaults: dict[str, str], declared: dict[str, str]) -> str:
    key = change.key
    if key in defaults and key not in declared:
        inherited = f"inherits {change.before} ({change.before_source})" if change.before is not None else "does not have it"
        effect = "would pin that same value on the topic" if change.before == change.after else "would change it"
        return (
            f"the Cluster document's defaults declare {key}={defaults[key]} for every topic and this topic "
            f"{inherited}, so the first plan {effect}; set the key on the topic in the cluster, or take it "
            "out of the defaults, then import again"
        )
    return f"a plan would still change {key} ({change.before} -> {change.after})"


# --- where it goes -----------------------------------------------------------------------------


def _topic_file(cluster: str, topic: str, group_by: GroupBy, owner: str | None = None) -> str:
    """Where an imported topic goes; by owner, the file of the Team whose rules claim it (so that
    `reconcile codeowners` gives each file one owner), a topic no team claims by its prefix."""
    if group_by == "none":
        return f"topics/{_file_safe(cluster)}.yaml"
    if group_by == "owner" and owner is not None:
        return f"topics/{_file_safe(cluster)}/owner-{_file_safe(owner)}.yaml"
    return f"topics/{_file_safe(cluster)}/{topic_prefix(topic)}.yaml"


def topic_prefix(topic: str) -> str:
    """The team or domain part of a name: up to the first '.', '_' or '-' (`orders.v1` -> orders),
    lower-cased so that two spellings cannot become two files on a case-insensitive disk."""
    parts = [p for p in re.split(r"[._-]", topic) if p]
    return parts[0].lower() if parts else "other"


def _file_safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".") or "cluster"


def _bootstrap(observed: ObservedState, options: ImportOptions) -> list[str]:
    if options.bootstrap_servers:
        return list(options.bootstrap_servers)
    servers = [
        f"[{b.host}]:{b.port}" if ":" in b.host else f"{b.host}:{b.port}"
        for b in sorted(observed.brokers, key=lambda b: b.node_id)
    ]
    if not servers:
        raise ReconcilerError(
            f"the manifests have no Cluster document for {observed.cluster} and the observed state lists no "
            "brokers; pass --bootstrap-servers host:port,... for the Cluster document the import writes."
        )
    return servers


# --- YAML text ---------------------------------------------------------------------------------


def _when(observed: ObservedState, options: ImportOptions) -> str:
    moment = observed.taken_at or options.now or datetime.now(timezone.utc)
    # A time without a zone is taken as UTC, which is what snapshots and the adapter record.
    moment = moment.astimezone(timezone.utc) if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _header(cluster: str, when: str, live: bool) -> str:
    origin = f"read from the cluster at {when}" if live else f"from a snapshot taken at {when}"
    return (
        f"{HEADER_MARK} from cluster {cluster}, {origin}.\n"
        "# Declares what is set on each topic; configs a topic inherits from the brokers are left out, so\n"
        "# they keep following the cluster. Truncation points are never imported: add `truncate:` by hand.\n"
    )


def _body(text: str) -> str:
    """The text without the header line that carries the import's time."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[1:] if lines and lines[0].startswith(HEADER_MARK) else lines)


def _topic_doc(cluster: str, topic: ObservedTopic, configs: dict[str, str], left_out: list[LeftOut]) -> str:
    data: dict[str, object] = {
        "kind": "Topic",
        "name": topic.name,
        "clusters": [cluster],
        "partitions": len(topic.partitions),
        "replication_factor": topic.replication_factor,
    }
    lines = [
        "kind: Topic",
        f"name: {_scalar(topic.name)}",
        f"clusters: {_flow([cluster])}",
        f"partitions: {len(topic.partitions)}",
        f"replication_factor: {topic.replication_factor}",
    ]
    for item in left_out:
        lines.append(f"# not declared: {item.key} ({item.why})")
    if configs:
        data["configs"] = written = {key: config_yaml_value(key, value) for key, value in sorted(configs.items())}
        lines.append("configs:")
        lines.extend(f"  {_scalar(key)}: {_scalar(value)}" for key, value in written.items())
    text = "\n".join(lines) + "\n"
    _check_round_trip(text, data)
    return text


def _new_cluster(observed: ObservedState, options: ImportOptions) -> ClusterSpec:
    """The Cluster document of a cluster the manifests do not declare yet, pinned to the id it
    answered with (or the snapshot recorded), so that a wrong address later is refused."""
    return ClusterSpec(name=observed.cluster, bootstrap_servers=_bootstrap(observed, options), cluster_id=observed.cluster_id)


def _cluster_doc(spec: ClusterSpec) -> str:
    data: dict[str, object] = {"kind": "Cluster", "name": spec.name, "bootstrap_servers": list(spec.bootstrap_servers)}
    text = (
        "# Add `security:` (secrets as ${ENV_VAR} references) and `ignore_topics:` as needed. Config\n"
        "# `defaults:` apply to every topic that does not set the key itself, so adding some later puts\n"
        "# them on the imported topics at the next apply.\n"
        f"kind: Cluster\nname: {_scalar(spec.name)}\nbootstrap_servers: {_flow(spec.bootstrap_servers)}\n"
    )
    if spec.cluster_id is not None:
        data["cluster_id"] = spec.cluster_id
        text += (
            "# The id this cluster answered with: every live command refuses a cluster that answers with\n"
            f"# another one (a wrong address), before it plans anything.\ncluster_id: {_scalar(spec.cluster_id)}\n"
        )
    _check_round_trip(text, data)
    return text


def config_yaml_value(key: str, value: str) -> str | int | float | bool:
    """The YAML value that the manifest loader turns back into `value` (or one Kafka reads the same):
    a friendly duration or size where it is exact, else the number, boolean or string itself."""
    spec = kafka_configs.TOPIC_CONFIGS[key]
    if spec.type in (ConfigType.INT, ConfigType.LONG) and _CANONICAL_INT.fullmatch(value):
        n = int(value)
        friendly = None
        if spec.unit is Unit.MS and n > 0:
            friendly = units.format_duration_ms(n)
            if friendly.endswith("w"):
                # Retention is thought of in days (Kafka documents its default as 7 days), so weeks
                # are written as days: 604800000 reads as 7d, not 1w.
                friendly = f"{int(friendly[:-1]) * 7}d"
            # "1500ms" reads no better than the key's own unit; only coarser units are friendlier.
            friendly = None if friendly.endswith("ms") or units.parse_duration_ms(friendly) != n else friendly
        elif spec.unit is Unit.BYTES and n > 0:
            friendly = units.format_bytes(n)
            friendly = None if friendly.isdigit() or units.parse_bytes(friendly) != n else friendly
        return friendly or n
    if spec.type is ConfigType.BOOLEAN and value in ("true", "false"):
        return value == "true"
    if spec.type is ConfigType.DOUBLE:
        try:
            number = float(value)
        except ValueError:
            return value
        if str(number) == value:
            return number
    return value


def _scalar(value: object) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 30, allow_unicode=True)
    text = text.removesuffix("\n...\n").removesuffix("\n")
    # PyYAML quotes by YAML 1.1; a name such as 1e3 or 0o17 is text there but a number in YAML 1.2,
    # which the loader refuses unquoted: such text is quoted.
    if isinstance(value, str) and text == value and not plain_reads_as_text(value):
        return "'" + value.replace("'", "''") + "'"
    return text


def _flow(values: Sequence[object]) -> str:
    plain = "[" + ", ".join(_scalar(v) for v in values) + "]"
    try:
        if yaml.safe_load(plain) == list(values):
            return plain  # host:port reads better unquoted, and YAML allows it in a flow list
    except yaml.YAMLError:
        pass
    return yaml.safe_dump(list(values), default_flow_style=True, width=1 << 30, allow_unicode=True).strip()


def _check_round_trip(text: str, data: dict) -> None:
    # The text is written by hand for its layout and comments; this proves it still means `data`.
    loaded = yaml.safe_load(text)
    if loaded != data:  # pragma: no cover - a bug in the writer above
        raise AssertionError(f"generated YAML does not read back as written: {loaded!r} != {data!r}")


# --- what --overwrite removes ------------------------------------------------------------------


def _dropped(path: str, text: str, cluster: str, imported: dict[str, str], not_imported: dict[str, Skipped]) -> list[str]:
    """What replacing `path` loses: documents the import does not write again, and hand-written
    parts of the topics it does (truncation rules, templates, overrides)."""
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return [f"{path}: the whole previous content (it is not valid YAML)"]
    lost = []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        kind, name = doc.get("kind"), doc.get("name")
        if kind != "Topic":
            lost.append(f"{path}: {kind} {name}")
            continue
        clusters = doc.get("clusters")
        if clusters != [cluster]:
            lost.append(f"{path}: Topic {name} (clusters: {clusters if clusters is not None else 'all'})")
        elif name not in imported:
            skipped = not_imported.get(name) if isinstance(name, str) else None
            why = skipped.detail if skipped else "no longer on the cluster"
            lost.append(f"{path}: Topic {name} (not imported again, {why})")
        else:
            extras = sorted(
                k for k in doc if k not in ("kind", "name", "clusters", "partitions", "replication_factor", "configs")
            )
            if extras:
                lost.append(f"{path}: {', '.join(extras)} of Topic {name}")
    return lost
