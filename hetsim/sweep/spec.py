"""Sweep SPEC files: the validated, schema-versioned description of a what-if study, and its
expansion into cells.

A SPEC has a *base* (what every cell runs: a platform, a workload and either a mapping with its run
options or an algorithm with its problem, measurement and termination) and *axes* (what varies:
platforms, workloads, ``--set`` overrides of platform fields, DVFS presets, mappings, run options,
measurement fields, algorithms with their parameters, seeds). The cells are the full product of the
axes, except axes named together under ``zip``, which vary together::

    schema: 1
    base: {platform: hikey970, workload: resnet50, mapping: "B4:1-35|s2:36-44|s2:45-54",
           engine: analytic}
    axes:
      set:
        memories.dram.bandwidth_GBps: [15, 30, 60]
        clusters.little.dvfs: [low, mid, max]
      seed: {range: [0, 4, 1]}

Cells are counted from the axes' sizes before anything is enumerated. Every cell carries the seed
of its random choices, and an id that hashes everything the cell runs (a resumed sweep skips the
ids it has). docs/sweeps.md is the reference.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    ValidationError,
    model_validator,
)

from hetsim import bounds as B
from hetsim.bounds import (
    FiniteReal,
    OptFrames,
    OptInterval_s,
    OptNoiseSigma,
    OptQueueFrames,
    Seed,
    schema_version,
)
from hetsim.errors import HetsimError
from hetsim.exploration.spec import MeasurementSpec, ProblemSpec, TerminationSpec
from hetsim.keypaths import allowed_keys
from hetsim.options import SourceKind
from hetsim.validation import read_yaml

SCHEMA_VERSION = 1
#: Refuse sweeps of more cells than this unless forced (``--force``) or the SPEC sets ``max_cells``.
DEFAULT_MAX_CELLS = 50_000

def _finite_float(v: float) -> float:
    if not math.isfinite(v):   # a journal line is JSON, which has no NaN or infinity
        raise ValueError("must be a finite number")
    return v


Scalar = str | int | Annotated[float, AfterValidator(_finite_float)] | bool | None
#: RunOptions fields a mapping cell takes from the base or a ``run`` axis (``state`` is ``dvfs``).
RUN_FIELDS = ("engine", "frames", "contention", "source", "interval_s", "buffer_frames",
              "in_flight", "noise_sigma", "warmup_fraction", "fast")
#: Measurement fields an explorer cell takes from ``measurement`` or a ``measurement`` axis.
MEASUREMENT_FIELDS = tuple(MeasurementSpec.model_fields)
#: Problem kinds of registered algorithms (hetsim.exploration.registry.PROBLEM_KINDS).
ProblemKind = Literal["pipeline", "placement", "hybrid"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Range(_Strict):
    """Generated values: ``{range: [start, stop, step]}`` (stop included when the steps land on it),
    ``{linspace: [start, stop, n]}`` or ``{geomspace: [start, stop, n]}``."""

    # Strict finite numbers (hetsim.bounds): NaN ends made floor(nan) crash, a string '1e3' passed.
    range: tuple[FiniteReal, FiniteReal, FiniteReal] | None = None
    linspace: tuple[FiniteReal, FiniteReal, Annotated[int, B._number((1, 1_000_000), integer=True)]] | None = None
    geomspace: tuple[FiniteReal, FiniteReal, Annotated[int, B._number((1, 1_000_000), integer=True)]] | None = None

    @model_validator(mode="after")
    def _one(self) -> Range:
        given = [k for k in ("range", "linspace", "geomspace") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of range: [start, stop, step], linspace: [start, stop, n], "
                             "geomspace: [start, stop, n]")
        if self.range is not None:
            start, stop, step = self.range
            # steps counted as stop/step - start/step: stop - start overflows for ends near 1e308
            if step == 0 or stop / step - start / step < 0:
                raise ValueError(f"range {list(self.range)}: the step must go from start towards stop")
            if stop / step - start / step > 1_000_000:
                raise ValueError(f"range {list(self.range)} has more than 1,000,000 values")
        for key in ("linspace", "geomspace"):
            v = getattr(self, key)
            if v is not None and not 1 <= v[2] <= 1_000_000:
                raise ValueError(f"{key} {list(v)}: n must be 1..1,000,000")
        if self.geomspace is not None and (self.geomspace[0] == 0 or self.geomspace[1] == 0
                                           or (self.geomspace[0] < 0) != (self.geomspace[1] < 0)):
            raise ValueError(f"geomspace {list(self.geomspace)}: start and stop need the same sign, not 0")
        return self

    def _text(self) -> str:
        key = next(k for k in ("range", "linspace", "geomspace") if getattr(self, k) is not None)
        return f"{key} {list(getattr(self, key))}"

    def values(self) -> list[float | int]:
        if self.range is not None:
            start, stop, step = self.range
            span = (stop - start) / step
            if not math.isfinite(span):   # stop - start overflows: the same count, in two quotients
                span = stop / step - start / step
            n = math.floor(span + 1e-9) + 1
            # i * step may overflow where start + i * step does not (-1e308 + 20 x 1e307)
            out = [x if math.isfinite(x := start + i * step) else (start / step + i) * step for i in range(n)]
        elif self.linspace is not None:
            a, b, n = self.linspace
            if n > 1 and math.isfinite(b - a):
                out = [a + (b - a) * i / (n - 1) for i in range(n)]
            elif n > 1:   # b - a overflows (-1e308 .. 1e308): the same points, weighted
                out = [a * (1 - i / (n - 1)) + b * (i / (n - 1)) for i in range(n)]
            else:
                out = [a]
        else:
            assert self.geomspace is not None
            a, b, n = self.geomspace
            if n > 1 and math.isfinite(b / a):
                out = [a * (b / a) ** (i / (n - 1)) for i in range(n)]
            elif n > 1:   # b / a overflows (1e-300 .. 1e300): in logarithms
                sign, la, lb = math.copysign(1.0, a), math.log(abs(a)), math.log(abs(b))
                out = [sign * math.exp(la + (lb - la) * i / (n - 1)) for i in range(n)]
            else:
                out = [a]
        if not all(math.isfinite(x) for x in out):   # the ends are finite; a step past them is not
            raise HetsimError(f"{self._text()}: its values overflow a float64 (past 1.8e308)")
        # 12 significant digits: 0.1 + 0.2 is written 0.3; integral values become ints.
        clean = [float(f"{x:.12g}") for x in out]
        return [int(x) if x.is_integer() and abs(x) < 2**53 else x for x in clean]


Values = list[Scalar] | Range


class AlgorithmEntry(_Strict):
    """One algorithm of an ``algorithm`` axis: a registered name, its parameters, a label (its
    value in the results; default ``name(k=v, ...)``)."""

    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    label: str | None = None


class AllOf(_Strict):
    """Every registered algorithm of the problem kinds listed, in registry order
    (``{all: [pipeline, placement]}``)."""

    all: list[ProblemKind] = Field(min_length=1)


class Base(_Strict):
    """What every cell runs; the axes replace parts of it."""

    platform: str | None = Field(None, description="Platform name or YAML path.")
    workload: str | None = Field(None, description="Workload name or YAML path.")
    set: dict[str, Scalar] = Field(default_factory=dict,
                                   description="--set overrides of platform fields: key.path: value.")
    dvfs: str | None = Field(None, description="DVFS preset (or cluster=level,...).")
    cost_model: str | None = Field(None, description="The cost model (default: the platform's).")
    cost_table: str | None = Field(None, description="Measured times (a CSV or a profile directory).")
    fallback: str | None = Field(None, description="The model pricing what cost_table lacks.")
    # a mapping cell
    mapping: str | None = Field(None, description="Pipeline string or mapping file.")
    engine: Literal["analytic", "des"] | None = None
    # Numbers strict and in the ranges of RunOptions (hetsim.bounds), checked when the SPEC loads.
    frames: OptFrames = None
    contention: StrictBool | None = None
    source: SourceKind | None = None
    interval_s: OptInterval_s = None
    buffer_frames: OptQueueFrames = None
    in_flight: OptQueueFrames = None
    noise_sigma: OptNoiseSigma = None
    warmup_fraction: Annotated[float | None, B._number((0.0, 0.999999), optional=True)] = None
    fast: StrictBool | None = None
    # an explorer cell: the fields of hetsim.exploration.spec.ExplorationSpec
    algorithm: str | None = Field(None, description="A registered algorithm (hetsim explore --algorithm).")
    params: dict[str, Any] = Field(default_factory=dict, description="The algorithm's parameters.")
    problem: ProblemSpec = Field(default_factory=lambda: ProblemSpec.model_validate({}))
    measurement: MeasurementSpec = Field(default_factory=lambda: MeasurementSpec.model_validate({}))
    termination: TerminationSpec = Field(default_factory=lambda: TerminationSpec.model_validate({}))
    seed: Seed = Field(0, description="Seed of every random choice (no seed axis).")


class Axes(_Strict):
    """What varies. Each axis is a list of values (or a range); columns of the results are named
    after the axes (a ``set`` axis after its key path, a ``run``/``measurement`` axis after its
    field)."""

    platform: list[str] | None = None
    workload: list[str] | None = None
    set: dict[str, Values] = Field(default_factory=dict)
    dvfs: list[str | None] | None = None
    mapping: list[str] | None = None
    run: dict[str, Values] = Field(default_factory=dict, description="RunOptions fields of mapping cells.")
    measurement: dict[str, Values] = Field(default_factory=dict,
                                           description="Measurement fields of explorer cells.")
    algorithm: Literal["all"] | AllOf | list[str | AlgorithmEntry] | None = Field(
        None, description="'all' (every registered algorithm but those needing an optional package), "
        "{all: [kinds]} (the same, of these problem kinds) or names / {name, params, label}.")
    params: dict[str, dict[str, Values]] = Field(
        default_factory=dict, description="Parameter grids per algorithm name: each combination "
        "becomes an entry of the algorithm axis.")
    seed: list[Seed] | Range | None = None


class SweepSpec(_Strict):
    schema_: Annotated[Literal[1], schema_version(1)] = Field(alias="schema", description="Format version of this file.")
    name: str | None = None
    description: str = ""
    base: Base
    axes: Axes = Field(default_factory=lambda: Axes.model_validate({}))
    zip: list[list[str]] = Field(default_factory=list,
                                 description="Groups of axis names that vary together (equal lengths).")
    max_cells: Annotated[int, B._number((1, 10 ** 9), "cells", integer=True)] = Field(
        DEFAULT_MAX_CELLS, description="Refuse more cells than this unless --force.")
    report: str | None = Field(
        None, description="An extra report written after the sweep, by name: one a plugin adds "
        "(hetsim.plugins.sweep_reports(); the tournament of explorers).")

    _source: str = PrivateAttr(default="<spec>")

    @property
    def source(self) -> str:
        """The file the SPEC was read from (for messages)."""
        return self._source

    @model_validator(mode="after")
    def _kind(self) -> SweepSpec:
        mapping = self.base.mapping is not None or self.axes.mapping is not None
        explorer = self.base.algorithm is not None or self.axes.algorithm is not None
        if mapping and explorer:
            raise ValueError("give a mapping (mapping cells) or an algorithm (explorer cells), not both")
        if not mapping and not explorer:
            raise ValueError("base needs a mapping (with its engine and run options) or an algorithm "
                             "(with its problem, measurement and termination)")
        for what in ("platform", "workload"):
            if getattr(self.base, what) is None and getattr(self.axes, what) is None:
                raise ValueError(f"base.{what} is required unless axes.{what} lists them")
        if mapping and self.axes.measurement:
            raise ValueError("axes.measurement applies to explorer cells; mapping cells vary axes.run")
        if explorer and self.axes.run:
            raise ValueError("axes.run applies to mapping cells; explorer cells vary axes.measurement")
        run_given = [f for f in RUN_FIELDS if getattr(self.base, f) is not None]
        if explorer and run_given:
            raise ValueError(f"base.{run_given[0]} is a run option of mapping cells; an explorer's "
                             f"trials are set by base.measurement")
        if self.base.params and self.axes.algorithm is not None:
            raise ValueError("base.params go with base.algorithm; entries of axes.algorithm carry "
                             "their own params (or use axes.params)")
        return self

    @property
    def kind(self) -> str:
        """``mapping`` (simulate one mapping per cell) or ``explorer`` (one exploration per cell)."""
        return "mapping" if (self.base.mapping is not None or self.axes.mapping is not None) else "explorer"


# -- loading ----------------------------------------------------------------------------------------
def spec_search_path() -> list[Path]:
    """Where named SPECs are looked up: ``$HETSIM_SWEEPS``, the repository's ``sweeps/``, the
    packaged copy, and the plugins' ``sweeps`` folders."""
    from hetsim.paths import search_path

    return search_path("sweeps")


