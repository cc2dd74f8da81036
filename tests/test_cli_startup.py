"""``hetsim --help`` and ``hetsim explore --help`` start without the heavy libraries: what they import
is checked here (benchmarks and the issue's report measure the time; tests never assert time).

The command list of ``hetsim --help`` comes from :data:`hetsim.cli.COMMANDS` without importing the
commands' modules: each line must be the command's own."""

from __future__ import annotations

import json
import subprocess
import sys

import click

from hetsim.cli import COMMANDS, cli
from hetsim.plugins import resolve

HEAVY = ("pandas", "matplotlib", "simpy", "onnx", "onnxruntime", "scipy", "pymoo", "numpy", "networkx",
         "dask", "ortools", "pydantic", "rich", "yaml")

PROBE = """
import json, sys
from hetsim.cli import main
seen = {}
for argv in (["--help"], ["explore", "--help"], ["simulate", "--help"]):
    try:
        main(argv)
    except SystemExit:
        pass
    seen[" ".join(argv)] = sorted(m for m in HEAVY if m in sys.modules)
print(json.dumps(seen), file=sys.stderr)
"""


def test_help_imports_no_heavy_library():
    p = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n" + PROBE], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    seen = json.loads(p.stderr.strip().splitlines()[-1])
    assert seen == {"--help": [], "explore --help": [], "simulate --help": []}
    assert "--algorithm" in p.stdout and "(stages of layers): ES, RW, HC" in " ".join(p.stdout.split())


def test_the_listed_help_of_each_command_is_its_own():
    for name, (ref, line) in COMMANDS.items():
        command = resolve(ref)
        assert isinstance(command, click.Command) and command.name == name
        assert click.Command(name, help=line).get_short_help_str(1000) == command.get_short_help_str(1000), name
    ctx = click.Context(cli)
    assert set(COMMANDS) <= set(cli.list_commands(ctx))
