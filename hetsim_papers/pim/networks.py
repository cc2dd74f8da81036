"""The transformers of the PIM partitioning paper (seed 003) as unfused ONNX Runtime graphs.

The paper partitions the computational graph (CG) that ONNX Runtime (ORT) holds for BERT-small,
RoBERTa-base and GPT-2 small over CPU_S (one Cortex-A53 core), CPU_P (four cores) and a PIM unit
(§3.1, §4.1, Tables 2-3). This module writes those graphs node by node, as the traced PyTorch
export of the Hugging Face models contains them, batch 1 and sequence length ``p``::

    from hetsim_papers.pim.networks import bert_small, capability, dcg_counts
    model = bert_small(16)                        # an onnx.ModelProto, 222 nodes
    cap = capability(model)                       # node -> frozenset({"CPU_S", "CPU_P", "PIM"})
    dcg_counts(model).V_d                         # 469, Table 3

or by name through :func:`hetsim.workload.networks.generated` (``bert-small-p16``, ``roberta-base-p8``,
``gpt2-p64``: p in 8, 16, 32, 64).

Which export (what the counts of Table 3 pin down)
--------------------------------------------------
- **Unfused.** LayerNorm is torch's ONNX decomposition (ReduceMean, Sub, Pow, ReduceMean, Add,
  Sqrt, Div, Mul, Add) and GELU is the model's formula (erf form in BERT/RoBERTa, tanh form in
  GPT-2): ORT's LayerNorm/GELU/attention fusions were off.
- **BERT-small** (4 layers, 512/2048, 8 heads, 2-class head) has three inputs (input_ids,
  attention_mask, token_type_ids) at a fixed ``p``: ORT folded the constant sub-graphs (view shapes,
  position embeddings), so no shape computation is left; the key's two transposes are one
  (torch's exporter composes consecutive Transposes).
- **RoBERTa-base** (12 layers, 768/3072, 12 heads, 2-class head, the ONNX model zoo's
  sequence-classification model) has input_ids only: position and token-type embeddings and the
  all-ones attention mask are constants (folded), the mask Add stays in every layer.
- **GPT-2 small** (12 layers, 768/3072, 12 heads, no LM head, the model zoo's gpt2-10 GPT2Model
  of transformers 2.x) keeps dynamic sequence axes: every view shape is computed at run time from
  ``x.size(i)`` (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, one Shape per traced size, no
  common-subexpression elimination), the causal mask is sliced from the ``attn.bias`` buffer by
  computed bounds and applied as ``w * b - 1e4 * (1 - b)``, heads are split with an int64 Div and
  merged with an int64 Mul, and the 12 ``present`` key/value stacks are outputs.

Counts (p = 8, 16, 32, 64 give the same; Table 3 and Table 1 of the paper; ``dcg_counts``):

=========================== ============ ============ ==================================
quantity                    BERT-small   RoBERTa      GPT-2 (paper): residual
=========================== ============ ============ ==================================
V_c (paper)                 222 (222)    616 (616)    1,963 (1,934): +29, +1.5 %
E_c (paper)                 262 (262)    725 (725)    2,460 (2,424): +36
PIM-capable (paper)         108 (108)    308 (308)    245 (245)
CPU_P-only (from Table 3)   31 (31)      85 (85)      169 (169)
CPU_S-only (from Table 3)   83 (83)      223 (223)    1,549 (1,520): +29, all shape ops
V_d (paper)                 469 (469)    1,317        2,622 (2,593): the +29 CPU_S-only
E_d, 3 devices (paper)      686 (686)    1,951        1,725 (1,723): +2
E_d, CPU_S + PIM (Table 1)  221 (221)    628 (628)    528 (527): +1
log3 paths (§4.4)           127.56       361.63       351.63 (3^127.5, 3^361.6, 3^351.6)
DA edges, p = 8 (paper)     20 / 8       20 / 8       24 / 7 (3 / 2 devices, all match)
=========================== ============ ============ ==================================

The GPT-2 residual is only in the shape-computation chains (CPU_S-only nodes between CPU_S-only
nodes): every operator that computes (the 245 PIM-capable and 169 CPU_P-capable ones) and every
data dependency that can need a copy agree, up to one copy-capable tensor (E_d +2 / +1). The
export of this code, in the opset-17 form written here, has 1,963 nodes (the model zoo's opset-10
file has 7 more: input_ids of shape (1, 1, p), and arange as ConstantOfShape, NonZero, Transpose,
Squeeze, Cast instead of Range); the paper's ORT graph has 29 fewer. That fits ORT merging some
repeated shape computations, but far from all (217 Shape nodes read a tensor another Shape already
reads), and which ones depends on torch/ORT versions the paper does not name. So the graph keeps
what the export contains rather than dropping nodes to hit the number.

The DA count depends on ``p`` through coincidences of tensor sizes: the attention scores
(1, h, p, p) have as many bytes as the head's (1, h_model) vector at p = 8 (BERT, RoBERTa) and as
the hidden states (1, p, h_model) at p = 64 (all three), which merges two classes; at p = 16 and 32
they match nothing (BERT and RoBERTa 22, GPT-2 24). Every other count is the same for all p.

Definitions used by the counts (the paper's, recovered where it is silent; docs/papers/pim.md)
---------------------------------------------------------------------------------------------
- A CG node is an ONNX node (initializers and graph inputs are not nodes); a CG edge is a data
  dependency between two nodes: a distinct (producer, consumer) pair.
- V_d = Σ_v |cap(v)| (START and END not counted: the 3^x path counts say so, Table 3).
- A dashed DCG edge is one possible copy: (tensor, source device, destination device) with the
  source a device that can produce the tensor, the destination a different device on which some
  consumer of it can run. ORT inserts one copy per tensor and destination device (docs/papers/pim.md);
  counting per (producer, consumer) pair instead gives 840 / 275 for BERT, not 686 / 221.
- A DA class is (dtype, bytes, source, destination) of a dashed edge (§3.2.1).
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import networkx as nx

from hetsim.errors import HetsimError
from hetsim.workload.networks import Networks
from hetsim.workload.onnx_graph import OnnxGraph

if TYPE_CHECKING:   # onnx is imported when a network is built: listing them needs no [onnx] extra
    import onnx

#: The networks this paper generates (Plugin.networks).
NETWORKS = Networks()
register = NETWORKS.register

#: The three devices of the paper's platform (§4.1).
DEVICES: tuple[str, ...] = ("CPU_S", "CPU_P", "PIM")
#: The sequence lengths the paper sweeps ("8 to 64", §4.1; the grid: docs/papers/pim.md).
SEQUENCE_LENGTHS: tuple[int, ...] = (8, 16, 32, 64)

#: Op types whose ORT CPU kernels the paper runs thread-parallel (CPU_P), any dtype. Recovered
#: from the counts (Table 3, docs/papers/pim.md): with this set the CPU_P-only counts are 31 / 85 / 169 (7, 7, 14
#: per layer); removing any of them, or adding any other op type of these graphs, changes at
#: least one of the three (Gemm is in anyway: every Gemm here is PIM-capable, and the sets nest).
CPU_P_OP_TYPES = frozenset({"MatMul", "Gemm", "Add", "Sub", "Mul", "Div"})


@dataclass(frozen=True)
class TransformerSpec:
    """The hyper-parameters of one model (Hugging Face configuration names in comments)."""

    name: str
    layers: int  # num_hidden_layers / n_layer
    hidden: int  # hidden_size / n_embd
    ffn: int  # intermediate_size / 4 * n_embd
    heads: int  # num_attention_heads / n_head
    vocab: int  # vocab_size
    max_positions: int  # max_position_embeddings / n_positions: the largest p
    type_vocab: int  # type_vocab_size (0: no token-type embedding)
    layer_norm_eps: float
    classes: int  # sequence-classification outputs (0: no head)
    inputs: tuple[str, ...] = ("input_ids",)  # the graph inputs, (1, p) int64 each


#: google/bert_uncased_L-4_H-512_A-8 ("BERT-small", §4.1) with a 2-class head (§5).
BERT_SMALL = TransformerSpec("bert-small", 4, 512, 2048, 8, 30522, 512, 2, 1e-12, 2,
                             ("input_ids", "attention_mask", "token_type_ids"))
#: roberta-base with a 2-class head (the model zoo's roberta-sequence-classification).
ROBERTA_BASE = TransformerSpec("roberta-base", 12, 768, 3072, 12, 50265, 512, 1, 1e-5, 2)
#: gpt2 (small): GPT2Model, no LM head (Table 2 lists no vocabulary Gemm).
GPT2_SMALL = TransformerSpec("gpt2", 12, 768, 3072, 12, 50257, 1024, 0, 1e-5, 0)


# -- shared pieces ------------------------------------------------------------------------------
def _graph(spec: TransformerSpec, p: int, weights: str, seed: int) -> OnnxGraph:
    if isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= spec.max_positions:
        raise HetsimError(f"{spec.name}: sequence length p={p!r}: allowed: an integer "
                          f"1..{spec.max_positions}")
    if weights not in ("external", "random"):
        raise HetsimError(f"{spec.name}: weights={weights!r}: allowed: 'external', 'random'")
    return OnnxGraph(f"{spec.name}-p{p}", weights=weights, seed=seed)


def _layer_norm(g: OnnxGraph, x: str, eps: float, name: str) -> str:
    """torch.onnx's LayerNorm decomposition (symbolic_opset9.layer_norm): 9 nodes; Sub, Add eps,
    Mul gamma and Add beta are Table 2's element-wise forms (7), (2) r=1, (5) and (2)."""
    h = g.shape(x)[-1]
    mean = g.reduce_mean(x, [-1], name=f"{name}.ReduceMean")
    centred = g.binary("Sub", x, mean, name=f"{name}.Sub")
    sq = g.binary("Pow", centred, g.const(f"{name}.two", 2.0, "float32"), name=f"{name}.Pow")
    var = g.reduce_mean(sq, [-1], name=f"{name}.ReduceMean_var")
    var = g.binary("Add", var, g.const(f"{name}.eps", eps, "float32"), name=f"{name}.Add_eps")
    std = g.unary("Sqrt", var, name=f"{name}.Sqrt")
    y = g.binary("Div", centred, std, name=f"{name}.Div")
    y = g.binary("Mul", y, g.weight(f"{name}.weight", (h,)), name=f"{name}.Mul")
    return g.binary("Add", y, g.weight(f"{name}.bias", (h,)), name=f"{name}.Add")