def list_specs() -> list[str]:
    names: set[str] = set()
    for d in spec_search_path():
        names.update(p.stem for p in d.glob("*.yaml"))
    return sorted(names)


def resolve_spec(name_or_path: str | os.PathLike) -> Path:
    text = os.fspath(name_or_path)
    p = Path(text)
    if p.is_file() or text.endswith((".yaml", ".yml", ".json")) or os.sep in text:
        return p
    for d in spec_search_path():
        candidate = d / f"{text}.yaml"
        if candidate.is_file():
            return candidate
    raise HetsimError(f"unknown sweep SPEC {text!r}: no such file, and no shipped SPEC of that name; "
                      f"shipped: {', '.join(list_specs()) or 'none'}")


def load_spec(name_or_path: str | os.PathLike) -> SweepSpec:
    """Read and validate a SPEC file (or a shipped SPEC by name: ``tournament``)."""
    path = resolve_spec(name_or_path)
    spec = spec_from_dict(read_yaml(path), str(path))
    return spec


def spec_from_dict(data: dict, source: str = "<spec>") -> SweepSpec:
    """Validate a parsed SPEC; the first problem becomes one line naming the key."""
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as e:
        raise HetsimError(_first_error(source, e)) from None
    spec._source = source
    _check_names(spec, source)
    if spec.report is not None:
        from hetsim.plugins import sweep_reports

        if spec.report not in sweep_reports():
            raise HetsimError(f"{source}: report: {spec.report!r} is no report an installed plugin writes; "
                              f"allowed: {', '.join(sweep_reports()) or 'none'}")
    return spec


