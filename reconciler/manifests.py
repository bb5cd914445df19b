"""Loading manifests: YAML files -> one DesiredState per cluster. The only module that reads YAML.

Every problem is collected with its file, line and column, and all of them are raised together
as one ManifestError, so a pull request shows every mistake at once.

Merge order for a topic on a cluster: cluster defaults < template < topic < override for that
cluster (configs key by key; an override's `truncate` replaces the topic's rules). Truncation
rules are checked for being impossible (a partition the topic does not have, a negative offset, a
time without timezone) and conflicting: `everything` beside any other rule, or the same kind of
rule twice on one topic (which of two offsets or times was meant is not for the tool to guess).

The YAML itself is read by reconciler.yaml_source (YAML 1.2 meaning, positions, tags, nesting).
Every value a message quotes is cut to a readable length (errors.shown), and no value of a
security secret field is ever shown.
"""
from __future__ import annotations

import difflib
import errno
import math
import os
import re
import stat
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from reconciler import kafka_configs, units
from reconciler.errors import (
    ManifestError,
    ManifestProblem,
    ReconcilerError,
    shown,
    shown_text,
)
from reconciler.kafka_configs import INT_MAX, LONG_MAX, TOPIC_NAME, Unit
from reconciler.manifest_docs import (
    DOC_MODELS,
    RULE_KINDS,
    ClusterDoc,
    PolicyDoc,
    RuleEntry,
    TopicTemplateDoc,
    TruncationRuleDoc,
    manifest_json_schema,
)
from reconciler.models.desired import (
    ENV_REFERENCE,
    HOST_PORT_OR_REFERENCE,
    BeforeOffset,
    BeforeTime,
    ClientSecurity,
    ClusterSpec,
    ConsumedBy,
    DesiredState,
    DesiredTopic,
    Everything,
    KeepLast,
    Policy,
    SourceRef,
    TopicState,
    UndeclaredConfigs,
)
from reconciler.yaml_source import YamlDocument as _Doc
from reconciler.yaml_source import decode, read_yaml_text

__all__ = ["Manifests", "load_manifests", "manifest_json_schema"]

SECRET_FIELDS = ("password", "ssl_password")
# Every other key under `security` (a misspelt `pasword` too) may hold a secret: no message shows its value.
_NOT_SECRET = frozenset(ClientSecurity.model_fields) - set(SECRET_FIELDS)
# What people write for an environment variable outside ${NAME}: $NAME, $(cmd), %NAME%, {NAME}, ${NAME.
_ENV_LOOKALIKE = re.compile(r"\$[A-Za-z_({]|%[A-Za-z_][A-Za-z0-9_]*%|^\{[A-Za-z_][A-Za-z0-9_]*\}$")
# CreateTopics carries partitions as an int32 and the replication factor as an int16.
_WIRE_MAX = {"partitions": INT_MAX, "replication_factor": 2 ** 15 - 1}
# Topic configs checked against other settings of the topic once merged (see _sharp_edges).
_EDGE_CONFIGS = ("min.insync.replicas", "cleanup.policy")

Path_ = tuple  # a path into a YAML document: keys and list indexes


def _is_secret(path: Path_) -> bool:
    """Whether a value at `path` in a document may be a secret, never to be shown."""
    return bool(path) and path[0] == "security" and not (len(path) > 1 and path[1] in _NOT_SECRET)


@dataclass
class _Problems:
    found: list[ManifestProblem] = field(default_factory=list)
    seen: set[ManifestProblem] = field(default_factory=set)
    # Per file, the places of keys and values refused while reading the YAML: what the checks after
    # that find at the same place is about the same mistake, and not reported again.
    refused_at: dict[str, set] = field(default_factory=dict)

    def add(self, ref: SourceRef, message: str) -> None:
        self.add_problem(ManifestProblem(ref.file, ref.line, ref.column, message))

    def add_problem(self, problem: ManifestProblem) -> None:
        if problem in self.seen:
            return
        refused = self.refused_at.get(problem.file)
        if refused and (problem.line, problem.column) in refused:
            return
        self.seen.add(problem)
        self.found.append(problem)