def _linear(g: OnnxGraph, x: str, out_features: int, name: str) -> str:
    """nn.Linear on a 3-D activation: MatMul by the pre-transposed (q, r) weight, then the bias
    Add (Table 2 MatMul (1) and element-wise (2))."""
    w = g.weight(f"{name}.weight", (g.shape(x)[-1], out_features))
    y = g.matmul(x, w, name=f"{name}.MatMul")
    return g.add(y, g.weight(f"{name}.bias", (out_features,)), name=f"{name}.Add")


def _gelu_erf(g: OnnxGraph, x: str, name: str) -> str:
    """BERT's ``x * 0.5 * (1.0 + erf(x / sqrt(2)))``: Mul, Div, Erf, Add, Mul (PIM: Table 2
    element-wise (6), (3), (4); Div and Erf are not PIM-capable, §4.3)."""
    half = g.binary("Mul", x, g.const(f"{name}.half", 0.5, "float32"), name=f"{name}.Mul_half")
    z = g.binary("Div", x, g.const(f"{name}.sqrt2", math.sqrt(2.0), "float32"), name=f"{name}.Div")
    z = g.unary("Erf", z, name=f"{name}.Erf")
    z = g.binary("Add", z, g.const(f"{name}.one", 1.0, "float32"), name=f"{name}.Add")
    return g.binary("Mul", half, z, name=f"{name}.Mul")


