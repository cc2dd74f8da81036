"""Reproducing papers: experiments, claims and the scorecard.

An *experiment* regenerates one figure or table of a paper. It is a function registered with
:func:`experiment` that returns an :class:`Artifact`: a tidy DataFrame (written as CSV), an
optional matplotlib figure (PNG) and *claims*, each the paper's value, the simulated value, a
tolerance and a verdict. ``hetsim reproduce`` runs a selection and writes
``<out>/<paper>/<id>.{csv,png}`` plus ``<out>/scorecard.{md,json}``.

    @experiment("shisha", "fig9", "Throughput vs inter-chiplet latency")
    def fig9(ctx: Context) -> Artifact:
        ...
        return Artifact(table, fig, [ctx.close("flat up to 1 ms", 1.0, flat, rel=0.01, kind=PREDICTION)])

Every number a claim carries comes out of the simulator; a claim that fails is information and is
reported as such, never tuned away. Every claim has a class (:class:`ClaimClass`) that says what its
agreement is evidence of; the scorecard's headline is the pass rate of the independent predictions.
"""

from __future__ import annotations

import importlib
import json
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from hetsim.errors import HetsimError
from hetsim.plugins import plugins, resolve
from hetsim.validation import atomic_write, one_line, read_yaml


def papers() -> dict[str, str]:
    """The plugins with experiments, ``name -> module``, in scorecard order (:mod:`hetsim.plugins`)."""
    return {p.name: p.experiments for p in plugins() if p.experiments}


class ClaimClass(StrEnum):
    """What a claim's agreement is evidence of (docs/papers/<paper>.md, "Claim classes")."""

    #: An independent prediction: the simulated value comes out of the calibrated model without
    #: having been a fit input and without holding by construction. Only these make the pass rate.
    PREDICTION = "prediction"
    #: A value the calibration was fitted to: the claim reports the residual. Never a pass of the model.
    FIT_INPUT = "fit input"
    #: Compares a quantity that is (nearly) a function of fit inputs: the same observation restated,
    #: a ratio of fitted columns, a value through a fitted term. Its agreement mostly reflects the fit.
    FIT_DEPENDENT = "fit-dependent"
    #: Holds by construction: an echo of how a workload was built, of an assumption, or of the algorithm.
    STRUCTURAL = "structural"
    #: An exact value of the papers' combinatorics or algorithms (counts, seeds, CVs, ranks), checked
    #: against the paper or derived from its equations and algorithms; each is also a unit test.
    VECTOR = "verification vector"


PREDICTION, FIT_INPUT, FIT_DEPENDENT = ClaimClass.PREDICTION, ClaimClass.FIT_INPUT, ClaimClass.FIT_DEPENDENT
STRUCTURAL, VECTOR = ClaimClass.STRUCTURAL, ClaimClass.VECTOR


@dataclass
class Claim:
    paper: str
    id: str
    claim: str
    paper_value: Any
    sim_value: Any
    tolerance: str
    passed: bool
    kind: ClaimClass = field(kw_only=True)  # the claim's class: required, no default
    known_disagreement: str | None = None   # why hetsim is known to disagree (the plugin's known_disagreements.yaml)
    known_cause: str | None = None          # paper-inconsistency | model-gap | algorithm-reading

    def __post_init__(self) -> None:
        try:
            self.kind = ClaimClass(self.kind)
        except ValueError:
            raise HetsimError(f"claim {self.paper}:{self.id} {self.claim!r}: class {self.kind!r}; allowed: "
                              f"{', '.join(c.value for c in ClaimClass)}") from None

    @property
    def counts_as_pass(self) -> bool:
        """A pass of the model: a fit input never is, whatever its residual."""
        return self.passed and self.kind is not ClaimClass.FIT_INPUT

    def row(self) -> dict:
        d = asdict(self)
        d["paper_value"] = _jsonable(d["paper_value"])
        d["sim_value"] = _jsonable(d["sim_value"])
        d["pass"] = d.pop("passed")   # the scorecard's column names
        d["class"] = str(d.pop("kind"))
        return d


@dataclass
class Artifact:
    table: pd.DataFrame
    figure: Any = None                     # a matplotlib Figure, or None
    claims: list[Claim] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Wall-clock times of this run on this machine (a scheduler's, a solver's own time): written
    #: as ``<id>.wallclock.csv`` (and ``wallclock_figure`` as ``<id>.wallclock.png``), never into
    #: the table, the figure, a claim or a note, which are the same bytes on every run.
    wallclock: pd.DataFrame | None = None
    wallclock_figure: Any = None


