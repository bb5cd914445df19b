"""The drift change log's cost: two observations of a large cluster, a small share of topics changed.

    python benchmarks/drift_changelog.py [--topics 10000] [--partitions 10] [--changed 0.01] [--repeat 5]

Two in-memory observations of one cluster are built as the live reader builds them (every topic
with Kafka's whole catalogue of topic configs, equal config objects shared, a topic-level
retention.ms on every topic, replication factor 3 over 6 brokers). In the second, `--changed` of
the topics moved, evenly spread over: a config set, a config changed, a reassigned partition,
partitions added, a topic deleted and another created; and as many other topics had leaders move
(counted without a diff). Then, in this process:

1. importing deepdiff (once per process; paid only when a topic changed),
2. `changelog.change_log(earlier, now)`, best of `--repeat`, with the number of DeepDiff calls,
3. the same on two equal observations (the fingerprint pass alone),
4. `drift_for_cluster` with and without the earlier observation, to set the change log against the
   report it is part of.

CPU seconds of this process (time.process_time). Not a test: figures depend on the machine.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from reconciler.kafka_configs import TOPIC_CONFIGS
from reconciler.models.desired import ClusterSpec, DesiredState, DesiredTopic
from reconciler.models.observed import (
    ConfigSource,
    ObservedConfig,
    ObservedPartition,
    ObservedState,
    ObservedTopic,
)

BROKERS = 6


def _configs(shared: dict, retention_ms: str, extra: dict[str, str] | None = None) -> dict[str, ObservedConfig]:
    def config(value: str | None, source: ConfigSource) -> ObservedConfig:
        key = (value, source)
        if key not in shared:
            shared[key] = ObservedConfig(value=value, source=source)
        return shared[key]

    out = {
        name: config(None if spec.default is None else str(spec.default), ConfigSource.DEFAULT_CONFIG)
        for name, spec in TOPIC_CONFIGS.items()
    }
    out["retention.ms"] = config(retention_ms, ConfigSource.DYNAMIC_TOPIC_CONFIG)
    for key, value in (extra or {}).items():
        out[key] = config(value, ConfigSource.DYNAMIC_TOPIC_CONFIG)
    return out


def _partitions(count: int, shift: int = 0, leader_moved: bool = False) -> list[ObservedPartition]:
    out = []
    for p in range(count):
        first = (p + shift) % BROKERS
        replicas = [first, (first + 1) % BROKERS, (first + 2) % BROKERS]
        leader = replicas[1] if leader_moved and p == 0 else replicas[0]
        out.append(
            ObservedPartition(
                partition=p,
                leader=leader,
                leader_epoch=3,
                replicas=replicas,
                isr=replicas,
                log_start_offset=0,
                high_watermark=1000 + p,
            )
        )
    return out


def observations(topics: int, partitions: int, changed: float) -> tuple[ObservedState, ObservedState, int]:
    """(earlier, now, how many topics moved in shape or configs)."""
    shared: dict = {}
    before, now = {}, {}
    step = max(1, round(1 / changed)) if changed > 0 else topics + 1
    moved = 0
    for i in range(topics):
        name = f"team{i % 50:02d}.events-{i:06d}"
        configs = _configs(shared, "604800000")
        before[name] = ObservedTopic(name=name, topic_id=f"id-{i}", partitions=_partitions(partitions, i), configs=configs)
        if i % step == 0:
            moved += 1
            kind = (i // step) % 6
            if kind == 0:
                now[name] = before[name].model_copy(update={"configs": _configs(shared, "604800000", {"segment.ms": "3600000"})})
            elif kind == 1:
                now[name] = before[name].model_copy(update={"configs": _configs(shared, "86400000")})
            elif kind == 2:
                parts = _partitions(partitions, i)
                parts[1] = parts[1].model_copy(update={"replicas": [5, 4, 3], "isr": [5, 4, 3], "leader": 5})
                now[name] = before[name].model_copy(update={"partitions": parts})
            elif kind == 3:
                now[name] = before[name].model_copy(update={"partitions": _partitions(partitions + 2, i)})
            elif kind == 4:
                continue  # deleted
            else:
                now[name] = before[name]
                now[f"{name}.v2"] = before[name].model_copy(update={"name": f"{name}.v2", "topic_id": f"id-{i}-v2"})
        elif i % step == step // 2:
            now[name] = before[name].model_copy(update={"partitions": _partitions(partitions, i, leader_moved=True)})
        else:
            now[name] = before[name]
    earlier = ObservedState(cluster="bench", cluster_id="c", topics=before)
    return earlier, ObservedState(cluster="bench", cluster_id="c", topics=dict(sorted(now.items()))), moved


def _cpu(fn, repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=10_000)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--changed", type=float, default=0.01)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    earlier, now, moved = observations(args.topics, args.partitions, args.changed)
    start = time.process_time()
    import deepdiff

    imported = time.process_time() - start

    from reconciler.drift import changelog
    from reconciler.drift.per_cluster import drift_for_cluster

    calls = []
    real = deepdiff.DeepDiff

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    deepdiff.DeepDiff = counting  # counts this process's calls only
    changed_cpu, log = _cpu(lambda: changelog.change_log(earlier, now), args.repeat)
    diffs = len(calls) // args.repeat
    calls.clear()
    same_cpu, same = _cpu(lambda: changelog.change_log(earlier, earlier), args.repeat)
    assert same == {} and not calls
    desired = DesiredState(
        cluster=ClusterSpec(name="bench", bootstrap_servers=["b:9092"]),
        topics={
            name: DesiredTopic(name=name, partitions=args.partitions, replication_factor=3, configs={"retention.ms": "604800000"})
            for name in list(earlier.topics)[: args.topics // 2]
        },
    )
    without_cpu, _ = _cpu(lambda: drift_for_cluster(desired, now), max(1, args.repeat // 2))
    with_cpu, report = _cpu(lambda: drift_for_cluster(desired, now, earlier), max(1, args.repeat // 2))
    entries = sum(len(v) for v in log.values())
    print(
        f"{args.topics:,} topics x {args.partitions} partitions, {len(TOPIC_CONFIGS)} configs each; "
        f"{moved} topics moved in shape or configs, {len(log):,} topics in the change log "
        f"({entries:,} entries), {diffs} DeepDiff calls\n"
    )
    print("| step | CPU s |\n|---|---:|")
    print(f"| import deepdiff (once per process, only when a topic moved) | {imported:.3f} |")
    print(f"| change_log, {args.changed:.0%} changed (best of {args.repeat}) | {changed_cpu:.3f} |")
    print(f"| change_log, nothing changed: fingerprints only | {same_cpu:.3f} |")
    print(f"| drift_for_cluster without an earlier observation | {without_cpu:.3f} |")
    print(f"| drift_for_cluster with it (data loss, retention, change log) | {with_cpu:.3f} |")
    assert report.counts.change_log == entries


if __name__ == "__main__":
    main()
