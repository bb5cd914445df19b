"""Documents -> one DesiredState per cluster, and every check that needs more than one document:
a name defined twice, references (to clusters, templates, shared rules), a topic declared twice
for one cluster, topic names that collide, settings that clash once merged, the policy.

What one document can get wrong on its own was refused by its model (reconciler.manifests.validate).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

from reconciler import kafka_configs
from reconciler.errors import shown, shown_text
from reconciler.manifests.clusters import cluster_policies, cluster_spec, unknown_clusters
from reconciler.manifests.config_values import ConfigReader
from reconciler.manifests.documents import (
    ClusterDoc,
    PolicyDoc,
    TeamDoc,
    TopicDoc,
    TopicOverride,
    TopicTemplateDoc,
    TruncationRuleDoc,
)
from reconciler.manifests.merge import Layer, Merged, merge
from reconciler.manifests.owners import Owners
from reconciler.manifests.problems import Problems
from reconciler.manifests.rules import Rules
from reconciler.manifests.validate import Entry, check_document, declares_cluster
from reconciler.manifests.yaml_source import YamlDocument
from reconciler.models.desired import ClusterSpec, DesiredState, DesiredTopic, Policy, SourceRef, TopicState
from reconciler.plan.policy import check_desired

D = TypeVar("D", ClusterDoc, TruncationRuleDoc, TopicTemplateDoc)
_SIZES = frozenset({"partitions", "replication_factor"})  # a topic without both is not planned


class Resolver:
    def __init__(self, problems: Problems):
        self.problems = problems
        self.configs = ConfigReader(problems)
        self.clusters: dict[str, Entry[ClusterDoc]] = {}
        self.policies: list[Entry[PolicyDoc]] = []
        self.rules: dict[str, Entry[TruncationRuleDoc]] = {}
        self.templates: dict[str, Entry[TopicTemplateDoc]] = {}
        self.topics: list[Entry[TopicDoc]] = []
        self.teams: list[Entry[TeamDoc]] = []
        self.owners: Owners | None = None  # made by resolve()
        # Per cluster, its Cluster document's `defaults.configs`, normalised.
        self.default_configs: dict[str, dict[str, str]] = {}
        self._defaults: dict[str, Layer] = {}  # per cluster, the lowest layer of every topic on it
        self.cluster_documents = 0  # valid or not: an invalid one is reported as such, not as missing

    def add(self, doc: YamlDocument) -> None:
        if declares_cluster(doc):
            self.cluster_documents += 1
        entry = check_document(doc, self.problems)
        if entry is None:
            return
        model = entry.model
        if isinstance(model, TopicDoc):  # most documents
            self.topics.append(entry.of(model))
        elif isinstance(model, ClusterDoc):
            self._unique(self.clusters, model.name, entry.of(model), "cluster")
        elif isinstance(model, PolicyDoc):
            self.policies.append(entry.of(model))
        elif isinstance(model, TruncationRuleDoc):
            self._unique(self.rules, model.name, entry.of(model), "truncation rule")
        elif isinstance(model, TopicTemplateDoc):
            self._unique(self.templates, model.name, entry.of(model), "topic template")
        elif isinstance(model, TeamDoc):
            self.teams.append(entry.of(model))

    def _unique(self, table: dict[str, Entry[D]], name: str, entry: Entry[D], what: str) -> None:
        if name in table:
            first = table[name].doc.ref(("name",))
            self.problems.add(entry.doc.ref(("name",)), f"duplicate {what} {shown(name)} (also defined at {first})")
        else:
            table[name] = entry

    def resolve(self) -> dict[str, DesiredState]:
        if not self.cluster_documents:
            self.problems.add(SourceRef(file="<manifests>", line=1), "no `kind: Cluster` document: declare at least one cluster")
        clusters = {name: cluster_spec(entry, self.problems) for name, entry in sorted(self.clusters.items())}
        policies = cluster_policies(self.policies, self.clusters, self.configs, self.problems)
        rules = Rules(self.rules, self.problems)
        owners = self.owners = Owners(self.teams, self.problems)
        topics: dict[str, dict[str, DesiredTopic]] = {name: {} for name in clusters}
        places: dict[tuple[str, str], SourceRef] = {}
        for entry in self.topics:
            for cluster_name, topic in self._topic(entry, clusters, rules, owners):
                ref = topic.source or entry.doc.ref(("name",))
                if (cluster_name, topic.name) in places:
                    self.problems.add(
                        ref,
                        f"topic {shown(topic.name)} is declared twice for cluster {cluster_name} "
                        f"(also at {places[(cluster_name, topic.name)]})",
                    )
                    continue
                places[(cluster_name, topic.name)] = ref
                topics[cluster_name][topic.name] = topic
        rules.check_shared()
        states = {}
        for name, spec in clusters.items():
            cluster = self.clusters[name]
            self.default_configs[name] = dict(
                sorted(self.configs.configs(cluster.doc, ("defaults", "configs"), cluster.model.defaults.configs).items())
            )
            self._collisions(name, topics[name])
            states[name] = DesiredState(
                cluster=spec, topics=dict(sorted(topics[name].items())), policy=policies.get(name, Policy()), teams=owners.teams
            )
        for state in states.values():
            for problem in check_desired(state):
                self.problems.add_problem(problem)
        return states

    def _topic(
        self, entry: Entry[TopicDoc], clusters: dict[str, ClusterSpec], rules: Rules, owners: Owners
    ) -> Iterator[tuple[str, DesiredTopic]]:
        doc, topic = entry.doc, entry.model
        unknown_clusters(entry, topic.clusters, self.clusters, self.problems)
        if entry.is_refused(("clusters",)):
            return  # which clusters it is on is not known (reported)
        template = None
        if topic.template is not None:
            template = self.templates.get(topic.template)
            if template is None:
                self.problems.add(
                    doc.ref(("template",)),
                    f"unknown topic template {shown(topic.template)}"
                    + self.problems.did_you_mean(topic.template, self.templates),
                )
        names = list(self.clusters) if topic.clusters in (None, "all") else list(topic.clusters)
        for name in topic.overrides:
            if name not in self.clusters:
                self.problems.add(
                    doc.ref(("overrides", name), key=True),
                    f"override for unknown cluster {shown(name)}" + self.problems.did_you_mean(name, self.clusters),
                )
            elif name not in names:
                self.problems.add(
                    doc.ref(("overrides", name), key=True),
                    f"override for cluster {shown(name)}, which topic {shown_text(topic.name)} is not on",
                )
        owner = owners.owner_of(entry, template)
        shared: list[Layer] | None = None  # the template's and the topic's layers: the same on every cluster
        for name in names:
            if name not in clusters:
                continue
            layers = [self._defaults_layer(name)]  # lowest first (reconciler.manifests.merge)
            if shared is None:
                shared = self._shared_layers(entry, template)
            layers += shared
            override = self._override_layer(entry, name)
            if override is not None:
                layers.append(override)
            merged = merge(layers)
            if merged.refused and not merged.refused.isdisjoint(_SIZES):
                continue  # reported where the refused value is written
            if merged.partitions is None or merged.replication_factor is None:
                for what, value in (("partitions", merged.partitions), ("replication_factor", merged.replication_factor)):
                    if value is None:
                        self.problems.add(
                            doc.ref(("name",)),
                            f"topic {shown_text(topic.name)} has no {what} for "
                            f"cluster {shown_text(name)}: set it on the topic or in "
                            "the cluster's defaults",
                        )
                continue
            if merged.state is TopicState.PRESENT:
                self._clashes(topic.name, name, merged)
                if merged.delete_only_if_idle_for is not None:
                    self.problems.add(
                        merged.set_at("delete_only_if_idle_for").ref(),
                        f"topic {shown_text(topic.name)} on cluster {shown_text(name)} has delete_only_if_idle_for "
                        "but is not declared `state: absent`: the guard only holds back a deletion; remove it, "
                        "or write state: absent to delete the topic once it is idle",
                    )
            truncate = []
            if merged.truncate:
                at = merged.set_at("truncate")
                truncate = rules.for_topic(at.entry, at.path, merged.truncate, merged.partitions, topic.name)
            yield (
                name,
                DesiredTopic.resolved(
                    name=topic.name,
                    state=merged.state,
                    partitions=merged.partitions,
                    replication_factor=merged.replication_factor,
                    configs=dict(sorted(merged.configs.items())),
                    undeclared_configs=merged.undeclared_configs,
                    protected=merged.protected,
                    retention_stepping=merged.retention_stepping,
                    replica_assignment={p: list(brokers) for p, brokers in merged.replica_assignment.items()}
                    if merged.replica_assignment
                    else {},
                    truncate=truncate,
                    source=doc.ref(("name",)),
                    expected_bytes_per_day=merged.expected_bytes_per_day,
                    delete_only_if_idle_for_ms=merged.delete_only_if_idle_for,
                    owner=owner,
                ),
            )

    def _defaults_layer(self, cluster: str) -> Layer:
        """The lowest layer of every topic on `cluster`: its Cluster document's `defaults`."""
        layer = self._defaults.get(cluster)
        if layer is None:
            entry = self.clusters[cluster]
            layer = self._defaults[cluster] = Layer(
                entry,
                ("defaults",),
                entry.model.defaults,
                self.configs.configs(entry.doc, ("defaults", "configs"), entry.model.defaults.configs),
            )
        return layer

    def _shared_layers(self, entry: Entry[TopicDoc], template: Entry[TopicTemplateDoc] | None) -> list[Layer]:
        """The layers of `entry` between a cluster's defaults and its override, the same on every
        cluster: its template's and its own."""
        read = self.configs.configs
        layers = (
            []
            if template is None
            else [Layer(template, (), template.model, read(template.doc, ("configs",), template.model.configs))]
        )
        layers.append(Layer(entry, (), entry.model, read(entry.doc, ("configs",), entry.model.configs)))
        return layers

    def _override_layer(self, entry: Entry[TopicDoc], cluster: str) -> Layer | None:
        """The highest layer of `entry` on `cluster`: its override for the cluster, if it has one."""
        override = entry.model.overrides.get(cluster)
        if override is None and not entry.is_refused(("overrides", cluster)):
            return None
        path = ("overrides", cluster)
        override = override or TopicOverride()
        return Layer(entry, path, override, self.configs.configs(entry.doc, path + ("configs",), override.configs))

    def _clashes(self, topic: str, cluster: str, merged: Merged) -> None:
        """Settings that are valid one by one, but not together on this cluster once merged."""
        rf = merged.replication_factor
        min_isr = merged.configs.get("min.insync.replicas")
        policy = merged.configs.get("cleanup.policy")
        if not (
            (min_isr is not None and rf is not None) or merged.replica_assignment or (policy is not None and merged.truncate)
        ):
            return  # nothing that could clash (most topics)
        named = f"topic {shown_text(topic)} on cluster {shown_text(cluster)}"
        if rf is not None and min_isr is not None and int(min_isr) > rf:
            # At the one of the two set last in the merge order: the change that made them clash.
            isr_at, rf_at = merged.config_set_at("min.insync.replicas"), merged.set_at("replication_factor")
            here, other = (
                (isr_at, ("replication_factor", rf_at)) if isr_at.rank >= rf_at.rank else (rf_at, ("min.insync.replicas", isr_at))
            )
            self.problems.add(
                here.ref(),
                f"{named}: min.insync.replicas {min_isr} is above its replication_factor "
                f"{rf} ({other[0]} set at {other[1].ref()}), so every write with acks=all "
                f"would fail; set min.insync.replicas to at most {rf} or raise "
                "replication_factor",
            )
        if merged.replica_assignment and rf is not None and merged.partitions is not None:
            self._assignment_clashes(named, merged, rf, merged.partitions)
        if policy is not None and merged.truncate and not kafka_configs.cleanup_policy_allows_delete(policy):
            self.problems.add(
                merged.set_at("truncate").ref(),
                f"{named} has truncation rules, but its cleanup.policy is {shown_text(policy)} (set at "
                f"{merged.config_set_at('cleanup.policy').ref()}), and Kafka deletes records only from "
                "topics whose cleanup.policy includes delete; write cleanup.policy: compact,delete or "
                "remove the rules",
            )

    def _assignment_clashes(self, named: str, merged: Merged, rf: int, partitions: int) -> None:
        at = merged.set_at("replica_assignment")
        for partition, brokers in sorted(merged.replica_assignment.items()):
            where = at.entry.doc.ref(at.path + (partition,))
            if partition >= partitions:
                self.problems.add(
                    where,
                    f"{named}: replica_assignment pins partition {partition}, but the topic has "
                    f"{partitions} partition(s) (0 to {partitions - 1}); remove it or raise partitions",
                )
            elif len(brokers) != rf:
                self.problems.add(
                    where,
                    f"{named}: replica_assignment of partition {partition} lists {len(brokers)} "
                    f"broker(s) and the replication_factor is {rf}; list exactly {rf}",
                )

    def _collisions(self, cluster: str, topics: dict[str, DesiredTopic]) -> None:
        seen: dict[str, str] = {}
        for name in sorted(topics):
            folded = name.replace(".", "_")
            if folded in seen:
                self.problems.add(
                    topics[name].source or SourceRef(file="<manifests>", line=1),
                    f"topics {shown(seen[folded])} and {shown(name)} collide on cluster "
                    f"{shown_text(cluster)}: Kafka treats '.' and '_' as the same in metric names "
                    "and refuses one",
                )
            else:
                seen[folded] = name
