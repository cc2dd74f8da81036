"""``hetsim reproduce``: regenerate papers' figures and tables with a scorecard of claims."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from hetsim.cli._common import console
from hetsim.errors import HetsimError


@click.command()
@click.argument("spec", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every experiment of every paper.")
@click.option("--quick", is_flag=True, help="The smaller versions (what CI runs).")
@click.option("--out", type=click.Path(file_okay=False), default="results", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Base seed of every experiment.")
@click.option("--list", "list_", is_flag=True, help="List the experiments and exit.")
@click.option("--strict", is_flag=True, help="Exit with code 1 when a claim fails.")
@click.option("--workers", "-j", type=int, default=None,
              help="Processes for an experiment's independent runs [default: every core].")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
              help="Send an experiment's independent runs to this Dask scheduler instead.")
def reproduce(spec, all_, quick, out, seed, list_, strict, workers, scheduler) -> None:
    """Regenerate papers' figures and tables: SPEC is a paper (pipesearch) or paper:id (shisha:fig4).

    Writes OUT/<paper>/<id>.csv and .png, and OUT/scorecard.md + scorecard.json. The scorecard
    accumulates: experiments already in OUT's scorecard (of the same --quick or full mode) stay,
    those run now replace theirs, so papers run one by one into OUT give the scorecard of running
    them together. Results do not depend on --workers or --scheduler.
    """
    from hetsim.bounds import SEED
    from hetsim.cli._common import check_flag
    from hetsim.experiment import (
        ClaimClass,
        merge_scorecard,
        run_experiment,
        select,
        summarize_claims,
        write_outcome,
        write_scorecard,
    )
    from hetsim.validation import check_output_dir

    check_flag("--seed", seed, SEED, integer=True)
    check_flag("--workers", workers, (1, 1024), "processes", integer=True)
    check_output_dir(out, "--out")
    if workers is not None and scheduler is not None:
        raise HetsimError("--workers is for the local pool; with --scheduler the Dask cluster's workers "
                          "run the experiments' runs")

    if not spec and not all_ and not list_:
        raise HetsimError("say what to reproduce: a paper (pipesearch), paper:id (shisha:fig4) or --all")
    chosen = select(list(spec), all_ or (list_ and not spec))
    if list_:
        from hetsim.experiment import expected_durations

        t = Table("experiment", "title", "--quick", "full")
        durations = {p: expected_durations(p) for p in dict.fromkeys(e.paper for e in chosen)}
        totals, missing = [0.0, 0.0], [False, False]
        for e in chosen:
            pair = durations[e.paper].get(e.id, (None, None))
            for k, s in enumerate(pair):
                totals[k] += s or 0.0
                missing[k] |= s is None
            t.add_row(f"{e.paper}:{e.id}", escape(e.title), *map(_duration, pair))
        t.add_row("all listed", "", *(("at least " if m else "") + _duration(s) for s, m in zip(totals, missing, strict=True)))
        console.print(t)
        console.print("Durations measured on a shared 2-core machine (each paper's experiments/durations.csv, "
                      "written by benchmarks/reproduce_durations.py from a run's log; blank: not measured); "
                      "yours will differ.")
        return
    out_dir = Path(out)
    outcomes = []
    t_all = time.perf_counter()
    for n, e in enumerate(chosen, start=1):
        head = f"[{n}/{len(chosen)}] {e.paper}:{e.id} {escape(e.title)}"
        if not console.is_terminal:     # a log: the status line below is not drawn, say what starts
            console.print(head)
        with console.status(head) as status:
            def report(line: str, status=status, head=head) -> None:
                status.update(f"{head}: {escape(line)}")

            outcome = run_experiment(e, quick=quick, seed=seed, progress=False, workers=workers,
                                     scheduler=scheduler, report=report)
        write_outcome(outcome, out_dir)
        claims = outcome.artifact.claims
        ok = sum(c.passed for c in claims)
        mark = "[green]ok[/green]" if ok == len(claims) else f"[red]{len(claims) - ok} failed[/red]"
        console.print(f"{e.paper}:{e.id:<10} {ok}/{len(claims)} claims {mark}  ({outcome.seconds:.1f} s)")
        outcomes.append(outcome)
    merged, kept = merge_scorecard(outcomes, out_dir, quick)
    if kept:
        console.print(f"the scorecard keeps {kept} experiment{'s' if kept != 1 else ''} run before into {out_dir}")
    md, js = write_scorecard(merged, out_dir, quick)
    claims = [c for o in merged for c in o.artifact.claims]
    rates = summarize_claims(claims)
    console.print("independent predictions pass: " + "; ".join(
        f"{g} {r['independent']['passed']}/{r['independent']['total']}" for g, r in rates.items()))
    model = [c for c in claims if c.kind is not ClaimClass.FIT_INPUT]
    console.print(f"{sum(c.passed for c in model)}/{len(model)} claims of the model pass (fit inputs excluded); "
                  f"wrote {md} and {js} ({time.perf_counter() - t_all:.0f} s)")
    if strict and not all(c.passed for o in outcomes for c in o.artifact.claims):
        sys.exit(1)


def _duration(seconds: float | None) -> str:
    """A measured duration, '' when not measured."""
    from hetsim.loading import duration_text

    return "" if seconds is None else duration_text(seconds)
