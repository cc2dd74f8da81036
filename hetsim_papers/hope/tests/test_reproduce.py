"""HOPE (seed 002): every experiment of hetsim_papers/hope/experiments/ in its quick version, its claims
(every failure a known disagreement), the files ``hetsim reproduce hope --quick`` writes, and the
calibration the experiments rest on."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402
from helpers import assert_quick_claims, quick_outcomes  # noqa: E402

from hetsim.experiment import FIT_INPUT, select  # noqa: E402
from hetsim_papers.hope.experiments.paper import PNM_HE_CPU_S, PNM_HE_GPU_S  # noqa: E402

EXPERIMENTS = ["calibration", "workloads", "fig1", "fig4", "fig5", "fig6", "fig7", "ablations", "times",
               "optimality"]


@pytest.fixture(scope="module")
def outcomes():
    return quick_outcomes("hope")


def test_every_figure_is_registered():
    assert [e.id for e in select(["hope"], False)] == EXPERIMENTS


@pytest.mark.slow
@pytest.mark.parametrize("eid", EXPERIMENTS)
def test_quick_experiment_claims_pass(outcomes, eid):
    # times' figure is this machine's scheduling times: a wall-clock figure of its own (times.wallclock.png)
    assert_quick_claims(outcomes[eid], figure=eid != "times")


@pytest.mark.slow
def test_the_calibration_reproduces_pnm_on_he(outcomes):
    table = outcomes["calibration"].artifact.table.set_index("quantity")
    assert table.loc["PN-M on HE, CPU version (ms)", "fitted"] == pytest.approx(PNM_HE_CPU_S * 1e3, rel=1e-4)
    assert table.loc["PN-M on HE, GPU version (ms)", "fitted"] == pytest.approx(PNM_HE_GPU_S * 1e3, rel=1e-4)
    fits = [c for o in outcomes.values() for c in o.artifact.claims if c.kind is FIT_INPUT]
    assert len(fits) == 5        # PN-M's two latencies, Fig. 6's three averages


@pytest.mark.slow
def test_reproduce_cli_writes_every_file(hetsim, tmp_path, outcomes):
    result = hetsim("reproduce", "hope", "--quick", "--out", tmp_path)   # cached runs: seconds
    assert result.returncode == 0, result.stderr
    for eid in EXPERIMENTS:
        assert (tmp_path / "hope" / f"{eid}.csv").stat().st_size > 0
        assert (tmp_path / "hope" / (f"{eid}.png" if eid != "times" else "times.wallclock.png")).exists()
    card = json.loads((tmp_path / "scorecard.json").read_text())
    assert [e["id"] for e in card["experiments"]] == EXPERIMENTS
    assert card["fit_inputs"] == 5
