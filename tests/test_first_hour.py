"""A new user's first hour, scripted: the README's commands in order, then ``hetsim explore`` with
defaults on every shipped platform. Each command ends in a result or in one error line that names
a flag (or a file and field); where the README shows a command's output, the output is today's.

The README's commands are read from the README itself (its console blocks: ``$ hetsim ...`` lines
with the output below them, and plain ``hetsim ...`` lines that are not the synopsis), so a new
command there is run here without anyone listing it.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from helpers import assert_one_line_error, missing_shipped_plugins

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
PLATFORMS = sorted(p.stem for p in (ROOT / "platforms").glob("*.yaml"))

#: Commands the fast walkthrough leaves to the slow one (each takes more than a few seconds), and
#: the two that are the test suite's own business already (tests/test_reproduce_*.py, the quick
#: reproductions in CI): full reproductions take minutes.
SLOW = ("hetsim profile ", "hetsim costs import-ort ", "hetsim simulate -p prof/", "hetsim reproduce shisha:fig4")
ELSEWHERE = ("hetsim reproduce pipesearch --out results", "hetsim reproduce --all --quick")
#: Output that depends on the machine (ONNX Runtime timings): run, not compared.
MEASURED_HERE = ("hetsim profile ", "hetsim costs import-ort ", "hetsim simulate -p prof/")
#: Where the README says an input file comes from (prose, not a console line).
SETUP = {"mobilenet.onnx": "hetsim workloads export mobilenet --weights random --out mobilenet.onnx"}


def readme_commands() -> list[tuple[str, list[str]]]:
    """(command, the output lines the README shows under it) for every runnable ``hetsim`` command
    of the README's console blocks, in order. Synopsis lines (with ``[options]`` or ``a | b``
    alternatives) are not commands."""
    text = README.read_text()
    out: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("$ hetsim "):
                cmd = line[2:]
                while cmd.endswith("\\"):
                    i += 1
                    cmd = cmd[:-1] + lines[i].strip()
                shown = []
                while i + 1 < len(lines) and not lines[i + 1].startswith("$ "):
                    i += 1
                    shown.append(lines[i])
                out.append((cmd.strip(), shown))
            elif line.startswith("hetsim ") and "[" not in line and " | " not in line:
                out.append((line.split("#")[0].strip(), []))
            i += 1
    return out


def _compare(cmd: str, shown: list[str], run) -> None:
    """Lines the README shows must be in today's output (apart from '...' elisions and machine
    measurements); a shown error must be today's error, word for word. The README shows the full
    installation (``hetsim explore``'s default is Shisha's plugin): with a shipped plugin left out,
    its commands must still run, but their outputs are not compared."""
    if cmd.startswith(MEASURED_HERE) or missing_shipped_plugins():
        return
    actual = [ln.rstrip() for ln in (run.stdout + run.stderr).splitlines()]
    for line in shown:
        if line.strip() in ("", "...") or line.startswith("hetsim: error:"):
            continue
        assert line.rstrip() in actual, f"README is stale for `{cmd}`: {line!r} is not in today's output"


def _run_readme(hetsim, tmp_path, skip: tuple[str, ...]) -> list[str]:
    ran = []
    for name, cmd in SETUP.items():
        assert cmd in README.read_text(), f"README no longer says how {name} is made"
    missing = missing_shipped_plugins()
    for cmd, shown in readme_commands():
        if cmd.startswith(skip) or (cmd.startswith("hetsim reproduce ") and cmd.split()[2].split(":")[0] in missing):
            continue   # a paper left out: its reproduction is not there to run
        for name, setup in SETUP.items():
            if name in cmd.split() and not (tmp_path / name).exists():
                assert hetsim(*shlex.split(setup)[1:], cwd=tmp_path).returncode == 0
        run = hetsim(*shlex.split(cmd)[1:], cwd=tmp_path)
        errors = [ln for ln in shown if ln.startswith("hetsim: error:")]
        if errors:
            assert_one_line_error(run, errors[0][len("hetsim: error: "):])
        else:
            assert run.returncode == 0, f"`{cmd}` failed: {run.stderr}"
        _compare(cmd, shown, run)
        ran.append(cmd)
    return ran


def test_the_readme_lists_what_this_test_expects():
    cmds = [c for c, _ in readme_commands()]
    assert any(c.startswith("hetsim explore ") for c in cmds)
    for prefix in SLOW + ELSEWHERE:
        assert any(c.startswith(prefix) for c in cmds), f"README has no `{prefix}` any more: update SLOW"


def test_readme_commands_in_order(hetsim, tmp_path):
    ran = _run_readme(hetsim, tmp_path, SLOW + ELSEWHERE)
    assert len(ran) >= 6


@pytest.mark.slow
def test_readme_commands_in_order_with_the_slow_ones(hetsim, tmp_path):
    ran = _run_readme(hetsim, tmp_path, ELSEWHERE)
    assert any(c.startswith("hetsim profile ") for c in ran)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_explore_with_defaults_on_every_shipped_platform(hetsim, platform):
    """Each shipped platform: ``hetsim explore -p NAME -w resnet50`` finds a feasible mapping and
    says which EPs it searched, or fails in one line that names a flag."""
    run = hetsim("explore", "-p", platform, "-w", "resnet50")
    if run.returncode != 0:
        assert_one_line_error(run, "--")
        return
    assert f"hetsim: note: {platform}: candidate EPs" in run.stderr
    assert "simulate it: hetsim simulate" in run.stdout, run.stdout
    mapping = re.search(r"-m '([^']+)'", run.stdout).group(1)
    sim = hetsim("simulate", "-p", platform, "-w", "resnet50", "-m", mapping, "--engine", "analytic")
    assert sim.returncode == 0, sim.stderr


def test_first_hour_errors_name_flags(hetsim):
    """What a new user types wrong first: each is one line naming the flag and what is allowed."""
    assert_one_line_error(hetsim("explore", "-p", "hikey970", "-w", "resnet50", "--eps", "B4,s4,B2"),
                          "--eps B4,B2: both are cores of big")
    assert_one_line_error(hetsim("explore", "-p", "hikey970", "-w", "resnet50", "-a", "HC",
                                 "--param", "depth=2"), "--param depth: HC has no parameter 'depth'")
    assert_one_line_error(hetsim("simulate", "-p", "hikey970", "-w", "resnet50", "-m", "B4:0-29|s4:30-54"),
                          "starts at layer 0; layers are 1-based (1..54)")
    assert_one_line_error(hetsim("simulate", "-p", "hikey970", "-w", "resnet50", "-m", "B4:1-29|s4:0-54"),
                          "stage 2 (s4:0-54) starts at layer 0; layers are 1-based")
