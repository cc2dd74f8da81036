"""Paper I (Pipe-search) reproduction: every experiment's quick version, its claims, and the files
``hetsim reproduce pipesearch --quick`` writes."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402
from helpers import assert_quick_claims  # noqa: E402

from hetsim.errors import HetsimError  # noqa: E402
from hetsim.experiment import load_papers, run_experiment, write_outcome  # noqa: E402
from hetsim.platform import by_cores, load_platform  # noqa: E402

EXPERIMENTS = load_papers(["pipesearch"])["pipesearch"]
EXPECTED = {"vectors", "calibration", "fig1", "table3", "table4", "table5", "table6", "table7", "fig3", "fig4"}


def test_every_figure_and_table_is_registered():
    assert set(EXPERIMENTS) == EXPECTED


@pytest.mark.parametrize("eid", sorted(EXPECTED))
def test_quick_experiment_claims_pass(eid):
    assert_quick_claims(run_experiment(EXPERIMENTS[eid], quick=True))


def test_calibration_is_a_fit_of_table6():
    from hetsim_papers.pipesearch.experiments import calibration as cal
    from hetsim_papers.pipesearch.experiments.paper import TABLE6

    fit = cal.calibration_fit()
    parameters = cal.calibration_parameters()
    assert set(fit.values) == set(parameters)
    for key, (lo, hi) in parameters.items():
        assert lo <= fit.values[key] <= hi
    assert fit.table["stated_fps"].tolist() == [fps for _s, _r, fps in TABLE6.values()]
    assert fit.rms_log_error < 0.2
    tx2 = cal.calibrated_tx2("governor3")
    a57 = tx2.core_type("cortex-a57")
    # The fitted values are the calibrated platform's, in the block of the reproduction's cost model.
    if cal.COST_MODEL == "gemm2":
        block, efficiency = a57.gemm2, "core_types.cortex-a57.gemm2.kernel_efficiency"
        assert block.kernel_efficiency == pytest.approx(fit.values[efficiency])
    else:
        block, efficiency = a57.roofline, "core_types.cortex-a57.roofline.gemm_efficiency"
        assert block.gemm_efficiency == pytest.approx(fit.values[efficiency])
    prefix = efficiency.rsplit(".", 1)[0]
    assert by_cores(block.parallel_efficiency, 2, scale_past_end=False) == pytest.approx(
        fit.values[f"{prefix}.parallel_efficiency.1"])
    assert tx2.cluster("a57").dvfs == "powersave" and tx2.cluster("denver").dvfs == "performance"


def test_list_entries_of_plain_values_are_addressed_by_index():
    p = load_platform("jetson-tx2", ["core_types.cortex-a57.roofline.parallel_efficiency=[1.0, 1.0]",
                                     "core_types.cortex-a57.roofline.parallel_efficiency.1=0.7"])
    assert p.core_type("cortex-a57").roofline.parallel_efficiency == [1.0, 0.7]
    with pytest.raises(HetsimError, match="index 1 is past the end"):
        load_platform("jetson-tx2", ["core_types.cortex-a57.roofline.parallel_efficiency.1=0.7"])


@pytest.mark.slow
def test_reproduce_cli_writes_csv_png_and_scorecard(hetsim, tmp_path):
    proc = hetsim("reproduce", "pipesearch", "--quick", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "pipesearch"
    for eid in EXPECTED:
        assert (out / f"{eid}.csv").stat().st_size > 0
    for eid in EXPECTED - {"vectors"}:
        assert (out / f"{eid}.png").read_bytes()[:4] == b"\x89PNG"
    data = json.loads((tmp_path / "scorecard.json").read_text())
    assert data["quick"] is True
    assert {e["id"] for e in data["experiments"]} == EXPECTED
    assert data["passed"] + data["failed"] + data["fit_inputs"] == len(data["claims"]) > 50
    assert data["fit_inputs"] == 4          # Table 6's four observations
    assert set(data["independent"]) == {"pipesearch", "all"}
    md = (tmp_path / "scorecard.md").read_text()
    assert "## pipesearch:table6" in md and "calibration fit residual (FITTED" in md
    # Deterministic: computing the tables again gives the same bytes as the command wrote.
    for eid in ("table3", "table6", "fig3"):
        write_outcome(run_experiment(EXPERIMENTS[eid], quick=True), tmp_path / "again")
        assert (tmp_path / "again" / "pipesearch" / f"{eid}.csv").read_bytes() == (out / f"{eid}.csv").read_bytes()
