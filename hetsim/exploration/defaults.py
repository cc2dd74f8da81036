"""The default explorer and EP space of ``hetsim explore``, chosen from the platform's shape and
backed by a measured table.

:func:`platform_class` sorts a platform into one of :data:`CLASSES` by its shape (boards, a PIM
unit, accelerators, CPU clusters on several memories, several CPU clusters on one). The table
``explorer_defaults.csv`` beside this module holds, for representative platforms of each class,
every pipeline algorithm of hetsim and its papers over each EP space (whole EPs, or disjoint core
groups), with the defaults ``hetsim explore`` gives it: the quality of its answer (the DES
throughput of the mapping it answers with, :mod:`hetsim.exploration.confirm`) against the best DES
throughput known for the case (the exact DES optimum of the whole-EP space where it can be
enumerated, else the best answer of any run), and its wall time. ``python
benchmarks/explorer_defaults.py`` regenerates it.

:func:`class_default` reads the table: among the installed algorithms, the (algorithm, space) of the
best mean quality over the class's runs (a run that refused or failed counts 0); of those within
one percentage point of it, the fastest. A core-only installation gets hetsim's own best (the table
covers them too); with the papers' plugins installed, theirs compete.

    >>> class_default(load_platform("rk3588"), {"ES", "HC", "NSGA-II-pipe"}).algorithm
    'ES'

A PIM platform's best measured defaults are placements (the PIM paper's runtime runs one op at a
time, which a pipeline cannot use): ``hetsim explore`` then searches placements, unless the
request is a pipeline's (depths, a space of core groups, a Pareto front, a target rate).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: The table (written by benchmarks/explorer_defaults.py).
TABLE = Path(__file__).resolve().parent / "explorer_defaults.csv"
#: The command that regenerates :data:`TABLE`.
COMMAND = "python benchmarks/explorer_defaults.py"
#: Platform classes, in the order :func:`platform_class` tests them.
CLASSES = ("multi-board", "PIM", "accelerator SoC", "chiplets", "big.LITTLE", "CPU")
#: Mean qualities this close to the best are ties, broken by the wall time.
TIE = 0.01
#: How each EP space reads in notes.
SPACES = {"permutations": "whole EPs (each cluster whole and each accelerator)",
          "cores": "disjoint core groups (B1..B4, s1..s4, ... and each accelerator)"}


def platform_class(platform) -> tuple[str, str]:
    """(class, why): the first of :data:`CLASSES` the platform's shape matches, and the facts that
    put it there."""
    devices = [d.name for d in platform.devices]
    if len(devices) >= 2:
        return "multi-board", f"{len(devices)} boards"
    pim = [a.name for a in platform.accelerators if a.kind == "pim"]
    if pim:
        return "PIM", f"processing-in-memory unit {', '.join(pim)}"
    if platform.accelerators:
        names = ", ".join(a.name for a in platform.accelerators)
        return "accelerator SoC", f"accelerators {names} beside {len(platform.clusters)} CPU cluster(s)"
    memories = list(dict.fromkeys(c.memory for c in platform.clusters))
    if len(memories) >= 2:
        return "chiplets", f"CPU clusters on {len(memories)} memories"
    if len(platform.clusters) >= 2:
        return "big.LITTLE", f"CPU clusters {', '.join(c.name for c in platform.clusters)} on one memory"
    return "CPU", "one CPU cluster"


@dataclass(frozen=True)
class Score:
    """One (algorithm, space) of a class in the table: its problem kind, mean quality (0..1), runs,
    mean wall time."""

    algorithm: str
    space: str
    quality: float
    runs: int
    wall_s: float
    kind: str = "pipeline"


@dataclass(frozen=True)
class DefaultChoice:
    """The class of a platform, the chosen (algorithm, space) with its score, the best score of
    the class whatever is installed (``best``), and the note that states the choice."""

    platform_class: str
    why: str
    choice: Score
    best: Score

    @property
    def algorithm(self) -> str:
        return self.choice.algorithm

    @property
    def assignment(self) -> str:
        return self.choice.space

    @property
    def kind(self) -> str:
        return self.choice.kind

    def note(self, platform_name: str, algorithm_flag: str = "--algorithm",
             assignment_flag: str = "--assignment") -> str:
        c = self.choice
        space = SPACES.get(c.space, c.space) if c.kind == "pipeline" else "op -> EP placements of the DAG"
        article = "an" if self.platform_class[0].lower() in "aeiou" else "a"
        text = (f"{platform_name} is {article} {self.platform_class} platform ({self.why}): searching with "
                f"{c.algorithm} over {space}, the best default measured on "
                f"{self.platform_class} platforms ({c.quality:.1%} of the best DES throughput known, mean of "
                f"{c.runs} runs")
        if self.best != c:
            text += (f"; {self.best.algorithm} reached {self.best.quality:.1%} but is not installed")
        return (text + f"; {_rel(TABLE)}, `{COMMAND}` regenerates it); {algorithm_flag} and "
                f"{assignment_flag} choose others")


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(Path(__file__).resolve().parents[2]))
    except ValueError:
        return str(path)


@cache
def scores() -> dict[str, list[Score]]:
    """Per class, every (algorithm, space) of the table with its mean quality, runs and wall time,
    best first (quality, then wall time)."""
    if not TABLE.is_file():
        return {}
    acc: dict[tuple[str, str, str, str], list[tuple[float, float]]] = {}
    with TABLE.open(newline="") as f:
        for row in csv.DictReader(f):
            q = float(row["quality"]) if row["quality"] not in ("", "nan") else 0.0
            wall = float(row["wall_s"]) if row["wall_s"] not in ("", "nan") else 0.0
            acc.setdefault((row["class"], row["algorithm"], row["space"], row.get("kind") or "pipeline"),
                           []).append((q if math.isfinite(q) else 0.0, wall))
    out: dict[str, list[Score]] = {}
    for (cls, algorithm, space, kind), runs in acc.items():
        out.setdefault(cls, []).append(Score(algorithm, space, sum(q for q, _ in runs) / len(runs), len(runs),
                                             sum(w for _, w in runs) / len(runs), kind))
    for cls in out:
        out[cls].sort(key=lambda s: (-s.quality, s.wall_s, s.algorithm, s.space))
    return out


def _pick(candidates: list[Score]) -> Score:
    top = candidates[0].quality
    return min((s for s in candidates if s.quality >= top - TIE), key=lambda s: (s.wall_s, -s.quality))


def class_default(platform, installed: Collection[str], kinds: Collection[str] = ("pipeline",)) -> DefaultChoice | None:
    """The default (algorithm, space) of ``platform``'s class among the ``installed`` algorithms of
    problem ``kinds`` (module docstring); None when the table has no row for the class, none of its
    algorithms is installed, or none answered at all."""
    cls, why = platform_class(platform)
    table = [s for s in scores().get(cls, []) if s.kind in kinds]
    available = [s for s in table if s.algorithm in installed]
    if not available or available[0].quality <= 0:
        return None
    return DefaultChoice(cls, why, _pick(available), _pick(table))


#: hetsim's own algorithms (the defaults of an installation without plugins).
CORE_ALGORITHMS = ("ES", "RW", "HC", "SA", "NSGA-II-pipe", "CPU-only", "GPU-only", "MOSAIC", "StarPU-DMDAR",
                   "HEFT", "muLayer", "ILP-exact")


def defaults_markdown() -> str:
    """docs/explorers.md's ``defaults`` part: per class, the platforms measured, the default with
    every shipped plugin and with hetsim alone, and the runners-up (from :data:`TABLE`)."""
    cases: dict[str, set[str]] = {}
    if TABLE.is_file():
        with TABLE.open(newline="") as f:
            for row in csv.DictReader(f):
                cases.setdefault(row["class"], set()).add(f"{row['platform']}/{row['workload']}")
    lines = ["| class | cases measured | default (papers installed) | default (hetsim alone) | runners-up |",
             "|---|---|---|---|---|"]
    for cls in CLASSES:
        table = scores().get(cls)
        if not table:
            continue
        kinds = {s.kind for s in table}
        best = [s for s in table if s.quality > 0]

        def text(s: Score) -> str:
            where = s.space if s.kind == "pipeline" else "placements"
            return f"`{s.algorithm}` ({where}) {100 * s.quality:.1f} %"

        every = _pick(best) if best else None
        core = [s for s in best if s.algorithm in CORE_ALGORITHMS]
        alone = _pick(core) if core else None
        others = [s for s in best if s not in (every, alone)][:3]
        lines.append(f"| {cls} | {', '.join(sorted(cases.get(cls, ())))} | {text(every) if every else '–'} | "
                     f"{text(alone) if alone else '– (' + '/'.join(sorted(kinds)) + ' default)'} | "
                     f"{'; '.join(text(s) for s in others)} |")
    return "\n".join(lines) + "\n"
