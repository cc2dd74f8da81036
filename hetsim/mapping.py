"""Mappings: what runs where. One module, three forms, one validator.

* a **pipeline**: ordered stages, each a contiguous range of layers on one EP. Its string form reads
  like the papers: ``B4:1-35|s2:36-44|s2:45-54`` (EP name as the platform defines it, or cluster
  symbol + core count; 1-based inclusive layer ranges). Stages run concurrently on different frames.
* a **placement**: op -> EP, for DAG schedules (HOPE-style operator placement). One inference runs
  the DAG with every op on its EP. With an ``order`` (EP -> its ops in execution order) it is a
  **plan** (HOPE, MOSAIC, StarPU, the PIM DP): each EP runs its ops in that order.
* a **split**: a placement in which some ops are divided by output channel over several EPs
  (``splits``: op -> [(EP, share)], shares summing to 1): μLayer's channel-wise split and the
  hybrid (vertical + horizontal) partitioning. The op's ``ep_of`` entry is where its slices are
  gathered (the concat EP). :func:`hybrid_placement` builds one the way AutoDiCE deploys it
  (Savva's thesis, seed 004): whole channel shares, the concat on the next layer's device, the
  network input on the device of the first layer's first split; :func:`placement_from_partition`
  reads the thesis's Table 1 form (device -> its layers, a layer on several devices is split);
  :func:`to_autodice` / :func:`from_autodice` write and read AutoDiCE's mapping.json and
  horizontal.json.
* any of them **sequential** (``sequential: true``): the ops run one at a time in one global order
  (the plan's, else the workload's topological order), each starting when the one before it has
  finished, a split op's shares in parallel: MOSAIC's slices, which run one after another, and
  μLayer's layer-by-layer co-execution (HOPE §5.2 and §5.4).

All load from YAML/JSON files, validated by pydantic::

    stages: [{ep: B4, layers: [1, 35]}, {ep: s2, layers: [36, 44]}, {ep: s2, layers: [45, 54]}]
    # or
    pipeline: "B4:1-35|s2:36-44|s2:45-54"
    # or
    placement: {conv1: gpu, pool1: gpu, fc8: big}
    default: big                        # EP of every op the placement does not name (optional)
    order: {gpu: [conv1, pool1]}        # optional: a plan (per-EP execution order)
    splits: {conv1: {gpu: 0.7, big: 0.3}}   # optional: channel shares of split ops
    sequential: true                    # optional: one op at a time (MOSAIC, μLayer)
    inputs: {data: gpu}                 # optional: the EP holding a network input (sent to the others)

An AutoDiCE ``mapping.json`` (device resource -> layer names) loads too, with the
``horizontal.json`` beside it when it splits layers.

Every invalid mapping (gaps, overlaps, an unknown EP, more cores than a cluster has, an op an EP
cannot run, an order that is not a permutation of an EP's ops or breaks a data dependency, shares
that do not sum to 1) is rejected with one line saying what and where.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from hetsim.bounds import Fraction, Layer
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform
from hetsim.plugins import mapping_formats, resolve
from hetsim.validation import one_line, read_yaml

#: EP:first-last; layer numbers of at most 9 digits (a longer one is no layer of any workload).
_STAGE = re.compile(r"^\s*([^:|\s]+(?::[0-9]+)?)\s*:\s*([0-9]{1,9})\s*(?:-\s*([0-9]{1,9}))?\s*$")


@dataclass(frozen=True)
class Stage:
    """Layers ``first``..``last`` (1-based, inclusive) on ``ep``."""

    ep: ExecutionPlace
    first: int
    last: int

    @property
    def num_layers(self) -> int:
        return self.last - self.first + 1

    def __str__(self) -> str:
        return f"{self.ep.name}:{self.first}-{self.last}"


@dataclass(frozen=True)
class Pipeline:
    stages: tuple[Stage, ...]

    def __str__(self) -> str:
        return "|".join(str(s) for s in self.stages)

    @property
    def split(self) -> tuple[int, ...]:
        """Layers per stage, the papers' ``[7,4,10]`` form."""
        return tuple(s.num_layers for s in self.stages)

    @property
    def eps(self) -> tuple[ExecutionPlace, ...]:
        return tuple(s.ep for s in self.stages)

    @property
    def config(self) -> str:
        """Pipe-it's ``B4-s2-s2`` form."""
        return "-".join(s.ep.name for s in self.stages)


