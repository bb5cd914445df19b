"""Spark drift engine benchmark: reconciled fleets, Spark vs local, wall and CPU time, peak memory.

    python benchmarks/drift_spark.py --clusters 2 5 --partitions 100000 [--engines spark local] [--check]
        [--master spark://HOST:7077 --conf spark.pyspark.python=... --rounds 2]

The fleets are drift_fleet.py's synthetic ones as a reconciler keeps them: the declared configs
are set on the topics (in drift_fleet.py every topic inherits the cleanup.policy its manifest
declares, so every topic has a finding). What is left is drift_fleet.py's drift: ~10% of topics
unmanaged, ~5% with another retention, ~3% with a truncation rule, ~1% short of partitions, ~2%
with an undeclared key, a few partitions under-replicated, offline or behind the earlier run;
about three topics in four have no finding. `--drifted` sets the share of drifting topics instead
(the others are made in sync): 0.01 is a fleet a reconciler runs on.

Each engine runs in its own child process; its figures are wall time, CPU time of the whole
process tree (the driver, Spark's JVM and its Python workers, from /proc at the end of the run,
children reaped included), peak RSS of the Python driver and of the tree (sampled every 0.25 s).
`--check` requires the engines' reports (JSON, every field but the engine's name) to be equal.
Not a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from drift_fleet import GENERATED_AT, synthetic_desired, synthetic_rows, write_run

from reconciler.models.desired import DesiredState, DesiredTopic

TICKS = os.sysconf("SC_CLK_TCK")


def reconciled(desired: DesiredState, runs: list[list[dict]], drifted: float | None, seed: int) -> DesiredState:
    """The fleet as a reconciler keeps it (the runs' rows changed in place): declared keys set on
    the topics; with `drifted`, only that share of the topics keeps drift_fleet.py's drift, the
    others are declared, in sync and healthy in both runs."""
    rnd = random.Random(f"{seed}-{desired.cluster.name}-drifted")
    topics = dict(desired.topics)
    for same_topic in zip(*runs):
        name = same_topic[0]["topic"]
        if drifted is not None and not same_topic[0]["internal"] and rnd.random() >= drifted:
            topics[name] = _in_sync(name, same_topic)
        want = topics.get(name)
        for row in same_topic if want is not None else ():
            row["configs"] = [{**c, "source": 1} if c["key"] in want.configs else c for c in row["configs"]]
    return desired.model_copy(update={"topics": topics})


def _in_sync(name: str, same_topic: tuple[dict, ...]) -> DesiredTopic:
    configs = {"retention.ms": "604800000", "cleanup.policy": "delete"}
    for row in same_topic:
        row["configs"] = [c for c in row["configs"] if c["key"] in configs]
    for partitions in zip(*(row["partitions"] for row in same_topic)):
        for before, p in itertools.pairwise(partitions):  # no data loss, no epoch change
            p["high_watermark"] = max(p["high_watermark"], before["high_watermark"])
            p["leader_epoch"] = before["leader_epoch"]
        for p in partitions:
            p["leader"], p["isr"] = p["replicas"][0], list(p["replicas"])
    return DesiredTopic(name=name, partitions=len(same_topic[0]["partitions"]), replication_factor=3, configs=configs)


def write_reconciled_fleet(
    directory: Path, clusters: int, partitions: int, drifted: float | None, seed: int = 7
) -> dict[str, DesiredState]:

    out = {}
    for c in range(clusters):
        name = f"cluster-{c:03d}"
        runs = [synthetic_rows(name, partitions, run, seed) for run in range(2)]
        out[name] = reconciled(synthetic_desired(name, partitions, seed), runs, drifted, seed)
        for rows in runs:
            write_run(directory, name, rows)
    return out


def _tree(pid: int) -> tuple[int, float]:
    """(resident KiB, CPU seconds) of a process and its living descendants; a process's CPU counts
    its reaped children (cutime, cstime)."""
    rss, cpu, stack = 0, 0.0, [pid]
    while stack:
        p = stack.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += sum(int(f) for f in fields[11:15]) / TICKS  # utime stime cutime cstime
            rss += int(fields[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
            for task in Path(f"/proc/{p}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return rss, cpu


def _child(engine: str, fleet: Path, report: Path, master: str | None = None, conf: list[str] | None = None) -> None:
    import gc

    from reconciler.drift.engine import run_fleet
    from reconciler.drift.spark_options import SparkOptions

    gc.disable()  # as `reconcile` runs every command (reconciler.cli)
    data = json.loads((fleet / "desired.json").read_text())
    states = {k: DesiredState.model_validate(v) for k, v in data.items()}
    del data  # the manifests as models only, as `reconcile` holds them
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.25):
            peak[0] = max(peak[0], _tree(os.getpid())[0])

    threading.Thread(target=sample, daemon=True).start()
    cpu_before, start = _tree(os.getpid())[1], time.perf_counter()
    spark = SparkOptions(dict(c.split("=", 1) for c in conf or [])) if engine == "spark" else SparkOptions()
    result = run_fleet(
        fleet / "snapshots",
        states.__getitem__,
        engine=engine,
        master=master if engine == "spark" else None,
        tables=fleet / f"tables-{engine}",
        generated_at=GENERATED_AT,
        spark=spark,
    )
    wall, cpu = time.perf_counter() - start, _tree(os.getpid())[1] - cpu_before
    done.set()
    report.write_text(json.dumps(result.report.comparable(), sort_keys=True))
    self_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "engine": result.engine,
                "wall_s": round(wall, 1),
                "cpu_s": round(cpu, 1),
                "driver_rss_mib": round(self_kib / 1024),
                "tree_rss_mib": round(max(peak[0], self_kib) / 1024),
                "items": sum(c.counts.items for c in result.report.clusters),
                "topics": sum(c.topics_observed for c in result.report.clusters),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, nargs="+", default=[2, 5])
    parser.add_argument("--partitions", type=int, default=100_000, help="partitions per cluster")
    parser.add_argument("--engines", nargs="+", default=["spark", "local"])
    parser.add_argument("--drifted", type=float, default=None, help="share of topics with drift (default: as generated)")
    parser.add_argument("--workdir", default="/tmp/drift-spark-bench")
    parser.add_argument("--check", action="store_true", help="require the engines' reports to be equal")
    parser.add_argument("--master", help="Spark master (default local[*]), e.g. spark://127.0.0.1:7077")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting; repeatable")
    parser.add_argument("--rounds", type=int, default=1, help="run the engines this many times, alternately")
    parser.add_argument("--run", nargs=3, metavar=("ENGINE", "FLEET", "REPORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        _child(args.run[0], Path(args.run[1]), Path(args.run[2]), args.master, args.conf)
        return
    results = []
    for n in args.clusters:
        fleet = Path(args.workdir) / f"{n}x{args.partitions}-{args.drifted if args.drifted is not None else 'as-made'}"
        if not (fleet / "desired.json").exists():
            start = time.perf_counter()
            desired = write_reconciled_fleet(fleet / "snapshots", n, args.partitions, args.drifted)
            (fleet / "desired.json").write_text(json.dumps({k: v.model_dump(mode="json") for k, v in desired.items()}))
            print(
                f"# wrote {n} clusters x {args.partitions:,} partitions x 2 runs in {time.perf_counter() - start:.0f}s",
                file=sys.stderr,
            )
        reports = {}
        spark_args = [*(["--master", args.master] if args.master else []), *(f"--conf={c}" for c in args.conf)]
        for engine in args.engines * args.rounds:  # alternately: a load that drifts weighs on both
            reports[engine] = fleet / f"report-{engine}.json"
            cmd = [sys.executable, __file__, "--run", engine, str(fleet), str(reports[engine]), *spark_args]
            out = subprocess.run(cmd, check=False, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
            line = [x for x in out.stdout.splitlines() if x.startswith("{")]
            if out.returncode or not line:
                print(out.stderr[-3000:], file=sys.stderr)
                raise SystemExit(f"{engine} failed on {fleet}")
            row = {"clusters": n, "partitions": n * args.partitions, "load": round(os.getloadavg()[0], 1), **json.loads(line[-1])}
            results.append(row)
            print(json.dumps(row), flush=True)
        if args.check and len(reports) > 1:
            texts = {e: p.read_text() for e, p in reports.items()}
            same = len(set(texts.values())) == 1
            print(f"# {n} clusters: reports {'equal' if same else 'DIFFER'} ({', '.join(texts)})", flush=True)
            if not same:
                raise SystemExit(1)
    print(
        "\n| clusters | partitions | engine | wall (s) | CPU, process tree (s) | peak RSS, driver (MiB) "
        "| peak RSS, tree (MiB) | topics | findings | load |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['clusters']} | {r['partitions']:,} | {r['engine']} | {r['wall_s']} | {r['cpu_s']} | "
            f"{r['driver_rss_mib']} | {r['tree_rss_mib']} | {r['topics']:,} | {r['items']:,} | {r['load']} |"
        )


if __name__ == "__main__":
    main()