def _gelu_tanh(g: OnnxGraph, x: str, name: str) -> str:
    """GPT-2's ``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))``: 8 nodes, six of them
    PIM-capable (Table 2: (6) three times, (1) r=3072, (3), (4)); Pow and Tanh are not."""
    half = g.binary("Mul", x, g.const(f"{name}.half", 0.5, "float32"), name=f"{name}.Mul_half")
    cube = g.binary("Pow", x, g.const(f"{name}.three", 3.0, "float32"), name=f"{name}.Pow")
    z = g.binary("Mul", cube, g.const(f"{name}.c", 0.044715, "float32"), name=f"{name}.Mul_c")
    z = g.add(x, z, name=f"{name}.Add_x")
    z = g.binary("Mul", z, g.const(f"{name}.k", math.sqrt(2.0 / math.pi), "float32"),
                 name=f"{name}.Mul_k")
    z = g.unary("Tanh", z, name=f"{name}.Tanh")
    z = g.binary("Add", z, g.const(f"{name}.one", 1.0, "float32"), name=f"{name}.Add_one")
    return g.binary("Mul", half, z, name=f"{name}.Mul")


# -- BERT and RoBERTa ---------------------------------------------------------------------------
def _bert_layer(g: OnnxGraph, spec: TransformerSpec, h: str, mask: str, p: int, name: str) -> str:
    """One BertLayer (transformers 2.x, shared by RoBERTa), static shapes: 50 nodes, 25 of them
    PIM-capable and 7 more CPU_P-capable (derived from Table 3)."""
    d = spec.hidden // spec.heads
    q = _linear(g, h, spec.hidden, f"{name}.attention.query")
    k = _linear(g, h, spec.hidden, f"{name}.attention.key")
    v = _linear(g, h, spec.hidden, f"{name}.attention.value")

    def heads(x: str, part: str, perm: Sequence[int]) -> str:  # transpose_for_scores
        x = g.reshape(x, (1, p, spec.heads, d), name=f"{name}.attention.{part}.Reshape")
        return g.transpose(x, perm, name=f"{name}.attention.{part}.Transpose")

    q = heads(q, "query", (0, 2, 1, 3))
    # key.permute(0, 2, 1, 3).transpose(-1, -2): the exporter composes the two (one Transpose).
    k = heads(k, "key", (0, 2, 3, 1))
    v = heads(v, "value", (0, 2, 1, 3))
    s = g.matmul(q, k, name=f"{name}.attention.scores.MatMul")
    s = g.binary("Div", s, g.const(f"{name}.attention.scale", math.sqrt(d), "float32"),
                 name=f"{name}.attention.scores.Div")
    s = g.add(s, mask, name=f"{name}.attention.mask.Add")
    s = g.softmax(s, -1, name=f"{name}.attention.Softmax")
    c = g.matmul(s, v, name=f"{name}.attention.context.MatMul")
    c = g.transpose(c, (0, 2, 1, 3), name=f"{name}.attention.context.Transpose")
    c = g.reshape(c, (1, p, spec.hidden), name=f"{name}.attention.context.Reshape")
    o = _linear(g, c, spec.hidden, f"{name}.attention.output.dense")
    o = g.add(o, h, name=f"{name}.attention.output.residual.Add")
    h1 = _layer_norm(g, o, spec.layer_norm_eps, f"{name}.attention.output.LayerNorm")
    f = _linear(g, h1, spec.ffn, f"{name}.intermediate.dense")
    f = _gelu_erf(g, f, f"{name}.intermediate.gelu")
    f = _linear(g, f, spec.hidden, f"{name}.output.dense")
    f = g.add(f, h1, name=f"{name}.output.residual.Add")
    return _layer_norm(g, f, spec.layer_norm_eps, f"{name}.output.LayerNorm")


def _classification_head(g: OnnxGraph, spec: TransformerSpec, h: str, dense: str,
                         out: str) -> str:
    """hidden[:, 0] (Gather), dense + tanh, output projection: the two Gemms are nn.Linear on a
    2-D input (transB=1), Table 2's Gemm (2) (512, 512), (512, 2) for BERT, (768, ...) for
    RoBERTa."""
    cls = g.gather(h, g.const(f"{dense}.index", 0), axis=1, name=f"{dense}.Gather")
    y = g.gemm(cls, spec.hidden, trans_b=True, name=f"{dense}.Gemm")
    y = g.unary("Tanh", y, name=f"{dense}.Tanh")
    return g.gemm(y, spec.classes, trans_b=True, name=f"{out}.Gemm")


