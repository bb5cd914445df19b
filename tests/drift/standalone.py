"""A real Spark standalone cluster for the tests: a master and one worker, each its own JVM
started from the pyspark install (`bin/spark-class`), bound to 127.0.0.1, with small memory; and
the Python its executors run, built as a user would: a virtualenv with the project's wheel (not
this checkout) and its dependencies, pyarrow and numpy installed apart so that a test can leave
them out.

Nothing here is a mock: the drift command runs as a separate process against the master's URL,
and the Python work runs in the worker's executors.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START_S = 180.0  # a loaded 2-core machine starts two JVMs in ~20-60 s

# The interpreter this one runs on, outside any virtualenv (a new venv is made from it).
_BASE_PYTHON: str = getattr(sys, "_base_executable", sys.executable)


@dataclass(frozen=True)
class ExecutorPython:
    """`python`: a virtualenv with the reconciler installed from its wheel (and its dependencies);
    `arrow`: a directory with pyarrow and numpy (handed to executors on PYTHONPATH); `bare`: the
    same Python version with nothing installed."""

    python: str
    arrow: str
    bare: str


@dataclass(frozen=True)
class Standalone:
    master: str  # spark://127.0.0.1:PORT
    ui_port: int
    worker_cores: int
    worker_memory_mib: int
    executors: ExecutorPython
    home: Path

    def conf(self, python: str | None = None, path: str | None = "arrow", **more: str) -> list[str]:
        """drift's options for this cluster: its master, the executors' Python and PYTHONPATH."""
        settings = {
            "spark.pyspark.python": python or self.executors.python,
            "spark.master.ui.port": str(self.ui_port),
            "spark.executor.memory": "512m",
            "spark.driver.host": "127.0.0.1",  # the driver listens on loopback only too
            "spark.driver.bindAddress": "127.0.0.1",
            **({"spark.executorEnv.PYTHONPATH": self.executors.arrow} if path == "arrow" else {}),
            **more,
        }
        return ["--master", self.master, *(x for k, v in settings.items() for x in ("--conf", f"{k}={v}"))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def executor_python(where: Path) -> ExecutorPython:
    """The executors' Python: `pip wheel .` of this checkout into a fresh virtualenv (the pip
    cache makes the dependencies quick), pyarrow and numpy at the driver's versions apart. A
    directory kept from an earlier run (RECONCILER_TEST_EXECUTORS) gets only the new wheel."""
    wheels = where / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(ROOT)], check=True, capture_output=True)
    venv, arrow = where / "executors", where / "arrow"
    python = str(venv / "bin" / "python")
    wheel = next(wheels.glob("kafka_reconciler-*.whl"))
    again = ["--force-reinstall", "--no-deps"] if venv.exists() else []  # a kept directory: this checkout's code
    if not again:
        subprocess.run([_BASE_PYTHON, "-m", "venv", str(venv)], check=True)
    # Without the driver's PYTHONPATH: a checkout on it makes pip find the package installed already,
    # and the import below find the checkout instead of the wheel.
    alone = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    install = [python, "-m", "pip", "--disable-pip-version-check", "-q", "install", *again, str(wheel)]
    subprocess.run(install, check=True, capture_output=True, env=alone)
    subprocess.run([python, "-c", "import reconciler.drift.compute, pydantic"], check=True, cwd=where, env=alone)
    if not arrow.exists():
        versions = [f"pyarrow=={version('pyarrow')}", f"numpy=={version('numpy')}"]
        subprocess.run([*pip, "install", "--target", str(arrow), *versions], check=True, capture_output=True)
    return ExecutorPython(python=python, arrow=str(arrow), bare=_BASE_PYTHON)


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _daemon(home: Path, log: Path, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "PYTHON", "SPARK_"))}
    env.update(
        SPARK_HOME=str(home),
        SPARK_LOCAL_IP="127.0.0.1",  # the web UIs bind there too, not 0.0.0.0
        SPARK_DAEMON_MEMORY="256m",
        SPARK_NO_DAEMONIZE="1",
        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
    )
    with log.open("ab") as out:
        return subprocess.Popen(
            [str(home / "bin" / "spark-class"), *args], env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def master_state(ui_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as answer:
        return json.load(answer)


def _stop(process: subprocess.Popen) -> None:
    """The daemon and what it started (a worker's executors): its own process group."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def standalone_cluster(where: Path, executors: ExecutorPython, cores: int = 2, memory_mib: int = 1024) -> Iterator[Standalone]:
    home, logs = _spark_home(), where / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    master = f"spark://127.0.0.1:{port}"
    daemons = [
        _daemon(
            home,
            logs / "master.log",
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)),
        )
    ]
    try:
        daemons.append(
            _daemon(
                home,
                logs / "worker.log",
                "org.apache.spark.deploy.worker.Worker",
                *("--host", "127.0.0.1", "--webui-port", str(worker_ui), "--cores", str(cores)),
                *("--memory", f"{memory_mib}m", "--work-dir", str(where / "work"), master),
            )
        )
        deadline = time.monotonic() + START_S
        while True:
            try:
                if master_state(ui).get("aliveworkers") == 1:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or any(d.poll() is not None for d in daemons):
                raise RuntimeError(f"the standalone cluster did not start; its logs: {logs}")
            time.sleep(1)
        yield Standalone(master, ui, cores, memory_mib, executors, where)
    finally:
        for daemon in reversed(daemons):
            _stop(daemon)
        shutil.rmtree(where / "work", ignore_errors=True)
