"""Replica placement (reconciler/plan/placement.py) on a large cluster: wall and CPU time.

    python benchmarks/placement.py [--topics 1000] [--partitions 10] [--brokers 30] [--racks 3]

The cluster has `--brokers` brokers spread round robin over `--racks` racks (0: no racks) and
`--topics` topics of `--partitions` partitions each, created the way Kafka's own assignment does
(replicas on consecutive brokers from a rotating start). Three placements of every topic, each from a
fresh `Placement` over the whole cluster: replication factor 1 -> 3, 3 -> 2, and 3 -> 3 while one
broker is drained. Prints a Markdown table: the replicas added and removed, the wall and CPU time,
and the spread of replicas and preferred leaders per eligible broker afterwards. Not a test: the
figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from reconciler.plan.placement import BrokerInfo, Placement


def kafka_style(topics: int, partitions: int, brokers: int, replication_factor: int) -> dict[str, dict[int, list[int]]]:
    return {
        f"svc{t % 97:02d}.events-{t:05d}": {
            p: [(t + p + j) % brokers + 1 for j in range(replication_factor)] for p in range(partitions)
        }
        for t in range(topics)
    }


def run(
    name: str,
    brokers: list[BrokerInfo],
    current: dict[str, dict[int, list[int]]],
    replication_factor: int,
    drain: tuple[int, ...] = (),
) -> str:
    wall, cpu = time.perf_counter(), time.process_time()
    placement = Placement(brokers, current, drain=drain)
    placed = {topic: placement.place(topic, replication_factor) for topic in sorted(current)}
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    added = removed = 0
    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    for topic, parts in placed.items():
        for partition, after in parts.items():
            before = set(current[topic][partition])
            added += len(set(after) - before)
            removed += len(before - set(after))
            replicas.update(after)
            leaders[after[0]] += 1
    eligible = [b.node_id for b in brokers if b.node_id not in drain]
    spread = lambda counts: f"{min(counts[b] for b in eligible)}..{max(counts[b] for b in eligible)}"  # noqa: E731
    return (
        f"| {name} | {sum(len(p) for p in placed.values())} | {added} | {removed} | {wall:.3f} | {cpu:.3f} "
        f"| {spread(replicas)} | {spread(leaders)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--brokers", type=int, default=30)
    parser.add_argument("--racks", type=int, default=3)
    args = parser.parse_args()
    brokers = [BrokerInfo(n, f"rack-{n % args.racks}" if args.racks else None) for n in range(1, args.brokers + 1)]
    print(f"{args.topics} topics x {args.partitions} partitions on {args.brokers} brokers, {args.racks or 'no'} racks\n")
    print("| placement | partitions | replicas added | removed | wall s | CPU s | replicas per broker | leaders per broker |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    print(run("1 -> 3", brokers, kafka_style(args.topics, args.partitions, args.brokers, 1), 3))
    print(run("3 -> 2", brokers, kafka_style(args.topics, args.partitions, args.brokers, 3), 2))
    print(
        run(
            f"3 -> 3, drain broker {args.brokers}",
            brokers,
            kafka_style(args.topics, args.partitions, args.brokers, 3),
            3,
            drain=(args.brokers,),
        )
    )


if __name__ == "__main__":
    main()