def _bert_like(spec: TransformerSpec, p: int, weights: str, seed: int) -> onnx.ModelProto:
    g = _graph(spec, p, weights, seed)
    h_dim = spec.hidden
    inputs = {name: g.input(name, (1, p), "int64") for name in spec.inputs}
    ids = inputs["input_ids"]
    if "attention_mask" in inputs:
        mask_in = inputs["attention_mask"]
        # BertModel: (1.0 - mask[:, None, None, :].float()) * -10000.0
        m = g.unsqueeze(mask_in, [1], name="extended_attention_mask.Unsqueeze")
        m = g.unsqueeze(m, [2], name="extended_attention_mask.Unsqueeze_1")
        m = g.cast(m, "float32", name="extended_attention_mask.Cast")
        m = g.node("Sub", [g.const("extended_attention_mask.one", 1.0, "float32"), m],
                   g.shape(m), name="extended_attention_mask.Sub")
        mask = g.binary("Mul", m, g.const("extended_attention_mask.min", -10000.0, "float32"),
                        name="extended_attention_mask.Mul")
    else:
        # No attention_mask input: the all-ones mask, and so the whole extended mask, is a
        # constant (zeros) that ORT folds; the per-layer Add of it stays.
        mask = g.weight("extended_attention_mask.folded", (1, 1, 1, p))
    word = g.gather(g.weight("embeddings.word_embeddings", (spec.vocab, h_dim)), ids,
                    name="embeddings.word_embeddings.Gather")
    # position_ids = arange(p) is constant at a fixed p: ORT folds the lookup to a (1, p, h) tensor.
    pos = g.weight("embeddings.position_embeddings.folded", (1, p, h_dim))
    e = g.add(word, pos, name="embeddings.Add")
    if "token_type_ids" in inputs:
        tok = g.gather(g.weight("embeddings.token_type_embeddings", (spec.type_vocab, h_dim)),
                       inputs["token_type_ids"], name="embeddings.token_type_embeddings.Gather")
    else:  # token_type_ids = zeros: folded like the positions
        tok = g.weight("embeddings.token_type_embeddings.folded", (1, p, h_dim))
    e = g.add(e, tok, name="embeddings.Add_1")
    h = _layer_norm(g, e, spec.layer_norm_eps, "embeddings.LayerNorm")
    for i in range(spec.layers):
        h = _bert_layer(g, spec, h, mask, p, f"encoder.layer.{i}")
    # BertForSequenceClassification: pooler.dense, classifier; RoBERTa: classifier.dense, out_proj
    dense, out = ("pooler.dense", "classifier") if spec.name == "bert-small" else \
        ("classifier.dense", "classifier.out_proj")
    logits = _classification_head(g, spec, h, dense, out)
    return g.model(logits, doc=f"{spec.name} sequence classification, batch 1, p={p}; "
                               "hetsim_papers.pim.networks (seed 003)", value_info=True)


def bert_small(p: int = 16, weights: str = "external", seed: int = 0) -> onnx.ModelProto:
    """BERT-small (4 layers, 512/2048, 8 heads) for 2-class sequence classification: 222 nodes."""
    return _bert_like(BERT_SMALL, p, weights, seed)


def roberta_base(p: int = 16, weights: str = "external", seed: int = 0) -> onnx.ModelProto:
    """RoBERTa-base (12 layers, 768/3072, 12 heads) for 2-class sequence classification: 616
    nodes."""
    return _bert_like(ROBERTA_BASE, p, weights, seed)


# -- GPT-2 --------------------------------------------------------------------------------------
class _Trace:
    """The shape computation a traced export records (torch.onnx, dynamic axes).

    Every ``x.size(i)`` is its own Shape -> Gather (the tracer records one size per call); a view
    to a list of traced sizes is Unsqueeze per traced entry, Concat with the constant entries
    (initializers, folded by the exporter) and Reshape.
    """

    def __init__(self, g: OnnxGraph):
        self.g = g

    def size(self, x: str, dim: int, name: str) -> str:
        dim %= len(self.g.shape(x))
        s = self.g.shape_of(x, name=f"{name}.Shape")
        return self.g.gather(s, self.g.const(f"{name}.index", dim), name=f"{name}.Gather")

    def view(self, x: str, entries: Sequence[str | int], dims: Sequence[int], name: str) -> str:
        parts = [self.g.unsqueeze(e, [0], name=f"{name}.Unsqueeze") if isinstance(e, str)
                 else self.g.const(f"{name}.dim", [e]) for e in entries]
        target = self.g.node("Concat", parts, (len(parts),), name=f"{name}.Concat", axis=0)
        return self.g.node("Reshape", [x, target], tuple(dims), name=f"{name}.Reshape")


def _conv1d(t: _Trace, x: str, nf: int, name: str) -> str:
    """transformers' Conv1D: ``size_out = x.size()[:-1] + (nf,)``; ``addmm(b, x.view(-1,
    x.size(-1)), W)`` is a Gemm (Table 2 Gemm (1)); ``view(*size_out)``: 14 nodes."""
    g = t.g
    b, s, nx_ = g.shape(x)
    d0 = t.size(x, 0, f"{name}.size0")
    d1 = t.size(x, 1, f"{name}.size1")
    dk = t.size(x, -1, f"{name}.size2")
    x2 = t.view(x, [-1, dk], (b * s, nx_), f"{name}.view_in")
    y = g.gemm(x2, nf, trans_b=False, name=f"{name}.Gemm")
    return t.view(y, [d0, d1, nf], (b, s, nf), f"{name}.view_out")