def _first_error(source: str, exc: ValidationError) -> str:
    """Unknown keys name the key, the keys allowed there and the nearest one (a typo); otherwise
    the most specific error (the deepest: for a value that may be a list or a range, the range's)."""
    errors = exc.errors()
    for err in errors:
        if err["type"] != "extra_forbidden":
            continue
        loc = [str(p) for p in err["loc"]]
        key = loc[-1]
        allowed = allowed_keys(SweepSpec, loc[:-1])
        near = difflib.get_close_matches(key, allowed, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return (f"{source}: {_where(loc)}: unknown key {key!r}{hint}; allowed: "
                f"{', '.join(allowed) if allowed else 'none'}")
    # Deepest first; on a tie a validator's own message beats "not a list" (a malformed range).
    err = max(errors, key=lambda e: (len(e["loc"]), e["type"] == "value_error"))
    msg = err["msg"].removeprefix("Value error, ")
    value = err.get("input")
    got = f" (got {value!r})" if err["type"] != "missing" and not isinstance(value, dict) else ""
    where = _where([str(p) for p in err["loc"]])
    return f"{source}: {where + ': ' if where else ''}{msg}{got}"


def _where(loc: list[str]) -> str:
    """A pydantic location without its union tags (``list[...]``, ``AlgorithmEntry``, ``str``)."""
    tags = {"str", "int", "float", "bool", "none", *(m.__name__ for m in _MODELS)}
    return ".".join(p for p in loc if p not in tags and not any(c in p for c in "[("))


_MODELS: tuple[type[BaseModel], ...] = ()   # set below, once the models exist


def _check_names(spec: SweepSpec, source: str) -> None:
    """Keys that name things hetsim knows (run-option and measurement fields, algorithms and their
    parameters) are checked before anything runs, like the SPEC's own keys."""
    for key in spec.axes.run:
        if key not in RUN_FIELDS:
            raise HetsimError(_unknown(source, f"axes.run.{key}", key, RUN_FIELDS))
    for key in spec.axes.measurement:
        if key not in MEASUREMENT_FIELDS:
            raise HetsimError(_unknown(source, f"axes.measurement.{key}", key, MEASUREMENT_FIELDS))
    from hetsim.platform.loader import resolve_platform
    from hetsim.workload import resolve_workload

    for what, resolve in (("platform", resolve_platform), ("workload", resolve_workload)):
        names = getattr(spec.axes, what) or [getattr(spec.base, what)]
        for name in names:
            try:
                resolve(name)
            except HetsimError as e:
                raise HetsimError(f"{source}: {what}: {e}") from None
    if spec.kind == "mapping":
        _check_base_options(spec, source)
    if spec.kind == "explorer":
        _check_algorithms(spec, source)
    columns = [n for n, _ in _axis_lists(spec)]
    dup = sorted({c for c in columns if columns.count(c) > 1})
    if dup:
        raise HetsimError(f"{source}: axis {dup[0]!r} is given twice (axis names become the results' "
                          f"columns)")
    for group in spec.zip:
        for name in group:
            if name not in columns:
                raise HetsimError(_unknown(source, "zip", name, columns))
    zipped = [n for g in spec.zip for n in g]
    if len(set(zipped)) != len(zipped):
        raise HetsimError(f"{source}: zip: an axis appears in two groups")


def _check_base_options(spec: SweepSpec, source: str) -> None:
    """A mapping sweep's base run options, refused once here rather than in every cell."""
    from hetsim.mapping import Pipeline, _is_file
    from hetsim.options import RunOptions

    try:
        options = RunOptions.make(**{f: getattr(spec.base, f) for f in RUN_FIELDS
                                     if getattr(spec.base, f) is not None})
        # Options every pipeline would refuse (a periodic source without its interval, noise on
        # the analytic engine) are refused once here rather than in every cell.
        mappings = spec.axes.mapping or [str(spec.base.mapping)]
        if not spec.axes.run and not any(_is_file(str(m)) for m in mappings):
            options.resolve(Pipeline(()))
    except HetsimError as err:
        raise HetsimError(f"{source}: base: {err}") from None


def _check_algorithms(spec: SweepSpec, source: str) -> None:
    """An explorer sweep's algorithms and their parameters are the registry's."""
    from hetsim.exploration.registry import ALGORITHMS, algorithms

    algorithms()   # load the registry
    entries = algorithm_entries(spec)
    for entry in entries:
        if entry.name not in ALGORITHMS:
            raise HetsimError(_unknown(source, "algorithm", entry.name, list(ALGORITHMS)))
        allowed = ALGORITHMS[entry.name].parameters()
        for p in entry.params:
            if p not in allowed:
                raise HetsimError(_unknown(source, f"algorithm {entry.name}: parameter", p,
                                           list(allowed)))
    for name in spec.axes.params:
        if name not in ALGORITHMS:
            raise HetsimError(_unknown(source, "axes.params", name, list(ALGORITHMS)))


def _unknown(source: str, where: str, key: str, allowed) -> str:
    allowed = list(allowed)
    near = difflib.get_close_matches(str(key), [str(a) for a in allowed], n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return f"{source}: {where}: unknown {key!r}{hint}; allowed: {', '.join(map(str, allowed)) or 'none'}"


_MODELS = (Range, AlgorithmEntry, AllOf, ProblemSpec, MeasurementSpec, TerminationSpec, Base, Axes, SweepSpec)


def json_schema() -> str:
    """The JSON Schema of SPEC files, for editors (``hetsim sweep --schema``)."""
    schema = SweepSpec.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "hetsim sweep SPEC"
    return json.dumps(schema, indent=2, sort_keys=True)


# -- expansion ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One run of a sweep: its position, its axis values (the results' columns) and everything it
    runs (``config``, JSON-able, shipped to the worker)."""

    index: int
    id: str
    axes: dict[str, Any]
    config: dict[str, Any] = field(repr=False)


def algorithm_entries(spec: SweepSpec) -> list[AlgorithmEntry]:
    """The algorithm axis with ``all`` and the parameter grids expanded (registry order)."""
    ax = spec.axes.algorithm
    if ax is None:
        assert spec.base.algorithm is not None
        return [AlgorithmEntry(name=spec.base.algorithm, params=dict(spec.base.params),
                               label=spec.base.algorithm)]
    if ax == "all" or isinstance(ax, AllOf):
        from hetsim.exploration.registry import algorithms

        kinds = ax.all if isinstance(ax, AllOf) else None
        # an algorithm that needs an optional package (a.extra) is not part of "all": a sweep's cells
        # must not depend on what is installed
        entries = [AlgorithmEntry(name=a.name) for a in algorithms()
                   if (kinds is None or a.problem in kinds) and not a.extra]
    else:
        entries = [AlgorithmEntry(name=e) if isinstance(e, str) else e for e in ax]
    out = []
    for e in entries:
        grid = spec.axes.params.get(e.name)
        if not grid:
            out.append(e if e.label is not None else AlgorithmEntry(name=e.name, params=e.params,
                                                                    label=_label(e.name, e.params)))
            continue
        keys = list(grid)
        for combo in itertools.product(*(_values(grid[k]) for k in keys)):
            params = {**e.params, **dict(zip(keys, combo, strict=True))}
            label = (f"{e.label}({', '.join(f'{k}={v}' for k, v in zip(keys, combo, strict=True))})"
                     if e.label else _label(e.name, params))
            out.append(AlgorithmEntry(name=e.name, params=params, label=label))
    labels = [e.label for e in out]
    dup = sorted({x for x in labels if labels.count(x) > 1 and x is not None})
    if dup:
        raise HetsimError(f"algorithm axis: label {dup[0]!r} appears twice; give entries distinct labels")
    return out


def _label(name: str, params: dict) -> str:
    if not params:
        return name
    return f"{name}({', '.join(f'{k}={v}' for k, v in params.items())})"


def _values(v: Values | list[int]) -> list:
    return v.values() if isinstance(v, Range) else list(v)


def _axis_lists(spec: SweepSpec) -> list[tuple[str, list]]:
    """Every axis as (column name, values), in expansion order: platform, set keys, dvfs, workload,
    mapping, run/measurement fields, algorithm, seed (seeds vary fastest)."""
    ax = spec.axes
    out: list[tuple[str, list]] = []
    if ax.platform is not None:
        out.append(("platform", list(ax.platform)))
    out.extend((key, _values(v)) for key, v in ax.set.items())
    if ax.dvfs is not None:
        out.append(("dvfs", list(ax.dvfs)))
    if ax.workload is not None:
        out.append(("workload", list(ax.workload)))
    if ax.mapping is not None:
        out.append(("mapping", list(ax.mapping)))
    out.extend((key, _values(v)) for key, v in ax.run.items())
    out.extend((key, _values(v)) for key, v in ax.measurement.items())
    if spec.kind == "explorer" and ax.algorithm is not None:
        out.append(("algorithm", algorithm_entries(spec)))
    if ax.seed is not None:
        seeds = _values(ax.seed)
        bad = [s for s in seeds if isinstance(s, bool) or not isinstance(s, int) or not B.SEED[0] <= s <= B.SEED[1]]
        if bad:   # a generated seed of 0.5 (or 1e-320) was truncated to 0: a cell run twice
            raise HetsimError(f"axis seed: {bad[0]!r} is not a seed (an integer in [0, {B.SEED[1]}])")
        out.append(("seed", seeds))
    for name, values in out:
        if not values:
            raise HetsimError(f"axis {name!r} has no values")
    return out


def _factors(spec: SweepSpec) -> list[tuple[list[str], list[tuple]]]:
    """The axes as factors of the product: a zipped group is one factor whose points set several
    axes at once."""
    lists = _axis_lists(spec)
    by_name = dict(lists)
    group_of = {n: tuple(g) for g in spec.zip for n in g}
    factors, seen = [], set()
    for name, values in lists:
        group = group_of.get(name)
        if group is None:
            factors.append(([name], [(v,) for v in values]))
            continue
        if group in seen:
            continue
        seen.add(group)
        lengths = {n: len(by_name[n]) for n in group}
        if len(set(lengths.values())) != 1:
            raise HetsimError(f"zip {list(group)}: the axes have different lengths "
                              f"({', '.join(f'{n}: {k}' for n, k in lengths.items())})")
        factors.append((list(group), list(zip(*(by_name[n] for n in group), strict=True))))
    return factors


def count_cells(spec: SweepSpec) -> int:
    return math.prod(len(points) for _, points in _factors(spec))


def describe(spec: SweepSpec) -> str:
    """``3 platform x 10 memories.dram.bandwidth_GBps x 5 seed`` (zipped axes joined by ``+``)."""
    parts = [f"{len(points)} {'+'.join(names)}" for names, points in _factors(spec)]
    return " x ".join(parts) if parts else "the base alone"


def check_count(spec: SweepSpec, force: bool = False) -> int:
    """The number of cells; refused past ``max_cells`` unless ``force`` (counted, not enumerated)."""
    n = count_cells(spec)
    if n > spec.max_cells and not force:
        raise HetsimError(f"sweep of {n:,} cells ({describe(spec)}) exceeds the limit of "
                          f"{spec.max_cells:,}; narrow the axes, raise max_cells in the SPEC, or pass --force")
    return n


def expand(spec: SweepSpec) -> list[Cell]:
    """Every cell, in product order (the last axis, normally the seed, varies fastest)."""
    return list(iter_cells(spec))


def iter_cells(spec: SweepSpec) -> Iterator[Cell]:
    """The cells of :func:`expand` one at a time, made as they are asked for (a sweep of a
    million cells streams them; it never holds them all)."""
    factors = _factors(spec)
    names = [n for ns, _ in factors for n in ns]
    base = spec.base
    kind = spec.kind
    default = algorithm_entries(spec)[0] if kind == "explorer" and spec.axes.algorithm is None else None
    for index, combo in enumerate(itertools.product(*(points for _, points in factors))):
        values = dict(zip(names, (v for point in combo for v in point), strict=True))
        config = _config(spec, kind, base, values, default)
        axes = {n: (v.label if isinstance(v, AlgorithmEntry) else v) for n, v in values.items()}
        text = json.dumps(config, sort_keys=True, default=str)
        yield Cell(index, hashlib.sha256(text.encode()).hexdigest()[:16], axes, config)


def _config(spec: SweepSpec, kind: str, base: Base, values: dict[str, Any],
            default: AlgorithmEntry | None) -> dict[str, Any]:
    sets = dict(base.set)
    for key in spec.axes.set:
        sets[key] = values[key]
    config: dict[str, Any] = {
        "kind": kind,
        "platform": values.get("platform", base.platform),
        "set": [[k, v] for k, v in sets.items()],
        "dvfs": values.get("dvfs", base.dvfs),
        "workload": values.get("workload", base.workload),
        "seed": int(values.get("seed", base.seed)),
    }
    # The cost model, where the SPEC names one (default: the platform's).
    config.update({k: getattr(base, k) for k in ("cost_model", "cost_table", "fallback")
                   if getattr(base, k) is not None})
    if kind == "mapping":
        run = {f: getattr(base, f) for f in RUN_FIELDS if getattr(base, f) is not None}
        run.update({k: values[k] for k in spec.axes.run})
        config.update(mapping=values.get("mapping", base.mapping), run=run)
    else:
        # An explorer cell is an ExplorationSpec (hetsim.exploration.spec), plus its label.
        entry = values.get("algorithm") or default
        assert entry is not None
        measurement = base.measurement.model_dump(exclude_none=True)
        measurement.update({k: values[k] for k in spec.axes.measurement})
        config.update(set=sets, algorithm=entry.name, label=entry.label, params=dict(entry.params),
                      problem=base.problem.model_dump(exclude_none=True), measurement=measurement,
                      termination=base.termination.model_dump(exclude_none=True))
    return config


def dump_spec(spec: SweepSpec) -> str:
    """The SPEC as YAML (defaults left out), e.g. to record beside its results."""
    return yaml.safe_dump(spec.model_dump(mode="json", by_alias=True, exclude_defaults=True),
                          sort_keys=False)