class Manifests:
    """All clusters' desired state, resolved and checked."""

    def __init__(self, files: list[str], clusters: dict[str, ClusterSpec], states: dict[str, DesiredState],
                 default_configs: dict[str, dict[str, str]] | None = None):
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
    problems = _Problems()
    single = not root.is_dir()
    files = [root] if single else _manifest_files(root, problems)
    docs = []
    for file in files:
        name = file.name if single else str(file.relative_to(root))
        docs.extend(_read_file(file, name, problems))
    if not files and not problems.found:
        problems.add(SourceRef(file=str(path), line=1), "no *.yaml or *.yml files found")
    resolver = _Resolver(problems)
    for doc in docs:
        problems.refused_at.setdefault(doc.file, set()).update(doc.refused_at)
    for doc in docs:
        resolver.add(doc)
    states = resolver.resolve()
    if problems.found:
        raise ManifestError(problems.found)
    return Manifests([str(f) for f in files], {n: s.cluster for n, s in states.items()}, states,
                     resolver.default_configs)


def _manifest_files(root: Path, problems: _Problems) -> list[Path]:
    """Every *.yaml / *.yml file under `root`, symbolic links followed. What cannot be read as a
    manifest file (a dangling or looping link, a directory or a pipe named x.yaml) is reported:
    nothing may be planned from a part of the manifests. A directory link back to a directory it
    is in is reported too, instead of being walked for ever."""
    files = []
    stack = [(root, frozenset())]
    while stack:
        directory, above = stack.pop()
        try:
            info = directory.stat()
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as e:
            problems.add(SourceRef(file=_relative(directory, root), line=1),
                         f"cannot read this directory: {e.strerror or e}; fix its permissions or remove it")
            continue
        above = above | {(info.st_dev, info.st_ino)}
        for entry in entries:
            file = Path(entry.path)
            manifest = entry.name.endswith((".yaml", ".yml"))
            try:
                target = os.stat(entry.path)  # follows symbolic links
            except OSError as e:
                if manifest or entry.is_symlink():
                    where = SourceRef(file=_relative(file, root), line=1)
                    if e.errno == errno.ELOOP:
                        problems.add(where, "this symbolic link loops (it leads back to itself); point it at a "
                                            "manifest file or remove it")
                    elif e.errno == errno.ENOENT and entry.is_symlink():
                        if manifest:
                            problems.add(where, f"this symbolic link points to {shown(os.readlink(entry.path))}, "
                                                "which does not exist; fix the link or remove it")
                    else:
                        problems.add(where, f"cannot read this file: {e.strerror or e}; fix its permissions "
                                            "or remove it")
                continue
            if stat.S_ISDIR(target.st_mode):
                if (target.st_dev, target.st_ino) in above:
                    problems.add(SourceRef(file=_relative(file, root), line=1),
                                 "this symbolic link leads back to a directory it is in, which would be read "
                                 "for ever; remove it")
                    continue
                if manifest:
                    problems.add(SourceRef(file=_relative(file, root), line=1),
                                 "this is a directory, not a manifest file; rename it so that its name does not "
                                 "end in .yaml or .yml (the files in it are read all the same)")
                stack.append((file, above))
            elif manifest and not stat.S_ISREG(target.st_mode):
                problems.add(SourceRef(file=_relative(file, root), line=1),
                             "this is not a regular file (a pipe, socket or device); manifests must be files")
            elif manifest:
                files.append(file)
    return sorted(files)


