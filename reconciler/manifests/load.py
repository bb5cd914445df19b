"""Loading manifests: a directory of YAML files -> one DesiredState per cluster.

Every problem is collected with its file, line and column, and all of them are raised together
as one ManifestError, so a pull request shows every mistake at once. Every value a message
quotes is cut to a readable length (errors.shown), and no value of a security secret field is
ever shown.
"""

from __future__ import annotations

from pathlib import Path

from reconciler.errors import ManifestError, ReconcilerError
from reconciler.manifests.files import read_manifests
from reconciler.manifests.owners import Owners
from reconciler.manifests.problems import Problems
from reconciler.manifests.resolve import Resolver
from reconciler.models.desired import ClusterSpec, DesiredState, SourceRef


class Manifests:
    """All clusters' desired state, resolved and checked."""

    def __init__(
        self,
        files: list[str],
        clusters: dict[str, ClusterSpec],
        states: dict[str, DesiredState],
        default_configs: dict[str, dict[str, str]] | None = None,
        owners: Owners | None = None,
    ):
        self.files = files
        self.clusters = clusters
        self._states = states
        # Per cluster, its Cluster document's `defaults.configs`, normalised. Every topic on the
        # cluster declares these unless it sets its own value, so `reconcile import` must know
        # them to write manifests that plan empty.
        self.default_configs = default_configs or {}
        self._owners = owners

    def owner_by_rules(self, topic: str) -> str | None:
        """The Team whose rules claim a topic of this name (docs/teams.md), or None."""
        return self._owners.by_rules(topic) if self._owners is not None else None

    def cluster_names(self) -> list[str]:
        return sorted(self.clusters)

    def desired_state(self, cluster: str) -> DesiredState:
        if cluster not in self._states:
            raise ReconcilerError(
                f"the manifests declare no cluster named {cluster!r} (known: {', '.join(self.cluster_names()) or 'none'}); "
                "add a `kind: Cluster` document or use one of those names."
            )
        return self._states[cluster]


def load_manifests(path: str | Path) -> Manifests:
    root = Path(path)
    if not root.exists():
        raise ReconcilerError(
            f"manifest directory {path} does not exist; pass the directory that holds your *.yaml manifests (default: manifests)."
        )
    problems = Problems()
    files, docs = read_manifests(root, problems)
    if not files and not problems.found:
        problems.add(SourceRef(file=str(path), line=1), "no *.yaml or *.yml files found")
    resolver = Resolver(problems)
    for doc in docs:
        resolver.add(doc)
    states = resolver.resolve()
    if problems.found:
        raise ManifestError(problems.found)
    return Manifests(
        [str(f) for f in files], {n: s.cluster for n, s in states.items()}, states, resolver.default_configs, resolver.owners
    )