def split_wallclock(table: pd.DataFrame, columns: Iterable[str]) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """``table`` without its wall-clock ``columns``, and the whole table (each time with the row it
    belongs to) as the artifact's ``wallclock``, or None when it has none of them."""
    present = [c for c in columns if c in table.columns]
    if not present:
        return table, None
    return table.drop(columns=present), table


@dataclass(frozen=True)
class Context:
    """What an experiment is run with: ``quick`` for the CI-sized version, a base seed, and where
    its independent runs go (:meth:`map`: ``workers`` local processes, default every core, or
    the Dask cluster at ``scheduler``); ``report`` shows a line of progress (the CLI's status)."""

    paper: str
    id: str
    quick: bool = False
    seed: int = 0
    progress: bool = False
    workers: int | None = None
    scheduler: str | None = None
    report: Callable[[str], None] | None = field(default=None, compare=False, repr=False)

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any], what: str = "runs") -> list:
        """``[fn(item) for item in items]`` on the context's workers (:func:`hetsim.sweep.map_tasks`:
        results in the items' order, the same whichever backend ran them), reporting progress."""
        from hetsim.sweep.tasks import map_tasks

        report = self.report

        def progress(done: int, total: int) -> None:
            if report is not None:
                report(f"{what} {done}/{total}")

        return map_tasks(fn, list(items), workers=self.workers, scheduler=self.scheduler, progress=progress)

    # Claim constructors that know the paper and experiment id; ``kind`` is the claim's class.
    def close(self, claim: str, paper_value: float, sim_value: float, rel: float | None = None,
              abs_: float | None = None, *, kind: ClaimClass) -> Claim:
        return claim_close(self.paper, self.id, claim, paper_value, sim_value, rel, abs_, kind=kind)

    def within(self, claim: str, paper_value: Any, sim_value: float, lo: float, hi: float, *,
               kind: ClaimClass) -> Claim:
        return claim_range(self.paper, self.id, claim, paper_value, sim_value, lo, hi, kind=kind)

    def equal(self, claim: str, paper_value: Any, sim_value: Any, *, kind: ClaimClass) -> Claim:
        return claim_equal(self.paper, self.id, claim, paper_value, sim_value, kind=kind)

    def true(self, claim: str, paper_value: Any, sim_value: Any, ok: bool, tolerance: str, *,
             kind: ClaimClass) -> Claim:
        return Claim(self.paper, self.id, claim, paper_value, sim_value, tolerance, bool(ok), kind=kind)


def claim_close(paper: str, id: str, claim: str, paper_value: float, sim_value: float,
                rel: float | None = None, abs_: float | None = None, *, kind: ClaimClass) -> Claim:
    """Passes when |sim - paper| <= rel * |paper| or <= abs_."""
    if rel is None and abs_ is None:
        raise ValueError("give rel or abs_")
    diff = abs(float(sim_value) - float(paper_value))
    ok = (rel is not None and diff <= rel * abs(float(paper_value))) or (abs_ is not None and diff <= abs_)
    tol = " or ".join(t for t in (f"±{rel:.0%}" if rel is not None else "",
                                  f"±{abs_:g}" if abs_ is not None else "") if t)
    return Claim(paper, id, claim, paper_value, sim_value, tol, bool(ok and math.isfinite(diff)), kind=kind)


def claim_range(paper: str, id: str, claim: str, paper_value: Any, sim_value: float,
                lo: float, hi: float, *, kind: ClaimClass) -> Claim:
    ok = lo <= float(sim_value) <= hi
    return Claim(paper, id, claim, paper_value, sim_value, f"in [{lo:g}, {hi:g}]", bool(ok), kind=kind)


def claim_equal(paper: str, id: str, claim: str, paper_value: Any, sim_value: Any, *, kind: ClaimClass) -> Claim:
    return Claim(paper, id, claim, paper_value, sim_value, "exact", _jsonable(paper_value) == _jsonable(sim_value),
                 kind=kind)


# -- the registry ---------------------------------------------------------------------------------
ExperimentFn = Callable[["Context"], "Artifact"]


