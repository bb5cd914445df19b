"""The Spark engine on a real standalone cluster: the executors' CPU per fleet size, and from two
sizes the marginal rate per executor core.

    python benchmarks/drift_standalone.py --clusters 4 12 [--partitions 100000] [--cores 2]

Starts the tests' standalone cluster (tests/drift/standalone.py: a master and one worker with
`--cores` cores, executors on a virtualenv made from this checkout's wheel), runs
`drift_spark.py`'s Spark child on each fleet (the same reconciled fleets, under its --workdir),
and samples every process of the worker's session (its executors' JVMs and their Python) from
/proc while the job runs, so the executors' CPU is counted even where Spark kills a process
before it is reaped. A core the executor has to itself gives it that many partitions a second,
so the rate per executor CPU-second is the rate per executor core. Not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from drift_spark import write_reconciled_fleet

from tests.drift.standalone import executor_python, standalone_cluster

ROOT = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")


def _session_cpu(session: int, seen: dict[int, float]) -> None:
    """Each live process of `session`: its CPU so far (utime + stime), kept by pid."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:  # the 6th field of stat: the session id
            seen[int(entry.name)] = (int(fields[11]) + int(fields[12])) / TICKS


def _run(fleet: Path, cluster: list[str], session: int) -> dict:
    seen: dict[int, float] = {}
    _session_cpu(session, seen)
    before = dict(seen)
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.3):
            _session_cpu(session, seen)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    report = fleet / "report-standalone.json"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "drift_spark.py"), "--run", "spark", str(fleet), str(report), *cluster]
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    done.set()
    sampler.join()
    _session_cpu(session, seen)
    lines = [x for x in out.stdout.splitlines() if x.startswith("{")]
    if out.returncode or not lines:
        raise SystemExit(f"the Spark engine failed on {fleet}:\n{out.stderr[-3000:]}")
    executors = sum(cpu - before.get(pid, 0.0) for pid, cpu in seen.items())
    return {**json.loads(lines[-1]), "executors_cpu_s": round(executors, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, nargs=2, default=[4, 12], help="two fleet sizes, in clusters")
    parser.add_argument("--partitions", type=int, default=100_000, help="partitions per cluster")
    parser.add_argument("--cores", type=int, default=2, help="the worker's cores")
    parser.add_argument("--memory-mib", type=int, default=4096, help="the worker's memory")
    parser.add_argument("--workdir", default="/tmp/drift-spark-bench")
    args = parser.parse_args()
    fleets = []
    for n in args.clusters:
        fleet = Path(args.workdir) / f"{n}x{args.partitions}-as-made"
        if not (fleet / "desired.json").exists():
            desired = write_reconciled_fleet(fleet / "snapshots", n, args.partitions, None)
            (fleet / "desired.json").write_text(json.dumps({k: v.model_dump(mode="json") for k, v in desired.items()}))
        fleets.append((n, fleet))
    with tempfile.TemporaryDirectory(prefix="drift-standalone-") as where:
        executors = executor_python(Path(where))
        started = contextlib.contextmanager(standalone_cluster)
        with started(Path(where), executors, cores=args.cores, memory_mib=args.memory_mib) as cluster:
            worker = next(p for p in Path(where, "logs").glob("worker.log"))  # started with a session of its own
            session = _worker_session(worker)
            conf = cluster.conf(**{"spark.executor.memory": "3g"})
            rows = []
            for n, fleet in fleets:
                row = {
                    "clusters": n,
                    "partitions": n * args.partitions,
                    "load": round(os.getloadavg()[0], 1),
                    **_run(fleet, conf, session),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    (a, b) = rows
    rate = (b["partitions"] - a["partitions"]) / max(0.1, b["executors_cpu_s"] - a["executors_cpu_s"])
    print(f"marginal rate: {rate:,.0f} partitions per executor CPU-second ({a['partitions']:,} -> {b['partitions']:,})")


def _worker_session(log: Path) -> int:
    """The worker daemon's session id: the process whose command line names the Worker class."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if b"org.apache.spark.deploy.worker.Worker" in cmdline and str(log.parent.parent).encode() in cmdline:
                return int(Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[3])
    raise SystemExit(f"no worker process found (its log: {log})")


if __name__ == "__main__":
    main()
