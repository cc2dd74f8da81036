"""The shipped papers' known_disagreements.yaml files together: typed, every entry with a cause and,
for a paper inconsistency, the argument. Moved from tests/test_experiment.py, which tests the
file format on a fake paper."""

from __future__ import annotations

from hetsim.experiment import known_disagreements
from hetsim.plugins import plugins


def test_the_known_disagreements_files_are_typed_and_every_entry_has_a_cause():
    papers = {p.name for p in plugins() if p.package.startswith("hetsim_papers.")}
    known = {key: k for key, k in known_disagreements().items() if k.paper in papers}
    assert len(known) > 50
    causes = {k.cause for k in known.values()}
    assert causes == {"paper-inconsistency", "model-gap", "algorithm-reading"}
    for k in known.values():
        assert k.reason.strip() and k.when in ("both", "quick", "full")
        if k.cause == "paper-inconsistency":     # the argument, not just the verdict
            assert len(k.reason) > 80, k.claim