@dataclass(frozen=True)
class Experiment:
    paper: str
    id: str
    title: str
    fn: ExperimentFn | str      # or "module:function", imported when it runs
    quick_in_tests: bool = True

    @property
    def function(self) -> ExperimentFn:
        return resolve(self.fn) if isinstance(self.fn, str) else self.fn


_REGISTRY: dict[str, dict[str, Experiment]] = {}


def experiment(paper: str, id: str, title: str, quick_in_tests: bool = True):
    """Register the decorated function (or a ``"module:function"`` string) as ``paper:id``."""
    def wrap(fn):
        _REGISTRY.setdefault(paper, {})[id] = Experiment(paper, id, title, fn, quick_in_tests)
        return fn
    return wrap


def register_experiments(paper: str, table: Iterable[tuple[str, str, ExperimentFn | str]]) -> None:
    """Register a paper's experiments, rows (id, title, function), in the table's order: the
    scorecard's order (a paper's experiments package calls it from its ``__init__``). A function
    given as ``"module:function"`` is imported when the experiment runs, so that listing the
    experiments needs none of the extras running them does."""
    for id_, title, fn in table:
        experiment(paper, id_, title)(fn)


def load_papers(names: Iterable[str] | None = None) -> dict[str, dict[str, Experiment]]:
    """Import the experiment modules (which register their experiments) and return the registry."""
    known = papers()
    for paper in names or known:
        module = known.get(paper)
        if module is None:
            raise HetsimError(f"unknown paper {paper!r}; known: "
                              f"{', '.join(known) or 'none (no plugin with experiments is installed)'}")
        importlib.import_module(module)
    return _REGISTRY


def expected_durations(paper: str) -> dict[str, tuple[float | None, float | None]]:
    """A paper's measured durations, id -> (quick, full) seconds, from the ``durations.csv`` beside
    its experiments package (or module; columns id, quick_s, full_s; benchmarks/reproduce_durations.py writes it
    from the logs of a quick and a full ``hetsim reproduce``); {} when it has none."""
    import csv
    import importlib.util

    module = papers().get(paper)
    spec = importlib.util.find_spec(module) if module else None
    if spec is None or (not spec.submodule_search_locations and spec.origin is None):
        return {}
    folder = (Path(next(iter(spec.submodule_search_locations))) if spec.submodule_search_locations
              else Path(str(spec.origin)).parent)   # a package: its folder; a module: the one it is in
    path = folder / "durations.csv"
    if not path.is_file():
        return {}

    def seconds(text: str | None) -> float | None:
        return float(text) if text not in (None, "") else None

    with path.open(newline="") as f:
        return {row["id"]: (seconds(row.get("quick_s")), seconds(row.get("full_s"))) for row in csv.DictReader(f)}


def select(spec: list[str], all_: bool) -> list[Experiment]:
    """``pipesearch`` (every experiment of a paper), ``shisha:fig4`` (one), or all of them."""
    registry = load_papers(None if all_ or not spec else {s.split(":")[0] for s in spec})
    if all_ or not spec:
        return [e for p in papers() for e in registry.get(p, {}).values()]
    chosen = []
    for s in spec:
        paper, _, eid = s.partition(":")
        exps = registry.get(paper)
        if not exps:
            raise HetsimError(f"no experiments for {paper!r}; papers with experiments: "
                              f"{', '.join(p for p in papers() if registry.get(p))}")
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


def run_experiment(exp: Experiment, quick: bool = False, seed: int = 0, progress: bool = False,
                   workers: int | None = None, scheduler: str | None = None,
                   report: Callable[[str], None] | None = None) -> Outcome:
    t0 = time.perf_counter()
    artifact = exp.function(Context(exp.paper, exp.id, quick, seed, progress, workers, scheduler, report))
    known = known_disagreements()
    for c in artifact.claims:
        k = known.get((c.paper, c.id, c.claim))
        if k is not None and k.applies(quick):
            c.known_disagreement = k.reason
            c.known_cause = k.cause
    return Outcome(exp, artifact, time.perf_counter() - t0, quick)


# -- known disagreements ----------------------------------------------------------------------------
#: Claims hetsim is known to fail, each with its cause and reason (explained in the paper's page under
#: docs/papers/): each plugin's ``known_disagreements`` file. The scorecard still says FAIL; the test
#: suite fails on any *other* failing claim, and on a listed claim that starts passing (remove it then).
KNOWN_DISAGREEMENTS_FILE = "known_disagreements.yaml"

