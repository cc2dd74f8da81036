"""Reproducing papers: experiments, claims and the scorecard.

An *experiment* regenerates one figure or table of a paper. It is a function registered with
:func:`experiment` that returns an :class:`Artifact`: a tidy DataFrame (written as CSV), an
optional matplotlib figure (PNG) and *claims*, each the paper's value, the simulated value, a
tolerance and a verdict. ``hetsim reproduce`` runs a selection and writes
``<out>/<paper>/<id>.{csv,png}`` plus ``<out>/scorecard.{md,json}``.

    @experiment("shisha", "fig9", "Throughput vs inter-chiplet latency")
    def fig9(ctx: Context) -> Artifact:
        ...
        return Artifact(table, fig, [claim_close(...)])

Every number a claim carries comes out of the simulator; a claim that fails is information and is
reported as such, never tuned away.
"""

from __future__ import annotations

import importlib
import json
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from hetsim.errors import HetsimError
from hetsim.validation import atomic_write

#: The papers whose experiment modules ``hetsim reproduce`` knows, in scorecard order.
PAPERS = {
    "pipesearch": "hetsim.experiments.pipesearch",
    "shisha": "hetsim.experiments.shisha",
    "pipeit": "hetsim.experiments.pipeit",
    "nsga2": "hetsim.experiments.nsga2",
}


@dataclass
class Claim:
    paper: str
    id: str
    claim: str
    paper_value: Any
    sim_value: Any
    tolerance: str
    passed: bool
    known_disagreement: str | None = None   # why hetsim is known to disagree (hetsim/experiments/known_disagreements.yaml)

    def row(self) -> dict:
        d = asdict(self)
        d["paper_value"] = _jsonable(d["paper_value"])
        d["sim_value"] = _jsonable(d["sim_value"])
        d["pass"] = d.pop("passed")   # the scorecard's column name
        return d


@dataclass
class Artifact:
    table: pd.DataFrame
    figure: Any = None                     # a matplotlib Figure, or None
    claims: list[Claim] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Context:
    """What an experiment is run with: ``quick`` for the CI-sized version, a base seed."""

    paper: str
    id: str
    quick: bool = False
    seed: int = 0
    progress: bool = False

    # Claim constructors that know the paper and experiment id.
    def close(self, claim: str, paper_value: float, sim_value: float, rel: float | None = None,
              abs_: float | None = None) -> Claim:
        return claim_close(self.paper, self.id, claim, paper_value, sim_value, rel, abs_)

    def within(self, claim: str, paper_value: Any, sim_value: float, lo: float, hi: float) -> Claim:
        return claim_range(self.paper, self.id, claim, paper_value, sim_value, lo, hi)

    def equal(self, claim: str, paper_value: Any, sim_value: Any) -> Claim:
        return claim_equal(self.paper, self.id, claim, paper_value, sim_value)

    def true(self, claim: str, paper_value: Any, sim_value: Any, ok: bool, tolerance: str) -> Claim:
        return Claim(self.paper, self.id, claim, paper_value, sim_value, tolerance, bool(ok))


def claim_close(paper: str, id: str, claim: str, paper_value: float, sim_value: float,
                rel: float | None = None, abs_: float | None = None) -> Claim:
    """Passes when |sim - paper| <= rel * |paper| or <= abs_."""
    if rel is None and abs_ is None:
        raise ValueError("give rel or abs_")
    diff = abs(float(sim_value) - float(paper_value))
    ok = (rel is not None and diff <= rel * abs(float(paper_value))) or (abs_ is not None and diff <= abs_)
    tol = " or ".join(t for t in (f"±{rel:.0%}" if rel is not None else "",
                                  f"±{abs_:g}" if abs_ is not None else "") if t)
    return Claim(paper, id, claim, paper_value, sim_value, tol, bool(ok and math.isfinite(diff)))


def claim_range(paper: str, id: str, claim: str, paper_value: Any, sim_value: float,
                lo: float, hi: float) -> Claim:
    ok = lo <= float(sim_value) <= hi
    return Claim(paper, id, claim, paper_value, sim_value, f"in [{lo:g}, {hi:g}]", bool(ok))


