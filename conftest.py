"""Shared fixtures of every test folder (tests/, each paper's, the host tool's): ``hetsim`` runs
the command line in-process; tests/helpers.py holds the small platforms and workloads tests build.

``hetsim.cli.main(argv)`` is the same function ``python -m hetsim`` and the ``hetsim`` script call,
so running it in this process tests the same code for ~1/100 of a subprocess's time (a fresh
interpreter importing numpy, pandas, onnx and matplotlib costs ~1.5 s; a call here costs ms).
tests/test_entry_point.py keeps a few true subprocess runs of the real entry points.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))   # ``from helpers import ...``

from helpers import CLI_ENV  # noqa: E402


def _import_the_cli_without_a_terminal() -> None:
    """rich picks a Console's colour system when the Console is built, and
    hetsim/cli/_common.py builds its console on first use: build it here, with stdout not a
    terminal (as in CI and in the subprocess tests), or ``pytest -s`` in a terminal would put
    ANSI codes in every captured line."""
    with CliRunner().isolation(env=CLI_ENV):
        from hetsim.cli._common import console

        console.is_terminal  # noqa: B018 - builds the console now, without a terminal


_import_the_cli_without_a_terminal()


@dataclass(frozen=True)
class CliRun:
    """What a finished ``hetsim`` run left behind, shaped like ``subprocess.CompletedProcess``."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def _exit_code(e: SystemExit) -> int:
    # The interpreter's own rule for SystemExit: None is 0, an int is itself, anything else is
    # printed to stderr and gives 1.
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr)
    return 1


def run_hetsim(*args: str, cwd: Path | str | None = None,
               env: Mapping[str, str | None] | None = None) -> CliRun:
    """Run ``hetsim ARGS`` in this process and return its exit code, stdout and stderr.

    click's ``CliRunner.isolation`` swaps sys.stdin/stdout/stderr and os.environ and restores
    them; click.echo and rich's module-level console (hetsim/cli/_common.py) both write to
    whatever sys.stdout is at print time, so both are captured. Around it: the working
    directory, every environment variable and matplotlib's rcParams are restored, and the
    figures the command left open are closed. An exception other than SystemExit is a bug (a real run would print a
    traceback): it propagates so pytest shows where it came from.
    """
    from hetsim.cli import main

    argv = [str(a) for a in args]
    old_cwd, old_env = os.getcwd(), dict(os.environ)
    old_figures = _figure_numbers()
    runner = CliRunner()
    code = 0
    try:
        with matplotlib.rc_context(), runner.isolation(env={**CLI_ENV, **(env or {})}) as streams:
            out, err = streams[0], streams[1]
            if cwd is not None:
                os.chdir(cwd)
            try:
                main(argv)
            except SystemExit as e:
                code = _exit_code(e)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
            stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    finally:
        os.chdir(old_cwd)
        if os.environ != old_env:   # isolation restores only the variables it was given
            os.environ.clear()
            os.environ.update(old_env)
        _close_figures_except(old_figures)
    return CliRun(argv, code, stdout, stderr)


def _figure_numbers() -> set[int]:
    if "matplotlib.pyplot" not in sys.modules:
        return set()
    return set(sys.modules["matplotlib.pyplot"].get_fignums())


def _close_figures_except(keep: set[int]) -> None:
    if "matplotlib.pyplot" not in sys.modules:
        return
    plt = sys.modules["matplotlib.pyplot"]
    for num in set(plt.get_fignums()) - keep:
        plt.close(num)


@pytest.fixture(scope="session")
def hetsim() -> Callable[..., CliRun]:
    """``hetsim("simulate", "-p", ...)`` runs the CLI in-process (see ``run_hetsim``). Session
    scoped so module-scoped fixtures can use it; each call restores what it touched."""
    return run_hetsim


# pytest rewrites os.environ["PYTEST_CURRENT_TEST"] at every phase of every test.
_PYTEST_KEYS = {"PYTEST_CURRENT_TEST"}


@pytest.fixture(autouse=True)
def _no_leaked_process_state():
    """Every test leaves the working directory, the environment and the CPU affinity (``calibrate
    host`` pins this process while it measures) as it found them, so tests pass in any order and
    alone: in-process CLI runs share this interpreter."""
    cwd = os.getcwd()
    env = {k: v for k, v in os.environ.items() if k not in _PYTEST_KEYS}
    cpus = _affinity()
    yield
    assert os.getcwd() == cwd, f"test left the working directory at {os.getcwd()}"
    now = {k: v for k, v in os.environ.items() if k not in _PYTEST_KEYS}
    changed = sorted(set(env.items()) ^ set(now.items()))
    assert not changed, f"test changed environment variables: {changed}"
    assert _affinity() == cpus, f"test left this process pinned to CPUs {sorted(_affinity())}"


def _affinity() -> set[int]:
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