#: Why hetsim disagrees: the paper contradicts itself (the reason gives the argument), hetsim's model
#: lacks a mechanism the board has, or hetsim reads an algorithm or baseline the paper leaves open
#: differently from the authors' code.
Cause = Literal["paper-inconsistency", "model-gap", "algorithm-reading"]


class KnownDisagreement(BaseModel):
    """One claim hetsim is known to fail."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    paper: str
    id: str
    claim: str          # the claim's exact text
    cause: Cause
    reason: str
    when: Literal["both", "quick", "full"] = "both"   # the version(s) of the experiment it fails in
    #: The file's ``mechanisms`` entry this failure is one instance of (stated once there; the
    #: claim's reason is the mechanism's statement, then this entry's particulars).
    mechanism: str | None = None

    @field_validator("paper")
    @classmethod
    def _known_paper(cls, v: str) -> str:
        if v not in papers():
            raise ValueError(f"unknown paper {v!r}; allowed: {', '.join(papers())}")
        return v

    @field_validator("id", "claim", "reason")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v

    def applies(self, quick: bool) -> bool:
        return self.when == "both" or self.when == ("quick" if quick else "full")


class KnownDisagreementsFile(BaseModel):
    """``known_disagreements.yaml``: ``disagreements:`` a list of :class:`KnownDisagreement`, and
    ``mechanisms:`` (optional) one statement per mechanism several of them share, by name."""

    model_config = ConfigDict(extra="forbid")

    mechanisms: dict[str, str] = {}
    disagreements: list[KnownDisagreement]

    @model_validator(mode="after")
    def _unique(self) -> KnownDisagreementsFile:
        seen: set[tuple[str, str, str]] = set()
        for name, text in self.mechanisms.items():
            if not text.strip():
                raise ValueError(f"mechanisms.{name}: must not be empty")
        for i, k in enumerate(self.disagreements):
            key = (k.paper, k.id, k.claim)
            if key in seen:
                raise ValueError(f"disagreements.{i}: {k.paper}:{k.id} {k.claim!r} is listed twice")
            seen.add(key)
            if k.mechanism is not None and k.mechanism not in self.mechanisms:
                raise ValueError(f"disagreements.{i}: mechanism {k.mechanism!r} is not in mechanisms "
                                 f"({', '.join(self.mechanisms) or 'none given'})")
        return self

    def resolved(self) -> list[KnownDisagreement]:
        """The entries, each reason prefixed with its mechanism's statement."""
        return [k if k.mechanism is None else
                k.model_copy(update={"reason": f"{self.mechanisms[k.mechanism].strip()} Here: {k.reason}"})
                for k in self.disagreements]


def known_disagreements(path: Path | None = None) -> dict[tuple[str, str, str], KnownDisagreement]:
    """The known disagreements by (paper, experiment id, claim): of the file ``path``, or of every
    plugin's ``known_disagreements`` file; a malformed file is one line."""
    paths = [path] if path is not None else [f for p in plugins() if (f := p.path(p.known_disagreements))]
    out: dict[tuple[str, str, str], KnownDisagreement] = {}
    for f in paths:
        if f.is_file():
            out.update(_load_known(f, f.stat().st_mtime_ns))
    return out


_KNOWN_CACHE: dict[tuple[Path, int], dict[tuple[str, str, str], KnownDisagreement]] = {}


def _load_known(path: Path, mtime_ns: int) -> dict[tuple[str, str, str], KnownDisagreement]:
    key = (path, mtime_ns)
    if key not in _KNOWN_CACHE:
        try:
            parsed = KnownDisagreementsFile.model_validate(read_yaml(path))
        except ValidationError as e:
            raise one_line(str(path), e) from None
        _KNOWN_CACHE[key] = {(k.paper, k.id, k.claim): k for k in parsed.resolved()}
    return _KNOWN_CACHE[key]