def claim_equal(paper: str, id: str, claim: str, paper_value: Any, sim_value: Any) -> Claim:
    return Claim(paper, id, claim, paper_value, sim_value, "exact", _jsonable(paper_value) == _jsonable(sim_value))


# -- the registry ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Experiment:
    paper: str
    id: str
    title: str
    fn: Callable[[Context], Artifact]
    quick_in_tests: bool = True


_REGISTRY: dict[str, dict[str, Experiment]] = {}


def experiment(paper: str, id: str, title: str, quick_in_tests: bool = True):
    """Register the decorated function as ``paper:id``."""
    def wrap(fn: Callable[[Context], Artifact]) -> Callable[[Context], Artifact]:
        _REGISTRY.setdefault(paper, {})[id] = Experiment(paper, id, title, fn, quick_in_tests)
        return fn
    return wrap


def load_papers(papers: Iterable[str] | None = None) -> dict[str, dict[str, Experiment]]:
    """Import the experiment modules (which register their experiments) and return the registry."""
    for paper in papers or PAPERS:
        module = PAPERS.get(paper)
        if module is None:
            raise HetsimError(f"unknown paper {paper!r}; known: {', '.join(PAPERS)}")
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
    return _REGISTRY


def select(spec: list[str], all_: bool) -> list[Experiment]:
    """``pipesearch`` (every experiment of a paper), ``shisha:fig4`` (one), or all of them."""
    registry = load_papers(None if all_ or not spec else {s.split(":")[0] for s in spec})
    if all_ or not spec:
        return [e for p in PAPERS for e in registry.get(p, {}).values()]
    chosen = []
    for s in spec:
        paper, _, eid = s.partition(":")
        exps = registry.get(paper)
        if not exps:
            raise HetsimError(f"no experiments for {paper!r}; papers with experiments: "
                              f"{', '.join(p for p in PAPERS if registry.get(p))}")
        if eid:
            if eid not in exps:
                raise HetsimError(f"{paper} has no experiment {eid!r}; it has {', '.join(exps)}")
            chosen.append(exps[eid])
        else:
            chosen.extend(exps.values())
    return chosen


# -- running and writing ----------------------------------------------------------------------------
@dataclass
class Outcome:
    experiment: Experiment
    artifact: Artifact
    seconds: float
    quick: bool = False


def run_experiment(exp: Experiment, quick: bool = False, seed: int = 0, progress: bool = False) -> Outcome:
    t0 = time.perf_counter()
    artifact = exp.fn(Context(exp.paper, exp.id, quick, seed, progress))
    known = known_disagreements()
    for c in artifact.claims:
        k = known.get((c.paper, c.id, c.claim))
        if k is not None and k.applies(quick):
            c.known_disagreement = k.reason
    return Outcome(exp, artifact, time.perf_counter() - t0, quick)


# -- known disagreements ----------------------------------------------------------------------------
#: Claims hetsim is known to fail, each with the reason (a model limit or a paper inconsistency,
#: explained in the paper's page under docs/papers/). The scorecard still says FAIL; the test suite
#: fails on any *other* failing claim, and on a listed claim that starts passing (remove it then).
KNOWN_DISAGREEMENTS = Path(__file__).resolve().parent / "experiments" / "known_disagreements.yaml"


@dataclass(frozen=True)
class Known:
    paper: str
    id: str
    claim: str
    reason: str
    when: str = "both"   # both | quick | full: the version(s) of the experiment it fails in

    def applies(self, quick: bool) -> bool:
        return self.when == "both" or self.when == ("quick" if quick else "full")


def known_disagreements(path: Path | None = None) -> dict[tuple[str, str, str], Known]:
    import yaml

    path = path or KNOWN_DISAGREEMENTS
    if not path.is_file():
        return {}
    entries = yaml.safe_load(path.read_text()) or []
    out = {}
    for e in entries:
        k = Known(**e)
        if k.when not in ("both", "quick", "full"):
            raise HetsimError(f"{path}: when {k.when!r} for {k.paper}:{k.id} {k.claim!r}; allowed: both, quick, full")
        out[(k.paper, k.id, k.claim)] = k
    return out


