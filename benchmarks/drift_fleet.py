"""Fleet drift benchmark: synthetic fleets, local vs Spark engine, wall time and peak memory.

    python benchmarks/drift_fleet.py --clusters 10 50 --partitions 100000 [--engines local spark] [--check COMMIT]
        [--drain-brokers ID ...]

Each fleet is written once under --workdir (two runs per cluster, so data-loss checks run too),
then each engine runs in its own child process (`--run ENGINE FLEET`) so that its peak memory
(ru_maxrss of that process plus, for Spark, its JVM and Python workers) is measured alone.
`--check COMMIT` proves the reports unchanged: the local engine runs again with that commit's
`reconciler` package (`git archive`) and the two reports (their JSON, every field) must be equal
byte for byte; both are generated "at" the same fixed instant. `--drain-brokers` runs against
manifests that drain those brokers (the fleet is the same): its clusters have brokers 1-4, every
partition a replica on 1, 2 and 3 but for one topic in 20, whose third replicas are on 4, so
draining 4 moves 5% of the topics and draining 3 all of them.
Not a test: figures depend on the machine. The generator is also used by tests/drift.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from reconciler.models.desired import ClusterSpec, DesiredState, DesiredTopic, KeepLast

RUN_AT = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)
GENERATED_AT = RUN_AT + timedelta(days=1)  # the reports' own time, fixed so that two runs compare
TOPIC_SIZES = (3, 6, 12, 24)  # partitions per topic, cycled: ~11 on average
BROKERS = (1, 2, 3, 4)
ON_BROKER_4 = 20  # one topic in this many has its third replicas on broker 4


def _topic_names(cluster: str, partitions: int) -> list[tuple[str, int]]:
    out, total, i = [], 0, 0
    while total < partitions:
        n = min(TOPIC_SIZES[i % len(TOPIC_SIZES)], partitions - total)
        out.append((f"svc{i % 97:02d}.events-{i:06d}", n))
        total += n
        i += 1
    return out


def synthetic_desired(cluster: str, partitions: int, seed: int = 7) -> DesiredState:
    """Manifests for a synthetic cluster: 90% of its topics, a few it lacks, some drift baked in."""
    rnd = random.Random(f"{seed}-{cluster}-desired")
    topics = {}
    for name, n in _topic_names(cluster, partitions):
        roll = rnd.random()
        if roll < 0.10:
            continue  # unmanaged on the cluster
        configs = {"retention.ms": "604800000", "cleanup.policy": "delete"}
        if roll < 0.15:
            configs["retention.ms"] = "86400000"  # differs from the cluster
        truncate = [KeepLast(records=500)] if 0.15 <= roll < 0.18 else []
        want_partitions = n + 3 if 0.18 <= roll < 0.19 else n
        topics[name] = DesiredTopic(
            name=name, partitions=want_partitions, replication_factor=3, configs=configs, truncate=truncate
        )
    for j in range(max(1, partitions // 20000)):
        topics[f"new.topic-{j}"] = DesiredTopic(
            name=f"new.topic-{j}", partitions=6, replication_factor=3, configs={"cleanup.policy": "delete"}
        )
    return DesiredState(
        cluster=ClusterSpec(name=cluster, bootstrap_servers=[f"{cluster}:9092"], ignore_topics=["^connect-"]), topics=topics
    )


def synthetic_rows(cluster: str, partitions: int, run: int, seed: int = 7) -> list[dict]:
    """Snapshot rows (reconciler.files.snapshot_parquet.arrow_schema) of a synthetic cluster; run 0 is the earlier one."""
    rnd = random.Random(f"{seed}-{cluster}-observed")
    taken = RUN_AT + timedelta(hours=run)
    rows = [
        {
            "cluster": cluster,
            "cluster_id": f"id-{cluster}",
            "run": taken,
            "controller_id": 1,
            "topic": "__consumer_offsets",
            "topic_id": f"{cluster}-co",
            "internal": True,
            "configs": [{"key": "cleanup.policy", "value": "compact", "source": 1, "sensitive": False, "read_only": False}],
            "partitions": [_partition(p, 100, 1000 * (run + 1), 1, 200) for p in range(3)],
            "group_offsets": [],
        }
    ]
    for i, (name, n) in enumerate(_topic_names(cluster, partitions)):
        configs = [
            {"key": "cleanup.policy", "value": "delete", "source": 5, "sensitive": False, "read_only": False},
            {"key": "retention.ms", "value": "604800000", "source": 1, "sensitive": False, "read_only": False},
        ]
        if rnd.random() < 0.02:
            configs.append({"key": "segment.ms", "value": "3600000", "source": 1, "sensitive": False, "read_only": False})
        parts = []
        for p in range(n):
            hw = 10_000 + (i * 31 + p * 7) % 5000 + run * 1000
            size = hw * 180
            part = _partition(p, 0, hw, 1 + (p % 3), size)
            if i % ON_BROKER_4 == ON_BROKER_4 - 1:
                part["replicas"][2] = part["isr"][2] = 4
            r = rnd.random()
            if r < 0.002:
                part["isr"] = part["replicas"][:2]
            elif r < 0.0025:
                part["leader"], part["isr"] = -1, []
            elif r < 0.003 and run == 1:
                part["high_watermark"] = hw - 3000  # truncated below what run 0 saw
                part["leader_epoch"] += 2
            parts.append(part)
        rows.append(
            {
                "cluster": cluster,
                "cluster_id": f"id-{cluster}",
                "run": taken,
                "controller_id": 1,
                "topic": name,
                "topic_id": f"{cluster}-{i}",
                "internal": False,
                "configs": configs,
                "partitions": parts,
                "group_offsets": [],
            }
        )
    return rows


def _partition(p: int, log_start: int, hw: int, leader: int, size: int) -> dict:
    replicas = [leader, leader % 3 + 1, (leader + 1) % 3 + 1]
    return {
        "partition": p,
        "leader": leader,
        "leader_epoch": 3,
        "replicas": replicas,
        "isr": list(replicas),
        "offline_replicas": [],
        "log_start_offset": log_start,
        "high_watermark": hw,
        "size_bytes": size,
        "epoch_end_offset": None,
        "offsets_by_timestamp": [],
    }


def write_fleet(directory: str | Path, clusters: int, partitions: int, runs: int = 2, seed: int = 7) -> dict:
    """Write a synthetic fleet as Parquet snapshots; returns {cluster: DesiredState}."""

    directory = Path(directory)
    desired = {}
    for c in range(clusters):
        name = f"cluster-{c:03d}"
        desired[name] = synthetic_desired(name, partitions, seed)
        for run in range(runs):
            write_run(directory, name, synthetic_rows(name, partitions, run, seed))
    return desired


def write_run(directory: Path, cluster: str, rows: list[dict]) -> None:
    """One run's snapshot rows as `reconcile snapshot --format parquet` lays them out."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from reconciler.files.fleet import run_name
    from reconciler.files.snapshot_parquet import METADATA_KEY, arrow_schema

    header = {
        "format_version": 1,
        "cluster": cluster,
        "cluster_id": f"id-{cluster}",
        "controller_id": 1,
        "taken_at": rows[0]["run"].isoformat(),
        "brokers": [{"node_id": b, "host": f"{cluster}-{b}", "port": 9092, "rack": None} for b in BROKERS],
        "group_offsets": {},
    }
    schema = arrow_schema().with_metadata({METADATA_KEY: json.dumps(header).encode()})
    path = directory / cluster / f"{run_name(rows[0]['run'])}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, compression="zstd")