def claim_problems(outcome: Outcome) -> list[str]:
    """What a test should fail on: claims that fail without a known reason, known disagreements
    that no longer disagree, and claims without a valid class."""
    problems = []
    exp = outcome.experiment
    made = {c.claim for c in outcome.artifact.claims}
    for (paper, eid, claim), k in known_disagreements().items():
        if paper == exp.paper and eid == exp.id and k.applies(outcome.quick) and claim not in made:
            problems.append(f"STALE: {paper}'s {KNOWN_DISAGREEMENTS_FILE} lists {claim!r}, which "
                            f"{paper}:{eid} no longer claims")
    for c in outcome.artifact.claims:
        if not isinstance(c.kind, ClaimClass):
            problems.append(f"UNCLASSIFIED: {c.claim}: class {c.kind!r}")
        if not c.passed and c.known_disagreement is None:
            problems.append(f"FAILS: {c.claim}: paper {c.paper_value!r}, hetsim {c.sim_value!r} ({c.tolerance})")
        elif c.passed and c.known_disagreement is not None:
            problems.append(f"PASSES although listed as a known disagreement (remove it from "
                            f"{c.paper}'s {KNOWN_DISAGREEMENTS_FILE}): {c.claim}")
    return problems


def write_outcome(outcome: Outcome, out: Path) -> list[Path]:
    exp, art = outcome.experiment, outcome.artifact
    base = out / exp.paper
    written = []
    with atomic_write(base / f"{exp.id}.csv") as f:
        art.table.to_csv(f, index=False)
    written.append(base / f"{exp.id}.csv")
    if art.figure is not None:
        from hetsim.figures import save_figure

        written.append(save_figure(art.figure, base / f"{exp.id}.png", dpi=110, bbox_inches="tight"))
    if art.wallclock is not None:   # this machine's times: apart, so that the rest stays byte-identical
        with atomic_write(base / f"{exp.id}.wallclock.csv") as f:
            art.wallclock.to_csv(f, index=False)
        written.append(base / f"{exp.id}.wallclock.csv")
    if art.wallclock_figure is not None:
        from hetsim.figures import save_figure

        written.append(save_figure(art.wallclock_figure, base / f"{exp.id}.wallclock.png", dpi=110,
                                   bbox_inches="tight"))
    return written


#: The order classes are reported in: the independent predictions first, fit inputs last.
CLASS_ORDER = (PREDICTION, FIT_DEPENDENT, STRUCTURAL, VECTOR, FIT_INPUT)
_CAUSE_WORDS = {"paper-inconsistency": "paper inconsistency", "model-gap": "model gap",
                "algorithm-reading": "algorithm reading"}


def summarize_claims(claims: list[Claim]) -> dict[str, dict]:
    """Per paper (in order of appearance) and ``"all"``: the independent predictions' pass rate and
    every class's passes and totals (for a fit input, "passed" = residual within tolerance)."""
    groups = [*dict.fromkeys(c.paper for c in claims), "all"]
    out = {}
    for g in groups:
        cs = [c for c in claims if g == "all" or c.paper == g]
        by_class = {k.value: {"passed": sum(c.passed for c in cs if c.kind is k),
                              "total": sum(1 for c in cs if c.kind is k)} for k in CLASS_ORDER}
        pred = by_class[PREDICTION.value]
        # Issues 14/15's goal is stated over the claims whose paper is self-consistent: the
        # predictions less those that fail because the paper's own data contradict each other.
        consistent = [c for c in cs if c.kind is PREDICTION
                      and (c.passed or c.known_cause != "paper-inconsistency")]
        cons = {"passed": sum(c.passed for c in consistent), "total": len(consistent)}
        out[g] = {"independent": {**pred, "rate": pred["passed"] / pred["total"] if pred["total"] else None},
                  "self_consistent": {**cons, "rate": cons["passed"] / cons["total"] if cons["total"] else None},
                  "by_class": by_class}
    return out


def _rate(d: dict) -> str:
    return f"{d['passed']} of {d['total']}" + (f" ({d['rate']:.0%})" if d["rate"] is not None else "")


