"""What the commands share: the console, the metrics table, value formatting."""

from __future__ import annotations

import re

import click
from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from hetsim.errors import HetsimError

_NUMBER = re.compile(r"[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?%?( \*)?|[-+]?inf|nan|-")


def uncut(table: Table) -> Table:
    """Make ``table`` print every value whole at any console width: a column is never narrower
    than its widest number or its longest word (up to 48 characters: a mapping string), so the table grows past the
    width instead of cutting "12.345" to "12.…"; longer text folds onto the next line."""
    for column in table.columns:
        column.overflow = "fold"
        header = column.header.plain if isinstance(column.header, Text) else str(column.header)
        longest = min(16, max((len(w) for w in header.split()), default=0))
        for cell in column.cells:
            text = (cell.plain if isinstance(cell, Text) else str(cell)).strip()
            if _NUMBER.fullmatch(text):
                longest = max(longest, len(text))
            else:
                longest = max(longest, min(48, max((len(w) for w in text.split()), default=0)))
        column.min_width = max(longest, column.min_width or 0)
    return table


class _Console(Console):
    """rich's Console; a table it prints never cuts a value (:func:`uncut`): one wider than the
    console is printed at its own width (a terminal wraps the lines; a file keeps them whole)."""

    def print(self, *objects, **kwargs) -> None:
        for obj in objects:
            if isinstance(obj, Table) and "width" not in kwargs:
                uncut(obj)
                # rich may lay a table out wider than asked (columns' min_width win): measure the
                # lines it renders, not its nominal minimum.
                lines = Segment.split_lines(self.render(obj, self.options))
                need = max((Segment.get_line_length(line) for line in lines), default=0)
                if need > self.width:
                    super().print(obj, **kwargs, width=need, crop=False)
                    continue
            super().print(obj, **kwargs)


console = _Console()


def check_flag(flag: str, value, rng: tuple[float, float], unit: str = "", *, low_open: bool = False,
               integer: bool = False):
    """A command-line number in its range (:mod:`hetsim.bounds`), else one line naming the flag, the
    value and the range. None (the flag not given) passes."""
    from hetsim.bounds import check

    if value is None:
        return None
    try:
        return check(value, rng[0], rng[1], unit, low_open, integer)
    except ValueError as e:
        raise HetsimError(f"{flag} {e} (got {value!r})") from None


def print_metrics(m) -> None:
    title = escape(f"{m.workload} on {m.platform} [{m.engine}{', contention' if m.contention else ''}]")
    t = Table(title=title, title_justify="left")
    for col in ("stage", "EP", "layers", "time (ms)", "compute (ms)", "transfer (ms)", "util"):
        t.add_column(col, justify="right" if col not in ("EP",) else "left")
    for i, s in enumerate(m.stages, 1):
        mark = " *" if m.bottleneck == i - 1 else ""
        t.add_row(f"{i}{mark}", s.ep, f"{s.layers[0]}-{s.layers[1]}", f"{s.time_s * 1e3:.2f}",
                  f"{s.compute_s * 1e3:.2f}", f"{s.transfer_s * 1e3:.2f}", f"{s.utilization:.0%}")
    if m.stages:
        console.print(t)
    lat = m.latency_s
    console.print(f"mapping            {m.mapping}")
    console.print(f"throughput         {m.throughput_fps:.3f} frames/s (steady state; "
                  f"{m.stream_throughput_fps:.3f} over the {m.frames}-frame stream)")
    console.print(f"latency            mean {lat['mean'] * 1e3:.2f} ms, p50 {lat['p50'] * 1e3:.2f} ms, "
                  f"p99 {lat['p99'] * 1e3:.2f} ms")
    console.print(f"makespan           {m.makespan_s:.4f} s")
    if m.task_time_s:   # a DAG placement: time in computation and in copies per frame
        console.print(f"tasks              compute {m.task_time_s['compute'] * 1e3:.2f} ms, "
                      f"transfer {m.task_time_s['transfer'] * 1e3:.2f} ms per frame")
    energy = "n/a (no power model)" if m.energy_J is None else (
        f"{m.energy_J:.3f} J ({m.energy_J / m.frames:.4f} J/frame)")
    console.print(f"energy             {energy}")


def fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


#: CLI parameter -> RunOptions field (and how to turn the flag's value into the field's).
_RUN_FIELDS = {
    "engine": ("engine", None), "frames": ("frames", None), "no_contention": ("contention", lambda v: not v),
    "seed": ("seed", None), "noise_sigma": ("noise_sigma", None), "source": ("source", None),
    "interval_s": ("interval_s", None), "buffer_frames": ("buffer_frames", None),
    "in_flight": ("in_flight", None), "flows": ("flows", None), "force": ("force", None),
}


def run_options(ctx, **params):
    """The :class:`~hetsim.options.RunOptions` of the flags the user gave (defaults are left to
    RunOptions, so an option the engine or mapping ignores is refused only when given)."""
    from click.core import ParameterSource

    from hetsim.options import RunOptions

    fields = {}
    for name, value in params.items():
        field, convert = _RUN_FIELDS[name]
        if name == "engine" or ctx.get_parameter_source(name) != ParameterSource.DEFAULT:
            fields[field] = convert(value) if convert else value
    return RunOptions.make(**fields)


class LazyChoice(click.Choice):
    """A click choice whose values a function computes when they are first needed (the installed
    plugins' cost models), not when the command is defined: ``LazyChoice("module:function")``."""

    def __init__(self, values: str) -> None:
        self._values = values
        self.case_sensitive = True

    @property
    def choices(self):
        from hetsim.plugins import resolve

        return tuple(resolve(self._values)())


class PluginHelpOption(click.Option):
    """An option whose help names what the installed plugins add, computed when the help is shown
    (not when the command is defined, which imports no plugin): ``listing="module:function"``
    returns the text that replaces ``{installed}`` in ``help``."""

    def __init__(self, *args, listing: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._template, self._listing = self.help or "", listing

    def get_help_record(self, ctx):
        from hetsim.plugins import resolve

        self.help = self._template.replace("{installed}", resolve(self._listing)())
        return super().get_help_record(ctx)


def progress_bar(console):
    """A rich progress bar of long work (a description, the bar, done of total, elapsed time); on a
    terminal only: on a file or a pipe it would print its last state, lines before an error's one."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=False, disable=not console.is_terminal)
