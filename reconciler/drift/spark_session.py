"""Starting the Spark engine's session, and watching that its cluster gives it executors.

A wrong master, a cluster that cannot grant the executors asked for, or Spark's own log lines
must not reach the user as minutes of silence or pages of Java: the master is probed before the
JVM tries it (Spark retries an unanswered master for a minute), the JVM we start logs to a file
of its own, and a job that waits for executors gives up after a set time,
saying what was asked for and what the master offers.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
import sys
import tempfile
import threading
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlparse

from py4j.protocol import Py4JError
from pyspark import SparkConf, SparkContext
from pyspark.errors import PySparkException
from pyspark.find_spark_home import _find_spark_home
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from reconciler.drift.spark_class_archive import ClassArchive, class_archive
from reconciler.drift.spark_failures import last_words
from reconciler.drift.spark_options import EXECUTOR_WAIT_S
from reconciler.errors import ReconcilerError, shown_text

PROBE_S = 10.0  # one TCP connection to a master
PROGRESS_EVERY_S = 30.0

# The JVMs of a drift job run no heavy query (the tasks' work is Python): the JIT's first tier only,
# since its optimising compiler would compile code the job leaves before it pays off, and the
# serial collector, whose one thread does not compete with the tasks for the cores
# (docs/performance.md, "Third round").
SHORT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# A drift job is short: list the fleet, read each cluster's files, write the tables. Spark's
# defaults are for long ones: the web UI and its listeners (--conf spark.ui.enabled=true brings it
# back), whole-stage code generation (compiling Java for stages this short costs more than it
# saves), the executors' JVMs as above. And a task's result, a cluster's findings (~1 MiB pickled
# a 100,000-partition cluster), goes to the driver in the task's own message, not through the
# block manager as results above 1 MiB do (~0.025 executor CPU-s a cluster; Spark caps it at
# spark.rpc.message.maxSize, 128 MiB). Each applies unless given (--conf, spark-submit's settings,
# spark-defaults.conf); the driver's JVM this process starts gets SHORT_JVM unless
# spark.driver.extraJavaOptions is given.
SHORT_JOB = {
    "spark.ui.enabled": "false",
    "spark.sql.codegen.wholeStage": "false",
    "spark.executor.extraJavaOptions": SHORT_JVM,
    "spark.task.maxDirectResultSize": "64m",
}

_session: SparkSession | None = None
spark_log: str | None = None  # the file the JVM we started writes its log to


def debugging() -> bool:
    return bool(os.environ.get("RECONCILER_DEBUG"))


def launched_by_spark_submit() -> bool:
    return "PYSPARK_GATEWAY_PORT" in os.environ


def jvm_stderr() -> Any:
    """The JVM's System.err (a java.io.PrintStream, through py4j) of the gateway spark-submit
    opened for this process."""
    SparkContext._ensure_initialized()
    jvm = SparkContext._jvm
    assert jvm is not None  # initialised just above
    return jvm.System.err


def session(master: str | None = None, conf: Mapping[str, str] | None = None, log_level: str | None = None) -> SparkSession:
    """The SparkSession: the active one if any (spark-submit, tests), else a new one. Without a
    master, Spark's own default applies (`local[*]`, or what spark-submit was given)."""
    global _session  # noqa: PLW0603 - one Spark session per process, made on first use
    active = SparkSession.getActiveSession() or _session
    if active is not None:
        if log_level:
            active.sparkContext.setLogLevel(log_level)
        return active
    conf = dict(conf or {})
    master = master or conf.get("spark.master")
    settings = {"spark.app.name": "reconcile-drift", "spark.sql.session.timeZone": "UTC", "spark.ui.showConsoleProgress": "false"}
    in_process = not launched_by_spark_submit() and (master is None or master.startswith("local"))
    if in_process and "spark.driver.memory" not in conf and "SPARK_DRIVER_MEMORY" not in os.environ:
        # The JVM we start is driver and executor at once; Spark's 1 GiB default loses task results
        # of multi-million-partition fleets in its block manager, so it gets a quarter of the RAM.
        settings["spark.driver.memory"] = _local_driver_memory()
    if not launched_by_spark_submit():
        settings["spark.driver.extraJavaOptions"] = SHORT_JVM
    settings.update(conf)
    if master:
        settings["spark.master"] = master
        probe_master(master)
    if not launched_by_spark_submit() and SparkContext._gateway is None:
        _start_jvm(settings, quiet=not log_level and not debugging())
    if launched_by_spark_submit():
        SparkContext._ensure_initialized()  # the JVM spark-submit started, to read its settings
    settings = {**{k: v for k, v in SHORT_JOB.items() if _jvm_setting(k) is None}, **settings}
    _executors_python(settings, in_process)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        _session = builder.getOrCreate()
    except (Py4JError, PySparkException) as e:
        if not master or master.startswith("local") or debugging():
            raise
        raise ReconcilerError(
            f"the Spark master at {shown_text(master, 200)} did not take the application "
            f"({last_words(message_of(e), python_worker=False) or type(e).__name__}): something answers there, "
            "but not as a Spark master that accepts this application. Check the --master URL (a standalone "
            "master's is the spark://HOST:PORT its log and web UI name). Nothing was reported."
        ) from None
    # In-process, the executors log to this JVM: a failed task's Java stack would come before the
    # one paragraph the job gives for it. A cluster's executors log to their own files.
    _session.sparkContext.setLogLevel(log_level or ("FATAL" if in_process else "ERROR"))
    return _session