def merge_scorecard(outcomes: list[Outcome], out: Path, quick: bool) -> tuple[list[Outcome], int]:
    """The experiments of ``out``'s scorecard (same mode: quick or full) that were not run now,
    with those run now, in the scorecard's order (papers in plugin order, each paper's
    experiments in its table's order), so that papers run one by one into ``out`` give the
    scorecard of running them together; and how many were kept. The kept claims' known
    disagreements are looked up again (the files may have changed since)."""
    path = out / "scorecard.json"
    kept: list[Outcome] = []
    if path.is_file():
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError):
            old = None       # not a scorecard this code wrote: replaced
        if isinstance(old, dict) and old.get("quick") == quick and isinstance(old.get("claims"), list):
            ran = {(o.experiment.paper, o.experiment.id) for o in outcomes}
            known_papers = papers()
            by_exp: dict[tuple[str, str], list[Claim]] = {}
            for row in old["claims"]:
                c = _claim_of_row(row)
                if c is not None:
                    by_exp.setdefault((c.paper, c.id), []).append(c)
            known = known_disagreements()
            for e in old.get("experiments", []):
                key = (e.get("paper"), e.get("id"))
                if key in ran or key[0] not in known_papers:
                    continue
                claims = by_exp.get(key, [])
                for c in claims:
                    k = known.get((c.paper, c.id, c.claim))
                    c.known_disagreement, c.known_cause = ((k.reason, k.cause) if k is not None and k.applies(quick)
                                                           else (None, None))
                exp = Experiment(key[0], key[1], str(e.get("title", "")), _not_rerun)
                kept.append(Outcome(exp, Artifact(pd.DataFrame(), None, claims, list(e.get("notes", []))), 0.0,
                                    quick))
    merged = kept + list(outcomes)
    registry = load_papers({o.experiment.paper for o in merged})
    paper_rank = {p: i for i, p in enumerate(papers())}

    def rank(o: Outcome) -> tuple[int, int, str]:
        ids = list(registry.get(o.experiment.paper, {}))
        pos = ids.index(o.experiment.id) if o.experiment.id in ids else len(ids)
        return paper_rank.get(o.experiment.paper, len(paper_rank)), pos, o.experiment.id

    merged.sort(key=rank)
    for o in merged:      # the registry's title, as a run now would print it
        registered = registry.get(o.experiment.paper, {}).get(o.experiment.id)
        if registered is not None and registered.title != o.experiment.title:
            o.experiment = Experiment(o.experiment.paper, o.experiment.id, registered.title, o.experiment.fn)
    return merged, len(kept)


def _not_rerun(ctx: Context) -> Artifact:  # pragma: no cover - never called
    raise HetsimError(f"{ctx.paper}:{ctx.id} was read from a scorecard, not run")


def _claim_of_row(row: Any) -> Claim | None:
    """A claim of scorecard.json (:meth:`Claim.row`); None for a row this code cannot read."""
    try:
        return Claim(row["paper"], row["id"], row["claim"], row["paper_value"], row["sim_value"], row["tolerance"],
                     bool(row["pass"]), kind=ClaimClass(row["class"]))
    except (KeyError, TypeError, ValueError):
        return None


def write_scorecard(outcomes: list[Outcome], out: Path, quick: bool) -> tuple[Path, Path]:
    # Values as scorecard.json holds them, so that a scorecard merged from an earlier run's JSON
    # (:func:`merge_scorecard`) prints the same bytes as one run at once.
    for o in outcomes:
        for c in o.artifact.claims:
            c.paper_value, c.sim_value = _jsonable(c.paper_value), _jsonable(c.sim_value)
    claims = [c for o in outcomes for c in o.artifact.claims]
    rows = [c.row() for c in claims]
    summary = summarize_claims(claims)
    model = [c for c in claims if c.kind is not FIT_INPUT]
    passed = sum(c.counts_as_pass for c in model)
    failures = [c for c in model if not c.passed]
    known = [c for c in failures if c.known_disagreement]
    by_cause = {cause: sum(1 for c in known if c.known_cause == cause) for cause in _CAUSE_WORDS}
    payload = {
        "quick": quick,
        "independent": {g: s["independent"] for g, s in summary.items()},
        "self_consistent": {g: s["self_consistent"] for g, s in summary.items()},
        "by_class": {g: s["by_class"] for g, s in summary.items()},
        "claims": rows,
        "passed": passed,                       # claims of the model that pass (fit inputs excluded)
        "failed": len(failures),
        "fit_inputs": len(claims) - len(model),
        "known_disagreements": len(known),
        "known_by_cause": by_cause,
        # No run times here: the same command writes the same bytes (the console shows the times).
        "experiments": [{"paper": o.experiment.paper, "id": o.experiment.id, "title": o.experiment.title,
                         "notes": o.artifact.notes} for o in outcomes],
    }
    with atomic_write(out / "scorecard.json") as f:
        json.dump(payload, f, indent=2)
    lines = _scorecard_head(summary, quick, passed, len(model), len(known), len(failures), by_cause)
    for o in outcomes:
        lines += _scorecard_section(o)
    with atomic_write(out / "scorecard.md") as f:
        f.write("\n".join(lines))
    return out / "scorecard.md", out / "scorecard.json"


