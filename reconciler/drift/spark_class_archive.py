"""The driver JVM's class-data archive (Java's AppCDS), kept between runs.

The JVM a drift run starts loads, parses and verifies some 10,000 classes from Spark's jars before
the first task: about 3 CPU-s on the reference machine, a fifth of a 400,000-partition Spark run
(docs/performance.md, "Fourth round"). Java can write those classes, parsed and verified, to an
archive when it exits, and map the archive at the next start. The first run with a given Java and
Spark writes it; later runs use it.

The JVM crashes at start (SIGBUS) on an archive cut short, so an archive is only renamed into place
whole, after the JVM that wrote it exited cleanly; a JVM that fails to start with one is started
again without it. An archive Java finds stale (another Java, another class path) it ignores, and
the run goes on without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WRITE_WAIT_S = 60.0  # for the JVM to stop Spark and write the archive, once per Java and Spark
STALE_S = 3600.0  # a half-written archive this old was left by a process that died
# Java's warnings about the archive (hundreds of classes it cannot keep, an archive it cannot
# use): nothing a user can act on, and --spark-log-level shows the JVM's output.
QUIET = "-Xlog:cds*=off"
RETRY_S = 86400.0  # after Java could not write an archive, how long until it is asked again


class ClassArchive:
    """Where this Java and Spark's archive lives, and the JVM option that uses or writes it."""

    def __init__(self, path: Path):
        self.path = path
        self.unmakeable = path.with_suffix(".none")  # Java could not write one (a non-empty directory on the class path)
        self.writing = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        # Java's crash report, which it writes to the working directory unless told otherwise.
        self.crash_report = Path(tempfile.gettempdir(), f"reconcile-drift-jvm-{os.getpid()}.log")

    def usable(self) -> bool:
        return self.path.is_file()

    def wanted(self) -> bool:
        if self.usable():
            return False
        try:
            return time.time() - self.unmakeable.stat().st_mtime > RETRY_S
        except OSError:  # never found unmakeable
            return True

    def use_options(self) -> str:
        return f"-XX:SharedArchiveFile={self.path} -XX:ErrorFile={self.crash_report} {QUIET}"

    def write_option(self) -> str:
        for old in self.path.parent.glob(f"{self.path.name}.*.tmp"):
            with contextlib.suppress(OSError):
                if time.time() - old.stat().st_mtime > STALE_S:
                    old.unlink()
        return f"-XX:ArchiveClassesAtExit={self.writing} {QUIET}"

    def discard(self) -> None:
        """After the JVM crashed on the archive: neither it nor the crash's report is kept."""
        for path in (self.path, self.crash_report):
            with contextlib.suppress(OSError):
                path.unlink()

    def keep_when_written(self, jvm: subprocess.Popen[bytes]) -> None:
        """At this process's exit: ends the JVM (pyspark's gateway exits when its stdin closes),
        waits for it to write the archive, and moves the archive into place."""
        try:
            if jvm.poll() is None:
                if sys.stderr.isatty():  # a pause a person would wonder about; scripts get no extra line
                    print(f"Keeping Spark's classes for later runs in {self.path} (once).", file=sys.stderr, flush=True)
                if jvm.stdin is not None:
                    jvm.stdin.close()
                jvm.wait(WRITE_WAIT_S)
            if jvm.returncode == 0 and self.writing.is_file():
                os.replace(self.writing, self.path)
            elif jvm.returncode is not None:
                self.unmakeable.touch()
        except (OSError, subprocess.TimeoutExpired, KeyboardInterrupt):
            pass
        finally:
            with contextlib.suppress(OSError):
                self.writing.unlink()


def java_command() -> str | None:
    """The java that Spark's launch scripts run (bin/spark-class): $JAVA_HOME's, else the PATH's."""
    java_home = os.environ.get("JAVA_HOME")
    return os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")


def class_archive(spark_home: str, extra_class_path: str | None) -> ClassArchive | None:
    """The archive for the Java and Spark a driver JVM started from here would run, in the user's
    cache ($XDG_CACHE_HOME/reconcile, else ~/.cache/reconcile); None when there is no such place
    this process can write to."""
    command = java_command()
    if command is None:
        return None  # no Java: the JVM's start names that
    java = os.path.realpath(command)
    try:
        java_file = os.stat(java)
        jars = os.stat(Path(spark_home, "jars"))
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "reconcile"
        cache.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):
        return None
    if not os.access(cache, os.W_OK | os.X_OK):
        return None  # a read-only cache: an archive could neither be written nor marked unmakeable
    # What Java checks the archive against, so that another Java or Spark gets an archive of its own.
    java_id = (java, java_file.st_size, java_file.st_mtime_ns)
    key = repr((java_id, os.path.realpath(spark_home), jars.st_mtime_ns, extra_class_path))
    return ClassArchive(cache / f"spark-classes-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa")