def _local_driver_memory() -> str:
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "1g"
    return f"{max(1024, min(16 * 1024, total // 4 // 2**20))}m"


def _start_jvm(settings: Mapping[str, str], quiet: bool) -> None:
    """The driver's JVM, started by hand so that its output (the JVM's own warnings, log4j's
    banner, Spark's log, a shutdown race after a failure) goes to a file when `quiet`; with the
    engine's JVM options, it also maps or writes the class archive kept between runs."""
    archive = None
    if settings.get("spark.driver.extraJavaOptions") == SHORT_JVM:
        archive = class_archive(_find_spark_home(), settings.get("spark.driver.extraClassPath"))
    if archive is not None and archive.usable():
        try:
            _launch({**settings, "spark.driver.extraJavaOptions": f"{SHORT_JVM} {archive.use_options()}"}, quiet)
            return
        except PySparkException:
            archive.discard()  # a damaged archive must not stop the run: start without it
            _forget_log()
    if archive is not None and archive.wanted():
        jvm = _launch({**settings, "spark.driver.extraJavaOptions": f"{SHORT_JVM} {archive.write_option()}"}, quiet)
        atexit.register(_stop_and_keep, archive, jvm)
    else:
        _launch(settings, quiet)


def _stop_and_keep(archive: ClassArchive, jvm: Any) -> None:
    """Spark stopped from here first: stopped by the JVM's exit, it would leave this process's
    accumulator server a broken connection to print a traceback about."""
    context = SparkContext._active_spark_context
    if context is not None:
        with contextlib.suppress(Exception):  # the report is out; nothing here may change the exit
            context.stop()
    archive.keep_when_written(jvm)


def _launch(settings: Mapping[str, str], quiet: bool) -> Any:
    """Starts the JVM and pyspark's gateway to it; returns the JVM's process."""
    global spark_log
    conf = SparkConf(loadDefaults=False)
    for key, value in settings.items():
        conf.set(key, value)
    # Not quiet, what the JVM prints goes to stderr too: a report may be on stdout, and Java writes
    # its own warnings there.
    popen: dict[str, Any] = {"stdout": 2}
    if quiet:
        fd, spark_log = tempfile.mkstemp(prefix="reconcile-drift-spark-", suffix=".log")
        popen = {"stdout": fd, "stderr": fd}
        atexit.register(_forget_log)
    try:
        gateway = launch_gateway(conf, popen_kwargs=popen)
    finally:
        if quiet:
            os.close(fd)
    SparkContext._ensure_initialized(gateway=gateway)
    return gateway.proc


def keep_log() -> str | None:
    """The JVM's log file, kept after exit: an error names it."""
    global _log_kept  # noqa: PLW0603 - the one JVM of this process
    _log_kept = True
    return spark_log


_log_kept = False


def _forget_log() -> None:
    if spark_log and not _log_kept:
        with contextlib.suppress(OSError):
            os.unlink(spark_log)


def _executors_python(settings: Mapping[str, str], in_process: bool) -> None:
    """The Python the executors run: `spark.pyspark.python` (given, or in spark-defaults.conf),
    else PYSPARK_PYTHON, else in-process this interpreter (it has the reconciler installed). The
    driver hands it to the executors; pyspark itself reads only the environment variable."""
    named = settings.get("spark.pyspark.python") or _jvm_setting("spark.pyspark.python")
    if named:
        os.environ["PYSPARK_PYTHON"] = named
    elif in_process:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def _jvm_setting(key: str) -> str | None:
    """A setting the JVM was started with (spark-submit's --conf, spark-defaults.conf)."""
    if SparkContext._jvm is None:
        return None
    value = SparkConf().get(key)
    return str(value) if value is not None else None


def probe_master(master: str) -> None:
    """A standalone or Kubernetes master that nothing answers at: named now, not after Spark's
        minute of retries and its stack traces. A web server at a spark:// URL (the master's web UI) is
    named as such."""
    parsed = urlparse(master[len("k8s://") :] if master.startswith("k8s://") else master)
    if parsed.scheme not in ("spark", "https", "http"):
        return
    defaults = {"spark": 7077, "https": 443, "http": 80}
    refusals = []
    for place in parsed.netloc.split(","):
        host, _, port = place.rpartition(":") if ":" in place else (place, "", "")
        try:
            with socket.create_connection((host.strip("[]"), int(port or defaults[parsed.scheme])), timeout=PROBE_S) as s:
                if parsed.scheme != "spark" or not _answers_http(s):
                    return
                refusals.append(f"{place}: a web server answers there, not a master's RPC port")
        except ValueError:
            refusals.append(f"{place}: not host:port")
        except socket.gaierror as e:
            refusals.append(f"{host}: no such host ({e.strerror})")
        except OSError as e:
            refusals.append(f"{place}: {e.strerror or f'no answer within {PROBE_S:.0f} s'}")
    raise ReconcilerError(
        f"no Spark master answers at {shown_text(master, 200)} ({'; '.join(refusals) or 'no host:port'}). Check "
        "the --master URL (a standalone master is spark://HOST:7077, the port its log names, not its web UI's) "
        "and that the master runs and is reachable from here. Nothing was reported."
    )


