"""The real entry points in fresh interpreters (``python -m hetsim``, the ``hetsim`` script), a
closed pipe, and that the in-process runner of conftest.py captures what a real run prints and
restores what it touches. Every other CLI test runs in-process (the ``hetsim`` fixture)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest
from helpers import CLI_ENV, assert_one_line_error

ROOT = Path(__file__).parents[1]
SIMULATE = ["simulate", "-p", "hikey970", "-w", "resnet50", "-m", "B4:1-35|s2:36-44|s2:45-54",
            "--frames", "20"]


def _env(**extra: str) -> dict[str, str]:
    """This interpreter's environment with the runner's terminal settings; this worktree first on
    the import path so a child imports the hetsim under test, not another checkout."""
    env = {k: v for k, v in os.environ.items() if k not in CLI_ENV}
    env.update({k: v for k, v in CLI_ENV.items() if v is not None})
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.update(extra)
    return env


def python_m_hetsim(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hetsim", *map(str, args)], capture_output=True,
                          text=True, env=_env(), stdin=subprocess.DEVNULL, timeout=120, **kw)


@pytest.mark.slow
def test_python_m_hetsim_prints_what_the_in_process_run_captures(hetsim):
    """Exit 0 and byte-identical stdout and stderr: the rich table, the console lines and
    click.echo all reach the runner's capture."""
    real = python_m_hetsim(*SIMULATE)
    assert real.returncode == 0, real.stderr
    assert "┃ stage ┃" in real.stdout and "throughput" in real.stdout
    ours = hetsim(*SIMULATE)
    assert (ours.returncode, ours.stdout, ours.stderr) == (0, real.stdout, real.stderr)


@pytest.mark.slow
def test_python_m_hetsim_user_error_is_one_line_and_exit_2(hetsim):
    args = ["simulate", "-p", "hikey970", "-w", "resnet50", "-m", "B4:1-30|s4:30-54"]
    real = python_m_hetsim(*args)
    assert_one_line_error(real, "overlap")
    ours = hetsim(*args)
    assert (ours.returncode, ours.stdout, ours.stderr) == (2, "", real.stderr)


@pytest.mark.slow
def test_console_script():
    """The ``hetsim`` script pip generates from [project.scripts] (``sys.exit(main())``)."""
    script = Path(sys.executable).with_name("hetsim")
    if not script.exists():
        pytest.skip(f"no console script beside {sys.executable} (hetsim not pip-installed)")
    ok = subprocess.run([script, "platforms", "list"], capture_output=True, text=True, env=_env(),
                        stdin=subprocess.DEVNULL, timeout=120)
    assert ok.returncode == 0 and "hikey970" in ok.stdout and ok.stderr == "", ok.stderr
    bad = subprocess.run([script, "platforms", "show", "nope"], capture_output=True, text=True,
                         env=_env(), stdin=subprocess.DEVNULL, timeout=120)
    assert_one_line_error(bad, "unknown platform 'nope'")


@pytest.mark.slow
def test_closed_stdout_ends_quietly():
    """``hetsim ... | head -0``: the reader is gone before the first write. No traceback, no
    'Exception ignored' from the interpreter's last flush; click turns EPIPE into exit 1 (its
    convention, before ``hetsim.cli.main``'s own BrokenPipeError handler, which exits 0)."""
    proc = subprocess.Popen([sys.executable, "-m", "hetsim", "workloads", "show", "yolov3", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=_env())
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) in (0, 1), stderr
    assert stderr == ""


# -- the in-process runner itself ----------------------------------------------------------------

def test_in_process_runs_restore_what_they_touch(hetsim, tmp_path):
    import matplotlib.pyplot as plt

    from hetsim.cli._common import console

    mine = plt.figure()             # a figure the test owns stays open
    rc = {k: v for k, v in matplotlib.rcParams.items() if k != "backend"}
    streams, cwd = (sys.stdin, sys.stdout, sys.stderr), os.getcwd()
    run = hetsim(*SIMULATE, "--gantt", "g.png", cwd=tmp_path, env={"HETSIM_TEST_VAR": "1"})
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"   # relative to the cwd given
    assert os.getcwd() == cwd and "HETSIM_TEST_VAR" not in os.environ
    assert (sys.stdin, sys.stdout, sys.stderr) == streams
    assert console.file is sys.stdout                             # rich resolves it at print time
    assert plt.get_fignums() == [mine.number]
    assert {k: v for k, v in matplotlib.rcParams.items() if k != "backend"} == rc
    plt.close(mine)


def test_in_process_runner_undoes_a_command_that_leaks_everything(hetsim, tmp_path, monkeypatch):
    """No hetsim command leaves figures, rcParams, variables or the cwd changed today; one that
    did must not leak into the next test."""
    import click
    import matplotlib.pyplot as plt

    from hetsim.cli import cli
    from hetsim.cli._common import console

    @click.command()
    def leaky() -> None:
        plt.figure()
        matplotlib.rcParams["lines.linewidth"] = 7.0
        os.environ["HETSIM_LEAKED"] = "1"
        os.chdir(tmp_path)
        console.print("from rich")
        click.echo("from click")
        click.echo("to stderr", err=True)

    monkeypatch.setitem(cli.commands, "leaky", leaky)
    figures, width, cwd = plt.get_fignums(), matplotlib.rcParams["lines.linewidth"], os.getcwd()
    run = hetsim("leaky")
    assert (run.returncode, run.stdout, run.stderr) == (0, "from rich\nfrom click\n", "to stderr\n")
    assert plt.get_fignums() == figures and matplotlib.rcParams["lines.linewidth"] == width
    assert "HETSIM_LEAKED" not in os.environ and os.getcwd() == cwd


def test_in_process_exit_codes_follow_the_interpreter(hetsim):
    assert hetsim("--version").returncode == 0
    assert hetsim("--help").returncode == 0
    assert hetsim("reproduce", "--list").returncode == 0
    assert hetsim("nosuchcommand").returncode == 2
