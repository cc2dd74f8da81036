"""hetsim's own generated networks (the core plugin's :class:`~hetsim.workload.networks.Networks`).

``resnet18-onnx``: ResNet-18 (He et al. 2016, torchvision's layout) as ``torch.onnx.export`` of a
model in eval mode writes it: every BatchNormalization folded into its Conv (constant folding), and
the global average pool written as ``x.mean((2, 3))``, a ReduceMean, as many model definitions do
(torchvision's own AdaptiveAvgPool2d exports a GlobalAveragePool instead). An accelerator without
that op kind (rk3588's NPU) then cannot run the last layers: the what-if of a user who imports an
exported model. torch is not needed: the graph is written with :class:`OnnxGraph`.

    load_workload("resnet18-onnx")     # imported like a user's model (hetsim workloads import)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hetsim.workload.networks import Networks
from hetsim.workload.onnx_graph import OnnxGraph

if TYPE_CHECKING:   # onnx is imported when a network is built: listing them needs no [onnx] extra
    import onnx

NETWORKS = Networks()


def resnet18_graph(weights: str = "external", seed: int = 0) -> tuple[OnnxGraph, str]:
    """The graph of :func:`resnet18` and its output tensor."""
    g = OnnxGraph("resnet18-onnx", weights=weights, seed=seed)
    x = g.input("input", (1, 3, 224, 224))
    y = g.relu(g.conv(x, 64, 7, stride=2, pad=3, name="conv1"), name="relu")
    y = g.pool(y, "max", 3, stride=2, pad=1, name="maxpool")
    channels = 64
    for stage, width in enumerate((64, 128, 256, 512), 1):
        for block in range(2):
            stride = 2 if stage > 1 and block == 0 else 1
            name = f"layer{stage}.{block}"
            out = g.relu(g.conv(y, width, 3, stride=stride, pad=1, name=f"{name}.conv1"), name=f"{name}.relu1")
            out = g.conv(out, width, 3, pad=1, name=f"{name}.conv2")
            shortcut = y
            if stride != 1 or channels != width:
                shortcut = g.conv(y, width, 1, stride=stride, name=f"{name}.downsample")
            y = g.relu(g.add(out, shortcut, name=f"{name}.add"), name=f"{name}.relu2")
            channels = width
    y = g.reduce_mean(y, (2, 3), keepdims=False, name="avgpool")
    return g, g.gemm(y, 1000, name="fc")


@NETWORKS.register("resnet18-onnx")
def resnet18(weights: str = "external", seed: int = 0) -> onnx.ModelProto:
    """ResNet-18 as torch.onnx.export writes it (BN folded, the global pool a ReduceMean), 224x224 RGB in.

    1000 classes out (module docstring)."""
    g, out = resnet18_graph(weights, seed)
    return g.model(out, doc="ResNet-18 (torchvision layout; BN folded, global pool as ReduceMean)")
