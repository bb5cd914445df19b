"""Applying truncations: wall and CPU seconds, and requests, of one apply that truncates many topics.

    python benchmarks/apply_truncations.py [--topics 19] [--partitions 49] [--delete-wait 0.5] [--latency 0.01] [--repeat 3]

A fresh 3-broker test cluster per run, lagging as a real one does (Metadata and DescribeConfigs
show a write 0.1/0.2/0.3 s late per broker), holds `--topics` topics with `--partitions`
partitions between them (spread over the brokers' leaders), each with a keep_last rule. The plan
is made, then `apply_plan` is timed. `--delete-wait` holds each DeleteRecords that long: a real
leader answers once the followers have the new log start, which they learn on their next fetch
(up to replica.fetch.wait.max.ms, 500 ms by default, when the partition is idle). `--latency`
holds every OffsetForLeaderEpoch and ListOffsets request that long, as a network round trip
would. CPU seconds are this process's (the in-process brokers included). Not a test: timings
depend on the machine; compare two commits by running this in each worktree alternately, with
PYTHONPATH set to the worktree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

OFFSET_FOR_LEADER_EPOCH, DELETE_RECORDS, LIST_OFFSETS = 23, 21, 2


def one_run(topics: int, partitions: int, delete_wait: float, latency: float) -> tuple[float, float, Counter]:
    from reconciler.apply.executor import apply_plan
    from reconciler.kafka.connection import connect
    from reconciler.manifests import load_manifests
    from reconciler.plan.planner import plan as make_plan
    from reconciler.testing import TestCluster

    counts = [partitions // topics + (i < partitions % topics) for i in range(topics)]
    names = [f"cut-{i:03d}" for i in range(topics)]
    with TestCluster(brokers=3, metadata_propagation_delay=(0.1, 0.2, 0.3)) as c, tempfile.TemporaryDirectory() as root:
        for name, n in zip(names, counts, strict=True):
            c.create_topic(name, partitions=n, replication_factor=3)
            c.produce_many({(name, p): 100 for p in range(n)}, timestamp_ms=1_700_000_000_000, step_ms=1000)
        Path(root, "cluster.yaml").write_text(
            f"kind: Cluster\nname: bench\nbootstrap_servers: [{c.bootstrap_servers}]\ndefaults: {{replication_factor: 3}}\n"
        )
        Path(root, "topics.yaml").write_text(
            "---\n".join(
                f"kind: Topic\nname: {name}\npartitions: {n}\ntruncate: [{{keep_last: 10}}]\n"
                for name, n in zip(names, counts, strict=True)
            )
        )
        desired = load_manifests(root).desired_state("bench")
        with connect(desired.cluster) as kafka:
            plan = make_plan(desired, kafka.observe_desired(desired))
            for api, seconds in ((DELETE_RECORDS, delete_wait), (OFFSET_FOR_LEADER_EPOCH, latency), (LIST_OFFSETS, latency)):
                if seconds:
                    c.delay(api_key=api, seconds=seconds)
            c.clear_request_log()
            cpu, wall = sum(os.times()[:2]), time.perf_counter()
            result = apply_plan(plan, kafka, desired)
            wall, cpu = time.perf_counter() - wall, sum(os.times()[:2]) - cpu
        assert all(o.status.value == "applied" for o in result.outcomes), result
        return wall, cpu, Counter(r.api_name for r in c.request_log)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=19)
    parser.add_argument("--partitions", type=int, default=49)
    parser.add_argument("--delete-wait", type=float, default=0.5, help="seconds each DeleteRecords is held")
    parser.add_argument("--latency", type=float, default=0.01, help="seconds each fence and log-start read is held")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    walls, cpus = [], []
    for _ in range(args.repeat):
        wall, cpu, counts = one_run(args.topics, args.partitions, args.delete_wait, args.latency)
        walls.append(wall)
        cpus.append(cpu)
    print(
        f"{args.topics} topics, {args.partitions} partitions, delete wait {args.delete_wait} s, latency {args.latency} s: apply "
        f"wall {statistics.median(walls):.2f} s, CPU {statistics.median(cpus):.2f} s (median of {args.repeat}); "
        f"OffsetForLeaderEpoch {counts['OffsetForLeaderEpoch']}, DeleteRecords {counts['DeleteRecords']}, "
        f"ListOffsets {counts['ListOffsets']}, Metadata {counts['Metadata']}"
    )


if __name__ == "__main__":
    main()
