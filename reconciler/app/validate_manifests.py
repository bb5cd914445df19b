"""`reconcile validate` and `reconcile schema`: the manifests checked offline, and their JSON Schema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reconciler.app.outcome import Outcome
from reconciler.manifests import load_manifests, manifest_json_schema


@dataclass(frozen=True)
class ValidateOutcome:
    files: int
    clusters: int
    topics: int  # distinct topic names over all clusters
    kind: Outcome = Outcome.DONE


@dataclass(frozen=True)
class SchemaOutcome:
    schema: dict[str, Any]
    kind: Outcome = Outcome.DONE


def validate_manifests(manifests_dir: str) -> ValidateOutcome:
    """Raises ManifestError with every problem, policy violations included."""
    manifests = load_manifests(manifests_dir)
    topics = {t for name in manifests.cluster_names() for t in manifests.desired_state(name).topics}
    return ValidateOutcome(files=len(manifests.files), clusters=len(manifests.clusters), topics=len(topics))


def manifest_schema() -> SchemaOutcome:
    return SchemaOutcome(manifest_json_schema())