def message_of(error: BaseException) -> str:
    """A Spark failure's text: the Java exception's message when there is one (its stack is not
    wanted); the JVM may be gone, and its message with it."""
    java = getattr(error, "java_exception", None)
    try:
        return str(java.getMessage()) if java is not None else str(error)
    except Py4JError:
        return str(error)


def _answers_http(connection: socket.socket) -> bool:
    """Whether an HTTP server (a master's web UI, say) took the connection: a master's RPC port
    does not answer a request line."""
    try:
        connection.settimeout(2.0)
        connection.sendall(b"HEAD / HTTP/1.0\r\n\r\n")
        return connection.recv(5) == b"HTTP/"
    except OSError:
        return False


class ExecutorWatch:
    """While a job has tasks to run and the application has no executor at all, waits at most
    `wait_s` (progress on stderr), then cancels the jobs; `starved` then holds what to say."""

    def __init__(self, spark: SparkSession, wait_s: float = EXECUTOR_WAIT_S, progress: Callable[[str], None] | None = None):
        self.sc, self.wait_s = spark.sparkContext, wait_s
        self.progress = progress or (lambda line: print(line, file=sys.stderr, flush=True))
        self.starved: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="executor-watch", daemon=True)

    def __enter__(self) -> ExecutorWatch:
        if not str(self.sc.master).startswith("local"):
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _executors(self) -> int:
        return max(0, len(self.sc.statusTracker().getExecutorInfos()) - 1)  # the driver is listed too

    def _watch(self) -> None:
        waited, said = 0.0, 0.0
        while not self._stop.wait(1.0):
            try:
                if self._executors() > 0:
                    return
                if not self.sc.statusTracker().getActiveJobsIds():
                    continue
            except Exception:  # noqa: BLE001 - the context stopped under us: the job's own error tells
                return
            waited += 1.0
            if self.starved is not None:
                self.sc.cancelAllJobs()  # a job started after the first cancel
            elif waited >= self.wait_s:
                self.starved = starved_message(str(self.sc.master), dict(self.sc.getConf().getAll()), waited)
                self.sc.cancelAllJobs()
            elif waited - said >= PROGRESS_EVERY_S:
                said = waited
                self.progress(
                    f"Waiting for executors from {self.sc.master}: none granted after {waited:.0f} s "
                    f"(giving up after {self.wait_s:.0f} s; --executor-wait sets it)."
                )


def asked_for(conf: Mapping[str, str]) -> str:
    """The executors the application asks for, in the settings' own terms."""
    cores = conf.get("spark.executor.cores")
    parts = [
        f"spark.executor.memory={conf.get('spark.executor.memory', '1g')}",
        f"spark.executor.cores={cores}" if cores else "spark.executor.cores unset (standalone: all of a worker's free cores)",
    ]
    if conf.get("spark.cores.max"):
        parts.append(f"spark.cores.max={conf['spark.cores.max']}")
    if conf.get("spark.executor.instances"):
        parts.append(f"spark.executor.instances={conf['spark.executor.instances']}")
    return ", ".join(parts)


def master_offers(master: str, ui_port: str | None) -> str:
    """What a standalone master's workers have free, from its web UI's JSON (spark.master.ui.port,
    default 8080); the reason it is unknown otherwise."""
    parsed = urlparse(master)
    if parsed.scheme != "spark":
        return "ask the cluster's resource manager what it can grant"
    hosts = [place.rpartition(":")[0] or place for place in parsed.netloc.split(",")]
    port = ui_port or "8080"
    for host in hosts:
        url = f"http://{host}:{port}/json/"
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                state = json.load(answer)
        except (OSError, ValueError):
            continue
        workers = [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]
        if not workers:
            return f"the master ({url}) has no live worker"
        listed = "; ".join(
            f"{w.get('host')}: {w.get('coresfree')} of {w.get('cores')} cores and {w.get('memoryfree')} of "
            f"{w.get('memory')} MiB free"
            for w in workers[:10]
        )
        return f"the master's live workers ({url}): {listed}"
    return f"what it offers is unknown: its web UI did not answer at http://{hosts[0]}:{port}/json/ (set spark.master.ui.port)"


def starved_message(master: str, conf: Mapping[str, str], waited: float) -> str:
    return (
        f"the Spark master at {master} granted no executor in {waited:.0f} s. Asked for: {asked_for(conf)}; "
        f"{master_offers(master, conf.get('spark.master.ui.port'))}. Ask for what a worker has free "
        "(--conf spark.executor.memory=..., --conf spark.executor.cores=...), start workers, or wait longer "
        "with --executor-wait. Nothing was reported."
    )
