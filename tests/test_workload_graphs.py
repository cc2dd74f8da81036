"""Workloads to and from networkx graphs: every op comes back equal (shapes, counts, layers, network
inputs), a graph written by hand builds the workload its YAML would, bad graphs give one line naming
the node and the field."""

from __future__ import annotations

import networkx as nx
import pytest
from helpers import with_plugin

from hetsim.errors import HetsimError
from hetsim.workload import from_networkx, load_workload, to_networkx, workload_from_dict


@pytest.mark.parametrize("name", ["alexnet", "googlenet", "resnet50", "synthnet", "mobilenet",
                                  *with_plugin("hope", "squeezenet-hope"),
                                  *with_plugin("pim", "bert-small-p8")])
def test_round_trip_keeps_every_op(name):
    w = load_workload(name)
    g = to_networkx(w)
    assert list(g.nodes) == [op.name for op in w.ops]
    assert g.number_of_edges() == sum(len(op.inputs) for op in w.ops)
    for op in w.ops:
        assert g.nodes[op.name]["macs"] == op.macs and g.nodes[op.name]["layer"] == op.layer
        for k, src in enumerate(op.inputs):
            assert g.edges[src, op.name] == {"bytes": w.op(src).output_bytes, "index": k}
    back = from_networkx(g)
    assert back.ops == w.ops                               # every field of every op
    assert back.inputs == w.inputs and back.layer_kinds == w.layer_kinds and back.name == w.name
    assert (back.cut_bytes_array() == w.cut_bytes_array()).all()
    # the plain attributes alone (no spec, no Op), as another tool keeps them: generic ops with the
    # same counts and the same tensors between them
    bare = nx.DiGraph(g)
    for v in bare.nodes:
        del bare.nodes[v]["spec"], bare.nodes[v]["op"]
    plain = from_networkx(bare)
    for a, b in zip(plain.ops, w.ops, strict=True):
        assert (a.name, a.macs, a.flops, a.input_bytes, a.output_bytes, a.weight_bytes, a.dims) == \
            (b.name, b.macs, b.flops, b.input_bytes, b.output_bytes, b.weight_bytes, b.dims)


def test_a_graph_written_by_hand_builds_what_its_yaml_would():
    g = nx.DiGraph(input={"h": 32, "w": 32, "c": 3})
    g.add_node("c1", kind="conv", kernel=3, pad=1, out_c=16)
    g.add_node("c2", kind="conv", kernel=3, pad=1, out_c=16)
    g.add_node("c3", kind="conv", kernel=1, out_c=8)
    g.add_node("cat", kind="concat")
    g.add_edges_from([("c1", "c2"), ("c1", "c3")])
    g.add_edge("c3", "cat", index=1)
    g.add_edge("c2", "cat", index=0)
    w = from_networkx(g, "hand")
    yaml_like = workload_from_dict({"schema": 1, "name": "hand", "input": {"h": 32, "w": 32, "c": 3},
                                    "layer_kinds": ["conv", "dw", "fc", "matmul"], "ops": [
                                        {"name": "c1", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 16},
                                        {"name": "c2", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 16},
                                        {"name": "c3", "kind": "conv", "kernel": 1, "out_c": 8,
                                         "inputs": ["c1"]},
                                        {"name": "cat", "kind": "concat", "inputs": ["c2", "c3"]}]})
    assert w.ops == yaml_like.ops
    assert w.op("cat").out_shape.c == 24 and w.op("cat").inputs == ("c2", "c3")   # edge index order


@pytest.mark.parametrize(("build", "fragment"), [
    (lambda g: g.add_edge("b", "a"), "networkx graph 'g': not a DAG: cycle a -> b -> a"),
    (lambda g: g.nodes["b"].pop("kind"), "node 'b': no 'kind'"),
    (lambda g: g.nodes["b"].update(kernel=0), "networkx graph 'g': node 'b': kernel: must be a positive int"),
    (lambda g: g.nodes["b"].update(kind="convv"), "ops[1] (b)"),
    (lambda g: g.nodes["b"].update(spec={"kind": "relu", "inputs": ["x"]}),
     "node 'b': its inputs ['x'] disagree with its in-edges from ['a']"),
    (lambda g: g.graph.pop("input"), "no network input"),
])
def test_bad_graphs_name_the_node_and_field(build, fragment):
    g = nx.DiGraph(name="g", input={"h": 8, "w": 8, "c": 4})
    g.add_node("a", kind="conv", kernel=3, pad=1, out_c=4)
    g.add_node("b", kind="conv", kernel=3, pad=1, out_c=4)
    g.add_edge("a", "b")
    build(g)
    with pytest.raises(HetsimError) as e:
        from_networkx(g)
    assert fragment in str(e.value) and "\n" not in str(e.value)