@dataclass(frozen=True)
class Share:
    """``fraction`` of an op's output channels computed on ``ep``."""

    ep: ExecutionPlace
    fraction: float


@dataclass(frozen=True)
class Placement:
    """Op name -> EP for every op of the workload; optionally a plan (``order``) and channel
    splits (``splits``). See the module docstring."""

    ep_of: Mapping[str, ExecutionPlace]
    #: EP name -> the ops it runs, in execution order (None: the workload's topological order).
    order: Mapping[str, tuple[str, ...]] | None = None
    #: op name -> its channel shares over several EPs (ops not listed run whole on ``ep_of``).
    splits: Mapping[str, tuple[Share, ...]] = field(default_factory=dict)
    #: One op at a time in one global order (a split op's shares in parallel): MOSAIC, μLayer.
    sequential: bool = False
    #: network input -> the EP that holds it; every other EP that reads it receives it over the
    #: platform (inputs not listed are read for free wherever they are needed).
    inputs: Mapping[str, ExecutionPlace] = field(default_factory=dict)

    def devices_of(self, op: str) -> tuple[ExecutionPlace, ...]:
        """The EPs that compute ``op``: its shares' (split 1 first), or its one EP."""
        shares = self.splits.get(op)
        return tuple(s.ep for s in shares) if shares else (self.ep_of[op],)

    @property
    def eps(self) -> tuple[ExecutionPlace, ...]:
        """Every EP the placement uses (split shares included), in order of first use."""
        seen: dict[str, ExecutionPlace] = {}
        for op, ep in self.ep_of.items():
            seen.setdefault(ep.name, ep)
            for share in self.splits.get(op, ()):
                seen.setdefault(share.ep.name, share.ep)
        return tuple(seen.values())

    @property
    def is_plan(self) -> bool:
        return self.order is not None

    def __str__(self) -> str:
        counts = Counter(ep.name for ep in self.ep_of.values())
        text = ", ".join(f"{n}: {c} ops" for n, c in counts.items())
        if self.splits:
            text += f"; {len(self.splits)} split"
        if self.sequential:
            text += "; sequential"
        return text


Mapping_ = Pipeline | Placement


# -- building and parsing -------------------------------------------------------------------
def pipeline_from_split(split: Sequence[int], eps: Sequence[ExecutionPlace]) -> Pipeline:
    """A pipeline from layer counts per stage (``[7, 4, 10]``) and one EP per stage."""
    if len(split) != len(eps):
        raise HetsimError(f"split {list(split)} has {len(split)} stages but {len(eps)} EPs were given")
    stages, first = [], 1
    for n, ep in zip(split, eps, strict=True):
        if n < 1:
            raise HetsimError(f"split {list(split)}: every stage needs at least one layer")
        stages.append(Stage(ep, first, first + n - 1))
        first += n
    return Pipeline(tuple(stages))


def parse_pipeline(text: str, platform: Platform, workload, source: str = "mapping") -> Pipeline:
    """Parse ``B4:1-35|s2:36-44|s2:45-54`` and validate it against platform and workload."""
    stages = []
    for i, part in enumerate(text.split("|"), 1):
        m = _STAGE.match(part)
        long = re.search(r"[0-9]{10,}", part)
        if long:
            raise HetsimError(f"{source}: stage {i} has a layer number of {len(long.group())} digits; "
                              f"{workload.name} has layers 1-{workload.num_layers}")
        if not m:
            raise HetsimError(f"{source}: stage {i} {_short(part.strip())!r} is not EP:first-last "
                              f"(e.g. B4:1-35|s2:36-54)")
        ep_name, first, last = m.group(1), int(m.group(2)), int(m.group(3) or m.group(2))
        ep = _ep(platform, ep_name, f"{source}: stage {i}")
        stages.append(Stage(ep, first, last))
    pipe = Pipeline(tuple(stages))
    validate_pipeline(pipe, platform, workload, source)
    return pipe


