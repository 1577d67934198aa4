"""Builds the ONNX models of tests/lit/onnx/ember-sequence.test (run with /usr/bin/python3).

usage: make_sequence_model.py NAME OUTPUT.onnx

The ember domain's sequence-embedding nodes: EmbeddingCollection, JaggedValues,
JaggedOffsets, JaggedToPadded (docs/frontend-onnx.md), and malformed variants of each.
Nothing binary is checked in; the malformed models are written without the checker.
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
EMBER = [helper.make_opsetid("ember", 1)]


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", 17)] + EMBER
    return helper.make_model(graph, opset_imports=opsets, producer_name="ember-lit")


def tables(dtype=np.float32):
    r = np.random.default_rng(0)
    return [numpy_helper.from_array(r.standard_normal((10, 4)).astype(dtype), "t0"),
            numpy_helper.from_array(r.standard_normal((20, 2)).astype(np.float32), "t1")]


def kjt(parts=("x.values", "x.lengths"), keys=("c", "a", "b")):
    return helper.make_node("KJT", list(parts), ["kjt"], name="make_kjt", domain="ember",
                            keys=list(keys))


def ec(inputs=("kjt_p", "t0", "t1"), outputs=("ja", "jb", "jc"), **attrs):
    attrs.setdefault("feature_tables", [0, 0, 1])
    return helper.make_node("EmbeddingCollection", list(inputs), list(outputs), name="ec",
                            domain="ember", **attrs)


PERMUTE = helper.make_node("KJTPermute", ["kjt"], ["kjt_p"], name="permute", domain="ember",
                           permutation=[1, 2, 0])
KJT_INPUTS = [vi("x.values", I64, ["n"]), vi("x.lengths", I64, ["3*B"])]

MODELS = {}


def register(fn):
    MODELS[fn.__name__] = fn
    return fn


def _readers(a="ja", b="jb", c="jc", padded_attrs=None):
    padded_attrs = {"max_length": 3, "padding": -1.5} if padded_attrs is None else padded_attrs
    return [
        helper.make_node("JaggedValues", [a], ["va"], name="values_a", domain="ember"),
        helper.make_node("JaggedOffsets", [b], ["ob"], name="offsets_b", domain="ember"),
        helper.make_node("JaggedToPadded", [c], ["pc"], name="padded_c", domain="ember",
                         **padded_attrs),
    ]


def _outputs(batch="B"):
    return [vi("va", F, ["n_a", 4]), vi("ob", I64, [None]), vi("pc", F, [batch, 3, 2])]


@register
def ec_model():
    """A KJT input (keys c, a, b) permuted to the tables' order a, b (table t0) and c (table
    t1, dim 2), with TorchRec's table names and module path; each jagged output read once."""
    nodes = [kjt(), PERMUTE,
             ec(table_names=["t_ab", "t_c"], module="sparse.ec")] + _readers()
    return model(nodes, KJT_INPUTS, _outputs(), tables())


@register
def ec_static_batch():
    """Static lengths (2 keys x batch 3): the offsets and the padded rows get a static B."""
    nodes = [kjt(("v", "l"), ("a", "c")),
             ec(("kjt", "t0", "t1"), ("ja", "jc"), feature_tables=[0, 1]),
             helper.make_node("JaggedOffsets", ["ja"], ["oa"], name="offsets_a", domain="ember"),
             helper.make_node("JaggedToPadded", ["jc"], ["pc"], name="padded_c",
                              domain="ember", max_length=5)]
    return model(nodes, [vi("v", I64, ["n"]), vi("l", I64, [6])],
                 [vi("oa", I64, [4]), vi("pc", F, [3, 5, 2])], tables())


# ----------------------------------------------------------------- malformed nodes
def _bad_ec(**changes):
    """The ec_model graph with the collection node replaced by ``ec(**changes)``."""
    nodes = [kjt(), PERMUTE, ec(**changes)] + _readers()
    return model(nodes, KJT_INPUTS, _outputs(), tables())


@register
def ec_not_a_kjt():
    return _bad_ec(inputs=("x.values", "t0", "t1"))


@register
def ec_no_input():
    return _bad_ec(inputs=("", "t0", "t1"))


