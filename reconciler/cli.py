"""The `reconcile` command: parse options, call the core, render, choose the exit code.

Exit codes: 0 no changes, 2 changes present (plan), 1 error of any kind. Errors are one
paragraph on stderr, never a traceback (set RECONCILER_DEBUG=1 to see one).
"""
from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

import click

from reconciler.errors import ReconcilerError

EXIT_OK, EXIT_ERROR, EXIT_CHANGES = 0, 1, 2
FORMATS = click.Choice(["text", "json", "markdown"])


def _fail(message: str) -> None:
    click.echo(f"Error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def handle_errors(command):
    """Turn the reconciler's errors (and anything unexpected) into a message and exit code 1."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except ReconcilerError as e:
            _fail(str(e))
        except KeyboardInterrupt:
            _fail("interrupted; nothing further was done.")
        except Exception as e:  # a bug: still no traceback for the user unless asked
            if os.environ.get("RECONCILER_DEBUG"):
                raise
            _fail(f"internal error ({type(e).__name__}: {e}). This is a bug in the reconciler; "
                  "run again with RECONCILER_DEBUG=1 for a traceback and report it.")

    return wrapper


def use_color(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _emit(text: str, output: str | None) -> None:
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kafka-reconciler")
def main() -> None:
    """Declarative Kafka topics and truncation points, reviewed in Git."""


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@handle_errors
def validate(manifests_dir: str) -> None:
    """Check the manifests and the policy, offline. Exit 0 if valid, 1 otherwise."""
    from reconciler.manifests import load_manifests
    from reconciler.policy import check_desired
    from reconciler.errors import ManifestError

    manifests = load_manifests(manifests_dir)
    problems = [p for name in manifests.cluster_names() for p in check_desired(manifests.desired_state(name))]
    if problems:
        raise ManifestError(problems)
    topics = {t for name in manifests.cluster_names() for t in manifests.desired_state(name).topics}
    click.echo(f"{len(manifests.files)} files, {len(manifests.clusters)} clusters, {len(topics)} topics: valid.")


@main.command()
@handle_errors
def schema() -> None:
    """Print the JSON Schema of the manifest format (for editor completion)."""
    from reconciler.manifests import manifest_json_schema

    click.echo(json.dumps(manifest_json_schema(), indent=2))


@main.command()
@click.argument("manifests_dir", default="manifests", type=click.Path())
@click.option("--cluster", help="Cluster name from the manifests (default: the snapshot's).")
@click.option("--snapshot", type=click.Path(), help="Plan against a saved snapshot instead of a live cluster.")
@click.option("--format", "fmt", type=FORMATS, default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(), help="Write the plan in --format to FILE; the text plan goes to stdout.")
@click.option("--color/--no-color", default=None, help="Colour (default: on a terminal, unless NO_COLOR is set).")
@handle_errors
def plan(manifests_dir: str, cluster: str | None, snapshot: str | None, fmt: str, output: str | None,
         color: bool | None) -> None:
    """Show what would change. Exit 0 no changes, 2 changes, 1 error."""
    from reconciler.manifests import load_manifests
    from reconciler.planner import plan as make_plan
    from reconciler.render import render_plan

    manifests = load_manifests(manifests_dir)
    observed = _observe(manifests, cluster, snapshot)
    result = make_plan(manifests.desired_state(observed.cluster), observed)
    if output:
        _emit(render_plan(result, fmt), output)
        click.echo(render_plan(result, "text", color=use_color(color)), nl=False)
    else:
        click.echo(render_plan(result, fmt, color=use_color(color) and fmt == "text"), nl=False)
    sys.exit(EXIT_ERROR if result.has_errors else EXIT_CHANGES if result.has_changes else EXIT_OK)


def _observe(manifests, cluster: str | None, snapshot: str | None):
    if snapshot:
        from reconciler.snapshot import load_snapshot

        observed = load_snapshot(snapshot)
        if cluster and cluster != observed.cluster:
            raise ReconcilerError(
                f"{snapshot} is a snapshot of cluster {observed.cluster!r}, not {cluster!r}; "
                "pass the matching --cluster or another snapshot.")
        manifests.desired_state(observed.cluster)  # fails clearly if the manifests do not know it
        return observed
    if not cluster:
        raise ReconcilerError(
            "name the cluster to plan with --cluster NAME (known: " + ", ".join(manifests.cluster_names())
            + "), or give a saved snapshot with --snapshot FILE.")
    raise ReconcilerError("reading a live cluster is not available in this build; use --snapshot FILE.")


if __name__ == "__main__":  # pragma: no cover
    main()
