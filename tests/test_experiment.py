"""The reproduction framework: claims and their classes, artifacts, the scorecard, the known
disagreements file, and the calibration fit."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from helpers import add_plugins  # noqa: E402

from hetsim.calibrate import Observation, fit_platform  # noqa: E402
from hetsim.errors import HetsimError  # noqa: E402
from hetsim.experiment import (  # noqa: E402
    FIT_INPUT,
    PREDICTION,
    STRUCTURAL,
    VECTOR,
    Artifact,
    Claim,
    ClaimClass,
    Context,
    Experiment,
    claim_close,
    claim_equal,
    claim_range,
    known_disagreements,
    run_experiment,
    select,
    summarize_claims,
    write_outcome,
    write_scorecard,
)

MALFORMED = Path(__file__).parent / "malformed" / "known_disagreements"


@pytest.fixture
def fakepaper(monkeypatch):
    """A paper plugin of this test module, listed first, with ``_fake`` as its experiment fig1."""
    import hetsim.experiment as ex
    from hetsim.plugins import Plugin

    add_plugins(monkeypatch, Plugin("fakepaper", experiments=__name__, order=-1))
    monkeypatch.setitem(ex._REGISTRY, "fakepaper", {"fig1": Experiment("fakepaper", "fig1", "A fake figure", _fake)})


def test_claims_verdicts():
    P = PREDICTION
    assert claim_close("p", "x", "c", 1.0, 1.09, rel=0.1, kind=P).passed
    assert not claim_close("p", "x", "c", 1.0, 1.11, rel=0.1, kind=P).passed
    assert claim_close("p", "x", "c", 0.0, 0.01, abs_=0.02, kind=P).passed
    assert not claim_close("p", "x", "c", 1.0, float("nan"), rel=0.1, kind=P).passed
    assert claim_range("p", "x", "c", "0.6-0.9", 0.7, 0.6, 0.9, kind=P).passed
    assert not claim_range("p", "x", "c", "0.6-0.9", 0.95, 0.6, 0.9, kind=P).passed
    assert claim_equal("p", "x", "c", [7, 4, 10], (7, 4, 10), kind=P).passed
    assert not claim_equal("p", "x", "c", [7, 4, 10], (6, 5, 10), kind=P).passed


def test_every_claim_needs_a_class_from_the_five():
    assert [c.value for c in ClaimClass] == ["prediction", "fit input", "fit-dependent", "structural",
                                             "verification vector"]
    with pytest.raises(TypeError, match="kind"):
        Claim("p", "x", "c", 1, 1, "exact", True)                 # type: ignore[call-arg]
    with pytest.raises(TypeError, match="kind"):
        claim_equal("p", "x", "c", 1, 1)                          # type: ignore[call-arg]
    with pytest.raises(HetsimError, match="class 'guess'; allowed: prediction, fit input"):
        Claim("p", "x", "c", 1, 1, "exact", True, kind="guess")   # type: ignore[arg-type]
    assert Claim("p", "x", "c", 1, 1, "exact", True, kind="fit input").kind is FIT_INPUT   # type: ignore[arg-type]


def _fake(ctx: Context) -> Artifact:
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    table = pd.DataFrame({"x": [1, 2], "y": [3.0, 4.0 if not ctx.quick else 5.0]})
    return Artifact(table, fig, [ctx.close("y at 2", 4.0, float(table.y[1]), rel=0.1, kind=PREDICTION),
                                 ctx.equal("count", 2, len(table), kind=STRUCTURAL),
                                 ctx.close("fitted y", 3.0, 3.0, rel=0.01, kind=FIT_INPUT)], notes=["a note"])


def test_outcome_and_scorecard_files(tmp_path):
    exp = Experiment("fakepaper", "fig1", "A fake figure", _fake)
    full = run_experiment(exp, quick=False)
    quick = run_experiment(exp, quick=True)
    written = write_outcome(full, tmp_path)
    assert {p.name for p in written} == {"fig1.csv", "fig1.png"}
    assert (tmp_path / "fakepaper" / "fig1.png").read_bytes()[:4] == b"\x89PNG"
    md, js = write_scorecard([full, quick], tmp_path, quick=False)
    data = json.loads(js.read_text())
    # Fit inputs are reported, never counted: 2 fitted, 3 of the 4 other claims pass.
    assert data["passed"] == 3 and data["failed"] == 1 and data["fit_inputs"] == 2
    assert data["independent"]["fakepaper"] == {"passed": 1, "total": 2, "rate": 0.5}
    assert data["by_class"]["all"]["structural"] == {"passed": 2, "total": 2}
    assert data["by_class"]["all"]["fit input"] == {"passed": 2, "total": 2}
    for row in data["claims"]:
        assert set(row) == {"paper", "id", "claim", "paper_value", "sim_value", "tolerance", "pass", "class",
                            "known_disagreement", "known_cause"}
    text = md.read_text()
    first = text.splitlines()[2]
    assert first == "Independent predictions that pass: fakepaper 1 of 2 (50%); all papers 1 of 2 (50%)."
    assert data["self_consistent"]["fakepaper"] == {"passed": 1, "total": 2, "rate": 0.5}
    assert text.splitlines()[4] == ("Among the claims whose paper is self-consistent (predictions less those "
                                    "failing as a paper inconsistency): fakepaper 1 of 2 (50%); all papers "
                                    "1 of 2 (50%).")
    assert "**FAIL**" in text and "3 of 4 claims of the model pass (fit inputs excluded)" in text
    assert "| fitted y | fit input | 3 | 3 | ±1% | fitted (residual within tolerance) |" in text


def test_independent_rate_counts_predictions_only():
    P, S, F, V = PREDICTION, STRUCTURAL, FIT_INPUT, VECTOR
    claims = [Claim("a", "x", "1", 1, 1, "exact", True, kind=P), Claim("a", "x", "2", 1, 2, "exact", False, kind=P),
              Claim("a", "x", "3", 1, 1, "exact", True, kind=S), Claim("a", "x", "4", 1, 1, "exact", True, kind=F),
              Claim("b", "x", "5", 1, 1, "exact", True, kind=V)]
    s = summarize_claims(claims)
    assert s["a"]["independent"] == {"passed": 1, "total": 2, "rate": 0.5}
    assert s["b"]["independent"] == {"passed": 0, "total": 0, "rate": None}
    assert s["all"]["by_class"]["verification vector"] == {"passed": 1, "total": 1}
    assert not claims[3].counts_as_pass and claims[2].counts_as_pass


def test_self_consistent_rate_leaves_out_only_failures_the_paper_contradicts():
    claims = [Claim("a", "x", str(i), 1, 1, "exact", ok, kind=PREDICTION) for i, ok in
              enumerate([True, False, False, False])]
    claims[1].known_cause = "paper-inconsistency"
    claims[2].known_cause = "model-gap"
    s = summarize_claims(claims)
    assert s["a"]["independent"] == {"passed": 1, "total": 4, "rate": 0.25}
    assert s["a"]["self_consistent"] == {"passed": 1, "total": 3, "rate": 1 / 3}


# -- known disagreements (the papers' own files: hetsim_papers/tests/test_known_disagreements.py) ------
def _expect(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: "), path
    return first[len("# expect: "):].strip()


@pytest.mark.parametrize("path", sorted(MALFORMED.glob("*.yaml")), ids=lambda p: p.name)
def test_a_malformed_known_disagreements_file_is_one_line(path, fakepaper):
    with pytest.raises(HetsimError) as e:
        known_disagreements(path)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg
    assert _expect(path) in msg, msg


def test_a_mechanism_is_stated_once_and_prefixes_each_of_its_reasons(tmp_path, fakepaper):
    f = tmp_path / "known.yaml"
    f.write_text("mechanisms:\n  ratio: 'Copies are cheap against the accelerator.'\n"
                 "disagreements:\n"
                 "- {paper: fakepaper, id: fig1, claim: a, cause: model-gap, mechanism: ratio, reason: 'here a.'}\n"
                 "- {paper: fakepaper, id: fig1, claim: b, cause: model-gap, reason: 'b alone.'}\n")
    known = known_disagreements(f)
    assert known[("fakepaper", "fig1", "a")].reason == "Copies are cheap against the accelerator. Here: here a."
    assert known[("fakepaper", "fig1", "a")].mechanism == "ratio"
    assert known[("fakepaper", "fig1", "b")].reason == "b alone."


def test_reproduce_reports_a_malformed_known_disagreements_file_in_one_line(tmp_path, monkeypatch, capsys):
    import hetsim.experiment as ex
    from hetsim.cli import main
    from hetsim.plugins import Plugin

    bad = str(MALFORMED / "01_unknown_cause.yaml")
    add_plugins(monkeypatch, Plugin("fakepaper", experiments=__name__, known_disagreements=bad, order=-1))
    monkeypatch.setitem(ex._REGISTRY, "fakepaper", {"fig1": Experiment("fakepaper", "fig1", "A fake figure", _fake)})
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "fakepaper:fig1", "--out", str(tmp_path)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "disagreements.0.cause" in err


def test_select_errors():
    with pytest.raises(HetsimError, match="unknown paper"):
        select(["nopaper"], False)


def test_fit_recovers_a_known_parameter():
    # Simulate a stated throughput with a known efficiency, then fit it back from 0.05..1.
    from hetsim.calibrate.fit import _analytic
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
    outcome.artifact.claims[1].known_disagreement = None
    outcome.artifact.claims[1].kind = "unknown"  # type: ignore[assignment]
    assert any(p.startswith("UNCLASSIFIED") for p in claim_problems(outcome))


def _fake_b(ctx: Context) -> Artifact:
    return Artifact(pd.DataFrame({"x": [1]}), None, [ctx.equal("one", 1, 1, kind=PREDICTION),
                                                     ctx.equal("two", 2, 3, kind=PREDICTION)])


def test_papers_reproduced_one_by_one_into_one_folder_accumulate_one_scorecard(tmp_path, monkeypatch):
    """`hetsim reproduce A --out D` then `B --out D` leaves the scorecard of `A B --out D`; running A
    again replaces A's claims (not added twice); another mode (--quick) starts a new scorecard."""
    import hetsim.experiment as ex
    from hetsim.cli import main
    from hetsim.plugins import Plugin

    add_plugins(monkeypatch, Plugin("fakea", experiments=__name__, order=-2),
                Plugin("fakeb", experiments=__name__, order=-1))
    monkeypatch.setitem(ex._REGISTRY, "fakea", {"fig1": Experiment("fakea", "fig1", "A fake figure", _fake)})
    monkeypatch.setitem(ex._REGISTRY, "fakeb", {"t1": Experiment("fakeb", "t1", "Another", _fake_b),
                                                "t2": Experiment("fakeb", "t2", "And another", _fake_b)})
    one, both = tmp_path / "one", tmp_path / "both"
    for spec in (["fakeb:t2"], ["fakea"], ["fakeb"], ["fakea"]):      # out of order, A twice
        main(["reproduce", *spec, "--out", str(one), "--workers", "1"])
    main(["reproduce", "fakea", "fakeb", "--out", str(both), "--workers", "1"])
    for name in ("scorecard.json", "scorecard.md"):
        assert (one / name).read_bytes() == (both / name).read_bytes(), name
    card = json.loads((one / "scorecard.json").read_text())
    assert [(c["paper"], c["id"]) for c in card["claims"]].count(("fakea", "fig1")) == 3
    assert [(e["paper"], e["id"]) for e in card["experiments"]] == [("fakea", "fig1"), ("fakeb", "t1"),
                                                                     ("fakeb", "t2")]
    main(["reproduce", "fakeb:t1", "--quick", "--out", str(one), "--workers", "1"])
    card = json.loads((one / "scorecard.json").read_text())
    assert card["quick"] is True and {c["id"] for c in card["claims"]} == {"t1"}
