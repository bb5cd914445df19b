"""The driver JVM's class archive, kept between runs (reconciler/drift/spark_class_archive.py):
written whole by the first run, never left half-written, and a damaged one never stops a run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pyspark.find_spark_home import _find_spark_home

from reconciler.drift.spark_class_archive import ClassArchive, class_archive, java_command
from tests.drift.test_standalone import _fleet, drift

MIB = 2**20


def _writer(archive: ClassArchive, exit_code: int) -> subprocess.Popen[bytes]:
    """A process that, like the JVM, writes the archive when its stdin closes, then exits."""
    script = f"import sys; sys.stdin.read(); open({str(archive.writing)!r}, 'wb').write(b'x' * 1000); sys.exit({exit_code})"
    return subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE)


def test_an_archive_is_moved_into_place_only_after_its_writer_exited_cleanly(tmp_path):
    archive = ClassArchive(tmp_path / "spark-classes-x.jsa")
    assert archive.wanted() and not archive.usable()
    archive.keep_when_written(_writer(archive, 0))
    assert archive.usable() and archive.path.stat().st_size == 1000
    assert not archive.writing.exists() and not archive.wanted()


def test_a_writer_that_fails_leaves_no_archive_and_is_not_asked_again_for_a_day(tmp_path):
    archive = ClassArchive(tmp_path / "spark-classes-x.jsa")
    archive.keep_when_written(_writer(archive, 1))  # Java's exit when a non-empty directory is on the class path
    assert not archive.usable() and not archive.writing.exists()
    assert archive.unmakeable.exists() and not archive.wanted()


def test_without_a_cache_to_keep_it_in_there_is_no_archive(tmp_path, monkeypatch):
    (tmp_path / "reconcile").write_text("a file where the cache's directory would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert class_archive(_find_spark_home(), None) is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "elsewhere"))
    archive = class_archive(_find_spark_home(), None)
    assert archive is not None and archive.path.parent == tmp_path / "elsewhere" / "reconcile"
    other = class_archive(_find_spark_home(), "/opt/extra.jar")
    assert other is not None and other.path != archive.path  # another class path, another archive


def test_a_damaged_archive_does_not_stop_a_run_which_writes_a_whole_one(tmp_path, monkeypatch):
    """Cut short, an archive makes the JVM crash at start (SIGBUS): the run starts it again without
    the archive, reports, and at exit writes a whole archive of Spark's classes in its place."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    archive = class_archive(_find_spark_home(), None)
    assert archive is not None
    tiny = tmp_path / "tiny.jsa"
    subprocess.run([java_command() or "java", f"-XX:ArchiveClassesAtExit={tiny}", "-version"], check=True, capture_output=True)
    archive.path.write_bytes(tiny.read_bytes()[:50_000])
    manifests, fleet = _fleet(tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "TMPDIR": str(tmp_path)}
    # With Spark's log shown, what the JVM prints (Java's warnings go to stdout) stays off the report.
    args = ("--fleet", str(fleet), "--master", "local[1]", "--spark-log-level", "WARN", "--format", "json")
    result = drift(str(manifests), *args, env=env)
    assert result.returncode == 3 and "Traceback" not in result.stderr, result.stderr
    assert json.loads(result.stdout)["engine"] == "spark"
    assert archive.path.stat().st_size > 20 * MIB  # Spark's classes
    assert not list(archive.path.parent.glob("*.tmp")) and not archive.unmakeable.exists()
    assert not list(tmp_path.glob("reconcile-drift-jvm-*.log")) and not list(Path.cwd().glob("hs_err_pid*"))  # the crash's report
