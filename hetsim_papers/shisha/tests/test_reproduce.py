"""Paper II (Shisha): every experiment of hetsim_papers/shisha/experiments/ in its quick version, its claims,
the files ``hetsim reproduce shisha --quick`` writes, and the pieces the experiments rest on
(vectorised exhaustive search, the calibration fit). The STREAM model is tested in test_stream.py."""

from __future__ import annotations

import json
import math

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import assert_quick_claims, quick_outcomes  # noqa: E402

from hetsim.analytic import SplitScorer  # noqa: E402
from hetsim.experiment import run_experiment, select  # noqa: E402
from hetsim.exploration import explore  # noqa: E402
from hetsim.exploration.baselines import ExhaustiveSearch  # noqa: E402
from hetsim.platform import load_platform  # noqa: E402
from hetsim_papers.shisha.experiments.calibration import calibration, chiplet, problem  # noqa: E402
from hetsim_papers.shisha.experiments.exhaustive import class_orders, ep_classes, exhaustive  # noqa: E402
from hetsim_papers.shisha.experiments.paper import YOLO_CONVERGENCE_S  # noqa: E402

EXPERIMENTS = ["calibration", "seeds", "fig1", "fig2", "fig4", "fig5", "fig6", "fig7", "fig8", "fig9"]
WITH_FIGURE = [e for e in EXPERIMENTS if e != "seeds"]


@pytest.fixture(scope="module")
def outcomes():
    return quick_outcomes("shisha")


def test_every_figure_is_registered():
    assert [e.id for e in select(["shisha"], False)] == EXPERIMENTS


@pytest.mark.slow
@pytest.mark.parametrize("eid", EXPERIMENTS)
def test_quick_experiment_claims_pass(outcomes, eid):
    assert_quick_claims(outcomes[eid], figure=eid in WITH_FIGURE)


@pytest.mark.slow
def test_reproduce_cli_writes_every_file(hetsim, tmp_path):
    result = hetsim("reproduce", "shisha", "--quick", "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    for eid in EXPERIMENTS:
        assert (tmp_path / "shisha" / f"{eid}.csv").stat().st_size > 0
        assert (tmp_path / "shisha" / f"{eid}.png").exists() == (eid in WITH_FIGURE)
    card = json.loads((tmp_path / "scorecard.json").read_text())
    assert card["quick"] is True
    assert [e["id"] for e in card["experiments"]] == EXPERIMENTS
    assert len(card["claims"]) == card["passed"] + card["failed"] + card["fit_inputs"] >= 40
    assert card["fit_inputs"] == 2          # Fig. 4's 0.94 f/s and YOLOv3's 24 min
    assert "## shisha:fig4" in (tmp_path / "scorecard.md").read_text()


# -- the pieces ----------------------------------------------------------------------------------
def test_exhaustive_equals_the_framework_exhaustive_search():
    """Class patterns instead of all EP permutations find the same optimum (C2: 2 FEP + 2 SEP)."""
    prob = problem("c2", "synthnet", (2, 3, 4))
    mine = exhaustive(prob)
    ref = explore(prob, ExhaustiveSearch())
    assert mine.best_fps == pytest.approx(ref.best_fps, rel=1e-12)
    assert mine.n_configs < ref.n_trials
    assert mine.database_s == pytest.approx(prob.measurement.database_cost(prob.split_space_size))
    assert mine.trace["best_fps_so_far"].is_monotonic_increasing
    assert mine.trace["clock_s"].is_monotonic_increasing
    assert mine.time_to_best_s <= mine.clock_s


def test_ep_classes_and_class_orders():
    prob = problem("c5", "synthnet", (8,))
    scorer = SplitScorer(prob.platform, prob.workload, prob.cost, [prob.platform.ep(e) for e in prob.eps])
    classes = ep_classes(scorer)
    assert [[prob.eps[i] for i in c] for c in classes] == [["FEP0", "FEP1", "FEP2", "FEP3"],
                                                            ["SEP0", "SEP1", "SEP2", "SEP3"]]
    assert len(class_orders(classes, 8)) == math.comb(8, 4)
    assert len(class_orders(classes, 2)) == 4
    # A slower link to one chiplet breaks its class.
    p = load_platform("chiplet-c2")
    scorer = SplitScorer(p, prob.workload, prob.cost.__class__(p), p.eps())
    scorer.latency[0, 3] = scorer.latency[3, 0] = 1.0
    assert len(ep_classes(scorer)) > 2


def test_calibration_is_a_fit_of_the_stated_numbers():
    cal = calibration()
    assert cal.fit.table["error"].abs().max() < 1e-6
    assert 0.0132 * 0.95 < cal.efficiency < 0.0132 * 1.05   # the hand estimate in make_chiplets.py
    assert cal.frames_per_trial >= 1
    assert abs(cal.yolo_clock_s / YOLO_CONVERGENCE_S - 1) <= 0.5 / cal.frames_per_trial + 1e-9
    p = chiplet("c5")
    assert {t.roofline.gemm_efficiency for t in p.core_types} == {cal.efficiency}


@pytest.mark.slow
def test_experiments_are_deterministic():
    exp = {e.id: e for e in select(["shisha"], False)}
    a = run_experiment(exp["fig6"], quick=True).artifact.table
    b = run_experiment(exp["fig6"], quick=True).artifact.table
    assert a.equals(b)
    assert np.isfinite(a["time_to_best_s"]).all()