def _gpt2_split_heads(t: _Trace, spec: TransformerSpec, x: str, p: int, name: str, part: str,
                      key: bool) -> tuple[str, str]:
    """GPT-2's ``split_heads`` as traced: ``new_x_shape = x.size()[:-1] + (n_head, x.size(-1) //
    n_head)``, a view, then the permute (the key's composed with its transpose). Returns the
    permuted heads and the view."""
    g = t.g
    hd = spec.hidden // spec.heads
    d0 = t.size(x, 0, f"{name}.attn.{part}.size0")
    d1 = t.size(x, 1, f"{name}.attn.{part}.size1")
    dk = t.size(x, -1, f"{name}.attn.{part}.size2")
    dh = g.binary("Div", dk, g.const(f"{name}.attn.{part}.n_head", spec.heads),
                  name=f"{name}.attn.{part}.Div")
    r = t.view(x, [d0, d1, spec.heads, dh], (1, p, spec.heads, hd), f"{name}.attn.{part}")
    perm = (0, 2, 3, 1) if key else (0, 2, 1, 3)
    return g.transpose(r, perm, name=f"{name}.attn.{part}.Transpose"), r


def _gpt2_causal_mask(t: _Trace, spec: TransformerSpec, w: str, p: int, name: str) -> str:
    """``_attn``'s mask: ``b = bias[:, :, ns-nd:ns, :ns]; w = w * b - 1e4 * (1 - b)``."""
    g = t.g
    nd = t.size(w, -2, f"{name}.attn.nd")
    ns = t.size(w, -1, f"{name}.attn.ns")
    start = g.binary("Sub", ns, nd, name=f"{name}.attn.Sub")
    n_ctx = spec.max_positions
    bias = g.weight(f"{name}.attn.bias", (1, 1, n_ctx, n_ctx))
    b = g.node("Slice", [bias, g.unsqueeze(start, [0], name=f"{name}.attn.mask.Unsqueeze"),
                         g.unsqueeze(ns, [0], name=f"{name}.attn.mask.Unsqueeze_1"),
                         g.const(f"{name}.attn.mask.axes", [2])],
               (1, 1, p, n_ctx), name=f"{name}.attn.mask.Slice")
    b = g.node("Slice", [b, g.const(f"{name}.attn.mask.zero", [0]),
                         g.unsqueeze(ns, [0], name=f"{name}.attn.mask.Unsqueeze_2"),
                         g.const(f"{name}.attn.mask.axes_1", [3])],
               (1, 1, p, p), name=f"{name}.attn.mask.Slice_1")
    wb = g.binary("Mul", w, b, name=f"{name}.attn.mask.Mul")
    nb = g.node("Sub", [g.const(f"{name}.attn.mask.one", 1.0, "float32"), b], g.shape(b),
                name=f"{name}.attn.mask.Sub")
    nb = g.binary("Mul", nb, g.const(f"{name}.attn.mask.big", 1e4, "float32"),
                  name=f"{name}.attn.mask.Mul_1")
    return g.binary("Sub", wb, nb, name=f"{name}.attn.mask.Sub_1")


def _gpt2_merge_heads(t: _Trace, spec: TransformerSpec, o: str, p: int, name: str) -> str:
    """``merge_heads``: permute; ``x.size()[:-2] + (x.size(-2) * x.size(-1),)``; view."""
    g = t.g
    o = g.transpose(o, (0, 2, 1, 3), name=f"{name}.attn.merge.Transpose")
    d0 = t.size(o, 0, f"{name}.attn.merge.size0")
    d1 = t.size(o, 1, f"{name}.attn.merge.size1")
    d2 = t.size(o, -2, f"{name}.attn.merge.size2")
    d3 = t.size(o, -1, f"{name}.attn.merge.size3")
    merged = g.binary("Mul", d2, d3, name=f"{name}.attn.merge.Mul")
    return t.view(o, [d0, d1, merged], (1, p, spec.hidden), f"{name}.attn.merge")


def _gpt2_mlp(t: _Trace, spec: TransformerSpec, x: str, name: str) -> str:
    """GPT-2's MLP: Conv1D to the inner width, tanh GELU, Conv1D back."""
    m = _conv1d(t, x, spec.ffn, f"{name}.c_fc")
    m = _gelu_tanh(t.g, m, f"{name}.gelu")
    return _conv1d(t, m, spec.hidden, f"{name}.c_proj")


def _gpt2_block(t: _Trace, spec: TransformerSpec, x: str, p: int, name: str) -> tuple[str, str]:
    """One GPT-2 Block of transformers 2.x as traced: 161 nodes, 20 PIM-capable (4 Gemm, 2
    residual Add, 2 x 4 LayerNorm, 6 GELU) and 14 more CPU_P-capable (2 MatMul, the scale Div,
    the mask's Mul/Sub/Mul/Sub, 2 LayerNorm Div, 3 int64 Div, 1 int64 Mul, 1 int64 Sub)."""
    g = t.g
    hd = spec.hidden // spec.heads
    a = _layer_norm(g, x, spec.layer_norm_eps, f"{name}.ln_1")
    c = _conv1d(t, a, 3 * spec.hidden, f"{name}.attn.c_attn")
    q, k, v = g.split(c, [spec.hidden] * 3, axis=2, name=f"{name}.attn.Split")
    q, _ = _gpt2_split_heads(t, spec, q, p, name, "query", False)
    k, k_view = _gpt2_split_heads(t, spec, k, p, name, "key", True)
    v, _ = _gpt2_split_heads(t, spec, v, p, name, "value", False)
    # present = stack((key.transpose(-2, -1), value)): the exporter composes the key's two
    # transposes, so this Transpose reads the key's Reshape.
    kt = g.transpose(k_view, (0, 2, 1, 3), name=f"{name}.attn.present.Transpose")
    present = g.node("Concat", [g.unsqueeze(kt, [0], name=f"{name}.attn.present.Unsqueeze"),
                                g.unsqueeze(v, [0], name=f"{name}.attn.present.Unsqueeze_1")],
                     (2, 1, spec.heads, p, hd), name=f"{name}.attn.present.Concat", axis=0)
    # _attn: w = q @ k / sqrt(d), masked, softmax, @ v
    w = g.matmul(q, k, name=f"{name}.attn.MatMul")
    w = g.binary("Div", w, g.const(f"{name}.attn.scale", math.sqrt(hd), "float32"),
                 name=f"{name}.attn.Div")
    w = _gpt2_causal_mask(t, spec, w, p, name)
    w = g.softmax(w, -1, name=f"{name}.attn.Softmax")
    o = g.matmul(w, v, name=f"{name}.attn.MatMul_1")
    o = _gpt2_merge_heads(t, spec, o, p, name)
    o = _conv1d(t, o, spec.hidden, f"{name}.attn.c_proj")
    x = g.add(x, o, name=f"{name}.Add")
    m = _gpt2_mlp(t, spec, _layer_norm(g, x, spec.layer_norm_eps, f"{name}.ln_2"), f"{name}.mlp")
    return g.add(x, m, name=f"{name}.Add_1"), present


