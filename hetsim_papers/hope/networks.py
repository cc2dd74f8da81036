"""The seven networks of HOPE (HOPE §5.1), generated as ONNX models.

HOPE schedules IN-V3, IN-V4, PNASNet-Mobile, PNASNet-Large, NASNet-Large, SqueezeNet and a
DeepSpeech LSTM as MNN op graphs. Each builder here follows the framework definition the
network's checkpoints come from, op for op, as an inference graph (dropout and auxiliary heads
off, batch norm with its running statistics):

* Inception-v3 / v4: TF-slim ``nets/inception_v3.py`` and ``nets/inception_v4.py``.
* NASNet-A Large, PNASNet-5 Large / Mobile: TF-slim ``nets/nasnet/{nasnet,nasnet_utils,
  pnasnet}.py`` (``_NasBuilder.cell`` is a transcription of ``NasNetABaseCell``).
* SqueezeNet v1.0: the Caffe ``deploy.prototxt`` of the release HOPE cites (Iandola et al. 2016).
* LSTM: one DeepSpeech layer unrolled over its time steps, one MatMul (Gemm) per gate.

Tensors are NCHW (ONNX's layout); TF's ``SAME`` padding becomes explicit pads with the odd
element at the end (:func:`~hetsim.workload.onnx_graph.tf_same_pads`), so every shape is the
framework's. :func:`hetsim.workload.onnx_fuse.fuse_mnn` then turns a model into the graph MNN
schedules; docs/papers/hope.md lists the op counts and every choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hetsim.errors import HetsimError
from hetsim.workload.networks import Networks
from hetsim.workload.onnx_graph import OnnxGraph

if TYPE_CHECKING:   # onnx is imported when a network is built: listing them needs no [onnx] extra
    import onnx

#: The networks this paper generates (Plugin.networks).
NETWORKS = Networks()
register = NETWORKS.register

#: TF-slim's batch-norm epsilon (``inception_utils.inception_arg_scope`` and
#: ``nasnet_large_arg_scope``: ``batch_norm_epsilon=0.001``).
TF_BN_EPSILON = 1e-3

#: TF-slim ImageNet checkpoints classify into 1001 classes (class 0 is "background").
TF_SLIM_CLASSES = 1001


def _graph(name: str, weights: str, seed: int, **sizes: int) -> OnnxGraph:
    """A builder for network ``name``, with its size parameters checked (one clear line)."""
    if weights not in ("external", "random"):
        raise HetsimError(f"{name}: weights={weights!r}; allowed: 'external', 'random'")
    for key, value in sizes.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise HetsimError(f"{name}: {key}={value!r}; allowed: a positive integer")
    return OnnxGraph(name, weights=weights, seed=seed)


def _model(g: OnnxGraph, out: str, doc: str, **sizes: int) -> onnx.ModelProto:
    """The finished model, refused if a size parameter left a tensor empty (an input image too
    small for the network's strides)."""
    empty = next((t for t, d in g.shapes.items() if any(v < 1 for v in d)), None)
    if empty is not None:
        given = ", ".join(f"{k}={v}" for k, v in sizes.items())
        raise HetsimError(f"{g.name}: {given} leaves tensor {empty!r} with shape "
                          f"{g.shapes[empty]}; allowed: sizes at which every tensor is non-empty")
    return g.model(out, doc=doc)


# -- Inception (TF-slim) --------------------------------------------------------------------------
#: A layer of an Inception branch (:meth:`_Slim.block`): a conv, a pool, or parallel convs.
Layer = Any

#: The 3x3 average pool that opens every Inception block's pool branch.
_AVG_POOL = ("avg", "AvgPool_0a_3x3", 1, "same")
#: The 3x3 max pool, stride 2, of a reduction block.
_MAX_POOL = ("max", "MaxPool_1a_3x3", 2, "valid")


def _factorised_7x7(c: int, out_c: int) -> list[tuple]:
    """A 7x7 convolution factorised as a 1x7 (``c`` channels) then a 7x1 (Inception-v3 §3.1)."""
    return [(c, (1, 7), "Conv2d_0b_1x7"), (out_c, (7, 1), "Conv2d_0c_7x1")]


def _v3_block_35(pool_c: int) -> list[list]:
    """IN-V3's 35 x 35 block (Mixed_5b..5d); its pool branch has ``pool_c`` channels."""
    return [[(64, 1, "Conv2d_0a_1x1")],
            [(48, 1, "Conv2d_0a_1x1"), (64, 5, "Conv2d_0b_5x5")],
            [(64, 1, "Conv2d_0a_1x1"), (96, 3, "Conv2d_0b_3x3"), (96, 3, "Conv2d_0c_3x3")],
            [_AVG_POOL, (pool_c, 1, "Conv2d_0b_1x1")]]


def _v3_block_17(c: int) -> list[list]:
    """IN-V3's 17 x 17 block (Mixed_6b..6e): factorised 7x7 convolutions, ``c`` inner channels."""
    return [[(192, 1, "Conv2d_0a_1x1")],
            [(c, 1, "Conv2d_0a_1x1"), *_factorised_7x7(c, 192)],
            [(c, 1, "Conv2d_0a_1x1"), (c, (7, 1), "Conv2d_0b_7x1"), (c, (1, 7), "Conv2d_0c_1x7"),
             (c, (7, 1), "Conv2d_0d_7x1"), (192, (1, 7), "Conv2d_0e_1x7")],
            [_AVG_POOL, (192, 1, "Conv2d_0b_1x1")]]


#: IN-V3's 8 x 8 block (Mixed_7b, 7c): the 3x3 convolutions split into parallel 1x3 and 3x1.
_V3_BLOCK_8: list[list[Layer]] = [
    [(320, 1, "Conv2d_0a_1x1")],
    [(384, 1, "Conv2d_0a_1x1"),
     [(384, (1, 3), "Conv2d_0b_1x3"), (384, (3, 1), "Conv2d_0b_3x1")]],
    [(448, 1, "Conv2d_0a_1x1"), (384, 3, "Conv2d_0b_3x3"),
     [(384, (1, 3), "Conv2d_0c_1x3"), (384, (3, 1), "Conv2d_0d_3x1")]],
    [_AVG_POOL, (192, 1, "Conv2d_0b_1x1")]]

#: IN-V4's Inception-A (Mixed_5b..5e).
_V4_INCEPTION_A: list[list[Layer]] = [
    [(96, 1, "Conv2d_0a_1x1")],
    [(64, 1, "Conv2d_0a_1x1"), (96, 3, "Conv2d_0b_3x3")],
    [(64, 1, "Conv2d_0a_1x1"), (96, 3, "Conv2d_0b_3x3"), (96, 3, "Conv2d_0c_3x3")],
    [_AVG_POOL, (96, 1, "Conv2d_0b_1x1")]]

#: IN-V4's Inception-B (Mixed_6b..6h).
_V4_INCEPTION_B: list[list[Layer]] = [
    [(384, 1, "Conv2d_0a_1x1")],
    [(192, 1, "Conv2d_0a_1x1"), *_factorised_7x7(224, 256)],
    [(192, 1, "Conv2d_0a_1x1"), (192, (7, 1), "Conv2d_0b_7x1"), (224, (1, 7), "Conv2d_0c_1x7"),
     (224, (7, 1), "Conv2d_0d_7x1"), (256, (1, 7), "Conv2d_0e_1x7")],
    [_AVG_POOL, (128, 1, "Conv2d_0b_1x1")]]

#: IN-V4's Inception-C (Mixed_7b..7d).
_V4_INCEPTION_C: list[list[Layer]] = [
    [(256, 1, "Conv2d_0a_1x1")],
    [(384, 1, "Conv2d_0a_1x1"),
     [(256, (1, 3), "Conv2d_0b_1x3"), (256, (3, 1), "Conv2d_0c_3x1")]],
    [(384, 1, "Conv2d_0a_1x1"), (448, (3, 1), "Conv2d_0b_3x1"), (512, (1, 3), "Conv2d_0c_1x3"),
     [(256, (1, 3), "Conv2d_0d_1x3"), (256, (3, 1), "Conv2d_0e_3x1")]],
    [_AVG_POOL, (256, 1, "Conv2d_0b_1x1")]]


class _Slim:
    """TF-slim's ``conv2d`` under ``inception_arg_scope``: a bias-free Conv, BatchNormalization
    (scale=False in TF; ONNX's BN carries a unit scale), ReLU; scopes become node names."""

    def __init__(self, g: OnnxGraph):
        self.g = g

    def conv(self, x: str, out_c: int, kernel: int | tuple[int, int], stride: int = 1,
             pad: str = "same", name: str = "conv") -> str:
        g = self.g
        y = g.conv(x, out_c, kernel, stride=stride, pad=pad, bias=False, name=name)
        y = g.batch_norm(y, epsilon=TF_BN_EPSILON, name=f"{name}/BatchNorm")
        return g.relu(y, name=f"{name}/Relu")

    def pool(self, x: str, kind: str, stride: int, pad: str, name: str) -> str:
        return self.g.pool(x, kind, 3, stride, pad=pad, name=name)

    def block(self, net: str, scope: str, branches: Sequence[Sequence[Layer]]) -> str:
        """A mixed block (``scope``): branch i (scope ``Branch_i``) a chain of layers from
        ``net``, the branches concatenated on channels, as TF-slim writes every Inception block."""
        outs = []
        for i, layers in enumerate(branches):
            x = net
            for layer in layers:
                x = self._layer(x, f"{scope}/Branch_{i}", layer)
            outs.append(x)
        return self.g.concat(outs, name=f"{scope}/concat")

    def _layer(self, x: str, branch: str, layer: Layer) -> str:
        """A conv ``(out_c, kernel, name[, stride, pad])`` (stride 1, SAME by default), a 3x3 pool
        ``("max" | "avg", name, stride, pad)``, or a list of parallel convs concatenated (the
        3x3 split into 1x3 and 3x1 of Inception-C)."""
        if isinstance(layer, list):
            return self.g.concat([self._layer(x, branch, part) for part in layer],
                                 name=f"{branch}/concat")
        if layer[0] in ("max", "avg"):
            kind, name, stride, pad = layer
            return self.pool(x, kind, stride, pad, f"{branch}/{name}")
        out_c, kernel, name, *rest = layer
        stride, pad = rest if rest else (1, "same")
        return self.conv(x, out_c, kernel, stride, pad, f"{branch}/{name}")

    def logits(self, net: str, num_classes: int, conv_logits: bool, scope: str) -> str:
        """Global average pool (a VALID average over the whole map), dropout (identity at
        inference), the classifier, softmax."""
        g = self.g
        _, _, h, w = g.shape(net)
        net = g.pool(net, "avg", (h, w), stride=1, pad="valid", name=f"{scope}/AvgPool_1a")
        if conv_logits:  # IN-V3: a 1x1 conv with bias, then SpatialSqueeze (a Flatten here)
            net = g.conv(net, num_classes, 1, name=f"{scope}/Conv2d_1c_1x1")
            net = g.flatten(net, name=f"{scope}/SpatialSqueeze")
        else:  # IN-V4: PreLogitsFlatten then fully_connected
            net = g.flatten(net, name=f"{scope}/PreLogitsFlatten")
            net = g.gemm(net, num_classes, name=f"{scope}/Logits")
        return g.softmax(net, axis=1, name="Predictions")


def _stem(name: str, weights: str, seed: int, num_classes: int,
          image_size: int) -> tuple[OnnxGraph, _Slim, str]:
    """The graph, its TF-slim layers and the first three convolutions of IN-V3's and IN-V4's stem
    (the two are the same up to there: VALID, then SAME)."""
    g = _graph(name, weights, seed, num_classes=num_classes, image_size=image_size)
    s = _Slim(g)
    net = g.input("input", (1, 3, image_size, image_size))
    net = s.conv(net, 32, 3, 2, "valid", "Conv2d_1a_3x3")
    net = s.conv(net, 32, 3, 1, "valid", "Conv2d_2a_3x3")
    net = s.conv(net, 64, 3, 1, "same", "Conv2d_2b_3x3")
    return g, s, net


@register("inception-v3")
def inception_v3(weights: str = "external", seed: int = 0, num_classes: int = TF_SLIM_CLASSES,
                 image_size: int = 299) -> onnx.ModelProto:
    """Inception-v3 (IN-V3), TF-slim ``inception_v3`` without the auxiliary head; 299x299."""
    g, s, net = _stem("inception-v3", weights, seed, num_classes, image_size)
    net = s.pool(net, "max", 2, "valid", "MaxPool_3a_3x3")
    net = s.conv(net, 80, 1, 1, "valid", "Conv2d_3b_1x1")
    net = s.conv(net, 192, 3, 1, "valid", "Conv2d_4a_3x3")
    net = s.pool(net, "max", 2, "valid", "MaxPool_5a_3x3")
    # 35 x 35: Mixed_5b (pool branch 32 channels), 5c and 5d (64).
    for scope, pool_c in (("Mixed_5b", 32), ("Mixed_5c", 64), ("Mixed_5d", 64)):
        net = s.block(net, scope, _v3_block_35(pool_c))
    # Mixed_6a: 35 -> 17.
    net = s.block(net, "Mixed_6a", [
        [(384, 3, "Conv2d_1a_1x1", 2, "valid")],
        [(64, 1, "Conv2d_0a_1x1"), (96, 3, "Conv2d_0b_3x3"), (96, 3, "Conv2d_1a_1x1", 2, "valid")],
        [_MAX_POOL]])
    # Mixed_6b..6e: factorised 7x7 convolutions with 128, 160, 160, 192 inner channels.
    for scope, c in (("Mixed_6b", 128), ("Mixed_6c", 160), ("Mixed_6d", 160), ("Mixed_6e", 192)):
        net = s.block(net, scope, _v3_block_17(c))
    # Mixed_7a: 17 -> 8.
    net = s.block(net, "Mixed_7a", [
        [(192, 1, "Conv2d_0a_1x1"), (320, 3, "Conv2d_1a_3x3", 2, "valid")],
        [(192, 1, "Conv2d_0a_1x1"), *_factorised_7x7(192, 192), (192, 3, "Conv2d_1a_3x3", 2, "valid")],
        [_MAX_POOL]])
    # Mixed_7b, 7c: the 3x3 convolutions split into parallel 1x3 and 3x1 ones.
    for scope in ("Mixed_7b", "Mixed_7c"):
        net = s.block(net, scope, _V3_BLOCK_8)
    out = s.logits(net, num_classes, conv_logits=True, scope="Logits")
    return _model(g, out, "Inception-v3, TF-slim inception_v3 (no auxiliary head), HOPE IN-V3",
                  image_size=image_size)


@register("inception-v4")
def inception_v4(weights: str = "external", seed: int = 0, num_classes: int = TF_SLIM_CLASSES,
                 image_size: int = 299) -> onnx.ModelProto:
    """Inception-v4 (IN-V4), TF-slim ``inception_v4`` without the auxiliary head; 299x299."""
    g, s, net = _stem("inception-v4", weights, seed, num_classes, image_size)
    net = s.block(net, "Mixed_3a", [[("max", "MaxPool_0a_3x3", 2, "valid")],
                                    [(96, 3, "Conv2d_0a_3x3", 2, "valid")]])
    net = s.block(net, "Mixed_4a", [
        [(64, 1, "Conv2d_0a_1x1"), (96, 3, "Conv2d_1a_3x3", 1, "valid")],
        [(64, 1, "Conv2d_0a_1x1"), *_factorised_7x7(64, 64), (96, 3, "Conv2d_1a_3x3", 1, "valid")]])
    net = s.block(net, "Mixed_5a", [[(192, 3, "Conv2d_1a_3x3", 2, "valid")],
                                    [("max", "MaxPool_1a_3x3", 2, "valid")]])
    for scope in ("Mixed_5b", "Mixed_5c", "Mixed_5d", "Mixed_5e"):  # 4 x Inception-A
        net = s.block(net, scope, _V4_INCEPTION_A)
    # Reduction-A.
    net = s.block(net, "Mixed_6a", [
        [(384, 3, "Conv2d_1a_3x3", 2, "valid")],
        [(192, 1, "Conv2d_0a_1x1"), (224, 3, "Conv2d_0b_3x3"), (256, 3, "Conv2d_1a_3x3", 2, "valid")],
        [_MAX_POOL]])
    for scope in [f"Mixed_6{c}" for c in "bcdefgh"]:  # 7 x Inception-B
        net = s.block(net, scope, _V4_INCEPTION_B)
    # Reduction-B.
    net = s.block(net, "Mixed_7a", [
        [(192, 1, "Conv2d_0a_1x1"), (192, 3, "Conv2d_1a_3x3", 2, "valid")],
        [(256, 1, "Conv2d_0a_1x1"), *_factorised_7x7(256, 320), (320, 3, "Conv2d_1a_3x3", 2, "valid")],
        [_MAX_POOL]])
    for scope in ("Mixed_7b", "Mixed_7c", "Mixed_7d"):  # 3 x Inception-C
        net = s.block(net, scope, _V4_INCEPTION_C)
    out = s.logits(net, num_classes, conv_logits=False, scope="Logits")
    return _model(g, out, "Inception-v4, TF-slim inception_v4 (no auxiliary head), HOPE IN-V4",
                  image_size=image_size)


# -- NASNet-A and PNASNet-5 (TF-slim nasnet_utils.NasNetABaseCell) ------------------------------
@dataclass(frozen=True)
class CellSpec:
    """A NASNet-style cell as TF-slim writes it: 5 blocks, each combining two hidden states
    (``hiddenstate_indices``) through two operations (``operations``) with an add; the hidden
    states not used by any block (``used_hiddenstates`` 0) are concatenated as the output."""

    operations: tuple[str, ...]
    used_hiddenstates: tuple[int, ...]
    hiddenstate_indices: tuple[int, ...]


#: nasnet_utils.NasNetANormalCell.
NASNET_A_NORMAL = CellSpec(
    ("separable_5x5_2", "separable_3x3_2", "separable_5x5_2", "separable_3x3_2", "avg_pool_3x3",
     "none", "avg_pool_3x3", "avg_pool_3x3", "separable_3x3_2", "none"),
    (1, 0, 0, 0, 0, 0, 0), (0, 1, 1, 1, 0, 1, 1, 1, 0, 0))
#: nasnet_utils.NasNetAReductionCell.
NASNET_A_REDUCTION = CellSpec(
    ("separable_5x5_2", "separable_7x7_2", "max_pool_3x3", "separable_7x7_2", "avg_pool_3x3",
     "separable_5x5_2", "none", "avg_pool_3x3", "separable_3x3_2", "max_pool_3x3"),
    (1, 1, 1, 0, 0, 0, 0), (0, 1, 0, 1, 0, 1, 3, 2, 2, 0))
#: pnasnet.PNasNetNormalCell (PNASNet-5; also its reduction cell, with stride 2).
PNASNET_5 = CellSpec(
    ("separable_5x5_2", "max_pool_3x3", "separable_7x7_2", "max_pool_3x3", "separable_5x5_2",
     "separable_3x3_2", "separable_3x3_2", "max_pool_3x3", "separable_3x3_2", "none"),
    (1, 1, 0, 0, 0, 0, 0), (1, 1, 0, 0, 0, 0, 4, 0, 1, 0))


@dataclass(frozen=True)
class NasConfig:
    """The hparams of TF-slim's ``*_imagenet_config()`` that shape the inference graph."""

    num_cells: int
    num_conv_filters: int
    stem_multiplier: float
    filter_scaling_rate: float = 2.0
    num_reduction_layers: int = 2
    skip_reduction_layer_input: bool = True


NASNET_LARGE = NasConfig(num_cells=18, num_conv_filters=168, stem_multiplier=3.0)
PNASNET_LARGE = NasConfig(num_cells=12, num_conv_filters=216, stem_multiplier=3.0)
PNASNET_MOBILE = NasConfig(num_cells=9, num_conv_filters=54, stem_multiplier=1.0)


class _NasBuilder:
    """TF-slim's NASNet utilities over one :class:`OnnxGraph` (nasnet_large_arg_scope: convs
    without bias or activation, batch norm with scale, epsilon 1e-3)."""

    def __init__(self, g: OnnxGraph):
        self.g = g

    def conv_bn(self, x: str, out_c: int, stride: int = 1, name: str = "1x1") -> str:
        """slim.conv2d 1x1 + slim.batch_norm."""
        y = self.g.conv(x, out_c, 1, stride=stride, pad="same", bias=False, name=name)
        return self.g.batch_norm(y, epsilon=TF_BN_EPSILON, name=f"{name}/bn")

    def factorized_reduction(self, x: str, out_c: int, stride: int, scope: str) -> str:
        """nasnet_utils.factorized_reduction: two 1x1/2 paths, the second shifted by one pixel
        (``tf.pad(x, [[0,0],[0,1],[0,1],[0,0]])[:, 1:, 1:, :]``), concatenated, then BN."""
        g = self.g
        if stride == 1:
            return self.conv_bn(x, out_c, name=f"{scope}/path_conv")
        p1 = g.pool(x, "avg", 1, stride, name=f"{scope}/path1/AvgPool")
        p1 = g.conv(p1, out_c // 2, 1, bias=False, name=f"{scope}/path1_conv")
        p2 = g.pad(x, [0, 0, 0, 0, 0, 0, 1, 1], name=f"{scope}/path2/Pad")
        p2 = g.slice(p2, [1, 1], [2**31 - 1, 2**31 - 1], [2, 3], name=f"{scope}/path2/Slice")
        p2 = g.pool(p2, "avg", 1, stride, name=f"{scope}/path2/AvgPool")
        p2 = g.conv(p2, out_c // 2 + out_c % 2, 1, bias=False, name=f"{scope}/path2_conv")
        y = g.concat([p1, p2], name=f"{scope}/concat")
        return g.batch_norm(y, epsilon=TF_BN_EPSILON, name=f"{scope}/final_path_bn")

    def separable(self, x: str, op: str, out_c: int, stride: int, scope: str) -> str:
        """nasnet_utils._stacked_separable_conv: ``separable_KxK_N`` is N times [relu,
        depthwise KxK (stride on the first only), pointwise 1x1, batch norm]."""
        g = self.g
        kernel, layers = int(op.split("_")[1].split("x")[0]), int(op.split("_")[2])
        for i in range(1, layers + 1):
            name = f"{scope}/separable_{kernel}x{kernel}_{i}"
            x = g.relu(x, name=f"{name}/Relu")
            x = g.conv(x, g.shape(x)[1], kernel, stride=stride, pad="same", groups=g.shape(x)[1],
                       bias=False, name=f"{name}/depthwise")
            x = g.conv(x, out_c, 1, bias=False, name=f"{name}/pointwise")
            x = g.batch_norm(x, epsilon=TF_BN_EPSILON, name=f"{scope}/bn_sep_{kernel}x{kernel}_{i}")
            stride = 1
        return x

    def operation(self, x: str, op: str, filters: int, stride: int, original: bool,
                  scope: str) -> str:
        """NasNetABaseCell._apply_conv_operation (drop path is off at inference)."""
        g = self.g
        if stride > 1 and not original:
            stride = 1
        in_c = g.shape(x)[1]
        if op.startswith("separable"):
            return self.separable(x, op, filters, stride, scope)
        if op == "none":
            if stride > 1 or in_c != filters:
                x = g.relu(x, name=f"{scope}/Relu")
                x = self.conv_bn(x, filters, stride=stride, name=f"{scope}/1x1")
            return x
        kind = op.split("_")[0]
        x = g.pool(x, kind, 3, stride, pad="same", name=f"{scope}/{kind}_pool")
        if in_c != filters:
            x = self.conv_bn(x, filters, name=f"{scope}/1x1")
        return x

    def cell(self, spec: CellSpec, net: str, prev: str | None, filters: int, stride: int,
             scope: str) -> str:
        """NasNetABaseCell.__call__: the cell base, 5 blocks, the concat of unused states."""
        g = self.g
        # _reduce_prev_layer: match the previous cell's output to this cell's shape.
        if prev is None:
            prev = net
        elif g.shape(prev)[2] != g.shape(net)[2]:
            prev = g.relu(prev, name=f"{scope}/prev/Relu")
            prev = self.factorized_reduction(prev, filters, 2, f"{scope}/prev")
        elif g.shape(prev)[1] != filters:
            prev = g.relu(prev, name=f"{scope}/prev/Relu")
            prev = self.conv_bn(prev, filters, name=f"{scope}/prev_1x1")
        # _cell_base: relu, 1x1, BN, then tf.split(num_or_size_splits=1) - a one-output Split.
        h = g.relu(net, name=f"{scope}/Relu")
        h = self.conv_bn(h, filters, name=f"{scope}/1x1")
        h = g.split(h, [filters], name=f"{scope}/split")[0]
        states = [h, prev]
        idx, ops = spec.hiddenstate_indices, spec.operations
        for b in range(5):
            i, j = idx[2 * b], idx[2 * b + 1]
            block = f"{scope}/comb_iter_{b}"
            left = self.operation(states[i], ops[2 * b], filters, stride, i < 2, f"{block}/left")
            right = self.operation(states[j], ops[2 * b + 1], filters, stride, j < 2,
                                   f"{block}/right")
            states.append(g.add(left, right, name=f"{block}/combine"))
        # _combine_unused_states: reduce any unused state whose shape differs, concat them.
        final_h, final_c = g.shape(states[-1])[2], g.shape(states[-1])[1]
        for k, used in enumerate(spec.used_hiddenstates):
            _, c, hh, _ = g.shape(states[k])
            if not used and (c != final_c or hh != final_h):
                states[k] = self.factorized_reduction(states[k], final_c, 2 if hh != final_h else 1,
                                                      f"{scope}/cell_output/reduction_{k}")
        unused = [s_ for s_, used in zip(states, spec.used_hiddenstates, strict=True) if not used]
        return g.concat(unused, name=f"{scope}/cell_output/concat")

    def head(self, net: str, num_classes: int) -> str:
        """The final layer: relu, global average pool (reduce_mean over H, W), dropout
        (identity at inference), fully_connected, softmax."""
        g = self.g
        net = g.relu(net, name="final_layer/Relu")
        net = g.reduce_mean(net, [2, 3], keepdims=False, name="final_layer/Mean")
        net = g.gemm(net, num_classes, name="final_layer/FC")
        return g.softmax(net, axis=1, name="final_layer/predictions")


def _calc_reduction_layers(num_cells: int, num_reduction_layers: int) -> list[int]:
    """nasnet_utils.calc_reduction_layers: the cell indices that reduce."""
    return [int(k / (num_reduction_layers + 1) * num_cells)
            for k in range(1, num_reduction_layers + 1)]


def _imagenet_stem(b: _NasBuilder, images: str, hp: NasConfig, stem: CellSpec) -> tuple[str, list]:
    """nasnet._imagenet_stem: conv0 3x3/2 VALID + BN, then two stride-2 stem cells with
    filter scaling 1/4 and 1/2."""
    g = b.g
    net = g.conv(images, int(32 * hp.stem_multiplier), 3, stride=2, pad="valid", bias=False,
                 name="conv0")
    net = g.batch_norm(net, epsilon=TF_BN_EPSILON, name="conv0_bn")
    cell_outputs: list[str | None] = [None, net]
    scaling = 1.0 / hp.filter_scaling_rate ** 2
    for k in range(2):
        net = b.cell(stem, net, cell_outputs[-2], int(hp.num_conv_filters * scaling), 2,
                     f"cell_stem_{k}")
        cell_outputs.append(net)
        scaling *= hp.filter_scaling_rate
    return net, cell_outputs


def _nas_base(name: str, hp: NasConfig, image_size: int, weights: str, seed: int, num_classes: int,
              stem_cell: CellSpec) -> tuple[OnnxGraph, _NasBuilder, str, list[str], list[int]]:
    """What NASNet-A and PNASNet-5 start from: the graph, its cell builder, the ImageNet stem
    (``stem_cell`` its cells) with its outputs, and the cells a reduction cell comes before."""
    g = _graph(name, weights, seed, num_classes=num_classes, image_size=image_size)
    b = _NasBuilder(g)
    images = g.input("input", (1, 3, image_size, image_size))
    net, outs = _imagenet_stem(b, images, hp, stem_cell)
    return g, b, net, outs, _calc_reduction_layers(hp.num_cells, hp.num_reduction_layers)


def nasnet_a(name: str, hp: NasConfig, image_size: int, weights: str = "external", seed: int = 0,
             num_classes: int = TF_SLIM_CLASSES) -> onnx.ModelProto:
    """nasnet._build_nasnet_base with the ImageNet stem: normal cells, a reduction cell before
    cells ``calc_reduction_layers``."""
    g, b, net, outs, reduction = _nas_base(name, hp, image_size, weights, seed, num_classes,
                                           NASNET_A_REDUCTION)
    scaling = 1.0
    prev: str | None = None
    for k in range(hp.num_cells):
        if hp.skip_reduction_layer_input:
            prev = outs[-2]
        if k in reduction:
            scaling *= hp.filter_scaling_rate
            net = b.cell(NASNET_A_REDUCTION, net, outs[-2], int(hp.num_conv_filters * scaling), 2,
                         f"reduction_cell_{reduction.index(k)}")
            outs.append(net)
        if not hp.skip_reduction_layer_input:
            prev = outs[-2]
        net = b.cell(NASNET_A_NORMAL, net, prev, int(hp.num_conv_filters * scaling), 1,
                     f"cell_{k}")
        outs.append(net)
    return _model(g, b.head(net, num_classes), f"{name}: TF-slim NASNet-A (no auxiliary head)",
                  image_size=image_size)


def pnasnet_5(name: str, hp: NasConfig, image_size: int, weights: str = "external",
              seed: int = 0, num_classes: int = TF_SLIM_CLASSES) -> onnx.ModelProto:
    """pnasnet._build_pnasnet_base: one PNASNet-5 cell everywhere, stride 2 (and twice the
    filters) at ``calc_reduction_layers``; the stem cells are PNASNet cells too."""
    g, b, net, outs, reduction = _nas_base(name, hp, image_size, weights, seed, num_classes,
                                           PNASNET_5)
    scaling = 1.0
    prev: str | None = None
    for k in range(hp.num_cells):
        is_reduction = k in reduction
        if is_reduction:
            scaling *= hp.filter_scaling_rate
        if hp.skip_reduction_layer_input or not is_reduction:
            prev = outs[-2]
        net = b.cell(PNASNET_5, net, prev, int(hp.num_conv_filters * scaling),
                     2 if is_reduction else 1, f"cell_{k}")
        outs.append(net)
    return _model(g, b.head(net, num_classes), f"{name}: TF-slim PNASNet-5 (no auxiliary head)",
                  image_size=image_size)


@register("nasnet-large")
def nasnet_large(weights: str = "external", seed: int = 0, num_classes: int = TF_SLIM_CLASSES,
                 image_size: int = 331) -> onnx.ModelProto:
    """NASNet-A Large (NAS-L), TF-slim ``build_nasnet_large``: 18 normal cells of 168 filters
    (x2 after each of the 2 reduction cells), stem multiplier 3; 331x331."""
    return nasnet_a("nasnet-large", NASNET_LARGE, image_size, weights, seed, num_classes)


@register("pnasnet-large")
def pnasnet_large(weights: str = "external", seed: int = 0, num_classes: int = TF_SLIM_CLASSES,
                  image_size: int = 331) -> onnx.ModelProto:
    """PNASNet-5 Large (PN-L), TF-slim ``build_pnasnet_large``: 12 cells of 216 filters; 331x331."""
    return pnasnet_5("pnasnet-large", PNASNET_LARGE, image_size, weights, seed, num_classes)


@register("pnasnet-mobile")
def pnasnet_mobile(weights: str = "external", seed: int = 0, num_classes: int = TF_SLIM_CLASSES,
                   image_size: int = 224) -> onnx.ModelProto:
    """PNASNet-5 Mobile (PN-M), TF-slim ``build_pnasnet_mobile``: 9 cells of 54 filters,
    stem multiplier 1; 224x224."""
    return pnasnet_5("pnasnet-mobile", PNASNET_MOBILE, image_size, weights, seed, num_classes)


# -- SqueezeNet (Caffe) ---------------------------------------------------------------------------
#: (squeeze, expand) channels of fire2..fire9 (Iandola et al. 2016, Table 1; both versions).
SQUEEZENET_FIRES = ((16, 64), (16, 64), (32, 128), (32, 128), (48, 192), (48, 192), (64, 256),
                    (64, 256))


@register("squeezenet-hope")
def squeezenet(weights: str = "external", seed: int = 0, version: str = "1.0",
               num_classes: int = 1000, image_size: int = 227) -> onnx.ModelProto:
    """SqueezeNet (SQZ) as its Caffe ``deploy.prototxt``: v1.0 by default (the version of the
    paper HOPE cites; conv1 7x7/2 96, max pools after conv1, fire4 and fire8), v1.1 on request
    (conv1 3x3/2 64, pools after conv1, fire3, fire5). Caffe pools round up; 227x227 input."""
    if version not in ("1.0", "1.1"):
        raise HetsimError(f"squeezenet-hope: version={version!r}; allowed: '1.0', '1.1'")
    g = _graph("squeezenet-hope" if version == "1.0" else "squeezenet-v1.1-hope", weights, seed,
               num_classes=num_classes, image_size=image_size)
    net = g.input("data", (1, 3, image_size, image_size))
    if version == "1.0":
        net = g.relu(g.conv(net, 96, 7, stride=2, name="conv1"), name="relu_conv1")
        pool_after = {"conv1", "fire4", "fire8"}
    else:
        net = g.relu(g.conv(net, 64, 3, stride=2, name="conv1"), name="relu_conv1")
        pool_after = {"conv1", "fire3", "fire5"}
    net = g.pool(net, "max", 3, 2, ceil=True, name="pool1")
    for k, (sq, ex) in enumerate(SQUEEZENET_FIRES, start=2):
        f = f"fire{k}"
        s = g.relu(g.conv(net, sq, 1, name=f"{f}/squeeze1x1"), name=f"{f}/relu_squeeze1x1")
        e1 = g.relu(g.conv(s, ex, 1, name=f"{f}/expand1x1"), name=f"{f}/relu_expand1x1")
        e3 = g.relu(g.conv(s, ex, 3, pad=1, name=f"{f}/expand3x3"), name=f"{f}/relu_expand3x3")
        net = g.concat([e1, e3], name=f"{f}/concat")
        if f in pool_after:
            net = g.pool(net, "max", 3, 2, ceil=True, name=f"pool{k}")
    # drop9 is identity at inference; conv10 is the classifier.
    net = g.relu(g.conv(net, num_classes, 1, name="conv10"), name="relu_conv10")
    net = g.global_avg_pool(net, name="pool10")
    out = g.softmax(net, axis=1, name="prob")
    return _model(g, out, f"SqueezeNet v{version} (Caffe deploy.prototxt), HOPE SQZ",
                  image_size=image_size)


# -- LSTM (DeepSpeech) ----------------------------------------------------------------------------
#: The gates of an LSTM cell, in the order their MatMuls are listed (input, forget, cell, output).
LSTM_GATES = ("i", "f", "g", "o")


@register("lstm-deepspeech")
def lstm_deepspeech(weights: str = "external", seed: int = 0, hidden: int = 1024,
                    input_size: int = 1024, steps: int = 10) -> onnx.ModelProto:
    """The LSTM of HOPE's evaluation: one layer, 1024 hidden units, 10 time steps, the
    DeepSpeech configuration (input width 1024 assumed, docs/papers/hope.md).

    Each step concatenates x_t and h_{t-1}, runs the 4 gate products [x_t; h_{t-1}]·W_g + b_g as
    4 independent Gemms (the parallel ops HOPE and StarPU both exploit, HOPE §5.2, Fig. 4), then
    the gate math: i, f, o = sigmoid, g = tanh, c_t = f*c_{t-1} + i*g, h_t = o*tanh(c_t). The
    weights are shared by all steps; h_0 and c_0 are inputs (ONNX LSTM's initial_h, initial_c).
    The output is the sequence of h_t (what the next DeepSpeech layer reads).
    """
    g = _graph("lstm-deepspeech", weights, seed, hidden=hidden, input_size=input_size, steps=steps)
    x = g.input("x", (steps, input_size))
    h = g.input("h0", (1, hidden))
    c = g.input("c0", (1, hidden))
    w = {k: g.weight(f"W_{k}", (hidden, input_size + hidden)) for k in LSTM_GATES}
    bias = {k: g.weight(f"b_{k}", (hidden,)) for k in LSTM_GATES}
    xs = g.split(x, [1] * steps, axis=0, name="x/split")
    hs = []
    for t in range(steps):
        xh = g.concat([xs[t], h], axis=1, name=f"t{t}/xh")
        z = {k: g.node("Gemm", [xh, w[k], bias[k]], (1, hidden), name=f"t{t}/gate_{k}", transB=1)
             for k in LSTM_GATES}
        i = g.unary("Sigmoid", z["i"], name=f"t{t}/i")
        f = g.unary("Sigmoid", z["f"], name=f"t{t}/f")
        gg = g.unary("Tanh", z["g"], name=f"t{t}/g")
        o = g.unary("Sigmoid", z["o"], name=f"t{t}/o")
        c = g.add(g.binary("Mul", f, c, name=f"t{t}/f_c"), g.binary("Mul", i, gg, name=f"t{t}/i_g"),
                  name=f"t{t}/c")
        h = g.binary("Mul", o, g.unary("Tanh", c, name=f"t{t}/tanh_c"), name=f"t{t}/h")
        hs.append(h)
    out = g.concat(hs, axis=0, name="y")
    return _model(g, out, f"LSTM, 1 layer x {hidden} hidden x {steps} steps (DeepSpeech), HOPE LSTM",
                  steps=steps)
