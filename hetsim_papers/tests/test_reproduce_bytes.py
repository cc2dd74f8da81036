"""Reproducing papers in fresh processes: killed at random moments, a run leaves only complete files;
two runs (two processes, different hash seeds) write the same bytes. Moved from tests/test_robustness.py
and tests/test_entry_point.py: the reproduce command's robustness, on the shipped papers' experiments."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import CLI_ENV, check_folder, run_and_kill, subprocess_env

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    """This interpreter's environment with the runner's terminal settings; this worktree first on
    the import path so a child imports the hetsim under test, not another checkout."""
    env = {k: v for k, v in os.environ.items() if k not in CLI_ENV}
    env.update({k: v for k, v in CLI_ENV.items() if v is not None})
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.update(extra)
    return env


# -- kills at random moments -------------------------------------------------------------------------
#: Seeded random moments (s) after the start of the process, plus "in the middle of a write".
_MOMENTS = [round(random.Random(12).uniform(2.0, 9.0), 2) for _ in range(2)] + ["write"]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_killed_reproduce_leaves_only_complete_files(tmp_path, sig):
    seen = 0
    for i, moment in enumerate(_MOMENTS):
        out = tmp_path / f"run{i}"
        run = run_and_kill(["reproduce", "pipesearch", "--quick", "--out", str(out)], out, sig, moment)
        if sig == signal.SIGINT and run.returncode == -signal.SIGINT:
            # the signal came after the work was done, while the interpreter shut down (a loaded
            # machine is slow to exit): the run had printed its last line, its files are complete
            assert (out / "scorecard.json").is_file() and not run.stderr.strip(), (run.stdout, run.stderr)
        elif sig == signal.SIGINT and run.returncode != 0:
            assert run.returncode == 2 and run.stderr.strip().endswith("hetsim: error: interrupted"), run.stderr
        else:
            assert run.returncode in (0, -signal.SIGKILL), run.stderr
        seen += len(check_folder(out, killed=sig == signal.SIGKILL) if out.exists() else [])
    assert seen > 0     # some kill came after some file was written


@pytest.mark.slow
def test_reproduce_twice_gives_identical_bytes(tmp_path):
    """Two processes, two folders: every CSV, PNG, JSON and scorecard file byte for byte."""
    argv = ["reproduce", "pipesearch", "shisha:fig9", "pipeit:table4", "--quick", "--out"]
    procs = [subprocess.Popen([sys.executable, "-m", "hetsim", *argv, str(tmp_path / d)], env=subprocess_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for d in "ab"]
    for p in procs:
        assert p.wait(timeout=600) == 0, p.stderr.read() if p.stderr else ""
    a = sorted(str(f.relative_to(tmp_path / "a")) for f in (tmp_path / "a").rglob("*") if f.is_file())
    b = sorted(str(f.relative_to(tmp_path / "b")) for f in (tmp_path / "b").rglob("*") if f.is_file())
    assert a == b and {"scorecard.json", "scorecard.md", "pipesearch/fig1.csv", "pipesearch/fig1.png"} <= set(a)
    for name in a:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


@pytest.mark.slow
def test_reproduce_in_a_fresh_interpreter_writes_the_same_bytes(hetsim, tmp_path):
    """Two processes with different hash seeds (set and dict order of strings differ) write
    byte-identical tables: nothing depends on this interpreter's state or its caches."""
    specs = ["pipesearch:table3", "pipesearch:table6", "pipesearch:fig3"]
    real = subprocess.run([sys.executable, "-m", "hetsim", "reproduce", *specs, "--quick", "--out",
                           tmp_path / "fresh"], capture_output=True, text=True,
                          env=_env(PYTHONHASHSEED="12345"), stdin=subprocess.DEVNULL, timeout=300)
    assert real.returncode == 0, real.stderr
    ours = hetsim("reproduce", *specs, "--quick", "--out", tmp_path / "here")
    assert ours.returncode == 0, ours.stderr
    for eid in ("table3", "table6", "fig3"):
        fresh = (tmp_path / "fresh" / "pipesearch" / f"{eid}.csv").read_bytes()
        assert fresh and fresh == (tmp_path / "here" / "pipesearch" / f"{eid}.csv").read_bytes()
