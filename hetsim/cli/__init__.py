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


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="hetsim")
def cli() -> None:
    """hetsim: simulate DNN mappings on heterogeneous platforms."""


def _register() -> None:
    from hetsim.cli import (
        calibrate,
        costs,
        demo,
        explore,
        platforms,
        plot,
        profile,
        reproduce,
        simulate,
        sweep,
        workloads,
    )
    from hetsim.plugins import commands

    for command in (simulate.simulate, explore.explore_cmd, platforms.platforms, workloads.workloads,
                    reproduce.reproduce, demo.demo, profile.profile, costs.costs, sweep.sweep, plot.plot,
                    calibrate.calibrate):
        cli.add_command(command)
    for group, command in commands():
        if group is None:
            cli.add_command(command)
            continue
        parent = cli.commands.get(group)
        if not isinstance(parent, click.Group):
            core = sorted(n for n, c in cli.commands.items() if isinstance(c, click.Group))
            raise HetsimError(f"a plugin adds {command.name!r} to hetsim {group!r}, which is not a command "
                              f"group; groups: {', '.join(core)}")
        parent.add_command(command)


_register()