def _desired_from(directory: Path, drain: tuple[int, ...]):
    data = json.loads((directory / "desired.json").read_text())
    states = {k: DesiredState.model_validate(v) for k, v in data.items()}
    if drain:
        states = {
            k: v.model_copy(update={"cluster": v.cluster.model_copy(update={"drain_brokers": list(drain)})})
            for k, v in states.items()
        }
    return states.__getitem__


def _tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and all its descendants (JVM, Python workers), from /proc."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            for task in Path(f"/proc/{p}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total


def _child(engine: str, fleet: str, master: str | None, report: str | None = None, drain: tuple[int, ...] = ()) -> None:
    import gc
    import threading

    from reconciler.drift.engine import run_fleet

    gc.disable()  # as `reconcile` runs every command (reconciler.cli)

    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.25):
            peak[0] = max(peak[0], _tree_rss_kib(os.getpid()))

    threading.Thread(target=sample, daemon=True).start()
    start, cpu_start = time.perf_counter(), time.process_time()
    result = run_fleet(
        Path(fleet) / "snapshots",
        _desired_from(Path(fleet), drain),
        engine=engine,
        master=master,
        tables=Path(fleet) / f"tables-{engine}",
        generated_at=GENERATED_AT,
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    if report:
        Path(report).write_text(result.report.model_dump_json(indent=1))
    done.set()
    self_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    items = sum(c.counts.items for c in result.report.clusters)
    print(
        json.dumps(
            {
                "engine": engine,
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "peak_rss_mib": round(self_kib / 1024),
                "peak_tree_rss_mib": round(max(peak[0], self_kib) / 1024),
                "items": items,
                "pyspark_imported": "pyspark" in sys.modules,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--partitions", type=int, default=100_000, help="partitions per cluster")
    parser.add_argument("--engines", nargs="+", default=["local", "spark"])
    parser.add_argument("--master", default=None, help="Spark master (default local[*])")
    parser.add_argument("--workdir", default="/tmp/drift-bench")
    parser.add_argument("--check", metavar="COMMIT", help="require the local engine's reports to equal COMMIT's")
    parser.add_argument("--drain-brokers", type=int, nargs="*", default=[], metavar="ID", help="manifests drain these brokers")
    parser.add_argument("--run", nargs=2, metavar=("ENGINE", "FLEET"), help=argparse.SUPPRESS)
    parser.add_argument("--report", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        _child(args.run[0], args.run[1], args.master, args.report, tuple(args.drain_brokers))
        return
    results = []
    for n in args.clusters:
        fleet = Path(args.workdir) / f"{n}x{args.partitions}"
        if not (fleet / "desired.json").exists():
            start = time.perf_counter()
            desired = write_fleet(fleet / "snapshots", n, args.partitions)
            (fleet / "desired.json").write_text(json.dumps({k: v.model_dump(mode="json") for k, v in desired.items()}))
            print(
                f"# wrote {n} clusters x {args.partitions:,} partitions x 2 runs in {time.perf_counter() - start:.0f}s",
                file=sys.stderr,
            )
        for engine in args.engines:
            cmd = [sys.executable, __file__, "--run", engine, str(fleet), "--drain-brokers", *map(str, args.drain_brokers)]
            cmd += ["--master", args.master] if args.master else []
            out = subprocess.run(cmd, check=False, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
            line = [x for x in out.stdout.splitlines() if x.startswith("{")]
            if out.returncode or not line:
                print(out.stderr[-3000:], file=sys.stderr)
                raise SystemExit(f"{engine} failed on {fleet}")
            row = {"clusters": n, "partitions": n * args.partitions, **json.loads(line[-1])}
            if args.check and engine == "local":
                row["check"] = _check(args.check, fleet, args.drain_brokers)
            results.append(row)
            print(json.dumps(row), flush=True)
    print(
        "\n| clusters | partitions | engine | wall (s) | peak RSS, Python driver (MiB) "
        "| peak RSS, whole process tree (MiB) | findings |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['clusters']} | {r['partitions']:,} | {r['engine']} | {r['wall_s']} | {r['peak_rss_mib']} | "
            f"{r['peak_tree_rss_mib']} | {r['items']:,} |"
        )
    checks = [f"{r['clusters']} clusters: {r['check']}" for r in results if "check" in r]
    if checks:
        print("\nReport check: " + "; ".join(checks) + ".")
    if any(not r.get("check", "identical").startswith("identical") for r in results):
        raise SystemExit(1)


def _check(commit: str, fleet: Path, drain: list[int]) -> str:
    """The local engine's report on `fleet` by this package and by `commit`'s: "identical" or not."""
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from plan_cluster import package_of

    with tempfile.TemporaryDirectory() as tmp:
        reports: list[bytes] = []
        for package in (None, package_of(commit, Path(tmp, "reference"))):
            report = Path(tmp, f"report-{len(reports)}.json")
            env = {**os.environ, "PYTHONWARNINGS": "ignore"}
            if package is not None:
                env["PYTHONPATH"] = str(package)
            subprocess.run(
                [sys.executable, __file__, "--run", "local", str(fleet), "--report", str(report), "--drain-brokers"]
                + [str(b) for b in drain],
                check=True,
                capture_output=True,
                env=env,
            )
            reports.append(report.read_bytes())
    if reports[0] == reports[1]:
        return f"identical to {commit}'s (report JSON, byte for byte)"
    return f"DIFFERS from {commit}'s"


if __name__ == "__main__":
    main()
