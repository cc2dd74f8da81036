"""Seed 004 reproduction: every experiment's quick version, its claims (failures only where
known_disagreements.yaml says why), and the files ``hetsim reproduce nsga2 --quick`` writes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402
from helpers import assert_quick_claims  # noqa: E402

from hetsim.experiment import load_papers, run_experiment, write_outcome  # noqa: E402

EXPERIMENTS = load_papers(["nsga2"])["nsga2"]
EXPECTED = {"table2", "searchspace", "e1", "e2", "e3", "pareto", "e4", "table4", "table7"}


def test_every_table_and_figure_is_registered():
    assert set(EXPERIMENTS) == EXPECTED


@pytest.mark.slow
@pytest.mark.parametrize("eid", sorted(EXPECTED))
def test_quick_experiment_claims(eid, tmp_path):
    outcome = run_experiment(EXPERIMENTS[eid], quick=True)
    assert_quick_claims(outcome)
    written = write_outcome(outcome, tmp_path)
    assert all(p.stat().st_size > 0 for p in written)


def test_calibration_fits_table2_latencies_exactly():
    from hetsim_papers.nsga2.experiments.calibration import LATENCY_PARAMETERS, calibrate

    fit = calibrate()
    latency = fit.table[fit.table["quantity"] == "latency (ms)"]
    assert latency["error"].abs().max() < 1e-6
    for key, (lo, hi) in LATENCY_PARAMETERS.items():
        assert lo <= fit.values[key] <= hi
    platform = fit.platform()
    assert platform.core_type("carmel").ncnn.runtime_MiB == pytest.approx(
        fit.values["core_types.carmel.ncnn.runtime_MiB"])
