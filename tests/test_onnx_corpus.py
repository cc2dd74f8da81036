"""The ONNX corpus (tests/onnx_corpus.py): models no one here wrote import, at several opsets,
as shipped and as ONNX Runtime optimizes them, with MAC counts equal to the published ones.

The ONNX model zoo's CNNs come with the ``onnx`` package (always run); the OCR models need the
``corpus`` extra (``pip install -e '.[corpus]'``; those cases are skipped without it, and say so).
"""

from __future__ import annotations

import pytest
from onnx_corpus import REFERENCE_GMACS, corpus, light_models, ocr_models

from hetsim.workload.onnx_import import import_onnx


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    return {(e.name, e.variant): import_onnx(e.path, "m", input_shapes=e.input_shapes or None)
            for e in corpus(out)}


def test_the_corpus_has_several_families_opsets_and_optimized_files(imported):
    names = {n for n, _ in imported}
    assert len(light_models()) == 9 and len(names) >= 9
    variants = {v for _, v in imported}
    assert {"opset 9", "opset 13", "opset 17", "ort extended", "ort all"} <= variants


def test_every_file_imports_with_ops_and_counts(imported):
    for (name, variant), r in imported.items():
        w = r.workload
        assert w.ops and w.total_macs > 0, (name, variant)
        assert all(op.output_bytes > 0 for op in w.ops if str(op.kind) != "shape"), (name, variant)
        assert not r.report.unknown, (name, variant, r.report.unknown)   # every op priced


@pytest.mark.parametrize("arch", sorted(REFERENCE_GMACS))
def test_macs_equal_the_published_figure(imported, arch):
    gmacs, _ = REFERENCE_GMACS[arch]
    for (name, variant), r in imported.items():
        if name == arch:
            assert round(r.workload.total_macs / 1e9, 2) == gmacs, (arch, variant)


def test_opsets_and_the_extended_optimizer_keep_the_count(imported):
    """Version conversion and ONNX Runtime's fusions (BN folded into convs, activations fused)
    change nodes, not arithmetic: the MACs stay those of the file as shipped."""
    for (name, variant), r in imported.items():
        if variant in ("opset 13", "opset 17", "ort extended"):
            shipped = next(v for (n, v), _ in imported.items() if n == name and v.startswith("opset"))
            assert r.workload.total_macs == imported[(name, shipped)].workload.total_macs, \
                (name, variant)


def test_the_optimized_graphs_hold_fused_and_layout_ops(imported):
    extended = imported[("inception_v2", "ort extended")].report.by_op_type
    assert extended["FusedConv"] > 50 and extended["BatchNormalization"] < 10
    layout = imported[("squeezenet", "ort all")].report
    assert layout.by_op_type["Conv"] == 26 and layout.by_op_type["ReorderOutput"] == 1
    # NCHWc pads channels to the vector block: the padded work is counted, never less
    for name in ("squeezenet", "shufflenet", "inception_v2"):
        assert imported[(name, "ort all")].workload.total_macs >= \
            imported[(name, "opset 17")].workload.total_macs


@pytest.mark.skipif(not ocr_models(), reason="needs the corpus extra (pip install -e '.[corpus]')")
def test_the_ocr_models_import_with_symbolic_dims_resolved(imported):
    rec = imported[("ch_PP-OCRv4_rec_infer", "opset 12")]
    # a Reshape whose target comes from Shape arithmetic: ONNX Runtime's inference resolves it
    assert "onnxruntime symbolic" in rec.report.shape_engines
    cls = imported[("ch_ppocr_mobile_v2.0_cls_infer", "opset 11")]
    assert len(cls.report.shape_engines) > 1
    assert imported[("ch_PP-OCRv4_rec_infer", "ort extended")].report.by_op_type[
        "LayerNormalization"] > 0
