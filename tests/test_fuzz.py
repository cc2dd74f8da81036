"""The fuzzing harness (tests/fuzzing.py) in the suite: mutated platform, workload and mapping files,
the same files as bytes, and command lines with numbers out of range, run through the CLI
in-process. Every case must end in a result or in one ``hetsim: error:`` line, exit 2; a crash, a
hang or a silently accepted non-physical value fails.

``make test`` runs HETSIM_FUZZ_EXAMPLES (default 50) cases per target, the same ones every time
(derandomized); ``make fuzz`` runs thousands with a seed (HETSIM_FUZZ_SEED). A failing case is
printed whole (command line, files, why it had to be refused); each bug found becomes a file in
tests/malformed/ (docs/robustness.md).
"""

from __future__ import annotations

import os

import fuzzing
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed

EXAMPLES = int(os.environ.get("HETSIM_FUZZ_EXAMPLES", "50"))
SEED = os.environ.get("HETSIM_FUZZ_SEED")
SEEDS = fuzzing.all_seeds()


#: The targets issue 29 added (ONNX Runtime profiles, ONNX graphs, SPECs run, output paths and special
#: files, JSON readers, loading limits) run fewer cases in the suite (each ~0.2 s).
NEW_EXAMPLES = int(os.environ.get("HETSIM_FUZZ_EXAMPLES", "15"))


def _fuzz(target: str, examples: int = EXAMPLES):
    """A test of ``target``'s cases: derandomized unless HETSIM_FUZZ_SEED picks the cases."""
    def test(case: fuzzing.Case) -> None:
        fuzzing.check(case)

    test.__name__ = f"test_fuzz_{target}"
    test = given(case=fuzzing.strategy(target, SEEDS))(test)
    test = settings(max_examples=examples, deadline=None, database=None, derandomize=SEED is None,
                    suppress_health_check=list(HealthCheck), print_blob=True)(test)
    if SEED is not None:
        test = hypothesis_seed(int(SEED))(test)
    return test


test_fuzz_platform = _fuzz("platform")
test_fuzz_workload = _fuzz("workload")
test_fuzz_mapping = _fuzz("mapping")
test_fuzz_cli = _fuzz("cli")
test_fuzz_bytes = _fuzz("bytes")
test_fuzz_sweep = _fuzz("sweep")
test_fuzz_ort = _fuzz("ort", NEW_EXAMPLES)
test_fuzz_onnx = _fuzz("onnx", NEW_EXAMPLES)
test_fuzz_spec = _fuzz("spec", NEW_EXAMPLES)
test_fuzz_paths = _fuzz("paths", NEW_EXAMPLES)
test_fuzz_json = _fuzz("json", NEW_EXAMPLES)
test_fuzz_load = _fuzz("load", NEW_EXAMPLES)


# -- the harness itself can fail ----------------------------------------------------------------------
@pytest.mark.parametrize("target", ["platform", "workload", "mapping", "sweep"])
def test_every_seed_file_unmutated_gives_a_result(target):
    """A mutation's error must come from the mutation: the seeds themselves all simulate."""
    for s in SEEDS[target]:
        case = fuzzing.Case(target, "seed", list(s.argv), {s.filename: s.text.encode(), **dict(s.extra)})
        out = fuzzing.run_case(case)
        assert out.cls == "result", (s.name, out)


VALID = ["simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-5|s4:6-11", "--json", "--frames", "3"]


def test_harness_counts_an_accepted_non_physical_value_as_silent():
    out = fuzzing.run_case(fuzzing.Case("cli", "valid", VALID, must_refuse=True, why="test"))
    assert out.cls == "silent" and "test" in out.detail


def test_harness_counts_a_one_line_refusal_as_an_error_and_a_result_as_a_result():
    assert fuzzing.run_case(fuzzing.Case("cli", "valid", VALID)).cls == "result"
    out = fuzzing.run_case(fuzzing.Case("cli", "bad", VALID[:-1] + ["0"]))
    assert out.cls == "error" and "--frames" in out.detail


def test_harness_counts_an_exception_as_a_crash(monkeypatch):
    import hetsim.workload

    def broken(name):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(hetsim.workload, "load_workload", broken)
    out = fuzzing.run_case(fuzzing.Case("cli", "crash", VALID))
    assert out.cls == "crash" and "ZeroDivisionError" in out.detail


def test_harness_counts_a_case_past_its_budget_as_a_hang():
    out = fuzzing.run_case(fuzzing.Case("cli", "slow", VALID[:-1] + ["20000"]), budget_s=0.05)
    assert out.cls == "hang"


def test_harness_counts_a_replaced_special_file_and_a_write_outside_as_crashes(tmp_path):
    """The paths target's oracle can fail: a FIFO replaced by a file, a file written elsewhere."""
    case = fuzzing.Case("paths", "fifo", ["platforms", "schema", "--out", "{dir}/t"], specials={"t": "fifo"})
    folder = tmp_path / "c"
    folder.mkdir()
    fuzzing._make_specials(folder, case.specials)
    before = fuzzing._snapshot(folder)
    (folder / "t").unlink()
    (folder / "t").write_text("{}")
    assert "was replaced" in fuzzing._unsafe(folder, before, case)
    (folder / "t").unlink()
    fuzzing._make_specials(folder, case.specials)
    (folder / "elsewhere.yaml").write_text("x")
    case.writes_under = ("out",)
    assert "outside" in fuzzing._unsafe(folder, before, case)


def test_harness_counts_a_load_past_a_small_limit_as_a_refusal():
    """Loading limits can bind in the harness: under a limit of 10 ms a workload of 2,000 ops is refused
    before it loads, and with --force it loads."""
    case = fuzzing.Case("load", "big", ["simulate", "-p", "hikey970", "-w", "{dir}/big.yaml", "-m", "B4:1-1",
                                         "--frames", "1", "--engine", "analytic"],
                        {"big.yaml": fuzzing._relu_workload(2000)}, load_limit_s=0.01)
    out = fuzzing.run_case(case)
    assert out.cls == "error" and "2,000 ops would take" in out.detail, out
    case.argv.append("--force")
    assert fuzzing.run_case(case).cls == "result"


def test_harness_counts_a_non_physical_result_as_silent():
    assert fuzzing._physical({"throughput_fps": None, "latency_s": {}, "makespan_s": 1.0})
    assert fuzzing._physical({"throughput_fps": 2.0, "latency_s": {"mean": 0.1}, "makespan_s": 1.0,
                              "energy_J": None, "stages": []}) is None


@pytest.mark.parametrize("platform,path,field", fuzzing._MODEL_SET_PATHS,
                         ids=[p for _, p, _ in fuzzing._MODEL_SET_PATHS])
def test_every_set_path_of_the_model_blocks_exists(platform, path, field):
    """The --set cases of the pim/ncnn/hope/runtime blocks would all be errors (refusals judged
    right for the wrong reason) if a path did not exist: each, set to a plain valid value, runs."""
    good = {"switched": "true", "serial": "false", "comm": "mpi", "cost_model": "ncnn",
            "alpha_memory": "0.5", "winograd_efficiency": "0.5", "winograd_tile": "4",
            "parallel_speedup_matmul": "2"}.get(field, "1")
    argv, files = fuzzing._model_run(platform)
    if field == "cost_model":
        argv = [a for a in argv if a not in ("--cost-model", "ncnn")]
    out = fuzzing.run_case(fuzzing.Case("cli", "valid --set", argv + ["--set", f"{path}={good}"], files))
    assert out.cls == "result", out
