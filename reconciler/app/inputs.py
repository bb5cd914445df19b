"""Checks the use cases share on what they were given: which cluster, a snapshot that fits, and
the Git commit the manifests are at."""

from __future__ import annotations

import subprocess
from pathlib import Path

from reconciler.errors import ReconcilerError, SnapshotError, shown, shown_text
from reconciler.manifests import Manifests
from reconciler.models.observed import ObservedState


def require_cluster(manifests: Manifests, cluster: str | None) -> str:
    if not cluster:
        raise ReconcilerError(
            "name the cluster with --cluster NAME (known: "
            + ", ".join(manifests.cluster_names())
            + "), or plan against a saved snapshot with --snapshot FILE."
        )
    return cluster


def snapshot_for(manifests: Manifests, path: str | Path, cluster: str | None = None) -> ObservedState:
    """The snapshot in `path` (JSON or Parquet, checked: refused whole if bad), of `cluster` when
    given and of a cluster the manifests declare; SnapshotError naming the file otherwise."""
    from reconciler.files.snapshot import load_snapshot

    observed = load_snapshot(path)
    if cluster and cluster != observed.cluster:
        raise SnapshotError(
            f"{path} is a snapshot of cluster {shown(observed.cluster)}, not {shown(cluster)}; "
            "pass the matching --cluster or another snapshot."
        )
    known = manifests.cluster_names()
    if observed.cluster not in known:
        raise SnapshotError(
            f"{path} is a snapshot of cluster {shown(observed.cluster)}, which the manifests do not declare "
            f"(known: {shown_text(', '.join(known), 300) or 'none'}); add a `kind: Cluster` document for it, or use a "
            "snapshot of a declared cluster."
        )
    return observed


def snapshot_to_plan_on(manifests: Manifests, path: str | Path, cluster: str | None = None) -> ObservedState:
    """`snapshot_for`, without the snapshot's evidence of idleness (`ObservedState.to_plan_on`)."""
    return snapshot_for(manifests, path, cluster).to_plan_on()


def manifests_commit(manifests_dir: str | Path) -> str | None:
    """The Git commit checked out where the manifests are (HEAD), or None: not in a repository, no
    commit yet, or no git. Recorded in a plan for the reader; the digest is what binds it."""
    try:
        found = subprocess.run(
            ["git", "-C", str(manifests_dir), "rev-parse", "--verify", "--quiet", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = found.stdout.strip()
    return commit if found.returncode == 0 and commit else None