def _relative(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path != root else str(root)


def _read_file(file: Path, name: str, problems: _Problems) -> list[_Doc]:
    def report(line: int, column: int, message: str) -> None:
        problems.add(SourceRef(file=name, line=line, column=column), message)

    try:
        raw = file.read_bytes()
    except OSError as e:
        report(1, 1, f"cannot read the file: {e.strerror or e}; fix its permissions or remove it")
        return []
    text = decode(raw, report)
    return [] if text is None else read_yaml_text(text, name, report, _is_secret)


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
        # "Did you mean" compares a name with every choice; past this many comparisons in all, with
        # thousands of names misspelt against thousands of choices, it is left out.
        self.suggestions_left = 2_000_000

    # Each document is validated against its kind's model; pydantic's errors are mapped back to
    # the YAML node they concern.
    def add(self, doc: _Doc) -> None:
        if not isinstance(doc.data, dict):
            self.problems.add(doc.ref(), "a manifest document must be a mapping with a `kind`")
            return
        kind = doc.data.get("kind")
        if doc.is_refused(("kind",)):
            return
        if kind is None:
            self.problems.add(doc.ref(), "document has no `kind` (one of " + ", ".join(DOC_MODELS) + ")")
            return
        model_type = DOC_MODELS.get(kind) if isinstance(kind, str) else None
        if model_type is None:
            self.problems.add(doc.ref(("kind",)), f"unknown kind {shown(kind)}" + self._did_you_mean(str(kind), DOC_MODELS))
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
                errors = e.errors(include_url=False)
                self._report_validation(doc, model_type, errors)
                keys_of = {}
                failing = {_yaml_path(doc.data, err["loc"], keys_of=keys_of)[:1] for err in errors}
                keys = {path[0] for path in failing if path and path[0] in data}
                if not keys or any(model_type.model_fields.get(k) and model_type.model_fields[k].is_required()
                                   for k in keys):
                    return None
                for key in keys:
                    del data[key]

    def _report_validation(self, doc: _Doc, model_type, error_list: list) -> None:
        wrong: dict[Path_, list[dict]] = {}  # value errors by place; several at one place are union members
        keys_of: dict = {}
        for e in error_list:
            loc = _yaml_path(doc.data, e["loc"], missing=e["type"] == "missing", keys_of=keys_of)
            if doc.is_refused(loc) and e["type"] in ("extra_forbidden", "missing"):
                continue  # reported when the YAML was read
            if e["type"] == "extra_forbidden":
                name = str(loc[-1])
                fields = _fields_at(model_type, loc[:-1])
                self.problems.add(doc.ref(loc, key=True), f"unknown key {shown(name)}"
                                  + self._did_you_mean(name, fields))
            elif e["type"] == "missing":
                self.problems.add(doc.ref(loc[:-1]), f"missing required key {shown(loc[-1])}")
            else:
                wrong.setdefault(loc, []).append(e)
        # A union member that got further into the value (a dict member with a bad key) says more
        # than the members that refused the value as a whole.
        deeper = {loc[:i] for loc in wrong for i in range(len(loc))}
        for loc, errors in wrong.items():
            if loc in deeper or doc.is_refused(loc):
                continue  # said better deeper in, or reported when the YAML was read
            where = ".".join(shown_text(x) for x in loc)
            value = errors[0].get("input")
            # An empty list where a list member of a union fits: the list is what was meant.
            errors = [e for e in errors if e["type"] == "too_short"] or errors
            expected = list(dict.fromkeys(_pydantic_message(e["msg"]) for e in errors))
            expected = expected[:1] + [m.removeprefix("input should be ") for m in expected[1:]]
            text = expected[0] if len(expected) == 1 else ", ".join(expected[:-1]) + " or " + expected[-1]
            if _is_secret(loc) or _contains_secret(doc, value):
                self.problems.add(doc.ref(loc), f"{where}: {text} (the value is not shown: it is a secret; write "
                                                "a reference such as ${KAFKA_PASSWORD})")
            else:
                self.problems.add(doc.ref(loc), f"{where}: {text} (got {shown(value)})")

    def _did_you_mean(self, word: str, choices) -> str:
        choices = list(choices)
        if len(choices) > self.suggestions_left:
            return ""
        self.suggestions_left -= len(choices)
        return _did_you_mean(word, choices)

    def _unique(self, table: dict, name: str, entry: _Entry, what: str) -> None:
        if name in table:
            first = table[name].doc.ref(("name",))
            self.problems.add(entry.doc.ref(("name",)), f"duplicate {what} {shown(name)} (also defined at {first})")
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
                    self.problems.add(ref, f"topic {shown(topic.name)} is declared twice for cluster {cluster_name} "
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
                self.problems.add_problem(problem)
        return states

    def _cluster(self, entry: _Entry) -> ClusterSpec:
        doc, model = entry.doc, entry.model
        servers = [model.bootstrap_servers] if isinstance(model.bootstrap_servers, str) else model.bootstrap_servers
        servers = [s.strip() for item in servers for s in item.split(",") if s.strip()]
        for server in servers:
            match = HOST_PORT_OR_REFERENCE.match(server)
            if not match:
                self.problems.add(doc.ref(("bootstrap_servers",)),
                                  f"bootstrap server {shown(server)} is not host:port (e.g. kafka-1.example.com:9092)")
            elif not 1 <= int(match.group("port")) <= 65535:
                self.problems.add(doc.ref(("bootstrap_servers",)),
                                  f"bootstrap server {shown(server)} has port {match.group('port')}; ports are 1 to 65535")
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
            secret = name in SECRET_FIELDS
            # Whatever is left once the well-formed ${NAME} references are taken out must not look
            # like another way of naming a variable: it would be taken as a literal value.
            rest = ENV_REFERENCE.sub("", value)
            if "${" in rest:
                self.problems.add(ref, f"security.{name}: malformed environment reference"
                                       + ("" if secret else f" in {shown(value)}") + "; write ${VARIABLE_NAME}")
            elif _ENV_LOOKALIKE.search(rest):
                self.problems.add(ref, f"security.{name}"
                                       + (" looks like" if secret else f": {shown(value)} looks like")
                                       + " an environment reference ($NAME, $(command), %NAME%, {NAME}) but is "
                                       "not one, and would be taken literally; write ${VARIABLE_NAME}")
            elif secret and not ENV_REFERENCE.fullmatch(value):
                self.problems.add(ref, f"security.{name} is a literal secret; keep secrets out of Git and write "
                                       "a reference such as ${KAFKA_PASSWORD}, set in the environment")
        ignore = self._regexes(doc, ("ignore_topics",), model.ignore_topics)
        return ClusterSpec(name=model.name, bootstrap_servers=servers, security=security, labels=model.labels,
                           ignore_topics=ignore, source=doc.ref(("name",)))

    def _policies(self) -> dict[str, Policy]:
        result: dict[str, Policy] = {}
        for entry in self.policies:
            doc, model = entry.doc, entry.model
            self._no_repeats(doc, ("clusters",), model.clusters or [], "clusters")
            for i, name in enumerate(model.clusters or []):
                if name not in self.clusters:
                    self.problems.add(doc.ref(("clusters", i)), f"unknown cluster {shown(name)}"
                                      + self._did_you_mean(name, self.clusters))
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
                if doc.is_refused(path):
                    continue
                if key not in kafka_configs.TOPIC_CONFIGS:
                    self.problems.add(doc.ref(path, key=True), f"unknown topic config key {shown(key)}"
                                      + self._did_you_mean(key, kafka_configs.TOPIC_CONFIGS))
                    continue
                required[key] = None if value is None else self._config_value(doc, path, key, value)
            policy = Policy(
                topic_name_pattern=name_pattern, min_partitions=model.min_partitions,
                max_partitions=model.max_partitions, allowed_replication_factors=model.allowed_replication_factors,
                required_configs=required, max_delete_fraction=fraction,
                protected_topic_patterns=protected, source=doc.ref(("kind",)))
            for name in dict.fromkeys(model.clusters or list(self.clusters)):
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
                self.problems.add(doc.ref(path if single else path + (i,)),
                                  f"{shown(pattern)} is not a valid regex: {e}")
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
                self.problems.add(doc.ref(("template",)), f"unknown topic template {shown(topic.template)}"
                                  + self._did_you_mean(topic.template, self.templates))
        names = list(self.clusters) if topic.clusters in (None, "all") else list(dict.fromkeys(topic.clusters))
        if isinstance(topic.clusters, list):
            self._no_repeats(doc, ("clusters",), topic.clusters, "clusters")
            for i, name in enumerate(topic.clusters):
                if name not in self.clusters:
                    self.problems.add(doc.ref(("clusters", i)), f"unknown cluster {shown(name)}"
                                      + self._did_you_mean(name, self.clusters))
        on = set(names)
        for name in topic.overrides:
            if name not in self.clusters:
                self.problems.add(doc.ref(("overrides", name), key=True),
                                  f"override for unknown cluster {shown(name)}" + self._did_you_mean(name, self.clusters))
            elif name not in on:
                self.problems.add(doc.ref(("overrides", name), key=True),
                                  f"override for cluster {shown(name)}, which topic {shown_text(topic.name)} is not on")
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
            # (layer, document, path) where the keys checked against each other were last set
            edges_at = {key: (0, cluster_entry.doc, ("defaults", key)) for key in ("replication_factor",)}
            edges_at.update({key: (0, cluster_entry.doc, ("defaults", "configs", key))
                             for key in _EDGE_CONFIGS if key in configs})
            state, undeclared, protected, rules, rules_at = TopicState.PRESENT, UndeclaredConfigs.REPORT, False, [], None
            for rank, (_, layer) in enumerate(layers, 1):
                if layer is None:
                    continue
                m = layer.model
                layer_configs = self._configs(layer.doc, ("configs",), m.configs, configs_by_doc)
                configs.update(layer_configs)
                edges_at.update({key: (rank, layer.doc, ("configs", key)) for key in _EDGE_CONFIGS
                                 if key in layer_configs})
                if m.replication_factor is not None:
                    edges_at["replication_factor"] = (rank, layer.doc, ("replication_factor",))
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
                layer_configs = self._configs(doc, opath + ("configs",), override.configs, configs_by_doc)
                configs.update(layer_configs)
                edges_at.update({key: (3, doc, opath + ("configs", key)) for key in _EDGE_CONFIGS
                                 if key in layer_configs})
                if override.replication_factor is not None:
                    edges_at["replication_factor"] = (3, doc, opath + ("replication_factor",))
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
                    self.problems.add(doc.ref(("name",)), f"topic {shown_text(topic.name)} has no {what} for cluster "
                                                          f"{shown_text(name)}: "
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
            if state is TopicState.PRESENT:
                self._sharp_edges(topic.name, name, configs, rf, edges_at, rules_at if rules else None)
            truncate = self._rules(rules_at, rules, partitions, topic.name) if rules else []
            yield name, DesiredTopic(
                name=topic.name, state=state, partitions=partitions, replication_factor=rf,
                configs=dict(sorted(configs.items())), undeclared_configs=undeclared, protected=protected,
                truncate=truncate, source=doc.ref(("name",)))

    def _sharp_edges(self, topic: str, cluster: str, configs: dict[str, str], rf: int, edges_at: dict,
                     rules_at: tuple[_Doc, Path_] | None) -> None:
        """Settings that are valid one by one, but not together on this cluster once merged."""
        def ref(key: str) -> SourceRef:
            _, doc, path = edges_at[key]
            return doc.ref(path)

        named = f"topic {shown_text(topic)} on cluster {shown_text(cluster)}"
        min_isr = configs.get("min.insync.replicas")
        if min_isr is not None and int(min_isr) > rf:
            # At the one of the two set last in the merge order: the change that made them clash.
            here, other = (("min.insync.replicas", "replication_factor")
                           if edges_at["min.insync.replicas"][0] >= edges_at["replication_factor"][0]
                           else ("replication_factor", "min.insync.replicas"))
            self.problems.add(ref(here), f"{named}: min.insync.replicas {min_isr} is above its replication_factor "
                                         f"{rf} ({other} set at {ref(other)}), so every write with acks=all would "
                                         f"fail; set min.insync.replicas to at most {rf} or raise replication_factor")
        policy = configs.get("cleanup.policy")
        if policy is not None and rules_at is not None and not kafka_configs.cleanup_policy_allows_delete(policy):
            doc, path = rules_at
            self.problems.add(doc.ref(path), f"{named} has truncation rules, but its cleanup.policy is "
                                             f"{shown_text(policy)} (set at {ref('cleanup.policy')}), and Kafka "
                                             "deletes records only from topics whose cleanup.policy includes "
                                             "delete; write cleanup.policy: compact,delete or remove the rules")

    def _check_name(self, doc: _Doc, name: str) -> None:
        ref = doc.ref(("name",))
        if not name:
            self.problems.add(ref, "topic name is empty")
        elif name in (".", ".."):
            self.problems.add(ref, f"topic name {shown(name)} is not allowed by Kafka")
        elif len(name) > 249:
            self.problems.add(ref, f"topic name is {len(name)} characters long; Kafka allows at most 249")
        elif not TOPIC_NAME.fullmatch(name):
            bad = sorted(set(re.sub(r"[a-zA-Z0-9._-]", "", name)))
            self.problems.add(ref, f"topic name {shown(name)} has characters Kafka does not allow "
                                   f"({shown(''.join(bad))}); use letters, digits, '.', '_' and '-'")

    def _collisions(self, cluster: str, topics: dict[str, DesiredTopic]) -> None:
        seen: dict[str, str] = {}
        for name in sorted(topics):
            folded = name.replace(".", "_")
            if folded in seen:
                self.problems.add(topics[name].source, f"topics {shown(seen[folded])} and {shown(name)} collide on "
                                  f"cluster {shown_text(cluster)}: Kafka treats '.' and '_' as the same in metric names "
                                  "and refuses one")
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

    def _config_value(self, doc: _Doc, path: Path_, key: str, value: Any) -> str | None:
        if doc.is_refused(path):
            return None  # reported when the YAML was read
        spec = kafka_configs.TOPIC_CONFIGS.get(key)
        if spec is None:
            self.problems.add(doc.ref(path, key=True), f"unknown topic config key {shown(key)}"
                              + self._did_you_mean(key, kafka_configs.TOPIC_CONFIGS))
            return None
        if value is None:
            self.problems.add(doc.ref(path), f"{key} has no value")
            return None
        if isinstance(value, float) and not math.isfinite(value):
            self.problems.add(doc.ref(path), f"{key}: {_scalar(value)} is not a value Kafka reads; write a finite "
                                             "number")
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
                self.problems.add(doc.ref(("rule",)), f"truncation rule {shown_text(name)} refers to rule "
                                                      f"{shown(rule.rule)}; a "
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
                    self.problems.add(doc.ref(where + ("rule",)), f"unknown truncation rule {shown(entry.rule)}"
                                      + self._did_you_mean(entry.rule, self.rules))
                    continue
                rule_doc, rule_path, rule, name = shared.doc, (), shared.model, entry.rule
                if len(rule.kinds()) != 1 or rule.rule is not None:
                    continue  # reported where the shared rule is defined
            made = self._rule(rule_doc, rule_path, rule, partitions, topic, name)
            if made is None:
                continue
            if made.kind in kinds:
                self.problems.add(doc.ref(where), f"topic {shown_text(topic)} has two {made.kind} rules (the other at "
                                                  f"{kinds[made.kind]}); keep one")
                continue
            kinds[made.kind] = doc.ref(where)
            rules.append(made)
        if "everything" in kinds and len(kinds) > 1:
            self.problems.add(kinds["everything"], f"topic {shown_text(topic)}: `everything` deletes all records, so the "
                                                   "other rules beside it conflict with it; keep one")
        return rules

    def _rule(self, doc: _Doc, path: Path_, rule: RuleEntry, partitions: int | None, topic: str,
              name: str | None):
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
                                      f"topic {shown_text(topic)} has no partition {p} (it has {partitions})")
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
            when = _rfc3339(value) if isinstance(value, str) else value
            if isinstance(when, str):  # why it is not a time
                self.problems.add(ref, when)
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
        if not self._no_repeats(doc, path + (kind,), value, "consumed_by", "group"):
            return None
        return ConsumedBy(groups=value, **common)

    def _no_repeats(self, doc: _Doc, path: Path_, names: list[str], what: str, each: str = "name") -> bool:
        """Reports names listed more than once (in linear time: lists may be long)."""
        seen: set[str] = set()
        repeated = sorted({name for name in names if name in seen or seen.add(name)})
        if repeated:
            listed = ", ".join(shown_text(name, 40) for name in repeated[:5])
            more = f" and {len(repeated) - 5:,} more" if len(repeated) > 5 else ""
            self.problems.add(doc.ref(path), f"{what} names {listed}{more} more than once; list each {each} once")
        return not repeated


def _pydantic_message(message: str) -> str:
    """pydantic's message in the words of the manifest format: 'input should be a mapping'."""
    message = re.sub(r"a valid dictionary( or instance of \w+)?", "a mapping", message)
    message = re.sub(r"List should have at least 1 item after validation, not 0", "must not be empty", message)
    return message[:1].lower() + message[1:]


def _one_kind_needed(given: list[str]) -> str:
    return ("a truncation rule needs exactly one of " + ", ".join(RULE_KINDS)
            + (f"; this one has {', '.join(given)}" if given else ""))


def _yaml_path(data: Any, loc: tuple, missing: bool = False, keys_of: dict | None = None) -> Path_:
    """A pydantic error location as a path into the YAML data, without the union-member names
    (such as 'int' or 'dict[int,int]') pydantic puts in it. With `missing`, the last part is a
    key the data does not have, and is kept. `keys_of` caches each mapping's keys by their text,
    so that many errors in one large mapping take linear time."""
    path, current = [], data
    keys_of = {} if keys_of is None else keys_of
    for i, part in enumerate(loc):
        if isinstance(current, dict):
            if part in current and not isinstance(part, bool):
                key = part
            else:
                if id(current) not in keys_of:
                    keys_of[id(current)] = (current, {str(k): k for k in reversed(list(current))})
                key = keys_of[id(current)][1].get(str(part))
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
    if len(word) > 100:
        return ""  # no name is that long
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {shown(close[0])}?)" if close else ""


_RFC3339 = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
                      r"([Zz]|[-+][0-9]{2}:[0-9]{2})?)?")


def _rfc3339(text: str):
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
        return datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzinfo=tz)
    except ValueError as e:  # e.g. day is out of range for month
        return f"before_time {shown(text)} is not an RFC 3339 time ({e}); write e.g. 2026-10-01T00:00:00Z"


def _contains_secret(doc: _Doc, value: Any) -> bool:
    """Whether a value a message would show holds the text of one of the document's secrets (an
    anchor used both as a secret and elsewhere)."""
    if not doc.secret_texts:
        return False
    text = value if isinstance(value, str) else repr(value)
    return any(secret in text for secret in doc.secret_texts)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_scalar(v) for v in value)
    return str(value)