def validate_pipeline(pipe: Pipeline, platform: Platform, workload, source: str = "mapping",
                      cost=None) -> None:
    n_layers = workload.num_layers
    if not pipe.stages:
        raise HetsimError(f"{source}: a pipeline needs at least one stage")
    expected = 1
    for i, s in enumerate(pipe.stages, 1):
        if s.first < 1:
            raise HetsimError(f"{source}: stage {i} ({s}) starts at layer {s.first}; layers are "
                              f"1-based (1..{n_layers})")
        if s.first > s.last:
            raise HetsimError(f"{source}: stage {i} ({s}) ends before it starts")
        if s.first != expected:
            what = "gap" if s.first > expected else "overlap"
            raise HetsimError(
                f"{source}: stage {i} ({s}) starts at layer {s.first} but the previous stage ends at "
                f"layer {expected - 1} ({what}); stages must cover layers 1-{n_layers} contiguously")
        expected = s.last + 1
    if expected - 1 != n_layers:
        where = "stops at" if expected - 1 < n_layers else "runs past"
        raise HetsimError(f"{source}: the last stage {where} layer {expected - 1} but "
                          f"{workload.name} has {n_layers} layers")
    _check_cores([s.ep for s in pipe.stages], platform, source, exclusive=True)
    if cost is not None:
        for s in pipe.stages:
            for layer in workload.layers[s.first - 1:s.last]:
                for op in layer.ops:
                    if not cost.supports(op, s.ep):
                        raise HetsimError(f"{source}: {s.ep.name} cannot run layer {layer.index} (op "
                                          f"{op.name!r}, kind {op.kind}): {cost.why_not(op, s.ep)}")


def make_placement(spec: Mapping[str, str], platform: Platform, workload, default: str | None = None,
                   order: Mapping[str, Sequence[str]] | None = None,
                   splits: Mapping[str, Mapping[str, float]] | None = None,
                   source: str = "mapping", cost=None, sequential: bool = False,
                   inputs: Mapping[str, str] | None = None) -> Placement:
    """A validated placement (a plan with ``order``, a split with ``splits``, one op at a time
    with ``sequential``, network inputs located with ``inputs``) from EP names."""
    names = {op.name for op in workload.ops}
    for op_name in list(spec) + list(splits or {}):
        if op_name not in names:
            raise HetsimError(f"{source}: placement names op {op_name!r}, which {workload.name} does not have")
    default_ep = _ep(platform, default, f"{source}: default") if default else None
    cache: dict[str, ExecutionPlace] = {}

    def ep_named(name: str, where: str) -> ExecutionPlace:
        if name not in cache:
            cache[name] = _ep(platform, str(name), where)
        return cache[name]

    ep_of = {}
    for op in workload.ops:
        ep_name = spec.get(op.name)
        if ep_name is None:
            if default_ep is None:
                raise HetsimError(f"{source}: op {op.name} has no EP (place it or give a default)")
            ep_of[op.name] = default_ep
        else:
            ep_of[op.name] = ep_named(ep_name, f"{source}: op {op.name}")
    shares = {op: tuple(Share(ep_named(e, f"{source}: splits.{op}"), float(f)) for e, f in parts.items())
              for op, parts in (splits or {}).items()}
    plan = None
    if order is not None:
        plan = {ep_named(e, f"{source}: order.{e}").name: tuple(str(o) for o in ops)
                for e, ops in order.items()}
    located = {str(name): ep_named(e, f"{source}: inputs.{name}") for name, e in (inputs or {}).items()}
    placement = Placement(ep_of, plan, shares, bool(sequential), located)
    validate_placement(placement, platform, workload, source, cost)
    return placement


def placement_from_dict(spec: Mapping[str, str], platform: Platform, workload,
                        default: str | None = None, source: str = "mapping", cost=None) -> Placement:
    """A placement op -> EP name (``default`` for the ops not named)."""
    return make_placement(spec, platform, workload, default, source=source, cost=cost)


