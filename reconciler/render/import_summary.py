"""The summary `reconcile import` prints: what was (or would be) written, skipped and left out."""

from __future__ import annotations

from reconciler.adopt.importer import ImportResult
from reconciler.errors import noun


def import_summary(
    result: ImportResult, manifests_dir: str, snapshot: str | None, dry_run: bool, topics_regex: str | None
) -> str:
    will = "would write" if dry_run else "wrote"
    lines = [
        f"{result.cluster}: {len(result.topics)} {noun(len(result.topics), 'topic')} imported"
        f"{' (dry run)' if dry_run else ''} into {manifests_dir}"
    ]
    by_file: dict[str, list[str]] = {}
    for topic, path in result.topics.items():
        by_file.setdefault(path, []).append(topic)
    for path in result.files:
        what = "Cluster document" if path == result.cluster_file else ", ".join(sorted(by_file.get(path, [])))
        verb = "unchanged" if path in result.unchanged else ("replaced" if path in result.replaced else will)
        lines.append(f"  {verb} {path}: {what}")
    if result.dropped:
        lines.append("Dropped from the replaced files:")
        lines += [f"  {d}" for d in result.dropped]
    filtered = [s for s in result.skipped if s.reason == "filtered"]
    listed = [s for s in result.skipped if s.reason != "filtered"]
    if listed or filtered:
        lines.append(f"Skipped {len(result.skipped)}:")
        lines += [f"  {s.topic}: {s.detail}" for s in listed]
        if filtered:
            lines.append(f"  {len(filtered)} {noun(len(filtered), 'topic')} not matching --topics {topics_regex!r}")
    if result.left_out:
        lines.append("Set on the topic but not declared:")
        lines += [f"  {x.topic}: {x.key}: {x.why}" for x in result.left_out]
    if result.topics and not dry_run:
        source = f"--snapshot {snapshot}" if snapshot else f"--cluster {result.cluster}"
        lines.append(f"Next: `reconcile plan {manifests_dir} {source}` shows no changes for the imported topics.")
    return "\n".join(lines) + "\n"