def _scorecard_head(summary: dict, quick: bool, passed: int, n_model: int, n_known: int, n_failed: int,
                    by_cause: dict[str, int]) -> list[str]:
    """scorecard.md's head: the independent predictions that pass per paper, the claims by class
    per paper, what the classes mean, and the failures by known cause."""
    papers = [g for g in summary if g != "all"]
    lines = ["# hetsim scorecard", "",
             "Independent predictions that pass: "
             + "; ".join(f"{g} {_rate(summary[g]['independent'])}" for g in papers)
             + f"; all papers {_rate(summary['all']['independent'])}"
             + (" (quick versions)." if quick else "."), "",
             "Among the claims whose paper is self-consistent (predictions less those failing as a paper "
             "inconsistency): " + "; ".join(f"{g} {_rate(summary[g]['self_consistent'])}" for g in papers)
             + f"; all papers {_rate(summary['all']['self_consistent'])}.", "",
             "| paper | " + " | ".join(k.value for k in CLASS_ORDER[:-1]) + " | fit input (never a pass) |",
             "|---|" + "---|" * len(CLASS_ORDER)]
    for g in [*papers, "all"]:
        bc = summary[g]["by_class"]
        cells = [f"{bc[k.value]['passed']}/{bc[k.value]['total']}" for k in CLASS_ORDER[:-1]]
        fi = bc[FIT_INPUT.value]
        cells.append(f"{fi['total']} fitted, {fi['passed']} within tolerance")
        lines.append(f"| {g} | " + " | ".join(cells) + " |")
    lines += ["",
              "Classes: a *prediction* is independent of the calibration's inputs and not true by "
              "construction; a *fit input* is a value the calibration was fitted to (its residual is "
              "reported, never counted as a pass); a *fit-dependent* claim compares a quantity the fit "
              "inputs (nearly) determine; a *structural* claim holds by construction of a workload, an "
              "assumption or the algorithm; a *verification vector* is an exact count, seed, CV or rank "
              "(also a unit test). docs/papers/<paper>.md says what each class means for that paper.", "",
              f"{passed} of {n_model} claims of the model pass (fit inputs excluded); {n_known} of the "
              f"{n_failed} failures are known disagreements ("
              + ", ".join(f"{_CAUSE_WORDS[k]} {v}" for k, v in by_cause.items())
              + "), explained in docs/papers/. Every simulated value comes out of the simulator; a failed "
              "claim is a disagreement with the paper, reported as found.", ""]
    return lines


def _scorecard_section(o: Outcome) -> list[str]:
    """One experiment's section of scorecard.md: its claims as a table (or a note that it is a
    figure to look at) and its notes."""
    lines = [f"## {o.experiment.paper}:{o.experiment.id}: {o.experiment.title}", ""]
    if o.artifact.claims:
        lines.append("| claim | class | paper | hetsim | tolerance | verdict |")
        lines.append("|---|---|---|---|---|---|")
        for c in o.artifact.claims:
            lines.append(f"| {_fmt(c.claim)} | {c.kind.value} | {_fmt(c.paper_value)} | {_fmt(c.sim_value)} | "
                         f"{c.tolerance} | {_verdict(c)} |")
    else:
        lines.append("(no claims: a figure to look at)")
    for note in o.artifact.notes:
        lines.append(f"\n{note}")
    lines.append("")
    return lines


def _verdict(c: Claim) -> str:
    if c.kind is FIT_INPUT:
        return "fitted (residual within tolerance)" if c.passed else "**fitted, residual outside tolerance**"
    if c.passed:
        return "pass"
    if c.known_disagreement:
        cause = _CAUSE_WORDS.get(c.known_cause or "", "known")
        return f"**FAIL** (known, {cause}: {_fmt(c.known_disagreement)})"
    return "**FAIL**"


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v).replace("|", "\\|")


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if hasattr(v, "item"):          # numpy scalars
        return v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