def validate_placement(placement: Placement, platform: Platform, workload, source: str = "mapping",
                       cost=None, serial: bool = False) -> None:
    """Every op placed once on an EP that can run it; a plan's order a permutation of each EP's
    ops that respects the data dependencies; split shares positive and summing to 1; EPs of one
    cluster on disjoint cores, unless the placement runs ``serial`` (one op at a time: EPs that
    share cores never run together, as ONNX Runtime's 1-thread and 4-thread kernels)."""
    missing = [op.name for op in workload.ops if op.name not in placement.ep_of]
    if missing:
        raise HetsimError(f"{source}: op {missing[0]} has no EP ({len(missing)} ops unplaced)")
    net_inputs = list(workload.inputs)
    for name in placement.inputs:
        if name not in net_inputs:
            raise HetsimError(f"{source}: inputs.{name}: {workload.name} has no network input {name!r}; "
                              f"its inputs: {', '.join(net_inputs)}")
    _check_splits(placement, workload, source)
    if cost is not None:
        for op in workload.ops:
            shares = placement.splits.get(op.name)
            for ep in [s.ep for s in shares] if shares else (placement.ep_of[op.name],):
                if not cost.supports(op, ep):
                    raise HetsimError(f"{source}: {ep.name} cannot run op {op.name} (kind {op.kind}): "
                                      f"{cost.why_not(op, ep)}")
    if placement.order is not None:
        _check_order(placement, workload, source)
    if not serial:
        _check_cores(list(placement.eps), platform, source, exclusive=False)


def _check_splits(placement: Placement, workload, source: str) -> None:
    """A split op: at least 2 distinct EPs, shares in (0, 1] summing to 1, no more EPs than output
    channels."""
    for op_name, shares in placement.splits.items():
        op = workload.op(op_name)
        if len(shares) < 2:
            raise HetsimError(f"{source}: splits.{op_name}: a split needs at least 2 EPs, got {len(shares)}")
        if len({s.ep.name for s in shares}) != len(shares):
            raise HetsimError(f"{source}: splits.{op_name}: an EP appears twice")
        if any(not (0 < s.fraction <= 1) or not math.isfinite(s.fraction) for s in shares):
            raise HetsimError(f"{source}: splits.{op_name}: every share must be in (0, 1], got "
                              f"{[s.fraction for s in shares]}")
        total = sum(s.fraction for s in shares)
        if abs(total - 1.0) > 1e-9:
            raise HetsimError(f"{source}: splits.{op_name}: shares sum to {total:g}; they must sum to 1")
        if op.out_shape.c < len(shares):
            raise HetsimError(f"{source}: splits.{op_name}: {op.out_shape.c} output channels cannot be "
                              f"split over {len(shares)} EPs")


def _check_order(placement: Placement, workload, source: str) -> None:
    """A plan's order: each EP's list a permutation of the (unsplit) ops placed on it, and the
    lists together respect the data dependencies."""
    assert placement.order is not None
    g = workload.graph
    placed: dict[str, list[str]] = {}
    for op in workload.ops:
        if op.name not in placement.splits:
            placed.setdefault(placement.ep_of[op.name].name, []).append(op.name)
    for ep_name, listed_ops in placement.order.items():
        if ep_name not in placed and listed_ops:
            raise HetsimError(f"{source}: order.{ep_name}: no op is placed on {ep_name}")
    for ep_name, ops in placed.items():
        listed = list(placement.order.get(ep_name, ()))
        if Counter(listed) != Counter(ops):
            extra = sorted(set(listed) - set(ops))
            lack = sorted(set(ops) - set(listed))
            what = (f"lists {extra[0]!r}, which runs elsewhere" if extra else
                    f"lacks {lack[0]!r}" if lack else "lists an op twice")
            raise HetsimError(f"{source}: order.{ep_name} {what}; it must list exactly the "
                              f"{len(ops)} ops placed on {ep_name}")
    chain = nx.DiGraph(g)
    for plan in placement.order.values():
        chain.add_edges_from(zip(plan, plan[1:], strict=False))
    if not nx.is_directed_acyclic_graph(chain):
        a, b = next((u, v) for u, v in nx.find_cycle(chain) if not g.has_edge(u, v))
        raise HetsimError(f"{source}: the plan's order runs {a} before {b}, but {b} (or an op "
                          f"before it) feeds {a}: the order must respect the data dependencies")


