"""Loading manifests: YAML files -> one DesiredState per cluster. The only module that reads YAML.

Every problem is collected with its file, line and column, and all of them are raised together
as one ManifestError, so a pull request shows every mistake at once.

Merge order for a topic on a cluster: cluster defaults < template < topic < override for that
cluster (configs key by key; an override's `truncate` replaces the topic's rules). Truncation
rules are checked for being impossible (a partition the topic does not have, a negative offset, a
time without timezone) and conflicting: `everything` beside any other rule, or the same kind of
rule twice on one topic (which of two offsets or times was meant is not for the tool to guess).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Optional

import yaml
from pydantic import ValidationError

from reconciler import kafka_configs, units
from reconciler.errors import ManifestError, ManifestProblem, ReconcilerError
from reconciler.kafka_configs import INT_MAX, LONG_MAX, Unit
from reconciler.manifest_docs import (
    DOC_MODELS, RULE_KINDS, ClusterDoc, PolicyDoc, RuleEntry, TopicTemplateDoc, TruncationRuleDoc,
    manifest_json_schema)
from reconciler.models.desired import (
    BeforeOffset, BeforeTime, ClientSecurity, ClusterSpec, ConsumedBy, DesiredState, DesiredTopic, Everything,
    KeepLast, Policy, SourceRef, TopicState, UndeclaredConfigs)

__all__ = ["Manifests", "load_manifests", "manifest_json_schema"]

TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
SECRET_FIELDS = ("password", "ssl_password")
# CreateTopics carries partitions as an int32 and the replication factor as an int16.
_WIRE_MAX = {"partitions": INT_MAX, "replication_factor": 2 ** 15 - 1}
HOST_PORT = re.compile(r"^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9._-]+|\$\{[A-Za-z_][A-Za-z0-9_]*\}):(\d{1,5})$")

Path_ = tuple  # a path into a YAML document: keys and list indexes


@dataclass
class _Doc:
    """One parsed YAML document with the position of every key and value in it."""

    file: str
    data: Any
    key_marks: dict[Path_, tuple[int, int]]
    value_marks: dict[Path_, tuple[int, int]]

    def ref(self, path: Path_ = (), key: bool = False) -> SourceRef:
        marks = self.key_marks if key else self.value_marks
        while path not in marks and path:
            path = path[:-1]
        line, column = marks.get(path, (1, 1))
        return SourceRef(file=self.file, line=line, column=column)


@dataclass
class _Problems:
    found: list[ManifestProblem] = field(default_factory=list)

    def add(self, ref: SourceRef, message: str) -> None:
        problem = ManifestProblem(ref.file, ref.line, ref.column, message)
        if problem not in self.found:
            self.found.append(problem)


class Manifests:
    """All clusters' desired state, resolved and checked."""

    def __init__(self, files: list[str], clusters: dict[str, ClusterSpec], states: dict[str, DesiredState],
                 default_configs: Optional[dict[str, dict[str, str]]] = None):
        self.files = files
        self.clusters = clusters
        self._states = states
        # Per cluster, its Cluster document's `defaults.configs`, normalised. Every topic on the
        # cluster declares these unless it sets its own value, so `reconcile import` must know
        # them to write manifests that plan empty.
        self.default_configs = default_configs or {}

    def cluster_names(self) -> list[str]:
        return sorted(self.clusters)

    def desired_state(self, cluster: str) -> DesiredState:
        if cluster not in self._states:
            raise ReconcilerError(
                f"the manifests declare no cluster named {cluster!r} (known: {', '.join(self.cluster_names()) or 'none'}); "
                "add a `kind: Cluster` document or use one of those names.")
        return self._states[cluster]


def load_manifests(path: str | Path) -> Manifests:
    root = Path(path)
    if not root.exists():
        raise ReconcilerError(f"manifest directory {path} does not exist; pass the directory that holds your "
                              "*.yaml manifests (default: manifests).")
    files = [root] if root.is_file() else sorted(
        p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    problems = _Problems()
    docs = []
    for file in files:
        shown = file.name if root.is_file() else str(file.relative_to(root))
        docs.extend(_read_yaml(file, shown, problems))
    if not files:
        problems.add(SourceRef(file=str(path), line=1), "no *.yaml or *.yml files found")
    resolver = _Resolver(problems)
    for doc in docs:
        resolver.add(doc)
    states = resolver.resolve()
    if problems.found:
        raise ManifestError(problems.found)
    return Manifests([str(f) for f in files], {n: s.cluster for n, s in states.items()}, states,
                     resolver.default_configs)


# --- YAML with positions ---------------------------------------------------------------------

# libyaml's parser, when PyYAML was built with it, gives the same nodes and marks several times
# faster (seconds saved on 10,000 topics). A file it refuses is read again by the pure-Python
# parser, whose messages say more (a tab used for indentation, for one).
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)
MAX_ALIAS_EXPANSION = 100_000


