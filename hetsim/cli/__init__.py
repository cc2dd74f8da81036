"""The ``hetsim`` command line: one module per command group, registered on one click group.

Every user error ends as one line on stderr (``hetsim: error: ...``) and exit code 2; no traceback.
``main(argv)`` runs in-process (the tests call it so), ``python -m hetsim`` and the ``hetsim``
script call it with ``sys.argv``.
"""

from __future__ import annotations

import sys

import click

from hetsim.errors import HetsimError


def _fail(message: str) -> None:
    click.echo(f"hetsim: error: {message}", err=True)
    sys.exit(2)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the click group and turn every user error into one line and exit 2."""
    try:
        cli.main(args=argv, prog_name="hetsim", standalone_mode=False)
    except HetsimError as e:
        _fail(str(e))
    except click.exceptions.Abort:
        _fail("interrupted")   # click turns Ctrl-C (KeyboardInterrupt) into Abort
    except click.ClickException as e:
        _fail(" ".join(e.format_message().split()))
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted")
    except MemoryError:
        # Past what the run's estimate foresaw (or --force past the limit): one line, not a trace.
        _fail("out of memory: the run needs more memory than this machine gives it; give fewer "
              "--frames or a smaller problem")
    except BrokenPipeError:
        sys.exit(0)


#: hetsim's own commands: name -> ("module:attribute", the command's one-line help). ``hetsim
#: --help`` lists them from this table and a command's module is imported when the command runs,
#: so the start-up pays for click alone (tests/test_cli_startup.py checks both the lines and what
#: ``--help`` imports).
COMMANDS = {
    "costs": ("hetsim.cli.costs:costs", "Measured cost tables (for --cost-table) from other tools' measurements."),
    "demo": ("hetsim.cli.demo:demo",
             "Pipe-it's B4-s2-s2 ResNet50 pipeline on hikey970: table, Gantt PNG and Perfetto trace."),
    "explore": ("hetsim.cli.explore:explore_cmd", "Search mappings of a workload with one of the registered algorithms."),
    "platforms": ("hetsim.cli.platforms:platforms", "List, show, validate platforms; export their JSON Schema."),
    "plot": ("hetsim.cli.plot:plot",
             "Plot METRIC against an axis of the sweep in DIR (other axes: mean, band min..max)."),
    "profile": ("hetsim.cli.profile:profile",
                "Measure MODEL on this machine with ONNX Runtime (one session per thread count, threads "
                "pinned, random inputs) and write its profiles, a measured cost table per op and thread "
                "count, the workload and a platform whose EPs are the thread settings (C1, C2, ...)."),
    "reproduce": ("hetsim.cli.reproduce:reproduce", "Regenerate papers' figures and tables: SPEC is a paper "
                  "(pipesearch) or paper:id (shisha:fig4)."),
    "simulate": ("hetsim.cli.simulate:simulate", "Simulate one mapping of a workload on a platform."),
    "sweep": ("hetsim.cli.sweep:sweep", "Run every cell of SPEC (a YAML file, or a shipped SPEC by name: tournament, ...)."),
    "workloads": ("hetsim.cli.workloads:workloads", "List, show, import (from ONNX) and export (to ONNX) workloads."),
}


class _LazyGroup(click.Group):
    """hetsim's commands from :data:`COMMANDS`, imported on first use, and the plugins' commands."""

    def list_commands(self, ctx) -> list[str]:
        return sorted({*COMMANDS, *self.commands, *_plugin_commands()})

    def get_command(self, ctx, name):
        if name not in self.commands:
            if name in COMMANDS:
                from hetsim.plugins import resolve

                self.add_command(resolve(COMMANDS[name][0]), name)
            elif name in _plugin_commands():
                self.add_command(_plugin_commands()[name], name)
        return self.commands.get(name)

    def format_commands(self, ctx, formatter) -> None:
        """click's command list of ``--help``, hetsim's own lines from :data:`COMMANDS` (no import)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            if name in COMMANDS and name not in self.commands:
                rows.append((name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)))
                continue
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


_PLUGIN_COMMANDS: dict | None = None


def _plugin_commands() -> dict:
    """The installed plugins' commands by name (imported on first use)."""
    global _PLUGIN_COMMANDS
    if _PLUGIN_COMMANDS is None:
        from hetsim.plugins import commands

        _PLUGIN_COMMANDS = {c.name: c for c in commands()}
    return _PLUGIN_COMMANDS


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="hetsim")
def cli() -> None:
    """hetsim: simulate DNN mappings on heterogeneous platforms."""
