"""`reconcile idle`: the topics of a cluster shown idle for a while (docs/idle-topics.md), and with
`propose`, the manifest change that deletes them under the guard: an ordinary pull request whose
plan shows each deletion with its evidence.

Never called idle: internal topics, protected ones, those the Cluster document ignores or an
`--exclude` pattern matches (dead-letter and retry topics are often empty and still needed),
those the manifests already declare absent, and any whose evidence is not complete (listed as
unknown, with why). A declared topic that other clusters share is listed but not proposed: its
`state` is the same on every cluster.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from reconciler.adopt.idle_proposal import (
    Declared,
    IdleFindings,
    IdleTopic,
    Undeclared,
    candidates,
    classify,
    edit_declared,
    undeclared_file,
)
from reconciler.app.cluster_access import Connect
from reconciler.app.outcome import Outcome
from reconciler.errors import ManifestError, ReconcilerError
from reconciler.manifests import load_manifests
from reconciler.models.desired import DesiredState
from reconciler.models.observed import ObservedState
from reconciler.plan.read_scope import ReadScope
from reconciler.units import format_duration_ms


@dataclass(frozen=True)
class IdleOutcome:
    findings: IdleFindings
    kind: Outcome = Outcome.DONE


def find_idle(
    manifests_dir: str,
    cluster: str,
    connect: Connect,
    idle_for_ms: int | None = None,
    exclude: Sequence[str] = (),
    propose: bool = False,
) -> IdleOutcome:
    manifests = load_manifests(manifests_dir)
    desired = manifests.desired_state(cluster)
    threshold = idle_for_ms or desired.policy.deletions_require_idle_for_ms
    if threshold is None:
        raise ReconcilerError(
            f"how long a topic must have been idle is not said: pass --idle-for (e.g. 30d), or set the Policy's "
            f"deletions_require_idle_for for cluster {cluster}."
        )
    with connect(desired.cluster) as kafka:
        names = candidates(desired, kafka.observe_topics(None).topics, exclude)
        observed = kafka.observe_scope(
            ReadScope(topics=names, list_all=False, activity_topics=names, size_topics=names), sizes=True
        )
    shared = {n for other in manifests.cluster_names() if other != cluster for n in manifests.desired_state(other).topics}
    findings = classify(desired, observed.activity, threshold, shared, propose)
    if propose:
        findings = replace(
            findings, written=_write_proposal(Path(manifests_dir), cluster, desired, findings.idle, observed, threshold)
        )
    return IdleOutcome(findings)


def _write_proposal(
    root: Path, cluster: str, desired: DesiredState, idle: list[IdleTopic], observed: ObservedState, threshold: int
) -> list[str]:
    """Every file the proposal changes or adds, written only once the manifests with them load."""
    by_file: dict[str, list[Declared]] = {}
    undeclared = []
    for topic in idle:
        name = topic.evidence.topic
        source = desired.topics[name].source if topic.declared else None
        if not topic.proposed:
            continue
        if source is not None:
            by_file.setdefault(source.file, []).append(Declared(source.file, source.line, topic.evidence))
        else:
            have = observed.topics[name]
            rf = max((len(p.replicas) for p in have.partitions), default=1)
            undeclared.append(Undeclared(topic.evidence, len(have.partitions), rf))
    texts = {
        file: edit_declared((root / file).read_text(encoding="utf-8"), topics, threshold)
        for file, topics in sorted(by_file.items())
    }
    if undeclared:
        new = f"idle-{cluster}-{format_duration_ms(threshold)}.yaml"
        if (root / new).exists():
            raise ReconcilerError(f"{root / new} exists already (an earlier proposal?): merge or remove it, then run again.")
        texts[new] = undeclared_file(cluster, undeclared, threshold, undeclared[0].evidence.read_at_ms)
    with tempfile.TemporaryDirectory() as scratch:
        trial = Path(scratch) / "manifests"
        shutil.copytree(root, trial)
        for file, text in texts.items():
            (trial / file).write_text(text, encoding="utf-8")
        try:
            load_manifests(trial)
        except ManifestError as e:
            raise ReconcilerError(f"the proposal would not load, so nothing was written: {e}") from None
    for file, text in texts.items():
        (root / file).write_text(text, encoding="utf-8")
    return [str(root / file) for file in texts]