def claim_problems(outcome: Outcome) -> list[str]:
    """What a test should fail on: claims that fail without a known reason, and known
    disagreements that no longer disagree."""
    problems = []
    exp = outcome.experiment
    made = {c.claim for c in outcome.artifact.claims}
    for (paper, eid, claim), k in known_disagreements().items():
        if paper == exp.paper and eid == exp.id and k.applies(outcome.quick) and claim not in made:
            problems.append(f"STALE: {KNOWN_DISAGREEMENTS.name} lists {claim!r}, which {paper}:{eid} "
                            "no longer claims")
    for c in outcome.artifact.claims:
        if not c.passed and c.known_disagreement is None:
            problems.append(f"FAILS: {c.claim}: paper {c.paper_value!r}, hetsim {c.sim_value!r} ({c.tolerance})")
        elif c.passed and c.known_disagreement is not None:
            problems.append(f"PASSES although listed as a known disagreement (remove it from "
                            f"{KNOWN_DISAGREEMENTS.name}): {c.claim}")
    return problems


def write_outcome(outcome: Outcome, out: Path) -> list[Path]:
    exp, art = outcome.experiment, outcome.artifact
    base = out / exp.paper
    written = []
    with atomic_write(base / f"{exp.id}.csv") as f:
        art.table.to_csv(f, index=False)
    written.append(base / f"{exp.id}.csv")
    if art.figure is not None:
        import matplotlib.pyplot as plt

        with atomic_write(base / f"{exp.id}.png", "wb") as f:
            art.figure.savefig(f, format="png", dpi=110, bbox_inches="tight")
        plt.close(art.figure)
        written.append(base / f"{exp.id}.png")
    return written


def write_scorecard(outcomes: list[Outcome], out: Path, quick: bool) -> tuple[Path, Path]:
    claims = [c for o in outcomes for c in o.artifact.claims]
    rows = [c.row() for c in claims]
    passed = sum(c.passed for c in claims)
    payload = {
        "quick": quick,
        "claims": rows,
        "passed": passed,
        "failed": len(claims) - passed,
        "experiments": [{"paper": o.experiment.paper, "id": o.experiment.id, "title": o.experiment.title,
                         "seconds": round(o.seconds, 2), "notes": o.artifact.notes} for o in outcomes],
    }
    known = sum(1 for c in claims if not c.passed and c.known_disagreement)
    payload["known_disagreements"] = known
    with atomic_write(out / "scorecard.json") as f:
        json.dump(payload, f, indent=2)
    lines = ["# hetsim scorecard", "",
             f"{passed} of {len(claims)} claims pass{' (quick versions)' if quick else ''}; "
             f"{known} of the {len(claims) - passed} failures are known disagreements, explained in "
             "docs/papers/. Every simulated value comes out of the simulator; a failed claim is a "
             "disagreement with the paper, reported as found.", ""]
    for o in outcomes:
        lines.append(f"## {o.experiment.paper}:{o.experiment.id}: {o.experiment.title}")
        lines.append("")
        if o.artifact.claims:
            lines.append("| claim | paper | hetsim | tolerance | verdict |")
            lines.append("|---|---|---|---|---|")
            for c in o.artifact.claims:
                verdict = "pass" if c.passed else (
                    f"**FAIL** (known: {_fmt(c.known_disagreement)})" if c.known_disagreement else "**FAIL**")
                lines.append(f"| {_fmt(c.claim)} | {_fmt(c.paper_value)} | {_fmt(c.sim_value)} | {c.tolerance} | "
                             f"{verdict} |")
        else:
            lines.append("(no claims: a figure to look at)")
        for note in o.artifact.notes:
            lines.append(f"\n{note}")
        lines.append(f"\n_{o.seconds:.1f} s_\n")
    with atomic_write(out / "scorecard.md") as f:
        f.write("\n".join(lines))
    return out / "scorecard.md", out / "scorecard.json"


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v).replace("|", "\\|")


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    if hasattr(v, "item"):          # numpy scalars
        return v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