def gpt2_small(p: int = 16, weights: str = "external", seed: int = 0) -> onnx.ModelProto:
    """GPT-2 small (GPT2Model: 12 layers, 768/3072, 12 heads, no LM head) as the traced export
    with dynamic axes: 1,963 nodes, outputs last_hidden_state and the 12 presents."""
    spec = GPT2_SMALL
    g = _graph(spec, p, weights, seed)
    t = _Trace(g)
    ids = g.input("input_ids", (1, p), "int64")
    # input_shape = input_ids.size(); input_ids = input_ids.view(-1, input_shape[-1])
    d0 = t.size(ids, 0, "input_shape.size0")
    d1 = t.size(ids, 1, "input_shape.size1")
    ids2 = t.view(ids, [-1, d1], (1, p), "input_ids.view")
    # position_ids = arange(0, input_shape[-1]).unsqueeze(0).view(-1, input_shape[-1])
    pos = g.node("Range", [g.const("position_ids.start", 0), d1, g.const("position_ids.delta", 1)],
                 (p,), name="position_ids.Range")
    pos = g.unsqueeze(pos, [0], name="position_ids.Unsqueeze")
    pos = t.view(pos, [-1, d1], (1, p), "position_ids.view")
    we = g.gather(g.weight("wte", (spec.vocab, spec.hidden)), ids2, name="wte.Gather")
    pe = g.gather(g.weight("wpe", (spec.max_positions, spec.hidden)), pos, name="wpe.Gather")
    h = g.add(we, pe, name="embeddings.Add")  # "+ token_type_embeds (0)" is removed by the tracer
    hs = t.size(h, -1, "output_shape.size2")
    presents = []
    for i in range(spec.layers):
        h, present = _gpt2_block(t, spec, h, p, f"h.{i}")
        presents.append(present)
    h = _layer_norm(g, h, spec.layer_norm_eps, "ln_f")
    out = t.view(h, [d0, d1, hs], (1, p, spec.hidden), "output")
    return g.model(out, *presents, doc=f"gpt2 (GPT2Model), batch 1, p={p}; "
                                       "hetsim_papers.pim.networks (seed 003)",
                   value_info=True)


#: Builders by model name (the registered names are ``<name>-p<p>``).
MODELS: dict[str, Callable[..., onnx.ModelProto]] = {
    "bert-small": bert_small, "roberta-base": roberta_base, "gpt2": gpt2_small}

for _name, _builder in MODELS.items():
    for _p in SEQUENCE_LENGTHS:
        register(f"{_name}-p{_p}")(functools.partial(_builder, _p))


# -- device capability (Table 2 and §4) ---------------------------------------------------------
Dim = int | str


@dataclass(frozen=True)
class Table2Form:
    """The row of the paper's Table 2 (PIM-executable operators) a node matches: ``operator``
    "Gemm", "MatMul" or "Element-wise", its ``row`` number, and the inner dimension ``q``
    (``None`` for element-wise rows) and output columns ``r`` (the table's q and r)."""

    operator: str
    row: int
    q: int | None
    r: int

    #: The rows' formulas as Table 2 prints them.
    FORMULAS = {("Gemm", 1): "(p,q)x(q,r)+(r)", ("Gemm", 2): "(p,q)x(r,q)^T+(r)",
                ("MatMul", 1): "(p,q)x(q,r)", ("Element-wise", 1): "(p,r)+(p,r)",
                ("Element-wise", 2): "(p,r)+(r)", ("Element-wise", 3): "(p,r)+(1)",
                ("Element-wise", 4): "(p,r)x(p,r)", ("Element-wise", 5): "(p,r)x(r)",
                ("Element-wise", 6): "(p,r)x(1)", ("Element-wise", 7): "(p,r)-(p)"}

    @property
    def formula(self) -> str:
        return self.FORMULAS[(self.operator, self.row)]


