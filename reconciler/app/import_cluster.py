"""`reconcile import`: manifests written for the topics a cluster already has, and checked to
plan empty before anything is written."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from reconciler.adopt.importer import GroupBy, ImportOptions, ImportResult, import_cluster
from reconciler.app.cluster_access import Connect
from reconciler.app.outcome import Outcome
from reconciler.errors import ManifestError, ReconcilerError, shown
from reconciler.manifests import load_manifests
from reconciler.models.desired import ClusterSpec
from reconciler.models.observed import ObservedState
from reconciler.models.plan import Severity
from reconciler.plan.planner import plan as make_plan


@dataclass(frozen=True)
class ImportOutcome:
    result: ImportResult
    dry_run: bool  # nothing was written: the files to write are `result.to_write()`
    kind: Outcome = Outcome.DONE


def import_manifests(
    manifests_dir: str,
    cluster: str | None,
    snapshot: str | None,
    connect: Connect,
    bootstrap_servers: Sequence[str] = (),
    topics: str | None = None,
    exclude: Sequence[str] = (),
    group_by: GroupBy = "prefix",
    overwrite: bool = False,
    dry_run: bool = False,
    now: datetime | None = None,
) -> ImportOutcome:
    """From `snapshot` when given, else from the live `cluster` (a cluster the manifests do not
    declare yet is reached with `bootstrap_servers`, and gets a Cluster document)."""
    root = Path(manifests_dir)
    if root.exists() and not root.is_dir():
        raise ReconcilerError(f"{manifests_dir} is a file; import writes into a manifest directory.")
    if not cluster and not snapshot:
        raise ReconcilerError("give --cluster NAME to read a live cluster, or --snapshot FILE.")
    files = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()) if root.is_dir() else []
    # Validated first: what counts as already managed is only known from manifests that load.
    manifests = load_manifests(root) if files else None
    existing = {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in files}
    servers = tuple(s for s in bootstrap_servers if s)
    if snapshot:
        from reconciler.files.snapshot import load_snapshot

        observed = load_snapshot(snapshot)  # JSON or Parquet, checked; refused whole if bad
        # A cluster the manifests do not declare yet is what import is for: it writes its Cluster document.
        if cluster and cluster != observed.cluster:
            raise ReconcilerError(f"{snapshot} is a snapshot of cluster {shown(observed.cluster)}, not {shown(cluster)}.")
    else:
        assert cluster is not None  # checked above: a cluster or a snapshot
        spec = manifests.clusters.get(cluster) if manifests else None
        if spec is None:
            if not servers:
                raise ReconcilerError(
                    f"the manifests in {manifests_dir} have no cluster named {cluster!r}; pass --bootstrap-servers "
                    "host:port to read it (the import then writes a Cluster document for it)."
                )
            spec = ClusterSpec(name=cluster, bootstrap_servers=list(servers))
        with connect(spec) as kafka:
            observed = kafka.observe_topics()
        if observed.cluster != cluster:
            observed = observed.model_copy(update={"cluster": cluster})
    options = ImportOptions(
        topics=topics,
        exclude=tuple(exclude),
        group_by=group_by,
        overwrite=overwrite,
        bootstrap_servers=servers,
        live=not snapshot,
        now=now or datetime.now(timezone.utc),
    )
    result = import_cluster(observed, manifests, existing, options)
    verify_import(existing, result, observed)
    if not dry_run:
        for path, text in result.to_write().items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return ImportOutcome(result=result, dry_run=dry_run)


def verify_import(existing: dict[str, str], result: ImportResult, observed: ObservedState) -> None:
    """Load the manifests as they will be after the import and plan them against what was read:
    the imported topics must plan empty. Nothing is written when they do not."""
    with tempfile.TemporaryDirectory(prefix="reconcile-import-") as tmp:
        for path, text in {**existing, **result.files}.items():
            (Path(tmp) / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / path).write_text(text, encoding="utf-8")
        try:
            after = load_manifests(tmp)
        except ManifestError as e:
            raise ReconcilerError(
                "nothing was written: with the imported files the manifests would not load. Leave the topics "
                "concerned out with --exclude, or change the manifests, then import again.\n" + str(e)
            ) from e
    planned = make_plan(after.desired_state(observed.cluster), observed)
    left = [f"{a.topic}: {a.kind} ({a.reason})" for a in planned.actions if a.topic in result.topics]
    left += [f"{d.topic}: {d.message}" for d in planned.diagnostics if d.severity is Severity.ERROR and d.topic in result.topics]
    if left:
        raise ReconcilerError(
            "nothing was written: the imported topics would not plan empty, which is a bug in "
            "reconcile import; please report it with this list:\n  " + "\n  ".join(left)
        )