def _read_yaml(file: Path, shown: str, problems: _Problems) -> list[_Doc]:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        problems.add(SourceRef(file=shown, line=1), f"cannot read the file: {e}")
        return []
    if _FAST_LOADER is not None:
        docs, found = [], _Problems()
        try:
            _compose(docs, text, shown, found, _FAST_LOADER)
        except yaml.YAMLError:
            pass
        else:
            problems.found.extend(p for p in found.found if p not in problems.found)
            return docs
    docs = []
    try:
        _compose(docs, text, shown, problems, yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = f"not valid YAML: {e.problem or e.context}"
        if "'\\t'" in message:
            message += "; indent with spaces, YAML does not allow tabs there"
        problems.add(SourceRef(file=shown, line=line, column=column), message)
    return docs


def _compose(docs: list[_Doc], text: str, shown: str, problems: _Problems, loader) -> None:
    """Append the file's documents to `docs` (those before a YAML error stay there)."""
    for node in yaml.compose_all(text, Loader=loader):
        if node is None:
            continue
        doc = _Doc(shown, None, {}, {})
        written, expanded = _value_counts(node)
        if expanded - written > MAX_ALIAS_EXPANSION:
            line, column = _mark(node)
            problems.add(SourceRef(file=shown, line=line, column=column),
                         f"aliases in this document repeat values {expanded - written:,} times (more than "
                         f"{MAX_ALIAS_EXPANSION:,}); write the values out, or share them with a TopicTemplate "
                         "or a TruncationRule")
            continue
        doc.data = _to_python(node, (), doc, problems, yaml.SafeLoader(""))
        if doc.data is not None:
            docs.append(doc)


def _value_counts(root) -> tuple[int, int]:
    """How many nodes the document writes, and how many values it has once every alias is
    expanded: a few lines of nested aliases can stand for billions ("billion laughs")."""
    sizes: dict[int, int] = {}

    def size(node) -> int:
        if id(node) not in sizes:
            sizes[id(node)] = 1  # an alias to a node being counted (itself reported later) counts once
            if isinstance(node, yaml.MappingNode):
                sizes[id(node)] += sum(size(k) + size(v) for k, v in node.value)
            elif isinstance(node, yaml.SequenceNode):
                sizes[id(node)] += sum(size(item) for item in node.value)
        return sizes[id(node)]

    expanded = size(root)
    return len(sizes), expanded


def _mark(node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


_LEFT_OUT = object()  # a value already reported, left out so that it causes no further problems


def _to_python(node, path: Path_, doc: _Doc, problems: _Problems, constructor, within: frozenset = frozenset()) -> Any:
    """`within`: the collection nodes this one is inside of, so an alias to one of them (a value
    that contains itself) is reported instead of recursing for ever. PyYAML gives an alias no node
    of its own, so the problem is placed at the anchored mapping or list."""
    doc.value_marks.setdefault(path, _mark(node))
    if id(node) in within:
        line, column = _mark(node)
        problems.add(SourceRef(file=doc.file, line=line, column=column),
                     "this mapping or list contains an alias to itself; a value cannot contain itself")
        return _LEFT_OUT
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        within = within | {id(node)}
    if isinstance(node, yaml.MappingNode):
        result: dict = {}
        for key_node, value_node in _merged_pairs(node):
            key = _scalar_value(key_node, constructor) if isinstance(key_node, yaml.ScalarNode) else None
            if key is None or isinstance(key, (list, dict)):
                line, column = _mark(key_node)
                problems.add(SourceRef(file=doc.file, line=line, column=column), "mapping keys must be plain scalars")
                continue
            if key in result and (path + (key,)) in doc.key_marks and doc.key_marks[path + (key,)] != _mark(key_node):
                line, column = _mark(key_node)
                problems.add(SourceRef(file=doc.file, line=line, column=column), f"duplicate key {key!r}")
            doc.key_marks[path + (key,)] = _mark(key_node)
            value = _to_python(value_node, path + (key,), doc, problems, constructor, within)
            if value is not _LEFT_OUT:
                result[key] = value
        return result
    if isinstance(node, yaml.SequenceNode):
        items = (_to_python(item, path + (i,), doc, problems, constructor, within) for i, item in enumerate(node.value))
        return [item for item in items if item is not _LEFT_OUT]
    return _scalar_value(node, constructor)


def _scalar_value(node: yaml.ScalarNode, constructor) -> Any:
    """The scalar as YAML types it; one that does not make a value of its type (an impossible
    date such as 2026-02-30, `!!int x`) stays the string written, for the checks to report."""
    try:
        return constructor.construct_object(node, deep=True)
    except (ValueError, OverflowError):
        return node.value


def _merged_pairs(node: yaml.MappingNode, merging: frozenset = frozenset()):
    """Key/value pairs with YAML merge keys (`<<: *defaults`) expanded; own keys win. A mapping
    merged into itself adds nothing and is skipped."""
    merging = merging | {id(node)}
    merged, own = [], []
    for key_node, value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in sources:
                if isinstance(source, yaml.MappingNode) and id(source) not in merging:
                    merged.extend(_merged_pairs(source, merging))
        else:
            own.append((key_node, value_node))
    # Own keys win over merged ones, and of several merged mappings the first to have a key wins.
    seen = {k.value for k, _ in own if isinstance(k, yaml.ScalarNode)}
    pairs = []
    for key_node, value_node in merged:
        if isinstance(key_node, yaml.ScalarNode):
            if key_node.value in seen:
                continue
            seen.add(key_node.value)
        pairs.append((key_node, value_node))
    return pairs + own


# --- documents -> per-cluster desired state ----------------------------------------------------

@dataclass
class _Entry:
    doc: _Doc
    model: Any


class _Resolver:
    def __init__(self, problems: _Problems):
        self.problems = problems
        self.clusters: dict[str, _Entry] = {}
        self.policies: list[_Entry] = []
        self.rules: dict[str, _Entry] = {}
        self.templates: dict[str, _Entry] = {}
        self.topics: list[_Entry] = []
        self.default_configs: dict[str, dict[str, str]] = {}
        self.cluster_documents = 0  # valid or not: an invalid one is reported as such, not as missing

    # Each document is validated against its kind's model; pydantic's errors are mapped back to
    # the YAML node they concern.
    def add(self, doc: _Doc) -> None:
        if not isinstance(doc.data, dict):
            self.problems.add(doc.ref(), "a manifest document must be a mapping with a `kind`")
            return
        kind = doc.data.get("kind")
        if kind is None:
            self.problems.add(doc.ref(), "document has no `kind` (one of " + ", ".join(DOC_MODELS) + ")")
            return
        model_type = DOC_MODELS.get(kind) if isinstance(kind, str) else None
        if model_type is None:
            self.problems.add(doc.ref(("kind",)), f"unknown kind {kind!r}" + _did_you_mean(str(kind), DOC_MODELS))
            return
        if model_type is ClusterDoc:
            self.cluster_documents += 1
        model = self._validate(doc, model_type)
        if model is None:
            return
        entry = _Entry(doc, model)
        if isinstance(model, ClusterDoc):
            self._unique(self.clusters, model.name, entry, "cluster")
        elif isinstance(model, PolicyDoc):
            self.policies.append(entry)
        elif isinstance(model, TruncationRuleDoc):
            self._unique(self.rules, model.name, entry, "truncation rule")
        elif isinstance(model, TopicTemplateDoc):
            self._unique(self.templates, model.name, entry, "topic template")
        else:
            self.topics.append(entry)

    def _validate(self, doc: _Doc, model_type):
        """The document's model, or None. Keys that fail are reported and left out, and the rest is
        validated again, so the checks that follow still see (and report on) everything else."""
        data = dict(doc.data)
        while True:
            try:
                return model_type.model_validate(data)
            except ValidationError as e:
                self._report_validation(doc, model_type, e)
                failing = {_yaml_path(doc.data, err["loc"])[:1] for err in e.errors()}
                keys = {path[0] for path in failing if path and path[0] in data}
                if not keys or any(model_type.model_fields.get(k) and model_type.model_fields[k].is_required()
                                   for k in keys):
                    return None
                for key in keys:
                    del data[key]

    def _report_validation(self, doc: _Doc, model_type, error: ValidationError) -> None:
        wrong: dict[Path_, list[dict]] = {}  # value errors by place; several at one place are union members
        for e in error.errors():
            loc = _yaml_path(doc.data, e["loc"], missing=e["type"] == "missing")
            if e["type"] == "extra_forbidden":
                name = str(loc[-1])
                fields = _fields_at(model_type, loc[:-1])
                self.problems.add(doc.ref(loc, key=True), f"unknown key {name!r}" + _did_you_mean(name, fields))
            elif e["type"] == "missing":
                self.problems.add(doc.ref(loc[:-1]), f"missing required key {loc[-1]!r}")
            else:
                wrong.setdefault(loc, []).append(e)
        for loc, errors in wrong.items():
            # A union member that got further into the value (a dict member with a bad key) says more
            # than the members that refused the value as a whole.
            if any(other[:len(loc)] == loc and len(other) > len(loc) for other in wrong):
                continue
            where = ".".join(str(x) for x in loc)
            value = errors[0].get("input")
            if isinstance(value, date) and not isinstance(value, datetime):
                self.problems.add(doc.ref(loc), f"{where}: {value} is a date; write a time with a timezone "
                                                f"(e.g. {value}T00:00:00Z) or, if a string is meant, quote it")
                continue
            # An empty list where a list member of a union fits: the list is what was meant.
            errors = [e for e in errors if e["type"] == "too_short"] or errors
            expected = list(dict.fromkeys(_pydantic_message(e["msg"]) for e in errors))
            expected = expected[:1] + [m.removeprefix("input should be ") for m in expected[1:]]
            text = expected[0] if len(expected) == 1 else ", ".join(expected[:-1]) + " or " + expected[-1]
            self.problems.add(doc.ref(loc), f"{where}: {text} (got {_shown(value)})")

    def _unique(self, table: dict, name: str, entry: _Entry, what: str) -> None:
        if name in table:
            first = table[name].doc.ref(("name",))
            self.problems.add(entry.doc.ref(("name",)), f"duplicate {what} {name!r} (also defined at {first})")
        else:
            table[name] = entry

    def resolve(self) -> dict[str, DesiredState]:
        if not self.cluster_documents:
            self.problems.add(SourceRef(file="<manifests>", line=1),
                              "no `kind: Cluster` document: declare at least one cluster")
        clusters = {name: self._cluster(entry) for name, entry in sorted(self.clusters.items())}
        policies = self._policies()
        configs_by_doc = {}  # normalised once per document, so each bad value is reported once
        topics: dict[str, dict[str, DesiredTopic]] = {name: {} for name in clusters}
        places: dict[tuple[str, str], SourceRef] = {}
        for entry in self.topics:
            for cluster_name, topic in self._topic(entry, clusters, configs_by_doc):
                ref = entry.doc.ref(("name",))
                if (cluster_name, topic.name) in places:
                    self.problems.add(ref, f"topic {topic.name!r} is declared twice for cluster {cluster_name} "
                                           f"(also at {places[(cluster_name, topic.name)]})")
                    continue
                places[(cluster_name, topic.name)] = ref
                topics[cluster_name][topic.name] = topic
        self._shared_rules()
        states = {}
        for name, spec in clusters.items():
            entry = self.clusters[name]
            self.default_configs[name] = dict(sorted(self._configs(
                entry.doc, ("defaults", "configs"), entry.model.defaults.configs, configs_by_doc).items()))
            self._collisions(name, topics[name])
            states[name] = DesiredState(cluster=spec, topics=dict(sorted(topics[name].items())),
                                        policy=policies.get(name, Policy()))
        from reconciler.policy import check_desired

        for state in states.values():
            for problem in check_desired(state):
                if problem not in self.problems.found:
                    self.problems.found.append(problem)
        return states

    def _cluster(self, entry: _Entry) -> ClusterSpec:
        doc, model = entry.doc, entry.model
        servers = [model.bootstrap_servers] if isinstance(model.bootstrap_servers, str) else model.bootstrap_servers
        servers = [s.strip() for item in servers for s in item.split(",") if s.strip()]
        for i, server in enumerate(servers):
            match = HOST_PORT.match(server)
            if not match:
                self.problems.add(doc.ref(("bootstrap_servers",)),
                                  f"bootstrap server {server!r} is not host:port (e.g. kafka-1.example.com:9092)")
            elif not 1 <= int(match.group(2)) <= 65535:
                self.problems.add(doc.ref(("bootstrap_servers",)),
                                  f"bootstrap server {server!r} has port {match.group(2)}; ports are 1 to 65535")
        if not servers:
            self.problems.add(doc.ref(("bootstrap_servers",)), "bootstrap_servers is empty")
        for key in ("partitions", "replication_factor"):  # also reported, at the same place, for each topic
            value = getattr(model.defaults, key)
            if value is not None and value < 1:
                self.problems.add(doc.ref(("defaults", key)), f"{key} must be at least 1, not {value}")
        security = model.security or ClientSecurity()
        for name, value in security.model_dump().items():
            if not isinstance(value, str):
                continue
            ref = doc.ref(("security", name))
            if "${" in value and ENV_REFERENCE.sub("", value).count("${"):
                self.problems.add(ref, f"security.{name}: malformed environment reference in {value!r}; "
                                       "write ${VARIABLE_NAME}")
            elif name in SECRET_FIELDS and not ENV_REFERENCE.fullmatch(value):
                self.problems.add(ref, f"security.{name} is a literal secret; keep secrets out of Git and write "
                                       "a reference such as ${KAFKA_PASSWORD}, set in the environment")
        ignore = self._regexes(doc, ("ignore_topics",), model.ignore_topics)
        return ClusterSpec(name=model.name, bootstrap_servers=servers, security=security, labels=model.labels,
                           ignore_topics=ignore, source=doc.ref(("name",)))

    def _policies(self) -> dict[str, Policy]:
        result: dict[str, Policy] = {}
        for entry in self.policies:
            doc, model = entry.doc, entry.model
            for i, name in enumerate(model.clusters or []):
                if name not in self.clusters:
                    self.problems.add(doc.ref(("clusters", i)), f"unknown cluster {name!r}"
                                      + _did_you_mean(name, self.clusters))
            fraction = model.max_delete_fraction
            if fraction is not None and not 0 < fraction <= 1:
                self.problems.add(doc.ref(("max_delete_fraction",)),
                                  f"max_delete_fraction must be in (0, 1], not {fraction}")
                fraction = None
            if None not in (model.min_partitions, model.max_partitions) and model.min_partitions > model.max_partitions:
                self.problems.add(doc.ref(("min_partitions",)),
                                  f"min_partitions {model.min_partitions} is above max_partitions {model.max_partitions}")
            protected = self._regexes(doc, ("protected_topic_patterns",), model.protected_topic_patterns)
            name_pattern = model.topic_name_pattern
            if name_pattern is not None and not self._regexes(doc, ("topic_name_pattern",), [name_pattern], single=True):
                name_pattern = None
            required = {}
            for key, value in model.required_configs.items():
                path = ("required_configs", key)
                if key not in kafka_configs.TOPIC_CONFIGS:
                    self.problems.add(doc.ref(path, key=True), f"unknown topic config key {key!r}"
                                      + _did_you_mean(key, kafka_configs.TOPIC_CONFIGS))
                    continue
                required[key] = None if value is None else self._config_value(doc, path, key, value)
            policy = Policy(
                topic_name_pattern=name_pattern, min_partitions=model.min_partitions,
                max_partitions=model.max_partitions, allowed_replication_factors=model.allowed_replication_factors,
                required_configs=required, max_delete_fraction=fraction,
                protected_topic_patterns=protected, source=doc.ref(("kind",)))
            for name in model.clusters or list(self.clusters):
                if name in result:
                    self.problems.add(doc.ref(("kind",)), f"cluster {name} has more than one Policy (the other at "
                                                          f"{result[name].source}); merge them")
                elif name in self.clusters:
                    result[name] = policy
        return result

    def _regexes(self, doc: _Doc, path: Path_, patterns: list[str], single: bool = False) -> list[str]:
        """The patterns that compile; each one that does not is reported."""
        valid = []
        for i, pattern in enumerate(patterns):
            try:
                re.compile(pattern)
            except re.error as e:
                self.problems.add(doc.ref(path if single else path + (i,)), f"{pattern!r} is not a valid regex: {e}")
            else:
                valid.append(pattern)
        return valid

    def _topic(self, entry: _Entry, clusters: dict[str, ClusterSpec], configs_by_doc: dict):
        doc, topic = entry.doc, entry.model
        self._check_name(doc, topic.name)
        template = None
        if topic.template is not None:
            template = self.templates.get(topic.template)
            if template is None:
                self.problems.add(doc.ref(("template",)), f"unknown topic template {topic.template!r}"
                                  + _did_you_mean(topic.template, self.templates))
        names = list(self.clusters) if topic.clusters in (None, "all") else topic.clusters
        if isinstance(topic.clusters, list):
            for i, name in enumerate(topic.clusters):
                if name not in self.clusters:
                    self.problems.add(doc.ref(("clusters", i)), f"unknown cluster {name!r}"
                                      + _did_you_mean(name, self.clusters))
        for name in topic.overrides:
            if name not in self.clusters:
                self.problems.add(doc.ref(("overrides", name), key=True), f"override for unknown cluster {name!r}"
                                  + _did_you_mean(name, self.clusters))
            elif name not in names:
                self.problems.add(doc.ref(("overrides", name), key=True),
                                  f"override for cluster {name!r}, which topic {topic.name} is not on")
        layers = [("template", template), ("topic", entry)]
        for name in names:
            if name not in clusters:
                continue
            cluster_entry = self.clusters[name]
            override = topic.overrides.get(name)
            configs = dict(self._configs(cluster_entry.doc, ("defaults", "configs"),
                                         cluster_entry.model.defaults.configs, configs_by_doc))
            partitions = cluster_entry.model.defaults.partitions
            rf = cluster_entry.model.defaults.replication_factor
            # where each of the two was last set, to point at the value a problem is about
            set_at = {key: cluster_entry.doc.ref(("defaults", key)) for key in ("partitions", "replication_factor")}
            state, undeclared, protected, rules, rules_at = TopicState.PRESENT, UndeclaredConfigs.REPORT, False, [], None
            for _, layer in layers:
                if layer is None:
                    continue
                m = layer.model
                configs.update(self._configs(layer.doc, ("configs",), m.configs, configs_by_doc))
                partitions = m.partitions if m.partitions is not None else partitions
                rf = m.replication_factor if m.replication_factor is not None else rf
                set_at.update({key: layer.doc.ref((key,)) for key in set_at if getattr(m, key) is not None})
                state = TopicState(m.state) if m.state else state
                undeclared = UndeclaredConfigs(m.undeclared_configs) if m.undeclared_configs else undeclared
                protected = m.protected if m.protected is not None else protected
                if m.truncate:
                    rules, rules_at = m.truncate, (layer.doc, ("truncate",))
            if override is not None:
                opath = ("overrides", name)
                configs.update(self._configs(doc, opath + ("configs",), override.configs, configs_by_doc))
                partitions = override.partitions if override.partitions is not None else partitions
                rf = override.replication_factor if override.replication_factor is not None else rf
                set_at.update({key: doc.ref(opath + (key,)) for key in set_at if getattr(override, key) is not None})
                undeclared = UndeclaredConfigs(override.undeclared_configs) if override.undeclared_configs else undeclared
                protected = override.protected if override.protected is not None else protected
                if override.truncate is not None:
                    rules, rules_at = override.truncate, (doc, opath + ("truncate",))
            ok = True
            for what, value in (("partitions", partitions), ("replication_factor", rf)):
                if value is None:
                    self.problems.add(doc.ref(("name",)), f"topic {topic.name} has no {what} for cluster {name}: "
                                                          f"set it on the topic or in the cluster's defaults")
                    ok = False
                elif value < 1:
                    self.problems.add(set_at[what], f"{what} must be at least 1, not {value}")
                    ok = False
                elif value > _WIRE_MAX[what]:
                    self.problems.add(set_at[what], f"{what} {value} is above Kafka's limit of {_WIRE_MAX[what]:,}")
                    ok = False
            if not ok:
                continue
            truncate = self._rules(rules_at, rules, partitions, topic.name) if rules else []
            yield name, DesiredTopic(
                name=topic.name, state=state, partitions=partitions, replication_factor=rf,
                configs=dict(sorted(configs.items())), undeclared_configs=undeclared, protected=protected,
                truncate=truncate, source=doc.ref(("name",)))

    def _check_name(self, doc: _Doc, name: str) -> None:
        ref = doc.ref(("name",))
        if not name:
            self.problems.add(ref, "topic name is empty")
        elif name in (".", ".."):
            self.problems.add(ref, f"topic name {name!r} is not allowed by Kafka")
        elif len(name) > 249:
            self.problems.add(ref, f"topic name is {len(name)} characters long; Kafka allows at most 249")
        elif not TOPIC_NAME.match(name):
            bad = sorted(set(c for c in name if not re.match(r"[a-zA-Z0-9._-]", c)))
            self.problems.add(ref, f"topic name {name!r} has characters Kafka does not allow ({''.join(bad)!r}); "
                                   "use letters, digits, '.', '_' and '-'")

    def _collisions(self, cluster: str, topics: dict[str, DesiredTopic]) -> None:
        seen: dict[str, str] = {}
        for name in sorted(topics):
            folded = name.replace(".", "_")
            if folded in seen:
                self.problems.add(topics[name].source, f"topics {seen[folded]!r} and {name!r} collide on cluster "
                                  f"{cluster}: Kafka treats '.' and '_' as the same in metric names and refuses one")
            else:
                seen[folded] = name

    def _configs(self, doc: _Doc, path: Path_, raw: dict, cache: dict) -> dict[str, str]:
        key = (id(doc), path)
        if key not in cache:
            cache[key] = {}
            for name, value in raw.items():
                normalised = self._config_value(doc, path + (name,), name, value)
                if normalised is not None:
                    cache[key][name] = normalised
        return cache[key]

    def _config_value(self, doc: _Doc, path: Path_, key: str, value: Any) -> Optional[str]:
        spec = kafka_configs.TOPIC_CONFIGS.get(key)
        if spec is None:
            self.problems.add(doc.ref(path, key=True), f"unknown topic config key {key!r}"
                              + _did_you_mean(key, kafka_configs.TOPIC_CONFIGS))
            return None
        if value is None:
            self.problems.add(doc.ref(path), f"{key} has no value")
            return None
        text = _scalar(value)
        try:
            if spec.unit is Unit.MS and isinstance(value, str):
                text = str(units.parse_duration_ms(value))
            elif spec.unit is Unit.BYTES and isinstance(value, str):
                text = str(units.parse_bytes(value))
        except ValueError as e:
            self.problems.add(doc.ref(path), f"{key}: {e}")
            return None
        error = kafka_configs.value_error(key, text)
        if error:
            self.problems.add(doc.ref(path), error)
            return None
        return text

    def _shared_rules(self) -> None:
        """Each shared rule on its own, used or not. What depends on the topic (its partitions) is
        checked where the rule is used."""
        for name, entry in self.rules.items():
            doc, rule = entry.doc, entry.model
            if rule.rule is not None:
                self.problems.add(doc.ref(("rule",)), f"truncation rule {name} refers to rule {rule.rule!r}; a "
                                                      "shared rule must give its own before_offset, before_time, ...")
            elif len(rule.kinds()) != 1:
                self.problems.add(doc.ref(), _one_kind_needed(rule.kinds()))
            else:
                self._rule(doc, (), rule, None, name, name)

    def _rules(self, at: tuple[_Doc, Path_], entries: list[RuleEntry], partitions: int, topic: str) -> list:
        doc, path = at
        rules, kinds = [], {}
        for i, entry in enumerate(entries):
            where = path + (i,)
            given = entry.kinds()
            if len(given) != 1:
                self.problems.add(doc.ref(where), _one_kind_needed(given))
                continue
            rule_doc, rule_path, rule, name = doc, where, entry, None
            if entry.rule is not None:
                shared = self.rules.get(entry.rule)
                if shared is None:
                    self.problems.add(doc.ref(where + ("rule",)), f"unknown truncation rule {entry.rule!r}"
                                      + _did_you_mean(entry.rule, self.rules))
                    continue
                rule_doc, rule_path, rule, name = shared.doc, (), shared.model, entry.rule
                if len(rule.kinds()) != 1 or rule.rule is not None:
                    continue  # reported where the shared rule is defined
            made = self._rule(rule_doc, rule_path, rule, partitions, topic, name)
            if made is None:
                continue
            if made.kind in kinds:
                self.problems.add(doc.ref(where), f"topic {topic} has two {made.kind} rules (the other at "
                                                  f"{kinds[made.kind]}); keep one")
                continue
            kinds[made.kind] = doc.ref(where)
            rules.append(made)
        if "everything" in kinds and len(kinds) > 1:
            self.problems.add(kinds["everything"], f"topic {topic}: `everything` deletes all records, so the "
                                                   "other rules beside it conflict with it; keep one")
        return rules

    def _rule(self, doc: _Doc, path: Path_, rule: RuleEntry, partitions: Optional[int], topic: str,
              name: Optional[str]):
        """The rule as a model, or None after reporting why it cannot be one. Without `partitions`
        (a shared rule on its own), partition numbers are only checked for being negative."""
        kind = rule.kinds()[0]
        ref = doc.ref(path + (kind,))
        common = {"name": name, "source": doc.ref(path)}
        value = getattr(rule, kind)
        if kind == "before_offset":
            if isinstance(value, int):
                if value < 0:
                    self.problems.add(ref, f"before_offset must be 0 or more, not {value}")
                    return None
                if value > LONG_MAX:
                    self.problems.add(ref, f"before_offset {value} is above the largest offset Kafka has ({LONG_MAX})")
                    return None
                return BeforeOffset(offset=value, **common)
            ok = True
            for p, offset in value.items():
                pref = doc.ref(path + (kind, p))
                if p < 0:
                    self.problems.add(doc.ref(path + (kind, p), key=True),
                                      f"partition {p} does not exist (partitions are numbered from 0)")
                    ok = False
                elif partitions is not None and p >= partitions:
                    self.problems.add(doc.ref(path + (kind, p), key=True),
                                      f"topic {topic} has no partition {p} (it has {partitions})")
                    ok = False
                if offset < 0:
                    self.problems.add(pref, f"before_offset for partition {p} must be 0 or more, not {offset}")
                    ok = False
                elif offset > LONG_MAX:
                    self.problems.add(pref, f"before_offset for partition {p} is above the largest offset Kafka "
                                            f"has ({LONG_MAX})")
                    ok = False
            if not value:
                self.problems.add(ref, "before_offset names no partitions")
                ok = False
            return BeforeOffset(partitions=value, **common) if ok else None
        if kind == "before_time":
            when = value
            if isinstance(when, str):
                try:
                    when = datetime.fromisoformat(when.replace("Z", "+00:00"))
                except ValueError as e:
                    why = "" if str(e).startswith("Invalid isoformat") else f" ({e})"  # e.g. day out of range
                    self.problems.add(ref, f"before_time {value!r} is not an RFC 3339 time{why}; write e.g. "
                                           "2026-10-01T00:00:00Z")
                    return None
            if when.tzinfo is None:
                self.problems.add(ref, f"before_time {when.isoformat()} has no timezone; add one (e.g. Z for UTC) so "
                                       "it means the same instant everywhere")
                return None
            return BeforeTime(timestamp=when, **common)
        if kind == "keep_last":
            if value < 1:
                self.problems.add(ref, f"keep_last must be at least 1, not {value}" + (
                    "; to delete every record write `everything: true`" if value == 0 else ""))
                return None
            if value > LONG_MAX:
                self.problems.add(ref, f"keep_last {value} is above the largest offset Kafka has ({LONG_MAX})")
                return None
            return KeepLast(records=value, **common)
        if kind == "everything":
            if value is not True:
                self.problems.add(ref, "everything: false means nothing; remove the rule instead")
                return None
            return Everything(**common)
        repeated = sorted({g for g in value if value.count(g) > 1})
        if repeated:
            self.problems.add(ref, f"consumed_by names {', '.join(repeated)} more than once; list each group once")
            return None
        return ConsumedBy(groups=value, **common)


def _pydantic_message(message: str) -> str:
    """pydantic's message in the words of the manifest format: 'input should be a mapping'."""
    message = re.sub(r"a valid dictionary( or instance of \w+)?", "a mapping", message)
    message = re.sub(r"List should have at least 1 item after validation, not 0", "must not be empty", message)
    return message[:1].lower() + message[1:]


def _one_kind_needed(given: list[str]) -> str:
    return ("a truncation rule needs exactly one of " + ", ".join(RULE_KINDS)
            + (f"; this one has {', '.join(given)}" if given else ""))


def _yaml_path(data: Any, loc: tuple, missing: bool = False) -> Path_:
    """A pydantic error location as a path into the YAML data, without the union-member names
    (such as 'int' or 'dict[int,int]') pydantic puts in it. With `missing`, the last part is a
    key the data does not have, and is kept."""
    path, current = [], data
    for i, part in enumerate(loc):
        if isinstance(current, dict):
            key = part if part in current else next((k for k in current if str(k) == str(part)), None)
            if key is not None:
                path.append(key)
                current = current[key]
            elif missing and i == len(loc) - 1:
                path.append(part)
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            path.append(part)
            current = current[part]
    return tuple(path)


def _fields_at(model_type, loc: Path_) -> list[str]:
    """Field names of the (nested) model at `loc`, for "did you mean" suggestions. A part of `loc`
    below a field is a model's field name; below a list or dict field it is an index or key."""
    current = model_type
    for part in loc:
        if _is_model(current):
            info = current.model_fields.get(part) if isinstance(part, str) else None
            if info is None:
                return []
            current = info.annotation
        else:
            current = _model_in(current)
            if current is None:
                return []
    model = current if _is_model(current) else _model_in(current)
    return list(model.model_fields) if model is not None else []


def _is_model(annotation) -> bool:
    return isinstance(annotation, type) and hasattr(annotation, "model_fields")


def _model_in(annotation):
    """The first model class inside a typing annotation (Optional[...], list[...], dict[..., ...])."""
    if _is_model(annotation):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        inner = _model_in(arg)
        if inner is not None:
            return inner
    return None


def _did_you_mean(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_scalar(v) for v in value)
    return str(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