def _tensor_shapes(model: onnx.ModelProto) -> tuple[dict[str, tuple[Dim, ...]], dict[str, int]]:
    """Shape and element type of every tensor: the model's own value_info where it has one, else
    onnx shape inference with data propagation (so that computed view shapes resolve); a dim
    neither gives is a string (its symbol, or ``"?"``)."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as exc:  # onnx raises several types for a malformed model
        raise HetsimError(f"model {model.graph.name!r}: onnx shape inference failed: "
                          f"{str(exc).splitlines()[0]}") from exc
    shapes: dict[str, tuple[Dim, ...]] = {}
    dtypes: dict[str, int] = {}
    g = inferred.graph
    own = model.graph
    for vi in (*g.input, *g.value_info, *g.output, *own.value_info, *own.output):
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            continue
        shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                                for d in tt.shape.dim)
        dtypes[vi.name] = tt.elem_type
    for init in g.initializer:
        shapes[init.name] = tuple(init.dims)
        dtypes[init.name] = init.data_type
    return shapes, dtypes


def _sequence_length(model: onnx.ModelProto, shapes: Mapping[str, tuple[Dim, ...]]) -> Dim:
    """p: the last dimension of the first graph input (input_ids, batch x sequence)."""
    inits = {i.name for i in model.graph.initializer}
    for vi in model.graph.input:
        if vi.name not in inits and shapes.get(vi.name):
            return shapes[vi.name][-1]
    raise HetsimError(f"model {model.graph.name!r}: graph inputs: none has a shape; allowed: "
                      "input_ids of shape (batch, p)")


def _form(node: onnx.NodeProto, shapes: Mapping[str, tuple[Dim, ...]], dtypes: Mapping[str, int],
          weights: frozenset[str], p: Dim) -> Table2Form | None:
    """The Table 2 row ``node`` matches, or None. A "(p, r)" operand is a float activation of p
    rows (the sequence) and r columns: shape (p, r), or (1, p, r) at batch 1."""
    import onnx

    ins = [i for i in node.input if i]
    if not ins or any(dtypes.get(i) != onnx.TensorProto.FLOAT for i in ins):
        return None  # PIM computes bfloat16 numbers, not int64 shape arithmetic
    op = node.op_type
    if op in ("Gemm", "MatMul"):
        a, b = shapes.get(ins[0], ()), shapes.get(ins[1], ())
        if ins[1] not in weights or len(b) != 2 or not all(isinstance(d, int) for d in b):
            return None  # the attention MatMuls multiply two activations
        if op == "Gemm":
            trans_b = next((at.i for at in node.attribute if at.name == "transB"), 0)
            q, r = (b[1], b[0]) if trans_b else (b[0], b[1])
            return Table2Form("Gemm", 2 if trans_b else 1, int(q), int(r))
        if (len(a) == 2 and a[0] == p) or (len(a) == 3 and a[0] == 1 and a[1] == p):
            return Table2Form("MatMul", 1, int(b[0]), int(b[1]))
        return None
    if op not in ("Add", "Mul", "Sub") or len(ins) != 2:
        return None
    found = shapes.get(node.output[0])
    if found is None or not ((len(found) == 2 and found[0] == p) or
                             (len(found) == 3 and found[0] == 1 and found[1] == p)):
        return None
    out: tuple[Dim, ...] = found
    r = out[-1]
    if not isinstance(r, int):
        return None
    first, second = shapes.get(ins[0]), shapes.get(ins[1])
    if first is None or second is None:
        return None

    def kind(s: tuple[Dim, ...]) -> str:  # what an operand is, next to a (p, r) result
        if s == out:
            return "full"
        if s == out[:-1] + (1,) and r != 1:
            return "per-row"
        core = s
        while core and core[0] == 1:
            core = core[1:]
        if core == (r,) or (r == 1 and not core):
            return "row"  # (r): a row vector, and (1) when r = 1 (Table 2 (2) r=1)
        return "scalar" if not core else "other"

    ka, kb = kind(first), kind(second)
    if op == "Sub":
        return Table2Form("Element-wise", 7, None, r) if (ka, kb) == ("full", "per-row") else None
    other = kb if ka == "full" else ka if kb == "full" else "none"
    rows = {"Add": {"full": 1, "row": 2, "scalar": 3}, "Mul": {"full": 4, "row": 5, "scalar": 6}}
    row = rows[op].get(other)
    return Table2Form("Element-wise", row, None, r) if row else None


def table2_forms(model: onnx.ModelProto) -> dict[str, Table2Form]:
    """The PIM-capable nodes of ``model`` and the Table 2 row each matches (see
    :func:`capability`); the keys are exactly the nodes whose capability includes PIM."""
    shapes, dtypes = _tensor_shapes(model)
    p = _sequence_length(model, shapes)
    weights = frozenset(i.name for i in model.graph.initializer)
    forms = {}
    for node in model.graph.node:
        form = _form(node, shapes, dtypes, weights, p)
        if form is not None:
            forms[node.name] = form
    return forms


def capability(model: onnx.ModelProto) -> dict[str, frozenset[str]]:
    """The devices that can run each node: {CPU_S}, {CPU_S, CPU_P} or {CPU_S, CPU_P, PIM}.

    Rules (003 paper, Table 2 and §4; the column reading: docs/papers/pim.md):

    - **CPU_S** runs every operator (the final fallback; "CPU_S only" is a baseline).
    - **PIM** runs the forms of Table 2 on float tensors (:func:`table2_forms`), a "(p, r)"
      operand being an activation of p rows (the sequence) and r columns:
      Gemm by a weight initializer, (p,q)x(q,r)+(r) or (p,q)x(r,q)^T+(r); MatMul (p,q)x(q,r) by
      a 2-D weight initializer (not the attention MatMuls); Add and Mul of a (p, r) by a (p, r),
      an (r) row vector or a (1) scalar; Sub of a (p, r) minus a (p) per-row value. Div, Pow,
      Sqrt, Erf, Tanh, Softmax, ReduceMean and shape operators are not PIM-capable (Silent-PIM has
      no complex functions; "the division and the erf operators unsupported by PIM", §4.3).
    - **CPU_P** runs the thread-parallelizable operators, :data:`CPU_P_OP_TYPES` (MatMul, Gemm,
      Add, Sub, Mul, Div, any dtype), which include every PIM-capable node ("all the PIM
      operators can be executed by CPU parallel", §4.3), so the sets nest.
    """
    names = [n.name for n in model.graph.node]
    if len(set(names)) != len(names) or "" in names:
        dup = next((n for n in names if not n or names.count(n) > 1), "")
        raise HetsimError(f"model {model.graph.name!r}: node name {dup!r}: allowed: a unique, "
                          "non-empty name per node")
    pim = table2_forms(model)
    caps: dict[str, frozenset[str]] = {}
    for node in model.graph.node:
        if node.name in pim:
            caps[node.name] = frozenset(DEVICES)
        elif node.op_type in CPU_P_OP_TYPES:
            caps[node.name] = frozenset({"CPU_S", "CPU_P"})
        else:
            caps[node.name] = frozenset({"CPU_S"})
    return caps


# -- the paper's graph counts (Tables 1 and 3) ----------------------------------------------------
def computational_graph(model: onnx.ModelProto) -> nx.DiGraph:
    """The CG (V_c, E_c): one node per ONNX node (attribute ``op_type``), one edge per data
    dependency between two nodes (attribute ``tensors``: the tensors the consumer reads from the
    producer). Graph inputs and initializers are not nodes, so they make no edges."""
    cg = nx.DiGraph()
    producer: dict[str, str] = {}
    for node in model.graph.node:
        cg.add_node(node.name, op_type=node.op_type)
        for out in node.output:
            producer[out] = node.name
    for node in model.graph.node:
        for tensor in node.input:
            if tensor in producer:
                u = producer[tensor]
                if cg.has_edge(u, node.name):
                    cg.edges[u, node.name]["tensors"].add(tensor)
                else:
                    cg.add_edge(u, node.name, tensors={tensor})
    return cg


@dataclass(frozen=True)
class DcgCounts:
    """Table 1 / Table 3 quantities of one model for one device set."""

    devices: tuple[str, ...]
    V_c: int  # CG nodes
    E_c: int  # CG edges (data dependencies between nodes)
    V_d: int  # DCG nodes, sum of |cap(v)| (START and END not counted)
    E_d: int  # dashed DCG edges: (tensor, source device, destination device) copies
    DA: int  # distinct-attribute classes (dtype, bytes, source, destination) of the dashed edges
    capable: Mapping[str, int]  # nodes each device can run
    by_capability: Mapping[frozenset[str], int]  # nodes per capability set
    log3_paths: float  # log3 of the number of execution paths, prod |cap(v)| (§4.4)


def _restrict(caps: Mapping[str, frozenset[str]], devices: Sequence[str],
              model_name: str) -> dict[str, frozenset[str]]:
    unknown = sorted(set(devices) - set(DEVICES))
    if unknown or not devices:
        raise HetsimError(f"devices {list(devices)}: allowed: a non-empty subset of "
                          f"{list(DEVICES)}")
    out = {}
    for v, c in caps.items():
        out[v] = c & frozenset(devices)
        if not out[v]:
            raise HetsimError(f"model {model_name!r}: node {v!r} ({sorted(c)}) can run on none "
                              f"of {list(devices)}")
    return out


def dcg_counts(model: onnx.ModelProto, devices: Iterable[str] = DEVICES,
               caps: Mapping[str, frozenset[str]] | None = None) -> DcgCounts:
    """The paper's counts for ``model`` restricted to ``devices`` (Table 3: all three; Table 1:
    ("CPU_S", "PIM")). ``caps`` defaults to :func:`capability`."""
    import onnx

    devices = tuple(devices)
    caps = _restrict(caps if caps is not None else capability(model), devices, model.graph.name)
    cg = computational_graph(model)
    shapes, dtypes = _tensor_shapes(model)
    consumers: dict[str, set[str]] = defaultdict(set)
    producer: dict[str, str] = {}
    for u, v, tensors in cg.edges(data="tensors"):
        for t in tensors:
            consumers[t].add(v)
            producer[t] = u
    dashed = 0
    classes: set[tuple[int, int, str, str]] = set()
    for t, readers in consumers.items():
        destinations = frozenset().union(*(caps[v] for v in readers))
        copies = [(src, dst) for src in caps[producer[t]] for dst in destinations - {src}]
        if not copies:
            continue
        shape = shapes.get(t)
        if shape is None or not all(isinstance(d, int) for d in shape):
            raise HetsimError(f"model {model.graph.name!r}: tensor {t!r}: shape {shape} is not "
                              "known; allowed: static shapes (onnx shape inference)")
        nbytes = math.prod(int(d) for d in shape) * onnx.helper.tensor_dtype_to_np_dtype(
            dtypes[t]).itemsize
        dashed += len(copies)
        classes.update((dtypes[t], nbytes, src, dst) for src, dst in copies)
    by_cap: dict[frozenset[str], int] = defaultdict(int)
    for c in caps.values():
        by_cap[c] += 1
    log3 = sum(math.log(len(c), 3) for c in caps.values())
    return DcgCounts(devices=devices, V_c=cg.number_of_nodes(), E_c=cg.number_of_edges(),
                     V_d=sum(len(c) for c in caps.values()), E_d=dashed, DA=len(classes),
                     capable={d: sum(d in c for c in caps.values()) for d in devices},
                     by_capability=dict(by_cap), log3_paths=log3)
