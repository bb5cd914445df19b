"""Reading a cluster: wall time and requests of observe_desired as the number of topics grows.

    python benchmarks/read_cluster.py [--topics 100 1000 10000] [--partitions 6] [--sizes]

Each size gets a fresh 3-broker test cluster in a child process (so the brokers' work does not
share the reader's interpreter lock), seeded with that many topics, every one managed with a
keep_last rule; every tenth also has a before_time rule and every tenth a consumed_by rule. The
reader connects, warms its connections up, then runs observe_desired --repeat times. Requests
are counted by the brokers. Not a test: timings depend on the machine. benchmarks/plan_cluster.py
seeds the same way (`Brokers`); this module imports the reconciler only where it is used, so that
its children measure their own imports.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import time
from collections import Counter
from datetime import datetime, timezone
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reconciler.models.desired import DesiredState

T0 = 1_700_000_000_000
GROUP = "bench-consumers"
APIS = ["Metadata", "DescribeConfigs", "ListOffsets", "OffsetForLeaderEpoch", "FindCoordinator", "OffsetFetch", "DescribeLogDirs"]


def names(topics: int) -> list[str]:
    return [f"svc{i % 50:02d}.events-{i:05d}" for i in range(topics)]


def serve(pipe, topics: int, partitions: int, replication_factor: int) -> None:
    """The brokers, in their own process: seed, report the address, answer log queries ("clear",
    "counts") and "usage" (this process's user and system CPU seconds so far, peak RSS in KiB)."""
    from reconciler.testing import TestCluster

    with TestCluster(brokers=3) as cluster:
        for name in names(topics):
            cluster.create_topic(
                name, partitions=partitions, replication_factor=replication_factor, configs={"retention.ms": "604800000"}
            )
        cluster.produce_many({(name, p): 200 for name in names(topics) for p in range(partitions)}, timestamp_ms=T0, step_ms=1000)
        cluster.commit_offsets(GROUP, {(name, p): 150 for name in names(topics)[::10] for p in range(partitions)})
        pipe.send(cluster.bootstrap_servers)
        while True:
            command = pipe.recv()
            if command == "clear":
                cluster.clear_request_log()
                pipe.send(None)
            elif command == "counts":
                pipe.send(Counter(r.api_name for r in cluster.request_log))
            elif command == "usage":
                times = os.times()
                pipe.send((times.user, times.system, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
            else:
                return


def desired(bootstrap: str, topics: int, partitions: int, replication_factor: int) -> DesiredState:
    from reconciler.models.desired import BeforeTime, ClusterSpec, ConsumedBy, DesiredState, DesiredTopic, KeepLast

    cut = datetime.fromtimestamp((T0 + 50_000) / 1000, timezone.utc)
    wanted = {}
    for i, name in enumerate(names(topics)):
        rules = [KeepLast(records=100)]
        if i % 10 == 0:
            rules.append(ConsumedBy(groups=[GROUP]))
        if i % 10 == 5:
            rules.append(BeforeTime(timestamp=cut))
        wanted[name] = DesiredTopic(
            name=name,
            partitions=partitions,
            replication_factor=replication_factor,
            configs={"retention.ms": "604800000"},
            truncate=rules,
        )
    return DesiredState(cluster=ClusterSpec(name="bench", bootstrap_servers=bootstrap.split(",")), topics=wanted)


class Brokers:
    """A seeded test cluster served by a child process (see `serve`); use as a context manager."""

    def __init__(self, topics: int, partitions: int, replication_factor: int):
        self._pipe, there = multiprocessing.Pipe()
        self.process = multiprocessing.Process(target=serve, args=(there, topics, partitions, replication_factor))

    def __enter__(self) -> Brokers:
        self.process.start()
        self.bootstrap_servers = self._pipe.recv()
        return self

    def __exit__(self, *exc) -> None:
        self._pipe.send("stop")
        self.process.join(timeout=60)

    def ask(self, command: str):
        self._pipe.send(command)
        return self._pipe.recv()


def measure(topics: int, partitions: int, replication_factor: int, repeat: int, sizes: bool) -> dict:
    from reconciler.kafka.connection import connect

    with Brokers(topics, partitions, replication_factor) as brokers:
        state = desired(brokers.bootstrap_servers, topics, partitions, replication_factor)
        walls, cpus, counts = [], [], None
        with connect(state.cluster, bootstrap_timeout_s=30, request_timeout_s=120) as kafka:
            kafka.supports_epoch_fencing()  # connections to every broker exist before timing
            for _ in range(repeat):
                brokers.ask("clear")
                wall, cpu = time.perf_counter(), time.process_time()
                observed = kafka.observe_desired(state, sizes=sizes)
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
                counts = brokers.ask("counts")
        assert sum(len(t.partitions) for n, t in observed.topics.items() if n in state.topics) == topics * partitions
        return {
            "topics": topics,
            "partitions": topics * partitions,
            "wall": statistics.median(walls),
            "cpu": statistics.median(cpus),
            "counts": counts,
        }


def table(rows: list[dict]) -> str:
    apis = [a for a in APIS if any(r["counts"].get(a) for r in rows)]
    head = ["topics", "partitions", "observe s", "reader CPU s", "requests"] + apis
    lines = [
        [f"{r['topics']:,}", f"{r['partitions']:,}", f"{r['wall']:.2f}", f"{r['cpu']:.2f}", str(sum(r["counts"].values()))]
        + [str(r["counts"].get(a, 0)) for a in apis]
        for r in rows
    ]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(head)]
    out = [" | ".join(h.rjust(w) for h, w in zip(head, widths)), "-+-".join("-" * w for w in widths)]
    out += [" | ".join(c.rjust(w) for c, w in zip(line, widths)) for line in lines]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--partitions", type=int, default=6, help="partitions per topic")
    parser.add_argument("--replication-factor", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="observations per size (the median is shown)")
    parser.add_argument("--sizes", action="store_true", help="also read partition sizes (DescribeLogDirs)")
    args = parser.parse_args()
    rows = []
    for topics in args.topics:
        rows.append(measure(topics, args.partitions, args.replication_factor, args.repeat, args.sizes))
        print(f"  {topics:,} topics: {rows[-1]['wall']:.2f}s", flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
