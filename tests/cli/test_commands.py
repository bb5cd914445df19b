"""`reconcile plan`, `validate` and `schema` from the command line, on the example manifests and snapshots."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from reconciler.cli import main
from reconciler.files.saved_plan import load_plan_json

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = str(ROOT / "manifests")
PROD = str(ROOT / "manifests" / "snapshots" / "prod-eu.json")


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, list(args), env=env)


def test_plan_with_changes_exits_2_and_prints_the_summary():
    result = run("plan", MANIFESTS, "--snapshot", PROD)
    assert result.exit_code == 2, result.output
    assert "Plan: 1 to create, 4 to change, 4 to truncate (34,884,250 records), 1 to delete." in result.output
    assert "\033[" not in result.output  # not a terminal: no colour


def test_plan_in_sync_exits_0(tmp_path):
    saved = tmp_path / "plan.json"
    run("plan", MANIFESTS, "--snapshot", PROD, "--format", "json", "-o", str(saved))
    imported = tmp_path / "manifests"
    imported.mkdir()
    (imported / "c.yaml").write_text("kind: Cluster\nname: prod-eu\nbootstrap_servers: [k:9092]\nignore_topics: ['.*']\n")
    result = run("plan", str(imported), "--snapshot", PROD)
    assert result.exit_code == 0, result.output
    assert "No changes: the cluster matches the manifests." in result.output


def test_output_file_gets_the_format_and_stdout_the_text(tmp_path):
    out = tmp_path / "plan.md"
    result = run("plan", MANIFESTS, "--snapshot", PROD, "--format", "markdown", "-o", str(out))
    assert result.exit_code == 2
    assert out.read_text().startswith("### Plan for `prod-eu`")
    assert result.output.startswith("Plan for cluster prod-eu")


def test_json_plan_is_a_loadable_saved_plan(tmp_path):
    out = tmp_path / "plan.json"
    run("plan", MANIFESTS, "--snapshot", PROD, "--format", "json", "-o", str(out))
    saved = load_plan_json(out.read_text())
    assert saved.cluster == "prod-eu" and saved.summary().truncate == 4


def test_forced_colour_and_no_colour():
    assert "\033[" in run("plan", MANIFESTS, "--snapshot", PROD, "--color").output
    assert "\033[" not in run("plan", MANIFESTS, "--snapshot", PROD, env={"NO_COLOR": "1"}).output


def test_plan_with_errors_exits_1(tmp_path):
    (tmp_path / "c.yaml").write_text(
        "kind: Cluster\nname: prod-eu\nbootstrap_servers: [k:9092]\n"
        "---\nkind: Topic\nname: orders.v1\npartitions: 2\nreplication_factor: 3\n"
    )
    result = run("plan", str(tmp_path), "--snapshot", PROD)
    assert result.exit_code == 1
    assert "error[partition-decrease]" in result.output and "c.yaml:6" in result.output


def test_snapshot_of_another_cluster_is_a_clear_error():
    result = run("plan", MANIFESTS, "--snapshot", PROD, "--cluster", "staging-eu")
    assert result.exit_code == 1
    assert "is a snapshot of cluster 'prod-eu', not 'staging-eu'" in result.output
    assert "Traceback" not in result.output


def test_missing_or_broken_snapshot_is_a_clear_error(tmp_path):
    broken = tmp_path / "s.json"
    broken.write_text("{")
    for path in (str(tmp_path / "missing.json"), str(broken)):
        result = run("plan", MANIFESTS, "--snapshot", path)
        assert result.exit_code == 1 and "Error:" in result.output and "Traceback" not in result.output
        assert path in result.output


def test_live_plan_needs_a_cluster_name():
    result = run("plan", MANIFESTS)
    assert result.exit_code == 1 and "name the cluster with --cluster NAME (known: prod-eu, staging-eu)" in result.output


def test_validate_and_schema():
    result = run("validate", MANIFESTS)
    assert result.exit_code == 0 and "2 clusters, 8 topics: valid." in result.output
    schema = json.loads(run("schema").output)
    assert schema["$schema"].startswith("https://json-schema.org/")


def test_usage_errors_exit_1_never_2_which_means_changes():
    for args in (["plan", "--no-such-option"], ["plan", MANIFESTS, "--format", "xml"], ["drift", "--engine", "x"]):
        result = run(*args)
        assert result.exit_code == 1, (args, result.output)
        assert "Error:" in result.output and "Traceback" not in result.output


def test_a_duration_option_beyond_a_long_is_refused():
    result = run("drift", MANIFESTS, "--snapshot", PROD, "--executor-wait", "99999999999999w")
    assert result.exit_code == 1, result.output
    assert "--executor-wait" in result.output and "is above the largest value Kafka takes" in result.output


def test_output_into_a_missing_directory_is_refused_before_anything_runs(tmp_path):
    missing = tmp_path / "no-such-dir" / "plan.md"
    for command in (["plan", MANIFESTS, "--snapshot", PROD], ["drift", MANIFESTS, "--snapshot", PROD]):
        result = run(*command, "-o", str(missing))
        assert result.exit_code == 1, result.output
        assert f"directory {missing.parent} does not exist" in result.output
        assert "Plan for cluster" not in result.output and "Drift report" not in result.output
    result = run("plan", MANIFESTS, "--snapshot", PROD, "-o", str(tmp_path))
    assert result.exit_code == 1 and "is a directory; give a file name" in result.output
    assert not missing.parent.exists()


def test_a_snapshot_into_a_missing_directory_is_refused_before_connecting(tmp_path, monkeypatch):
    """Said before the cluster is reached: here nothing answers at 127.0.0.1:1."""
    for name in ("KAFKA_PROD_EU_USER", "KAFKA_PROD_EU_PASSWORD"):  # prod-eu's ${...} credentials
        monkeypatch.setenv(name, "x")
    missing = tmp_path / "no-such-dir" / "prod-eu.json"
    for output, message in ((missing, f"directory {missing.parent} does not exist"), (tmp_path, "is a directory")):
        result = run("snapshot", MANIFESTS, "--cluster", "prod-eu", "--bootstrap-servers", "127.0.0.1:1", "-o", str(output))
        assert result.exit_code == 1 and message in result.output and "cannot reach" not in result.output, result.output


def test_a_saved_plan_edited_to_delete_outside_the_log_is_refused_on_load(tmp_path):
    saved = tmp_path / "plan.json"
    run("plan", MANIFESTS, "--snapshot", PROD, "--format", "json", "-o", str(saved))
    for target in (-1, 10**12):
        plan = json.loads(saved.read_text())
        truncation = next(a for a in plan["actions"] if a["kind"] == "truncate")
        truncation["partitions"][0]["target_offset"] = target
        edited = tmp_path / f"edited{target}.json"
        edited.write_text(json.dumps(plan))
        result = run("apply", str(edited), "--auto-approve")
        assert result.exit_code == 1, result.output
        assert "is not a valid saved plan" in result.output and "plan again rather than editing" in result.output


def test_every_command_that_reports_takes_the_same_output_options(tmp_path):
    for command in ("plan", "apply", "drift"):
        usage = run(command, "--help").output
        assert all(option in usage for option in ("--format", "--output", "--color / --no-color")), command
    drift = run("drift", MANIFESTS, "--snapshot", PROD, "--no-color")
    assert drift.exit_code == 3 and "\033[" not in drift.output, drift.output
    painted = run("plan", MANIFESTS, "--snapshot", PROD, "--color")
    assert "\033[" in painted.output
    saved = tmp_path / "plan.json"
    run("plan", MANIFESTS, "--snapshot", PROD, "--format", "json", "-o", str(saved), "--color")
    assert "\033[" not in saved.read_text()  # files never carry colour


def test_what_needs_no_cluster_is_refused_before_connecting(tmp_path, monkeypatch):
    """A bad REGEX option or a --since snapshot of another cluster is said first: here nothing
    answers at 127.0.0.1:1, and that must not hide it."""
    for name in ("KAFKA_PROD_EU_USER", "KAFKA_PROD_EU_PASSWORD"):  # prod-eu's ${...} credentials
        monkeypatch.setenv(name, "x")
    live = ("--cluster", "prod-eu", "--bootstrap-servers", "127.0.0.1:1")
    staging = str(ROOT / "manifests" / "snapshots" / "staging-eu.json")
    for args, message in (
        (("drift", MANIFESTS, *live, "--ignore-topic", "(tmp"), "'(tmp' is not a valid regular expression"),
        (("drift", MANIFESTS, "--snapshot", PROD, "--ignore-topic", "(tmp"), "'(tmp' is not a valid regular expression"),
        (("import", str(tmp_path / "m"), *live, "--topics", "[a-"), "'[a-' is not a valid regular expression"),
        (("import", str(tmp_path / "m"), *live, "--exclude", "ok", "--exclude", "*x"), "'*x' is not a valid regular"),
        (("drift", MANIFESTS, *live, "--since", staging), "is a snapshot of 'staging-eu', not 'prod-eu'"),
    ):
        result = run(*args)
        assert result.exit_code == 1 and message in result.output, (args, result.output)
        assert "cannot reach" not in result.output and "internal error" not in result.output, result.output