# -- mapping files ----------------------------------------------------------------------------
class FileModel(BaseModel):
    """Strict, and an unknown key is named with the keys allowed (the base of a mapping file's
    models, a plugin's mapping format's too)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data):
        if isinstance(data, dict):
            unknown = sorted(str(k) for k in data if k not in cls.model_fields)
            if unknown:
                from hetsim.keypaths import nearest

                near = nearest(unknown[0], list(cls.model_fields))
                hint = f" (did you mean {near!r}?)" if near else ""
                raise ValueError(f"unknown key {unknown[0]!r}{hint}; allowed: {', '.join(cls.model_fields)}")
        return data


class _StageSpec(FileModel):
    ep: str
    layers: Annotated[list[Layer], Field(min_length=2, max_length=2,
                                             description="[first, last], 1-based")]


class MappingFile(FileModel):
    """A mapping file: exactly one of ``pipeline``, ``stages``, ``placement`` (or a key a plugin's
    mapping format reads, :func:`hetsim.plugins.mapping_formats`, which that format validates)."""

    description: str = ""
    pipeline: str | None = None
    stages: Annotated[list[_StageSpec], Field(min_length=1)] | None = None
    placement: dict[str, str] | None = None
    default: str | None = None
    order: dict[str, list[str]] | None = None
    splits: dict[str, dict[str, Fraction]] | None = None
    inputs: dict[str, str] | None = None
    sequential: bool | None = None

    @model_validator(mode="after")
    def _one_form(self) -> MappingFile:
        forms = [k for k in ("pipeline", "stages", "placement") if getattr(self, k) is not None]
        if len(forms) != 1:
            raise ValueError(f"a mapping file needs exactly one of the keys {', '.join(_forms())}"
                             + (f"; has {forms}" if forms else ""))
        if forms[0] != "placement" and any(getattr(self, k) is not None
                                           for k in ("default", "order", "splits", "sequential", "inputs")):
            raise ValueError("default, order, splits, sequential and inputs go with placement")
        return self


def placement_dict(placement: Placement) -> dict:
    """A placement as the mapping file's keys (what :func:`load_mapping` reads back): ``placement``,
    and ``order``, ``splits``, ``sequential``, ``inputs`` when it has them."""
    out: dict = {"placement": {op: ep.name for op, ep in placement.ep_of.items()}}
    if placement.order is not None:
        out["order"] = {ep: list(ops) for ep, ops in placement.order.items()}
    if placement.splits:
        out["splits"] = {op: {s.ep.name: s.fraction for s in shares} for op, shares in placement.splits.items()}
    if placement.sequential:
        out["sequential"] = True
    if placement.inputs:
        out["inputs"] = {name: ep.name for name, ep in placement.inputs.items()}
    return out


def load_mapping(spec: str, platform: Platform, workload, cost=None) -> Mapping_:
    """A mapping from its string form or from a YAML/JSON file."""
    text = str(spec).strip()
    if "|" not in text and ":" not in text or text.endswith((".yaml", ".yml", ".json")):
        if _is_file(text):
            return _load_file(Path(text), platform, workload, cost)
    m = parse_pipeline(text, platform, workload)
    if cost is not None:
        validate_pipeline(m, platform, workload, _short(text), cost)
    return m


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file() or text.endswith((".yaml", ".yml", ".json"))
    except OSError:  # a name too long to be a path is not one
        return False


def _load_file(path: Path, platform: Platform, workload, cost) -> Mapping_:
    src = str(path)
    data = read_yaml(path)
    if is_autodice_mapping(data):
        horizontal_path = path.parent / "horizontal.json"
        horizontal = read_yaml(horizontal_path) if horizontal_path.is_file() else {}
        return from_autodice(data, horizontal, platform, workload, src, cost=cost,
                             constants=_folded_nodes(workload))
    plugin_form = _plugin_form(data, src)
    if plugin_form is not None:
        return resolve(mapping_formats()[plugin_form])(data, platform, workload, src, cost)
    try:
        spec = MappingFile.model_validate(data)
    except ValidationError as e:
        from hetsim.keypaths import Describe

        raise one_line(src, e, Describe(MappingFile, data)) from None
    if spec.placement is not None:
        return make_placement(spec.placement, platform, workload, spec.default, spec.order, spec.splits,
                              src, cost, bool(spec.sequential), spec.inputs)
    if spec.pipeline is not None:
        m = parse_pipeline(spec.pipeline, platform, workload, src)
    else:
        stages = tuple(Stage(_ep(platform, s.ep, f"{src}: stages[{i}]"), s.layers[0], s.layers[1])
                       for i, s in enumerate(spec.stages or ()))
        m = Pipeline(stages)
    validate_pipeline(m, platform, workload, src, cost)
    return m


def _folded_nodes(workload) -> list[str]:
    """ONNX nodes of a generated network that its import folded into constants (AutoDiCE's files
    name them; hetsim has no op for them)."""
    from hetsim.workload.networks import generated

    if workload.name not in generated():
        return []
    from hetsim.workload.onnx_import import folded_readers

    return list(folded_readers(generated()[workload.name](), workload))


def _forms() -> list[str]:
    """The keys that make a mapping file: hetsim's three forms, then the plugins' formats."""
    return ["pipeline", "stages", "placement", *mapping_formats()]


def _plugin_form(data, source: str) -> str | None:
    """The plugin format a mapping file is written in (its key), or None for hetsim's own forms."""
    if not isinstance(data, dict):
        return None
    keys = [k for k in _forms() if k in data]
    plugin = [k for k in keys if k in mapping_formats()]
    if plugin and len(keys) > 1:
        raise HetsimError(f"{source}: a mapping file needs exactly one of the keys {', '.join(_forms())}; "
                          f"has {keys}")
    return plugin[0] if plugin else None


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _ep(platform: Platform, name: str, where: str) -> ExecutionPlace:
    try:
        return platform.ep(name)
    except HetsimError as e:
        raise HetsimError(f"{where}: {e}") from None


