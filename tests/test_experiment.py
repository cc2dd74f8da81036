"""The reproduction framework: claims, artifacts, the scorecard, and the calibration fit."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from hetsim.calibrate import Observation, fit_platform  # noqa: E402
from hetsim.errors import HetsimError  # noqa: E402
from hetsim.experiment import (  # noqa: E402
    Artifact,
    Context,
    Experiment,
    claim_close,
    claim_equal,
    claim_range,
    run_experiment,
    select,
    write_outcome,
    write_scorecard,
)


def test_claims_verdicts():
    assert claim_close("p", "x", "c", 1.0, 1.09, rel=0.1).passed
    assert not claim_close("p", "x", "c", 1.0, 1.11, rel=0.1).passed
    assert claim_close("p", "x", "c", 0.0, 0.01, abs_=0.02).passed
    assert not claim_close("p", "x", "c", 1.0, float("nan"), rel=0.1).passed
    assert claim_range("p", "x", "c", "0.6-0.9", 0.7, 0.6, 0.9).passed
    assert not claim_range("p", "x", "c", "0.6-0.9", 0.95, 0.6, 0.9).passed
    assert claim_equal("p", "x", "c", [7, 4, 10], (7, 4, 10)).passed
    assert not claim_equal("p", "x", "c", [7, 4, 10], (6, 5, 10)).passed


def _fake(ctx: Context) -> Artifact:
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    table = pd.DataFrame({"x": [1, 2], "y": [3.0, 4.0 if not ctx.quick else 5.0]})
    return Artifact(table, fig, [ctx.close("y at 2", 4.0, float(table.y[1]), rel=0.1),
                                 ctx.equal("count", 2, len(table))], notes=["a note"])


def test_outcome_and_scorecard_files(tmp_path):
    exp = Experiment("fakepaper", "fig1", "A fake figure", _fake)
    full = run_experiment(exp, quick=False)
    quick = run_experiment(exp, quick=True)
    written = write_outcome(full, tmp_path)
    assert {p.name for p in written} == {"fig1.csv", "fig1.png"}
    assert (tmp_path / "fakepaper" / "fig1.png").read_bytes()[:4] == b"\x89PNG"
    md, js = write_scorecard([full, quick], tmp_path, quick=False)
    data = json.loads(js.read_text())
    assert data["passed"] == 3 and data["failed"] == 1
    for row in data["claims"]:
        assert set(row) == {"paper", "id", "claim", "paper_value", "sim_value", "tolerance", "pass",
                            "known_disagreement"}
    text = md.read_text()
    assert "**FAIL**" in text and "3 of 4 claims pass" in text


def test_select_errors():
    with pytest.raises(HetsimError, match="unknown paper"):
        select(["nopaper"], False)


def test_fit_recovers_a_known_parameter():
    # Simulate a stated throughput with a known efficiency, then fit it back from 0.05..1.
    from hetsim.calibrate import _analytic
    from hetsim.platform import load_platform

    truth = load_platform("jetson-tx2", ["core_types.denver2.roofline.gemm_efficiency=0.42"], "governor1")
    obs = [Observation("vgg16", "D2:1-21", _analytic(truth, Observation("vgg16", "D2:1-21", 1.0)),
                       "governor1")]
    fit = fit_platform("jetson-tx2", obs, {"core_types.denver2.roofline.gemm_efficiency": (0.05, 1.0)})
    assert fit.values["core_types.denver2.roofline.gemm_efficiency"] == pytest.approx(0.42, rel=1e-4)
    assert fit.rms_log_error < 1e-6
    assert abs(fit.table["error"]).max() < 1e-6


def test_claim_problems_flag_unknown_failures_and_stale_known_ones():
    from hetsim.experiment import claim_problems

    exp = Experiment("fakepaper", "fig1", "A fake figure", _fake)
    outcome = run_experiment(exp, quick=True)          # "y at 2" fails in the quick version
    assert [p for p in claim_problems(outcome) if p.startswith("FAILS: y at 2")]
    outcome.artifact.claims[0].known_disagreement = "a known reason"
    assert claim_problems(outcome) == []
    outcome.artifact.claims[1].known_disagreement = "listed but passing"
    assert any(p.startswith("PASSES although listed") for p in claim_problems(outcome))
