"""Cluster and Policy documents -> the ClusterSpec and Policy models, with the checks a schema
cannot say: a regex that Python cannot compile, text around ${NAME} references that looks like
another way of naming a variable, min_partitions above max_partitions, and which clusters a
Policy names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.errors import shown
from reconciler.kafka_configs import TOPIC_CONFIGS
from reconciler.manifests.config_values import ConfigReader
from reconciler.manifests.documents import ClusterDoc, PolicyDoc, split_servers
from reconciler.manifests.problems import Problems
from reconciler.manifests.validate import Entry, reference_problem, valid_regexes
from reconciler.models.desired import ClientSecurity, ClusterSpec, Policy, ReassignmentSettings
from reconciler.units import parse_bytes, parse_duration_ms


def cluster_spec(entry: Entry[ClusterDoc], problems: Problems) -> ClusterSpec:
    doc, model = entry.doc, entry.model
    security = ClientSecurity(**model.security.model_dump()) if model.security else ClientSecurity()
    for name, value in security.model_dump().items():
        problem = reference_problem(name, value) if isinstance(value, str) else None
        if problem:
            problems.add(doc.ref(("security", name)), problem)
    ignore = valid_regexes(doc, ("ignore_topics",), model.ignore_topics, problems)
    return ClusterSpec(
        name=model.name,
        bootstrap_servers=split_servers(model.bootstrap_servers),
        cluster_id=model.cluster_id,
        security=security,
        labels=model.labels,
        ignore_topics=ignore,
        drain_brokers=sorted(model.drain_brokers),
        reassignment=_reassignment(entry),
        source=doc.ref(("name",)),
    )


def _reassignment(entry: Entry[ClusterDoc]) -> ReassignmentSettings:
    """The settings as numbers: the model has refused (and left out) every value out of range."""
    given = entry.model.reassignment
    if given is None:
        return ReassignmentSettings()
    settings: dict[str, int] = {}
    for name, field, parse in (("throttle", "throttle_bytes_per_s", parse_bytes), ("wait", "wait_ms", parse_duration_ms)):
        value = getattr(given, name)
        if value is not None:
            settings[field] = value if isinstance(value, int) else parse(value)
    return ReassignmentSettings(**settings)


def unknown_clusters(entry: Entry[Any], names: list[str] | str | None, known: Mapping[str, object], problems: Problems) -> None:
    """Reports each name in a document's `clusters` list that no Cluster document declares. A list
    the model refused (a name in it twice) is checked as written."""
    if entry.is_refused(("clusters",)):
        names = entry.doc.data.get("clusters")
    for i, name in enumerate(names if isinstance(names, list) else []):
        if isinstance(name, str) and name not in known:
            problems.add(entry.doc.ref(("clusters", i)), f"unknown cluster {shown(name)}" + problems.did_you_mean(name, known))


def cluster_policies(
    entries: list[Entry[PolicyDoc]], clusters: dict[str, Entry[ClusterDoc]], configs: ConfigReader, problems: Problems
) -> dict[str, Policy]:
    """The Policy of each cluster that has one."""
    result: dict[str, Policy] = {}
    for entry in entries:
        doc, model = entry.doc, entry.model
        unknown_clusters(entry, model.clusters, clusters, problems)
        if entry.is_refused(("clusters",)):
            continue  # which clusters it is for is not known (reported)
        if model.min_partitions is not None and model.max_partitions is not None and model.min_partitions > model.max_partitions:
            problems.add(
                doc.ref(("min_partitions",)),
                f"min_partitions {model.min_partitions} is above max_partitions {model.max_partitions}",
            )
        protected = valid_regexes(doc, ("protected_topic_patterns",), model.protected_topic_patterns, problems)
        exempt = valid_regexes(doc, ("idle_exempt_topics",), model.idle_exempt_topics, problems)
        name_pattern = model.topic_name_pattern
        if name_pattern is not None and not valid_regexes(doc, ("topic_name_pattern",), [name_pattern], problems, single=True):
            name_pattern = None
        required: dict[str, str | None] = {}
        for key, value in model.required_configs.items():
            path = ("required_configs", key)
            if doc.is_refused(path):
                continue
            if key not in TOPIC_CONFIGS:
                problems.add(
                    doc.ref(path, key=True), f"unknown topic config key {shown(key)}" + problems.did_you_mean(key, TOPIC_CONFIGS)
                )
                continue
            required[key] = None if value is None else configs.value(doc, path, key, value)
        policy = Policy(
            topic_name_pattern=name_pattern,
            min_partitions=model.min_partitions,
            max_partitions=model.max_partitions,
            allowed_replication_factors=model.allowed_replication_factors,
            required_configs=required,
            max_delete_fraction=model.max_delete_fraction,
            max_retention_decrease=model.max_retention_decrease,
            max_destructive_actions=model.max_destructive_actions,
            max_disk_usage=model.max_disk_usage,
            protected_topic_patterns=protected,
            deletions_require_idle_for_ms=_duration_ms(model.deletions_require_idle_for),
            require_owner=bool(model.require_owner),
            idle_after_ms=_duration_ms(model.idle_after),
            idle_exempt_topics=exempt,
            source=doc.ref(("kind",)),
            sources={name: doc.ref((name,)) for name in model.model_fields_set - {"kind", "clusters"}},
        )
        for name in dict.fromkeys(model.clusters or list(clusters)):
            if name in result:
                problems.add(
                    doc.ref(("kind",)),
                    f"cluster {name} has more than one Policy (the other at {result[name].source}); merge them",
                )
            elif name in clusters:
                result[name] = policy
    return result


def _duration_ms(value: int | str | None) -> int | None:
    """A duration the document model checked (it parses), in milliseconds."""
    return value if not isinstance(value, str) else parse_duration_ms(value)
