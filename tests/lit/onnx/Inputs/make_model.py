"""Builds the ONNX models the lit tests import (run with /usr/bin/python3).

usage: make_model.py NAME OUTPUT.onnx

Every model is built with onnx.helper at test time; nothing binary is
checked in. The malformed models (cycle, missing initializer, ...) are
written without running the checker, since catching them is the importer's
job.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, inits=(), opset=17, extra_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset)] + list(extra_opsets)
    return helper.make_model(graph, opset_imports=opsets, producer_name="ember-lit")


def rng():
    return np.random.default_rng(0)


MODELS = {}


def register(fn):
    MODELS[fn.__name__] = fn
    return fn


@register
def elementwise():
    nodes = [
        helper.make_node("Add", ["x", "y"], ["add"], name="add"),
        helper.make_node("Sub", ["add", "b"], ["sub"], name="sub"),
        helper.make_node("Mul", ["sub", "y"], ["mul"], name="mul"),
        helper.make_node("Div", ["mul", "b"], ["div"], name="div"),
        helper.make_node("Relu", ["div"], ["relu"], name="relu"),
        helper.make_node("Sigmoid", ["relu"], ["sig"], name="sigmoid"),
        helper.make_node("Tanh", ["sig"], ["tanh"], name="tanh"),
        helper.make_node("Identity", ["tanh"], ["out"], name="identity"),
    ]
    return model(nodes, [vi("x", F, ["batch", 4]), vi("y", F, ["batch", 4])],
                 [vi("out", F, ["batch", 4])],
                 [const("b", np.arange(4, dtype=np.float32) + 1)])


@register
def compare_where_cast():
    nodes = [
        helper.make_node("Equal", ["ids", "zero"], ["eq"], name="eq"),
        helper.make_node("Cast", ["ids"], ["idsf"], name="cast", to=F),
        helper.make_node("Where", ["eq", "x", "idsf"], ["out"], name="where"),
        helper.make_node("Cast", ["eq"], ["eqi"], name="cast_bool", to=I64),
    ]
    return model(nodes, [vi("ids", I64, [3, 4]), vi("x", F, [4])],
                 [vi("out", F, [3, 4]), vi("eqi", I64, [3, 4])],
                 [const("zero", np.array(0, dtype=np.int64))])


@register
def gemm():
    r = rng()
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="fc",
                              transB=1, alpha=0.5, beta=2.0)]
    return model(nodes, [vi("x", F, ["batch", 8])], [vi("y", F, ["batch", 3])],
                 [const("w", r.standard_normal((3, 8)).astype(np.float32)),
                  const("c", r.standard_normal((3,)).astype(np.float32))])


@register
def matmul():
    r = rng()
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["y"], name="mm2d"),
        helper.make_node("MatMul", ["s", "w"], ["z"], name="mm3d_2d"),
        helper.make_node("MatMul", ["s", "t"], ["u"], name="mm_batched"),
    ]
    return model(nodes,
                 [vi("x", F, ["batch", 8]), vi("s", F, ["batch", 5, 8]),
                  vi("t", F, ["batch", 8, 2])],
                 [vi("y", F, ["batch", 3]), vi("z", F, ["batch", 5, 3]),
                  vi("u", F, ["batch", 5, 2])],
                 [const("w", r.standard_normal((8, 3)).astype(np.float32))])


@register
def softmax_layernorm():
    r = rng()
    nodes = [
        helper.make_node("Softmax", ["x"], ["sm"], name="softmax", axis=-1),
        helper.make_node("LayerNormalization", ["sm", "scale", "bias"], ["ln"],
                         name="layernorm", axis=-1, epsilon=1e-5),
    ]
    return model(nodes, [vi("x", F, ["batch", 16])], [vi("ln", F, ["batch", 16])],
                 [const("scale", r.standard_normal(16).astype(np.float32)),
                  const("bias", r.standard_normal(16).astype(np.float32))])


@register
def reductions():
    nodes = [
        helper.make_node("ReduceSum", ["x", "axes"], ["sum"], name="rsum",
                         keepdims=0),
        helper.make_node("ReduceMean", ["x"], ["mean"], name="rmean",
                         axes=[1, 2], keepdims=1),
        helper.make_node("ReduceMax", ["x"], ["max"], name="rmax", axes=[-1],
                         keepdims=0),
    ]
    return model(nodes, [vi("x", F, ["batch", 3, 4])],
                 [vi("sum", F, ["batch", 4]), vi("mean", F, ["batch", 1, 1]),
                  vi("max", F, ["batch", 3])],
                 [const("axes", np.array([1], dtype=np.int64))], opset=17)


@register
def shapes():
    nodes = [
        helper.make_node("Transpose", ["x"], ["xt"], name="transpose",
                         perm=[0, 2, 1]),
        helper.make_node("Flatten", ["xt"], ["flat"], name="flatten", axis=1),
        helper.make_node("Unsqueeze", ["flat", "ax1"], ["unsq"], name="unsqueeze"),
        helper.make_node("Squeeze", ["unsq", "ax1"], ["sq"], name="squeeze"),
        helper.make_node("Reshape", ["sq", "shape"], ["re"], name="reshape"),
        helper.make_node("Concat", ["re", "re"], ["cat"], name="concat", axis=1),
        helper.make_node("Slice", ["cat", "starts", "ends", "axes"], ["sl"],
                         name="slice"),
    ]
    return model(nodes, [vi("x", F, ["batch", 3, 4])], [vi("sl", F, ["batch", 2, 4])],
                 [const("ax1", np.array([1], dtype=np.int64)),
                  const("shape", np.array([0, 2, -1], dtype=np.int64)),
                  const("starts", np.array([1, 2], dtype=np.int64)),
                  const("ends", np.array([3, 9223372036854775807], dtype=np.int64)),
                  const("axes", np.array([1, 2], dtype=np.int64))])


@register
def dynamic_reshape():
    # torch's x.view(x.size(0), -1) with a dynamic batch.
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "zero"], ["b"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["b", "ax0"], ["b1"], name="unsqueeze"),
        helper.make_node("Concat", ["b1", "minus1"], ["target"], name="concat",
                         axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="view"),
        helper.make_node("ConstantOfShape", ["target_ones"], ["ones"],
                         name="ones",
                         value=helper.make_tensor("v", F, [1], [1.0])),
        helper.make_node("Expand", ["row", "shape2"], ["rows"], name="expand"),
    ]
    return model(nodes, [vi("x", F, ["batch", 3, 4]), vi("row", F, [1, 12])],
                 [vi("y", F, ["batch", 12]), vi("ones", F, [2, 3]),
                  vi("rows", F, ["batch", 12])],
                 [const("zero", np.array(0, dtype=np.int64)),
                  const("ax0", np.array([0], dtype=np.int64)),
                  const("minus1", np.array([-1], dtype=np.int64)),
                  const("target_ones", np.array([2, 3], dtype=np.int64)),
                  const("shape2", np.array([1, 12], dtype=np.int64))])


@register
def expand_dynamic():
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape", end=1),
        helper.make_node("Concat", ["s", "twelve"], ["target"], name="concat",
                         axis=0),
        helper.make_node("Expand", ["row", "target"], ["rows"], name="expand"),
        helper.make_node("ConstantOfShape", ["target"], ["zeros"], name="zeros"),
    ]
    return model(nodes, [vi("x", F, ["batch", 3]), vi("row", F, [1, 12])],
                 [vi("rows", F, ["batch", 12]), vi("zeros", F, ["batch", 12])],
                 [const("twelve", np.array([12], dtype=np.int64))])


@register
def constants_range():
    nodes = [
        helper.make_node("Constant", [], ["c"], name="const",
                         value=helper.make_tensor("v", F, [2], [1.5, 2.5])),
        helper.make_node("Constant", [], ["start"], name="start", value_int=2),
        helper.make_node("Constant", [], ["limit"], name="limit", value_int=11),
        helper.make_node("Constant", [], ["delta"], name="delta", value_int=3),
        helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="range"),
        helper.make_node("Add", ["x", "c"], ["y"], name="add"),
    ]
    return model(nodes, [vi("x", F, [2])], [vi("y", F, [2]), vi("r", I64, [3])])


@register
def gather():
    r = rng()
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["rows"], name="lookup",
                         axis=0),
        helper.make_node("Gather", ["x", "cols"], ["picked"], name="pick_cols",
                         axis=1),
    ]
    return model(nodes, [vi("ids", I64, ["n"]), vi("x", F, [2, 5])],
                 [vi("rows", F, ["n", 4]), vi("picked", F, [2, 2])],
                 [const("table", r.standard_normal((10, 4)).astype(np.float32)),
                  const("cols", np.array([-1, 0], dtype=np.int64))])


@register
def gather_batched():
    """Run-time dims before the gathered axis, GatherElements, and MatMul
    with broadcast batch dims."""
    r = rng()
    nodes = [
        helper.make_node("Gather", ["x3", "cols"], ["picked"],
                         name="pick_cols", axis=1),
        helper.make_node("GatherElements", ["x", "idx"], ["sel"],
                         name="select", axis=1),
        helper.make_node("MatMul", ["q", "t"], ["left"], name="left_mm"),
        helper.make_node("MatMul", ["t", "w3"], ["right"], name="right_mm"),
    ]
    return model(nodes,
                 [vi("x3", F, ["b", 4, 2]), vi("cols", I64, ["m"]),
                  vi("x", F, ["b", 5]), vi("idx", I64, ["b", 3]),
                  vi("t", F, ["b", 2, 4])],
                 [vi("picked", F, ["b", "m", 2]), vi("sel", F, ["b", 3]),
                  vi("left", F, ["b", 3, 4]), vi("right", F, ["b", 2, 5])],
                 [const("q", r.standard_normal((3, 2)).astype(np.float32)),
                  const("w3", r.standard_normal((1, 4, 5)).astype(np.float32))])


@register
def scatter_nd():
    nodes = [helper.make_node("ScatterND", ["data", "idx", "upd"], ["out"],
                              name="write_rows")]
    return model(nodes, [vi("data", F, [6, 4]), vi("idx", I64, [2, 1]),
                         vi("upd", F, [2, 4])], [vi("out", F, [6, 4])])


@register
def ember_embedding_bag():
    r = rng()
    nodes = [helper.make_node("EmbeddingBag", ["w", "ids", "offsets", "psw"],
                              ["pooled"], name="ebc/user", domain="ember",
                              mode="sum", padding_idx=-1)]
    return model(nodes, [vi("ids", I64, ["n"]), vi("offsets", I64, ["batch"]),
                         vi("psw", F, ["n"])],
                 [vi("pooled", F, ["batch", 4])],
                 [const("w", r.standard_normal((100, 4)).astype(np.float32))],
                 extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def two_bags_and_mlp():
    """Two embedding bags (to shard) beside a dense layer that needs none
    of their results until the final concat: the CUDA schedule overlaps them."""
    r = rng()
    nodes = [
        helper.make_node("EmbeddingBag", ["w0", "ids0", "offsets0"], ["e0"],
                         name="bag0", domain="ember", mode="sum"),
        helper.make_node("EmbeddingBag", ["w1", "ids1", "offsets1"], ["e1"],
                         name="bag1", domain="ember", mode="mean"),
        helper.make_node("Gemm", ["x", "fc_w", "fc_b"], ["h"], name="fc",
                         transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Concat", ["r", "e0", "e1"], ["y"], name="cat",
                         axis=1),
    ]
    return model(nodes, [vi("x", F, ["batch", 8]),
                         vi("ids0", I64, ["n0"]), vi("offsets0", I64, ["batch"]),
                         vi("ids1", I64, ["n1"]), vi("offsets1", I64, ["batch"])],
                 [vi("y", F, ["batch", 12])],
                 [const("w0", r.standard_normal((50, 4)).astype(np.float32)),
                  const("w1", r.standard_normal((60, 4)).astype(np.float32)),
                  const("fc_w", r.standard_normal((4, 8)).astype(np.float32)),
                  const("fc_b", r.standard_normal((4,)).astype(np.float32))],
                 extra_opsets=[helper.make_opsetid("ember", 1)])


def _kjt_ebc_nodes(kjt_inputs, keys, kjt_attrs=None, ebc_attrs=None):
    return [
        helper.make_node("KJT", kjt_inputs, ["kjt"], name="make_kjt", domain="ember",
                         keys=keys, **(kjt_attrs or {})),
        helper.make_node("KJTPermute", ["kjt"], ["kjt_p"], name="ebc/permute",
                         domain="ember", permutation=[1, 0]),
        helper.make_node("EmbeddingBagCollection", ["kjt_p", "t0", "t1"], ["pooled"],
                         name="ebc", domain="ember", feature_tables=[0, 1],
                         pooling=["sum", "sum"], **(ebc_attrs or {})),
    ]


def _kjt_tables():
    r = rng()
    return [const("t0", r.standard_normal((10, 4)).astype(np.float32)),
            const("t1", r.standard_normal((20, 2)).astype(np.float32))]


@register
def ember_kjt_ebc():
    """A weighted KJT of graph inputs (promoted to one KJT argument; its lengths are also
    read directly), permuted, into an EmbeddingBagCollection."""
    nodes = _kjt_ebc_nodes(["f.values", "f.lengths", "f.weights"], ["a", "b"])
    nodes.append(helper.make_node("Cast", ["f.lengths"], ["lf"], name="cast", to=F))
    return model(nodes, [vi("f.values", I64, ["n"]), vi("f.lengths", I64, [6]),
                         vi("f.weights", F, ["n"])],
                 [vi("pooled", F, [3, 6]), vi("lf", F, [6])], _kjt_tables(),
                 extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_kjt_offsets():
    """A KJT made from offsets (not promoted to a KJT argument)."""
    nodes = _kjt_ebc_nodes(["vals", "offs"], ["a", "b"], {"offsets": 1})
    return model(nodes, [vi("vals", I64, ["n"]), vi("offs", I64, [7])],
                 [vi("pooled", F, [3, 6])], _kjt_tables(),
                 extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_kjt_table_names():
    """The exporter's TorchRec table names and module path on the collection."""
    nodes = _kjt_ebc_nodes(["v", "l"], ["a", "b"], ebc_attrs={
        "table_names": ["t_b", "t_a"], "module": "sparse_arch.embedding_bag_collection"})
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [6])], [vi("pooled", F, [3, 6])],
                 _kjt_tables(), extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_kjt_bad_table_names():
    nodes = _kjt_ebc_nodes(["v", "l"], ["a", "b"], ebc_attrs={"table_names": ["t", "t"]})
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [6])], [vi("pooled", F, [3, 6])],
                 _kjt_tables(), extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_kjt_repeated_key():
    nodes = _kjt_ebc_nodes(["v", "l"], ["a", "a"])
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [6])], [vi("pooled", F, [3, 6])],
                 _kjt_tables(), extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_kjt_bad_lengths():
    nodes = _kjt_ebc_nodes(["v", "l"], ["a", "b"])
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [5])], [vi("pooled", F, [3, 6])],
                 _kjt_tables(), extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_ebc_bad_feature_tables():
    nodes = _kjt_ebc_nodes(["v", "l"], ["a", "b"])
    nodes[2] = helper.make_node("EmbeddingBagCollection", ["kjt_p", "t0", "t1"], ["pooled"],
                                name="ebc", domain="ember", feature_tables=[0, 2],
                                pooling=["sum", "sum"])
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [6])], [vi("pooled", F, [3, 6])],
                 _kjt_tables(), extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_ebc_weighted_mean():
    nodes = _kjt_ebc_nodes(["v", "l", "w"], ["a", "b"])
    nodes[2] = helper.make_node("EmbeddingBagCollection", ["kjt_p", "t0", "t1"], ["pooled"],
                                name="ebc", domain="ember", feature_tables=[0, 1],
                                pooling=["sum", "mean"])
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [6]), vi("w", F, ["n"])],
                 [vi("pooled", F, [3, 6])], _kjt_tables(),
                 extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_kjt_split():
    """KJTSplit into parts of 1 and 2 keys; the second part into a collection."""
    nodes = [
        helper.make_node("KJT", ["x.values", "x.lengths"], ["kjt"], name="make_kjt",
                         domain="ember", keys=["a", "b", "c"]),
        helper.make_node("KJTSplit", ["kjt"], ["p0", "p1"], name="split", domain="ember",
                         key_counts=[1, 2]),
        helper.make_node("EmbeddingBagCollection", ["p1", "t0", "t1"], ["pooled"], name="ebc",
                         domain="ember", feature_tables=[1, 0], pooling=["mean", "max"]),
    ]
    return model(nodes, [vi("x.values", I64, ["n"]), vi("x.lengths", I64, [6])],
                 [vi("pooled", F, [2, 6])], _kjt_tables(),
                 extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_kjt_split_bad_counts():
    nodes = [
        helper.make_node("KJT", ["v", "l"], ["kjt"], name="make_kjt", domain="ember",
                         keys=["a", "b", "c"]),
        helper.make_node("KJTSplit", ["kjt"], ["p0", "p1"], name="split", domain="ember",
                         key_counts=[1, 1]),
        helper.make_node("EmbeddingBagCollection", ["p1", "t0"], ["pooled"], name="ebc",
                         domain="ember", feature_tables=[0], pooling=["sum"]),
    ]
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [6])], [vi("pooled", F, [2, 4])],
                 _kjt_tables()[:1], extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_keyed_get():
    """KeyedTensorGet of a collection's output: key "a" (after the permute: columns 4..6)."""
    nodes = _kjt_ebc_nodes(["v", "l"], ["a", "b"])
    nodes.append(helper.make_node("KeyedTensorGet", ["pooled"], ["a_cols"], name="get_a",
                                  domain="ember", key="a", start=4, dim=2))
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [6])], [vi("a_cols", F, [3, 2])],
                 _kjt_tables(), extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_keyed_get_bad_columns():
    nodes = _kjt_ebc_nodes(["v", "l"], ["a", "b"])
    nodes.append(helper.make_node("KeyedTensorGet", ["pooled"], ["a_cols"], name="get_a",
                                  domain="ember", key="a", start=0, dim=2))
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [6])], [vi("a_cols", F, [3, 2])],
                 _kjt_tables(), extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_kjt_into_onnx_op():
    nodes = [helper.make_node("KJT", ["v", "l"], ["kjt"], name="make_kjt", domain="ember",
                              keys=["a"]),
             helper.make_node("Relu", ["kjt"], ["r"], name="relu")]
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [3])], [vi("r", F, [3])],
                 extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_kjt_as_output():
    nodes = [helper.make_node("KJT", ["v", "l"], ["kjt"], name="make_kjt", domain="ember",
                              keys=["a"])]
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [3])], [vi("kjt", I64, [3])],
                 extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def ember_ebc_not_a_kjt():
    nodes = [helper.make_node("EmbeddingBagCollection", ["v", "t0"], ["pooled"], name="ebc",
                              domain="ember", feature_tables=[0], pooling=["sum"])]
    return model(nodes, [vi("v", I64, ["n"])], [vi("pooled", F, [3, 4])], _kjt_tables()[:1],
                 extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def mlp():
    """A DLRM-like dense arch: bottom MLP, interaction by concat, top MLP."""
    r = rng()
    def w(*shape):
        return r.standard_normal(shape).astype(np.float32)
    nodes = [
        helper.make_node("Gemm", ["dense", "w0", "b0"], ["h0"], name="bot/0", transB=1),
        helper.make_node("Relu", ["h0"], ["a0"], name="bot/relu0"),
        helper.make_node("Gemm", ["a0", "w1", "b1"], ["h1"], name="bot/1", transB=1),
        helper.make_node("Relu", ["h1"], ["a1"], name="bot/relu1"),
        helper.make_node("EmbeddingBag", ["t0", "ids", "offsets"], ["e0"],
                         name="sparse/t0", domain="ember", mode="mean"),
        helper.make_node("Concat", ["a1", "e0"], ["z"], name="interact", axis=1),
        helper.make_node("Gemm", ["z", "w2", "b2"], ["h2"], name="top/0", transB=1),
        helper.make_node("Sigmoid", ["h2"], ["p"], name="top/sigmoid"),
    ]
    return model(nodes,
                 [vi("dense", F, ["batch", 13]), vi("ids", I64, ["n"]),
                  vi("offsets", I64, ["batch"])],
                 [vi("p", F, ["batch", 1])],
                 [const("w0", w(32, 13)), const("b0", w(32)),
                  const("w1", w(8, 32)), const("b1", w(8)),
                  const("t0", w(50, 8)),
                  const("w2", w(1, 16)), const("b2", w(1))],
                 extra_opsets=[helper.make_opsetid("ember", 1)])


@register
def folding_slice_write():
    """torch's index graph for z[:, 2:4] = u, folded at import time."""
    rows = np.arange(4, dtype=np.int64).reshape(4, 1)
    cols = np.array([2, 3], dtype=np.int64)
    nodes = [
        # ConstantOfShape -> Mul -> Equal -> Where: torch's broadcast shape.
        helper.make_node("ConstantOfShape", ["two"], ["ones"], name="ones",
                         value=helper.make_tensor("v", I64, [1], [1])),
        helper.make_node("Mul", ["ones", "minus1"], ["neg"], name="neg"),
        helper.make_node("Equal", ["target", "neg"], ["is_neg"], name="is_neg"),
        helper.make_node("Where", ["is_neg", "ones", "target"], ["shape"],
                         name="shape"),
        helper.make_node("Expand", ["rows", "shape"], ["r"], name="expand_rows"),
        helper.make_node("Expand", ["cols", "shape"], ["c"], name="expand_cols"),
        helper.make_node("Unsqueeze", ["r", "ax"], ["r1"], name="unsq_rows"),
        helper.make_node("Unsqueeze", ["c", "ax"], ["c1"], name="unsq_cols"),
        helper.make_node("Concat", ["r1", "c1"], ["idx"], name="indices", axis=-1),
        helper.make_node("ScatterND", ["z", "idx", "u"], ["out"], name="slice_write"),
        helper.make_node("Less", ["a", "b"], ["lt"], name="less"),
    ]
    return model(nodes, [vi("z", F, [4, 6]), vi("u", F, [4, 2]),
                         vi("a", F, [4]), vi("b", F, [4])],
                 [vi("out", F, [4, 6]), vi("lt", TensorProto.BOOL, [4])],
                 [const("two", np.array([2], dtype=np.int64)),
                  const("minus1", np.array(-1, dtype=np.int64)),
                  const("target", np.array([4, 2], dtype=np.int64)),
                  const("rows", rows), const("cols", cols),
                  const("ax", np.array([-1], dtype=np.int64))])


@register
def embedding_bag_loop():
    """The Loop torch.onnx.export emits for nn.EmbeddingBag(mode="sum")."""
    r = rng()
    B = TensorProto.BOOL
    body = helper.make_graph(
        [helper.make_node("Gather", ["bounds", "i"], ["start"], name="bag/start", axis=0),
         helper.make_node("Gather", ["ends", "i"], ["end"], name="bag/end", axis=0),
         helper.make_node("Unsqueeze", ["start", "ax0"], ["start1"], name="bag/start1"),
         helper.make_node("Unsqueeze", ["end", "ax0"], ["end1"], name="bag/end1"),
         helper.make_node("Slice", ["ids", "start1", "end1", "ax0"], ["bag_ids"],
                          name="bag/ids"),
         helper.make_node("Gather", ["weight", "bag_ids"], ["rows"], name="bag/rows",
                          axis=0),
         helper.make_node("ReduceSum", ["rows", "ax0"], ["pooled"], name="bag/sum",
                          keepdims=0),
         helper.make_node("Cast", ["true_i64"], ["cond_out"], name="bag/cond", to=B)],
        "bag_body",
        [vi("i", I64, []), vi("cond_in", B, [])],
        [vi("cond_out", B, []), vi("pooled", F, [4])])
    nodes = [
        helper.make_node("Shape", ["ids"], ["ids_shape"], name="n_shape"),
        helper.make_node("Gather", ["ids_shape", "zero"], ["n"], name="n", axis=0),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"], name="n1"),
        helper.make_node("Concat", ["offsets", "n1"], ["bounds"], name="bounds", axis=0),
        helper.make_node("Slice", ["bounds", "one", "big", "ax0"], ["ends"], name="ends"),
        helper.make_node("Shape", ["ends"], ["ends_shape"], name="b_shape"),
        helper.make_node("Gather", ["ends_shape", "zero"], ["b"], name="b", axis=0),
        helper.make_node("Loop", ["b", "true"], ["pooled_all"], name="embedding_bag",
                         body=body),
    ]
    return model(nodes, [vi("ids", I64, ["n"]), vi("offsets", I64, ["batch"])],
                 [vi("pooled_all", F, ["batch", 4])],
                 [const("weight", r.standard_normal((10, 4)).astype(np.float32)),
                  const("zero", np.array(0, dtype=np.int64)),
                  const("one", np.array([1], dtype=np.int64)),
                  const("big", np.array([9223372036854775807], dtype=np.int64)),
                  const("ax0", np.array([0], dtype=np.int64)),
                  const("true", np.array(True)),
                  const("true_i64", np.array(1, dtype=np.int64))])


# --- malformed models --------------------------------------------------------

@register
def missing_initializer():
    nodes = [helper.make_node("Add", ["x", "bias"], ["y"], name="add_bias")]
    return model(nodes, [vi("x", F, [4])], [vi("y", F, [4])])


@register
def cycle():
    nodes = [
        helper.make_node("Relu", ["b"], ["a"], name="first"),
        helper.make_node("Relu", ["a"], ["b"], name="second"),
    ]
    return model(nodes, [vi("x", F, [4])], [vi("b", F, [4])])


@register
def unknown_domain():
    nodes = [helper.make_node("Frobnicate", ["x"], ["y"], name="frob",
                              domain="com.example")]
    return model(nodes, [vi("x", F, [4])], [vi("y", F, [4])],
                 extra_opsets=[helper.make_opsetid("com.example", 1)])


@register
def unsupported_op():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Erf", ["r"], ["y"], name="my_erf")]
    return model(nodes, [vi("x", F, [4])], [vi("y", F, [4])])


@register
def unsupported_attribute():
    nodes = [helper.make_node("Gather", ["x", "i"], ["y"], name="g", axis=0),
             helper.make_node("ScatterND", ["x", "i2", "u"], ["z"],
                              name="scatter_add", reduction="add")]
    return model(nodes, [vi("x", F, [4, 2]), vi("i", I64, [3]),
                         vi("i2", I64, [1, 1]), vi("u", F, [1, 2])],
                 [vi("y", F, [3, 2]), vi("z", F, [4, 2])])


@register
def wrong_types():
    nodes = [helper.make_node("Add", ["x", "ids"], ["y"], name="add_mixed")]
    return model(nodes, [vi("x", F, [4]), vi("ids", I64, [4])], [vi("y", F, [4])])


@register
def bad_initializer_data():
    t = TensorProto(name="w", data_type=F, dims=[2, 3])
    t.float_data.extend([1.0, 2.0])  # 2 values for 6 elements
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    return model(nodes, [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], [t])


@register
def loop():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "one"], ["acc_out"])],
        "body",
        [vi("i", I64, []), vi("cond_in", TensorProto.BOOL, []), vi("acc_in", F, [1])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", F, [1])],
        [const("one", np.array([1.0], dtype=np.float32))])
    nodes = [helper.make_node("Loop", ["n", "c", "x"], ["y"], name="bag_loop",
                              body=body)]
    return model(nodes, [vi("n", I64, []), vi("c", TensorProto.BOOL, []),
                         vi("x", F, [1])], [vi("y", F, [1])], opset=13)


@register
def old_opset():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [vi("x", F, [4])], [vi("y", F, [4])], opset=9)


@register
def external_data():
    """gemm with its weights in OUT.onnx.data (saved as external data)."""
    return gemm()


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit("usage: make_model.py {%s} OUT.onnx" % "|".join(sorted(MODELS)))
    m = MODELS[sys.argv[1]]()
    if sys.argv[1] == "external_data":
        import os
        onnx.save_model(m, sys.argv[2], save_as_external_data=True,
                        all_tensors_to_one_file=True,
                        location=os.path.basename(sys.argv[2]) + ".data",
                        size_threshold=0)
        return
    with open(sys.argv[2], "wb") as f:
        f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