def _check_cores(eps: Sequence[ExecutionPlace], platform: Platform, source: str, exclusive: bool) -> None:
    """Stages (or the distinct EPs of a placement) get disjoint cores: per cluster, their core counts
    must fit in the cluster; an accelerator serves one stage."""
    used: Counter[str] = Counter()
    accel: Counter[str] = Counter()
    for ep in eps:
        if ep.cluster:
            used[ep.cluster] += ep.cores
        else:
            accel[ep.place] += 1
    for cname, n in used.items():
        have = platform.cluster(cname).cores
        if n > have:
            names = _short("+".join(ep.name for ep in eps if ep.cluster == cname), 80)
            raise HetsimError(f"{source}: stages use {n} cores of cluster {cname} ({names}) but it has {have}")
    if exclusive:
        for aname, n in accel.items():
            if n > 1:
                raise HetsimError(f"{source}: accelerator {aname} is given to {n} stages; a stage owns its EP")


# -- hybrid partitions: vertical + horizontal (LOP) splits, as AutoDiCE deploys them -----------
#: Op kinds a hybrid partition may split by output channel: the layers with weights, Conv and FC
#: (Savva's thesis §4.1, LOP: each device computes some filters of the full input).
SPLITTABLE_KINDS = ("conv", "dw", "fc")


def splittable(op) -> bool:
    """Whether a hybrid partition may split ``op`` horizontally (a Conv or FC with weights)."""
    return op.kind in SPLITTABLE_KINDS and op.weight_bytes > 0


