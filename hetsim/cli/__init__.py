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


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="hetsim")
def cli() -> None:
    """hetsim: simulate DNN mappings on heterogeneous platforms."""


def _register() -> None:
    from hetsim.cli import (
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
                    *commands()):
        cli.add_command(command)


_register()
