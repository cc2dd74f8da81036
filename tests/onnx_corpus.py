"""The ONNX corpus: models no one on this project wrote (tests/test_onnx_corpus.py, docs/import.md).

* The ONNX model zoo's classic CNNs that the ``onnx`` package ships as backend test data
  (``onnx/backend/test/data/light``: AlexNet, ZFNet-512, VGG-19, GoogLeNet, BN-Inception,
  ResNet-50, ShuffleNet, SqueezeNet, DenseNet-121; Caffe/Caffe2 conversions at opset 9, whose
  weights are ``ConstantOfShape`` nodes), as shipped and converted by ONNX's own version converter
  to opsets 13 and 17.
* The OCR models that ship inside the ``rapidocr-onnxruntime`` wheel (PaddleOCR v4 detection and
  recognition, v2 direction classifier; paddle2onnx exports at opsets 11-12 with symbolic batch
  and image dims), when the ``corpus`` extra is installed.
* Versions of both optimized by ONNX Runtime itself (``SessionOptions.optimized_model_filepath``,
  extended and all levels): FusedConv, fused BN, LayerNormalization and friends.

Nothing is downloaded at test time: every file comes from an installed package or from
onnxruntime run here.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import onnx

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"

#: MACs (multiply-accumulates) published for the architecture: torchvision's model table (its
#: "GFLOPS" column counts multiply-adds, 2 decimals) where torchvision's definition is the same
#: network as the zoo's Caffe one.
REFERENCE_GMACS = {
    "vgg19": (19.63, "torchvision vgg19"),
    "resnet50": (4.09, "torchvision resnet50"),
    "squeezenet": (0.35, "torchvision squeezenet1_1"),
    "densenet121": (2.83, "torchvision densenet121"),
}

#: Input dims for the OCR models (their batch and image dims are symbolic): RapidOCR's own
#: defaults (detection limit side 736, recognition 48x320, classifier 48x192).
OCR_SHAPES = {"ch_PP-OCRv4_det_infer": (1, 3, 736, 736), "ch_PP-OCRv4_rec_infer": (1, 3, 48, 320),
              "ch_ppocr_mobile_v2.0_cls_infer": (1, 3, 48, 192)}


@dataclass
class Entry:
    name: str           # architecture
    variant: str        # "opset 9" / "opset 17" / "ort extended" ...
    path: Path
    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.name} [{self.variant}]"


def light_models() -> list[Path]:
    return sorted(LIGHT.glob("light_*.onnx"))


def ocr_models() -> list[Path]:
    """The OCR models of the rapidocr-onnxruntime wheel ([] without the ``corpus`` extra)."""
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        return []
    return sorted(Path(list(spec.submodule_search_locations)[0], "models").glob("*.onnx"))


def converted(path: Path, opset: int, out_dir: Path) -> Path:
    """``path`` converted to ``opset`` by onnx's version converter (written to ``out_dir``)."""
    from onnx import version_converter

    out = out_dir / f"{path.stem}-op{opset}.onnx"
    if not out.exists():
        onnx.save(version_converter.convert_version(onnx.load(path), opset), out)
    return out


def with_random_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """The light models' weights are ``ConstantOfShape`` zeros: ONNX Runtime's common
    subexpression elimination would merge two convs of one input whose zero filters have the
    same shape. Seeded random initializers instead, as a trained model has."""
    import numpy as np
    from onnx import numpy_helper

    rng = np.random.default_rng(seed)
    inits = {t.name: t for t in model.graph.initializer}
    keep = []
    for node in model.graph.node:
        shape = inits.get(node.input[0]) if node.op_type == "ConstantOfShape" and node.input else None
        if shape is None:
            keep.append(node)
            continue
        dims = [int(d) for d in numpy_helper.to_array(shape)]
        model.graph.initializer.append(numpy_helper.from_array(
            rng.standard_normal(dims).astype(np.float32), node.output[0]))
    del model.graph.node[:]
    model.graph.node.extend(keep)
    return model


def ort_optimized(path: Path, level: str, out_dir: Path,
                  input_shapes: dict[str, tuple[int, ...]] | None = None) -> Path:
    """``path`` as ONNX Runtime's graph optimizer writes it at ``level`` (extended or all)."""
    out = out_dir / f"{path.stem}-ort-{level}.onnx"
    if not out.exists():
        from hetsim.workload.onnx_fuse import ort_optimize
        from hetsim.workload.onnx_import import fix_input_shapes

        model = with_random_weights(onnx.load(path))
        onnx.save(ort_optimize(fix_input_shapes(model, input_shapes, str(out)) if input_shapes else model, level), out)
    return out


def corpus(out_dir: Path, *, optimized: tuple[str, ...] = ("squeezenet", "shufflenet",
                                                          "inception_v2")) -> list[Entry]:
    """Every corpus entry, files written to ``out_dir``."""
    entries: list[Entry] = []
    for p in light_models():
        arch = p.stem.removeprefix("light_")
        entries.append(Entry(arch, "opset 9", p))
        for opset in (13, 17):
            entries.append(Entry(arch, f"opset {opset}", converted(p, opset, out_dir)))
        if arch in optimized:
            for level in ("extended", "all"):
                entries.append(Entry(arch, f"ort {level}",
                                     ort_optimized(converted(p, 17, out_dir), level, out_dir)))
    for p in ocr_models():
        shapes = {"x": OCR_SHAPES[p.stem]}
        entries.append(Entry(p.stem, f"opset {onnx.load(p).opset_import[0].version}", p, shapes))
        for level in ("extended", "all"):
            entries.append(Entry(p.stem, f"ort {level}", ort_optimized(p, level, out_dir, shapes),
                                 shapes))
    return entries