def channel_counts(channels: int, weights: Sequence[float]) -> list[int]:
    """Whole output channels per device, in proportion to ``weights``, the rounding remainder to
    the first device [choice: the thesis only shows equal halves, Table 4]."""
    total = float(sum(weights))
    counts = [int(channels * w // total) for w in weights]
    counts[0] += channels - sum(counts)
    return counts


def autodice_concat_device(workload, op: str, primary: Mapping[str, str]) -> str:
    """Where AutoDiCE puts the Concat of split layer ``op`` (thesis §4.2; AutoDiCE's
    ``HorizontalInplace``): on the device of the next layer, i.e. the first consumer in ONNX order
    (a split consumer: its split-1 device); for the last layer, on the device of the previous
    layer (its first producer); for a network of one layer, on its own split-1 device.
    ``primary`` maps every op to its (split-1) device."""
    g = workload.graph
    index = workload.op_index
    consumers = sorted(g.successors(op), key=index.__getitem__)
    if consumers:
        return primary[consumers[0]]
    producers = sorted(g.predecessors(op), key=index.__getitem__)
    return primary[producers[0] if producers else op]


def hybrid_placement(platform: Platform, workload, devices: Mapping[str, Sequence[str]], *,
                     weights: Mapping[str, Sequence[float]] | None = None, source: str = "mapping",
                     cost=None) -> Placement:
    """The placement of a hybrid partition: ``devices[op]`` lists the distinct EPs that compute
    each op, split 1 first; an op on several EPs is split by output channel (LOP), only a Conv or
    an FC with weights. Channels are dealt equally (or in proportion to ``weights[op]``), whole,
    the remainder to split 1; the Concat goes where AutoDiCE puts it
    (:func:`autodice_concat_device`); each network input lives on the split-1 device of the first
    op that reads it and is sent to the other devices that read it (thesis eq. 4.3, IS x N)."""
    names = {op.name for op in workload.ops}
    unknown = [op for op in devices if op not in names]
    if unknown:
        raise HetsimError(f"{source}: names layer {unknown[0]!r}, which {workload.name} does not have")
    missing = [op.name for op in workload.ops if not devices.get(op.name)]
    if missing:
        raise HetsimError(f"{source}: layer {missing[0]} is not mapped to any device "
                          f"({len(missing)} of {len(names)} layers unplaced); every layer needs a device")
    cache: dict[str, ExecutionPlace] = {}

    def ep_named(name: str, where: str) -> ExecutionPlace:
        if name not in cache:
            cache[name] = _ep(platform, str(name), where)
        return cache[name]

    splits: dict[str, tuple[Share, ...]] = {}
    primary: dict[str, str] = {}
    for op in workload.ops:
        listed = [str(d) for d in devices[op.name]]
        if len(set(listed)) != len(listed):
            raise HetsimError(f"{source}: layer {op.name} lists a device twice: {listed}")
        eps = [ep_named(d, f"{source}: layer {op.name}") for d in listed]
        primary[op.name] = eps[0].name
        if len(eps) == 1:
            continue
        if not splittable(op):
            raise HetsimError(f"{source}: layer {op.name} ({op.op_type or op.kind}) is on {len(eps)} devices, "
                              f"but only Conv and FC layers with weights can be split (LOP)")
        w = list(weights.get(op.name, [1.0] * len(eps))) if weights else [1.0] * len(eps)
        if len(w) != len(eps) or any(not (x > 0) for x in w):
            raise HetsimError(f"{source}: layer {op.name}: weights {w} must be one positive number per device")
        if op.out_c < len(eps):
            raise HetsimError(f"{source}: layer {op.name}: {op.out_c} output channels cannot be split "
                              f"over {len(eps)} devices")
        counts = channel_counts(op.out_c, w)
        splits[op.name] = tuple(Share(ep, c / op.out_c) for ep, c in zip(eps, counts, strict=True))
    ep_of = {op.name: ep_named(autodice_concat_device(workload, op.name, primary) if op.name in splits
                               else primary[op.name], source) for op in workload.ops}
    inputs: dict[str, ExecutionPlace] = {}
    for op in workload.ops:
        for name in workload.net_inputs_of(op):
            inputs.setdefault(name, ep_named(primary[op.name], source))
    placement = Placement(ep_of, None, splits, inputs=inputs)
    validate_placement(placement, platform, workload, source, cost)
    return placement


def placement_from_partition(partition: Mapping[str, Sequence[str]], platform: Platform, workload,
                             source: str = "mapping", cost=None) -> Placement:
    """The thesis's mapping formalism (§4.1, Table 1): device -> the subset of layers it runs; the
    subsets cover every layer and may overlap only in Conv/FC layers, which are then split over
    the devices that list them (in the partition's device order, the first being split 1)."""
    devices: dict[str, list[str]] = {}
    for device, layers in partition.items():
        for layer in layers:
            devices.setdefault(str(layer), []).append(str(device))
    for layer, listed in devices.items():
        if len(listed) > 1 and layer in {op.name for op in workload.ops} and not splittable(workload.op(layer)):
            raise HetsimError(f"{source}: layer {layer} is in the subsets of {' and '.join(listed[:2])}, but "
                              f"only Conv and FC layers may be in several (they are split)")
    return hybrid_placement(platform, workload, devices, source=source, cost=cost)


def partition_of(placement: Placement, workload) -> dict[str, list[str]]:
    """The thesis's Table 1 form of a placement: EP name -> the layers it runs (a split layer
    under each of its devices, the Concat of a split layer not listed), in ONNX order."""
    out: dict[str, list[str]] = {}
    for op in workload.ops:
        for ep in placement.devices_of(op.name):
            out.setdefault(ep.name, []).append(op.name)
    return out


# -- AutoDiCE's mapping files ------------------------------------------------------------------
def autodice_names(platform: Platform) -> dict[str, str]:
    """EP name -> AutoDiCE's device resource name (``nx01_arm012345``: the board, then ``arm`` and
    the CPU cores the rank is pinned to; ``nx01_gpu``), for every whole cluster and accelerator.
    A place that sits on no board keeps its EP name."""
    names = {}
    for c in platform.clusters:
        names[c.name] = f"{c.device}_arm{''.join(str(i) for i in range(c.cores))}" if c.device else c.name
    for a in platform.accelerators:
        names[a.name] = f"{a.device}_{a.kind}" if a.device else a.name
    return names


def is_autodice_mapping(data) -> bool:
    """Whether a parsed file is AutoDiCE's mapping.json (an object of lists of layer names)."""
    return (isinstance(data, dict) and bool(data) and not set(data) & set(MappingFile.model_fields)
            and all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in data.values()))


def to_autodice(placement: Placement, platform: Platform, workload,
                constants: Mapping[str, str] | None = None) -> tuple[dict[str, list[str]], dict[str, list]]:
    """AutoDiCE's two mapping files for ``placement``: mapping.json (device resource -> its layers
    in ONNX order; a split layer under each of its devices) and horizontal.json (split layer ->
    ``["lop", output channels per device, devices]``, split 1 first). ``constants`` maps ONNX nodes
    the import folded into constants (DenseNet's Unsqueeze) to the op that reads them; they go
    with that op's split-1 device, so that the files name every node of the model."""
    names = autodice_names(platform)
    mapping: dict[str, list[str]] = {}
    horizontal: dict[str, list] = {}
    readers: dict[str, list[str]] = {}
    for node, reader in (constants or {}).items():
        readers.setdefault(reader, []).append(node)
    for op in workload.ops:
        devices = placement.devices_of(op.name)
        for node in readers.get(op.name, ()):
            mapping.setdefault(names[devices[0].name], []).append(node)
        for ep in devices:
            mapping.setdefault(names[ep.name], []).append(op.name)
        shares = placement.splits.get(op.name)
        if shares:
            counts = [round(s.fraction * op.out_c) for s in shares]
            horizontal[op.name] = ["lop", counts, [names[s.ep.name] for s in shares]]
    return mapping, horizontal


def from_autodice(mapping: Mapping[str, Sequence[str]], horizontal: Mapping[str, Sequence] | None,
                  platform: Platform, workload, source: str = "mapping.json", cost=None,
                  constants: Sequence[str] = ()) -> Placement:
    """The placement AutoDiCE would deploy from mapping.json and horizontal.json (see
    :func:`to_autodice`): the Concat of each split layer by AutoDiCE's rule. ``constants`` are node
    names the workload folded (they may appear in the files and are ignored)."""
    by_name = {v: k for k, v in autodice_names(platform).items()}
    skip = set(constants)
    devices: dict[str, list[str]] = {}
    for resource, layers in mapping.items():
        ep = by_name.get(resource)
        if ep is None:
            raise HetsimError(f"{source}: device {resource!r} is not on platform {platform.name}; its devices: "
                              f"{', '.join(by_name)}")
        for layer in layers:
            if layer not in skip:
                devices.setdefault(layer, []).append(ep)
    weights: dict[str, list[float]] = {}
    for layer, spec in (horizontal or {}).items():
        where = f"{source} (horizontal.json): {layer}"
        if not isinstance(spec, list | tuple) or len(spec) != 3 or not isinstance(spec[1], list | tuple) \
                or not isinstance(spec[2], list | tuple):
            raise HetsimError(f"{where}: expected [\"lop\", [channels per device], [devices]], got {spec!r}")
        kind, counts, resources = spec
        if str(kind).lower() != "lop":
            raise HetsimError(f"{where}: split type {kind!r}; hetsim models LOP (output channels) only")
        if any(str(r) not in by_name for r in resources) or len(counts) != len(resources):
            raise HetsimError(f"{where}: devices {list(resources)} and channels {list(counts)} must name "
                              f"platform devices ({', '.join(by_name)}), one count each")
        eps = [by_name[str(r)] for r in resources]
        if sorted(eps) != sorted(devices.get(layer, [])):
            raise HetsimError(f"{where}: splits over {list(resources)} but mapping.json lists it under "
                              f"{[autodice_names(platform)[e] for e in devices.get(layer, [])]}")
        devices[layer] = eps
        weights[layer] = [float(c) for c in counts]
    for layer, eps in devices.items():
        if len(eps) > 1 and layer not in weights:
            raise HetsimError(f"{source}: layer {layer} is listed under {len(eps)} devices but horizontal.json "
                              f"does not split it")
    return hybrid_placement(platform, workload, devices, weights=weights, source=source, cost=cost)