@register
def ec_weighted():
    nodes = [kjt(("x.values", "x.lengths", "x.weights")), PERMUTE, ec()] + _readers()
    return model(nodes, KJT_INPUTS + [vi("x.weights", F, ["n"])], _outputs(), tables())


@register
def ec_no_tables():
    return _bad_ec(inputs=("kjt_p",), feature_tables=[0, 0, 0])


@register
def ec_no_feature_tables():
    node = ec()
    del node.attribute[:]
    nodes = [kjt(), PERMUTE, node] + _readers()
    return model(nodes, KJT_INPUTS, _outputs(), tables())


@register
def ec_feature_tables_count():
    return _bad_ec(feature_tables=[0, 1])


@register
def ec_feature_tables_floats():
    return _bad_ec(feature_tables=[0.0, 0.0, 1.0])


@register
def ec_feature_table_out_of_range():
    return _bad_ec(feature_tables=[0, 2, 1])


@register
def ec_table_unused():
    return _bad_ec(feature_tables=[0, 0, 0])


@register
def ec_outputs_count():
    nodes = [kjt(), PERMUTE, ec(outputs=("ja", "jb"))] + _readers(c="jb")
    return model(nodes, KJT_INPUTS, [vi("va", F, ["n_a", 4]), vi("ob", I64, [None]),
                                     vi("pc", F, ["B", 3, 4])], tables())


@register
def ec_table_f16():
    nodes = [kjt(), PERMUTE, ec()] + _readers()
    return model(nodes, KJT_INPUTS, _outputs(), tables(np.float16))


@register
def ec_table_is_a_kjt():
    return _bad_ec(inputs=("kjt_p", "t0", "kjt"))


@register
def ec_table_names_count():
    return _bad_ec(table_names=["t_ab"])


@register
def ec_table_names_repeated():
    return _bad_ec(table_names=["t", "t"])


@register
def ec_module_not_a_string():
    return _bad_ec(module=["sparse.ec"])


@register
def ec_pooling_attribute():
    return _bad_ec(pooling=["sum", "sum"])


def _bad_reader(readers, outputs=None):
    nodes = [kjt(), PERMUTE, ec()] + readers
    return model(nodes, KJT_INPUTS, outputs or _outputs(), tables())


@register
def values_of_a_tensor():
    return _bad_reader([helper.make_node("JaggedValues", ["x.values"], ["va"], name="values_a",
                                         domain="ember")] + _readers()[1:])


@register
def values_two_inputs():
    return _bad_reader([helper.make_node("JaggedValues", ["ja", "jb"], ["va"], name="values_a",
                                         domain="ember")] + _readers()[1:])


@register
def offsets_of_a_kjt():
    return _bad_reader([_readers()[0], helper.make_node(
        "JaggedOffsets", ["kjt"], ["ob"], name="offsets_b", domain="ember"), _readers()[2]])


@register
def offsets_two_outputs():
    return _bad_reader([_readers()[0], helper.make_node(
        "JaggedOffsets", ["jb"], ["ob", "extra"], name="offsets_b", domain="ember"),
        _readers()[2]])


@register
def padded_no_max_length():
    return _bad_reader(_readers(padded_attrs={"padding": 0.0}))


@register
def padded_zero_length():
    return _bad_reader(_readers(padded_attrs={"max_length": 0}))


@register
def padded_int_padding():
    return _bad_reader(_readers(padded_attrs={"max_length": 3, "padding": 1}))


@register
def padded_unknown_attribute():
    return _bad_reader(_readers(padded_attrs={"max_length": 3, "desired_length": 3}))


@register
def jagged_as_output():
    return _bad_reader(_readers(), [vi("va", F, ["n_a", 4]), vi("ob", I64, [None]),
                                    vi("jc", F, ["n_c", 2])])


@register
def jagged_into_onnx_op():
    readers = _readers()
    readers[0] = helper.make_node("Relu", ["ja"], ["va"], name="relu")
    return _bad_reader(readers)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit("usage: make_sequence_model.py {%s} OUT.onnx" % "|".join(sorted(MODELS)))
    with open(sys.argv[2], "wb") as f:
        f.write(MODELS[sys.argv[1]]().SerializeToString())


if __name__ == "__main__":
    main()
