"""Small platforms and workloads built in memory for engine tests (and random DAG placement
problems for the DAG schedulers); what CLI tests share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hetsim.platform import load_platform, platform_from_dict
from hetsim.workload import workload_from_dict

# Terminal-independent output: rich reads COLUMNS at print time (its Console resolves sys.stdout
# and the size lazily), so a table wraps at 80 columns whatever terminal pytest runs in, as it
# does in CI where no stream is a terminal. FORCE_COLOR would put ANSI codes in captured text.
CLI_ENV: dict[str, str | None] = {"COLUMNS": "80", "LINES": "25", "FORCE_COLOR": None,
                                  "TTY_COMPATIBLE": None, "TTY_INTERACTIVE": None}


def two_cluster_platform(link_latency_ns: float = 1000.0, mem_bw: tuple[float, float] = (20.0, 10.0),
                         shared_memory: bool = False, power: bool = True):
    """A big.LITTLE-like platform: 4 fast cores and 4 slow cores, a link between the clusters."""
    mems = [{"name": "m0", "bandwidth_GBps": mem_bw[0]}]
    if not shared_memory:
        mems.append({"name": "m1", "bandwidth_GBps": mem_bw[1]})
    level = lambda name, f, a, i: {"name": name, "freq_MHz": f,  # noqa: E731
                                   **({"active_W_per_core": a, "idle_W_per_core": i} if power else {})}
    return platform_from_dict({
        "schema": 2, "name": "toy",
        "memories": mems,
        "core_types": [
            {"name": "fast", "macs_per_cycle": 8,
             "dvfs": [level("hi", 2000, 1.0, 0.1), level("lo", 500, 0.2, 0.05)],
             "roofline": {"gemm_efficiency": 0.5, "parallel_efficiency": [1, 0.95, 0.9, 0.85],
                          "op_overhead_us": 20}},
            {"name": "slow", "macs_per_cycle": 2, "dvfs": [level("hi", 1500, 0.3, 0.02)],
             "roofline": {"gemm_efficiency": 0.6, "op_overhead_us": 30}},
        ],
        "clusters": [
            {"name": "big", "symbol": "B", "core_type": "fast", "cores": 4, "memory": "m0"},
            {"name": "little", "symbol": "s", "core_type": "slow", "cores": 4,
             "memory": "m0" if shared_memory else "m1"},
        ],
        "links": [{"name": "bus", "connects": ["big", "little"], "bandwidth_GBps": 5,
                   "latency_ns": link_latency_ns, "energy_pJ_per_byte": 10}],
        "power": {"static_W": 1.5} if power else None,
    } if power else {
        "schema": 2, "name": "toy", "memories": mems,
        "core_types": [
            {"name": "fast", "macs_per_cycle": 8, "dvfs": [level("hi", 2000, 0, 0)]},
            {"name": "slow", "macs_per_cycle": 2, "dvfs": [level("hi", 1500, 0, 0)]},
        ],
        "clusters": [
            {"name": "big", "symbol": "B", "core_type": "fast", "cores": 4, "memory": "m0"},
            {"name": "little", "symbol": "s", "core_type": "slow", "cores": 4,
             "memory": "m0" if shared_memory else "m1"},
        ],
        "links": [{"name": "bus", "connects": ["big", "little"], "bandwidth_GBps": 5,
                   "latency_ns": link_latency_ns}],
    })


def chain_workload(channels: list[int], kernels: list[int] | None = None, size: int = 28,
                   with_skip: bool = False, name: str = "chain"):
    """A chain of same-padding convs (one layer each), optionally with a residual add that makes a
    tensor cross several layers."""
    kernels = kernels or [3] * len(channels)
    ops = []
    for i, (c, k) in enumerate(zip(channels, kernels, strict=True)):
        ops.append({"name": f"conv{i + 1}", "kind": "conv", "kernel": k, "out_c": c, "stride": 1,
                    "pad": k // 2})
        ops.append({"name": f"relu{i + 1}", "kind": "relu"})
    if with_skip and len(channels) >= 3 and channels[0] == channels[2]:
        # conv3's output + relu1's output: relu1 crosses the cuts after layers 1 and 2.
        idx = next(i for i, o in enumerate(ops) if o["name"] == "relu3")
        ops.insert(idx + 1, {"name": "add3", "kind": "add", "inputs": ["relu3", "relu1"]})
    return workload_from_dict({
        "schema": 1, "name": name, "description": "test chain", "source": "tests",
        "input": {"h": size, "w": size, "c": 3}, "layer_kinds": ["conv", "fc"], "ops": ops,
    }, name)


# -- random DAG placement problems (the DAG schedulers' tests, as saga validates its schedulers) -----
def soc(n_clusters: int = 1):
    """A phone-like SoC: a CPU cluster (and a LITTLE one), a GPU, one memory, no links."""
    clusters = [{"name": "cpu", "core_type": "c", "cores": 2, "memory": "dram"}]
    if n_clusters > 1:
        clusters.append({"name": "little", "core_type": "c", "cores": 4, "memory": "dram"})
    return platform_from_dict({
        "schema": 2, "name": "soc", "memories": [{"name": "dram", "bandwidth_GBps": 10}],
        "core_types": [{"name": "c", "macs_per_cycle": 8, "dvfs": [{"name": "max", "freq_MHz": 2000}]}],
        "clusters": clusters,
        "accelerators": [{"name": "gpu", "kind": "gpu", "peak_GMACps": 100, "memory": "dram",
                          "kinds": ["conv", "add"]}]})


def random_dag(rng: np.random.Generator, n: int, name: str = "dag"):
    """A random DAG of convs and adds (every op reachable from the input)."""
    ops = [{"name": "op0", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 8, "inputs": []}]
    for i in range(1, n):
        if i >= 2 and rng.random() < 0.35:
            a, b = rng.choice(i, size=2, replace=False)
            ops.append({"name": f"op{i}", "kind": "add", "inputs": [f"op{a}", f"op{b}"]})
        else:
            ops.append({"name": f"op{i}", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 8,
                        "inputs": [f"op{int(rng.integers(max(0, i - 4), i))}"]})
    return workload_from_dict({"schema": 1, "name": name, "input": {"h": 8, "w": 8, "c": 8},
                               "layer_kinds": ["conv"], "ops": ops}, name)


def random_costs(rng, platform, workload, eps, incapable: float = 0.15):
    """Random op times (ms-scale), some ops not capable on the GPU; a random copy cost per byte."""
    from hetsim.cost import MeasuredCostModel

    rows = []
    for op in workload.ops:
        for ep in eps:
            if ep == "gpu" and op.name != "op0" and rng.random() < incapable:
                continue
            rows.append({"op": op.name, "ep": ep, "time_s": float(rng.uniform(0.1e-3, 3e-3))})
    nbytes = workload.ops[0].output_bytes
    trans = [{"src": a, "dst": b, "bytes": nbytes, "time_s": float(rng.uniform(0.05e-3, 1e-3))}
             for a in eps for b in eps if a != b]
    return MeasuredCostModel(platform, pd.DataFrame(rows), pd.DataFrame(trans))


def random_placement_problem(seed: int, n: int, comm: str = "consumer", caching: bool = True,
                             three: bool = False):
    """A random DAG of ``n`` ops on :func:`soc` (CPU and GPU, with ``three`` a LITTLE cluster too),
    random measured op and copy times."""
    from hetsim.evaluation import DagOptions
    from hetsim.exploration import PlacementProblem

    rng = np.random.default_rng(seed)
    platform = soc(2 if three else 1)
    workload = random_dag(rng, n)
    eps = ["cpu", "little", "gpu"] if three else ["cpu", "gpu"]
    cost = random_costs(rng, platform, workload, eps)
    return PlacementProblem(platform, workload, cost, eps=eps, dag=DagOptions(comm=comm, caching=caching))


def check_schedule(prob, placement) -> float:
    """Validate a plan the way saga does (every op placed once, on an EP that can run it,
    precedence kept, one task at a time per lane) and return its closed-form latency."""
    from hetsim.tasks import build_tasks, list_schedule

    tg = build_tasks(prob.platform, prob.workload, placement, prob.cost, comm=prob.dag.comm,
                     caching=prob.dag.caching)
    start, finish = list_schedule(tg)
    computed = {t.op for t in tg.tasks if t.kind == "compute"}
    assert computed == {op.name for op in prob.workload.ops}                  # each op placed
    for op in prob.workload.ops:
        eps = [s.ep for s in placement.splits.get(op.name, ())] or [placement.ep_of[op.name]]
        assert all(prob.cost.supports(op, ep) for ep in eps)                  # where it can run
    whole = [t for t in tg.tasks if t.kind == "compute" and t.name == t.op]
    assert len(whole) + len(placement.splits) == len(prob.workload.ops)        # ... exactly once
    for t in tg.tasks:                                                          # precedence
        for d in t.deps:
            assert start[t.index] >= finish[d] - 1e-12
    for order in tg.lanes.values():                                            # one task at a time
        spans = sorted((start[i], finish[i]) for i in order)
        for (_, a1), (b0, _) in zip(spans, spans[1:], strict=False):
            assert b0 >= a1 - 1e-12
    return float(finish.max())

def add_plugins(monkeypatch, *added) -> None:
    """Install ``added`` (:class:`hetsim.plugins.Plugin` objects) next to the discovered plugins for
    one test of this process, as an entry point would; what the core reads of a plugin as it is
    needed (experiments, known disagreements, folders) then sees them. Explorers and parameter
    blocks, read once per process, do not."""
    import hetsim.plugins as hp

    real = hp._discover
    monkeypatch.setattr(hp, "_discover", lambda disabled: tuple(
        sorted((*real(disabled), *added), key=lambda p: (p.order, p.name))))


def missing_shipped_plugins() -> set[str]:
    """hetsim's own plugins (the entry points of its pyproject.toml: the papers, the host tool) that
    are not loaded, left out by HETSIM_DISABLE_PLUGINS or deleted. What shows the full installation
    (the README's outputs) is compared with today's only when none is missing."""
    from importlib.metadata import distribution

    from hetsim.plugins import GROUP, plugins

    declared = {ep.name for ep in distribution("hetsim").entry_points if ep.group == GROUP}
    return declared - {p.name for p in plugins()}


def with_plugin(plugin: str, *values):
    """Test parameters that need a shipped plugin (one of its networks, platforms): skipped when
    the plugin is left out, as `make test-core` runs the core's tests."""
    from hetsim.plugins import plugins

    loaded = plugin in {p.name for p in plugins()}
    return [pytest.param(v, marks=pytest.mark.skipif(not loaded, reason=f"needs the {plugin} plugin"))
            for v in values]


def needs_plugin(plugin: str):
    """A test that needs a shipped plugin (its platforms, networks, algorithms): skipped when the
    plugin is left out, as `make test-core` runs the core's tests."""
    from hetsim.plugins import plugins

    loaded = plugin in {p.name for p in plugins()}
    return pytest.mark.skipif(not loaded, reason=f"needs the {plugin} plugin")


def assert_one_line_error(run, fragment: str) -> None:
    """A user error: exit 2 and exactly one stderr line ``hetsim: error: ...`` naming
    ``fragment``, no traceback. ``run`` is a conftest ``CliRun`` or a
    ``subprocess.CompletedProcess``."""
    assert run.returncode == 2, run.stderr + run.stdout
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("hetsim: error: "), lines[0]
    assert "Traceback" not in run.stderr
    assert fragment in lines[0], lines[0]


# -- processes killed at a moment (tests/test_robustness.py, benchmarks/kills.py) -------------------
REPO = Path(__file__).resolve().parents[1]


def subprocess_env() -> dict[str, str]:
    """The environment of a real `hetsim` process: this checkout first on the path, no terminal."""
    env = {k: v for k, v in {**os.environ, **CLI_ENV}.items() if v is not None}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def cli_corpus(path: Path) -> list[dict]:
    """A corpus of command lines that must each end in one error line (tests/malformed/cli.yaml,
    a plugin's tests/malformed_cli.yaml): entries ``id``, ``args`` ({tmp}: a fresh folder, {repo}:
    the repository) and ``expect``, a fragment of the error."""
    import yaml

    return yaml.safe_load(path.read_text())


def _special_files(tmp_path: Path, args: list[str]) -> dict[str, int]:
    """Make the special files an entry names: ``{fifo}`` a FIFO, ``{chardev}`` a character device
    (a copy of /dev/null's: root only); their paths and file types."""
    import stat

    made = {}
    for name in ("fifo", "fifo.yaml"):
        if any("{" + name + "}" in a for a in args):
            os.mkfifo(tmp_path / name)
            made[str(tmp_path / name)] = stat.S_IFIFO
    if any("{chardev}" in a for a in args):
        if os.geteuid() != 0:
            pytest.skip("making a device needs root")
        os.mknod(tmp_path / "chardev", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        made[str(tmp_path / "chardev")] = stat.S_IFCHR
    return made


def check_cli_corpus_entry(hetsim, tmp_path: Path, entry: dict) -> None:
    """The entry's command line ends in its one error line; the special files it names ({fifo},
    {chardev}, an entry's ``fifos``) are left as they were; with ``writes_nothing`` it wrote
    nothing. ``{64KiB}``: 65,536 characters."""
    special = _special_files(tmp_path, entry["args"])
    for rel in entry.get("fifos", []):   # FIFOs where the command will look, not named on its line
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(tmp_path / rel)
        special[str(tmp_path / rel)] = 0o010000
    args = [a.replace("{tmp}", str(tmp_path)).replace("{repo}", str(REPO))
            .replace("{fifo}", str(tmp_path / "fifo")).replace("{fifo.yaml}", str(tmp_path / "fifo.yaml"))
            .replace("{chardev}", str(tmp_path / "chardev")).replace("{64KiB}", "k" * 65536)
            for a in entry["args"]]
    assert_one_line_error(hetsim(*args), entry["expect"])
    for path, kind in special.items():   # refused, and left as it was (not replaced by a file)
        assert os.lstat(path).st_mode & 0o170000 == kind, path
    if entry.get("writes_nothing"):      # refused before any work: nothing in {tmp} but the specials
        assert sorted(str(p) for p in tmp_path.rglob("*")) == sorted(special), list(tmp_path.rglob("*"))


def check_complete(path: Path) -> None:
    """``path`` is a complete file of its kind (parses, and ends where its format ends)."""
    data = path.read_bytes()
    assert data, f"{path} is empty"
    if path.suffix == ".csv":
        assert len(pd.read_csv(path).columns) >= 1 and data.endswith(b"\n")
    elif path.suffix == ".json":
        json.loads(data)
    elif path.suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and data.endswith(b"IEND\xaeB`\x82"), path
    elif path.suffix == ".md":
        text = data.decode()
        assert text.startswith("# hetsim scorecard") and text.rstrip().endswith(("|", "_", ")", "."))
    elif path.suffix == ".yaml":
        load_platform(path)
    else:
        raise AssertionError(f"unexpected file {path}")


def check_folder(folder: Path, killed: bool) -> list[str]:
    """Every file present is complete; temporary files only after a SIGKILL (hidden, .tmp)."""
    names = []
    for path in sorted(folder.rglob("*")):
        if path.is_dir():
            continue
        if path.name.startswith(".") and path.name.endswith(".tmp"):
            assert killed, f"{path}: a temporary file left after a clean exit or SIGINT"
            continue
        check_complete(path)
        names.append(str(path.relative_to(folder)))
    return names


def run_and_kill(argv: list[str], folder: Path, sig: int, moment: float | str) -> subprocess.CompletedProcess:
    """Run ``hetsim argv`` and send ``sig`` after ``moment`` seconds, or, with ``moment="write"``,
    as soon as a temporary file appears in ``folder`` (in the middle of a write)."""
    proc = subprocess.Popen([sys.executable, "-m", "hetsim", *argv], env=subprocess_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    while proc.poll() is None:
        if moment == "write":
            if folder.exists() and any(p.name.endswith(".tmp") for p in folder.rglob(".*")):
                break
        elif time.monotonic() - t0 >= float(moment):
            break
        time.sleep(0.001)
    if proc.poll() is None:
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def assert_quick_claims(outcome, figure: bool | None = None) -> None:
    """What every paper's quick experiment gives: a non-empty table, claims (each with its class),
    a figure when ``figure`` (none when False; not checked when None), and no failing claim that
    hetsim/experiments/known_disagreements.yaml does not list with its reason (nor a listed claim
    that now passes)."""
    import pandas as pd

    from hetsim.experiment import ClaimClass, claim_problems

    art = outcome.artifact
    assert isinstance(art.table, pd.DataFrame) and len(art.table) and not art.table.empty
    assert art.claims, "every experiment makes claims"
    assert all(isinstance(c.kind, ClaimClass) for c in art.claims), "every claim has a class"
    if figure is not None:
        assert (art.figure is not None) == figure
    problems = claim_problems(outcome)
    assert not problems, "\n".join(problems)


def quick_outcomes(paper: str) -> dict:
    """Every experiment of ``paper`` run in its quick version, by id (for a module fixture)."""
    from hetsim.experiment import run_experiment, select

    return {e.id: run_experiment(e, quick=True) for e in select([paper], False)}


# -- notebooks -------------------------------------------------------------------------------------
#: What a notebook cell that draws calls.
PLOTTING = ("plt.", "plot_gantt(", "plot_front(", ".plot.")


def execute_notebook(notebook: Path, tmp_path) -> tuple[list, list, str]:
    """Run ``notebook`` top to bottom in a kernel (in ``tmp_path``), check no cell raised, and
    return its code cells, their outputs and the text they printed."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    return code, outputs, text


def assert_plots_inline(code: list, at_least: int) -> None:
    """At least ``at_least`` cells plot, and every one renders its plot inline, in its own cell."""
    plotting = [c for c in code if any(p in c.source for p in PLOTTING)]
    assert len(plotting) >= at_least
    for c in plotting:
        assert any("image/png" in o.get("data", {}) for o in c.get("outputs", [])), c.source[:60]


def assert_notebook_current(notebook: Path) -> None:
    """The committed outputs of ``notebook`` were made from its cells as they are (the hash of its
    sources in its metadata, :func:`hetsim.notebooks.stale`): ``python -m hetsim.notebooks`` after
    editing a cell."""
    from hetsim.notebooks import stale

    why = stale(notebook)
    assert why is None, why


def assert_notebook_reproduces(notebook: Path) -> None:
    """Executed again, ``notebook`` prints what is committed (text and tables exactly; figures and
    cells tagged volatile by presence): :func:`hetsim.notebooks.differences`."""
    import nbformat

    from hetsim.notebooks import differences, execute

    diff = differences(nbformat.read(notebook, as_version=4), execute(notebook))
    assert not diff, f"{notebook} is stale (python -m hetsim.notebooks {notebook}): {diff[:3]}"


# -- fidelity harnesses' scorecards (hetsim_papers/pipeit/fidelity, hetsim_papers/pipesearch/fidelity.py) --
def fidelity_claim(paper: str, id: str, claim: str, passed: bool, cls: str = "prediction") -> dict:
    """One claim of a scorecard.json as a fidelity variant writes it."""
    return {"paper": paper, "id": id, "claim": claim, "class": cls, "pass": passed,
            "paper_value": 1.0, "sim_value": 2.0 if passed else 3.0}


def write_fidelity_variant(root: Path, variant: str, paper: str, claims: list[dict]) -> None:
    """``root/variant/paper/scorecard.json`` holding ``claims``."""
    d = root / variant / paper
    d.mkdir(parents=True)
    (d / "scorecard.json").write_text(json.dumps({"claims": claims}))
