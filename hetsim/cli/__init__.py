"""The ``hetsim`` command line: one module per command group, registered on one click group.

Every user error ends as one line on stderr (``hetsim: error: ...``) and exit code 2; no traceback.
``main(argv)`` runs in-process (the tests call it so), ``python -m hetsim`` and the ``hetsim``
script call it with ``sys.argv``.
"""

from __future__ import annotations

import errno
import os
import sys

import click

from hetsim.errors import HetsimError


def _fail(message: str) -> None:
    click.echo(f"hetsim: error: {message}", err=True)
    sys.exit(2)


#: errno values of a write to standard output that cannot succeed (a full disk, a quota, a device
#: error, a file too large), which reach main as an OSError without a file name.
_OUTPUT_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EBADF)


def _standard_streams() -> None:
    """Refuse to run with standard output closed (``hetsim ... >&-``: the results would vanish and
    the exit code say 0), and fill a closed standard stream with /dev/null first, so that no file
    hetsim opens lands on descriptor 0, 1 or 2 and receives what is printed there."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        nul = os.open(os.devnull, os.O_RDWR)
        if nul != fd:
            os.dup2(nul, fd)
            os.close(nul)
    if 1 in closed:
        _fail("standard output is closed; hetsim prints its results there (redirect it to a file "
              "or to /dev/null instead)")


def _silence_stdout() -> None:
    """Point descriptor 1 at /dev/null, so that the interpreter's last flush of what could not be
    written does not add a second message."""
    try:
        nul = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nul, 1)
        os.close(nul)
    except OSError:
        pass


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the click group and turn every user error into one line and exit 2."""
    if argv is None:
        _standard_streams()
    try:
        cli.main(args=argv, prog_name="hetsim", standalone_mode=False)
        if argv is None and sys.stdout is not None:
            sys.stdout.flush()   # a full disk is reported here, not at the interpreter's exit
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
    except ModuleNotFoundError as e:
        from hetsim.extras import missing_extra

        line = missing_extra(e)
        if line is None:
            raise
        _fail(line)
    except MemoryError:
        # Past what the run's estimate foresaw (or --force past the limit): one line, not a trace.
        _fail("out of memory: the run needs more memory than this machine gives it; give fewer "
              "--frames or a smaller problem")
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(0)
    except OSError as e:
        if e.errno not in _OUTPUT_ERRNOS or e.filename is not None:
            raise
        _silence_stdout()
        _fail(f"cannot write to standard output ({e.strerror or e})")
    finally:
        from hetsim import loading

        loading.reset()   # a command's --force ends with it (tests run many in one process)


def entry() -> None:
    """The ``hetsim`` command (and ``python -m hetsim``): :func:`main` in a process of its own, which
    draws to files only: matplotlib's file backend unless the user names one (the library never
    picks a backend, so a notebook keeps its inline plots; :func:`main` called in-process changes
    nothing)."""
    os.environ.setdefault("MPLBACKEND", "agg")
    main()


#: hetsim's own commands: name -> ("module:attribute", the command's one-line help). ``hetsim
#: --help`` lists them from this table and a command's module is imported when the command runs,
#: so the start-up pays for click alone (tests/test_cli_startup.py checks both the lines and what
#: ``--help`` imports).
COMMANDS = {
    "calibrate": ("hetsim.cli.calibrate:calibrate",
                  "Fit a platform YAML to measurements (a board's per-layer times, this machine, ...)."),
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


#: hetsim's commands that are groups a plugin may add a subcommand to ("group:module:command").
_COMMAND_GROUPS = ("calibrate", "costs", "platforms", "workloads")


class _LazyGroup(click.Group):
    """hetsim's commands from :data:`COMMANDS`, imported on first use, and the plugins' commands."""

    def list_commands(self, ctx) -> list[str]:
        return sorted({*COMMANDS, *self.commands, *_plugin_commands()})

    def get_command(self, ctx, name):
        if name not in self.commands:
            if name in COMMANDS:
                from hetsim.plugins import resolve

                command = resolve(COMMANDS[name][0])
                for sub in _plugin_subcommands().get(name, []):   # a plugin's 'group:module:command'
                    command.add_command(sub)
                self.add_command(command, name)
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
_PLUGIN_SUBCOMMANDS: dict | None = None


def _load_plugin_commands() -> None:
    """The installed plugins' commands (imported on first use): those of ``hetsim`` itself by name,
    and those that join one of hetsim's command groups (``calibrate host``) by group."""
    global _PLUGIN_COMMANDS, _PLUGIN_SUBCOMMANDS
    if _PLUGIN_COMMANDS is None or _PLUGIN_SUBCOMMANDS is None:
        from hetsim.plugins import commands

        top: dict = {}
        sub: dict = {}
        for group, command in commands():
            if group is None:
                top[command.name] = command
                continue
            if group not in _COMMAND_GROUPS:
                raise HetsimError(f"a plugin adds {command.name!r} to hetsim {group!r}, which is not a command "
                                  f"group; groups: {', '.join(_COMMAND_GROUPS)}")
            sub.setdefault(group, []).append(command)
        _PLUGIN_COMMANDS, _PLUGIN_SUBCOMMANDS = top, sub


def _plugin_commands() -> dict:
    """The installed plugins' commands of ``hetsim`` itself, by name."""
    _load_plugin_commands()
    assert _PLUGIN_COMMANDS is not None
    return _PLUGIN_COMMANDS


def _plugin_subcommands() -> dict:
    """The installed plugins' commands that join a core group, by group."""
    _load_plugin_commands()
    assert _PLUGIN_SUBCOMMANDS is not None
    return _PLUGIN_SUBCOMMANDS


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="hetsim")
def cli() -> None:
    """hetsim: simulate DNN mappings on heterogeneous platforms."""
