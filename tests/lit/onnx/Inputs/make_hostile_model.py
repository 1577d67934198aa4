"""Builds ONNX models that declare huge sizes (run with /usr/bin/python3).

usage: make_hostile_model.py NAME OUTPUT.onnx

The importer must refuse each with an error naming the tensor or node
before building anything for it (docs/reliability.md, "Limits on declared
sizes"); several are the regression inputs of fuzz_onnx_import findings.
The models are written without the checker: some of them it would refuse
first, and the importer must not rely on it (--skip-onnx-checker).
"""
import sys

from onnx import TensorProto, helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def save(graph, path, opset=17):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def initializer_dims(path):
    # Dims whose product overflows int64, with no data: finding 4.
    w = TensorProto()
    w.name = "w"
    w.data_type = F
    w.dims.extend([1 << 40, 1 << 40])
    g = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g",
                          [], [helper.make_tensor_value_info("y", F, None)], [w])
    save(g, path)


def input_dims(path):
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", F, [1 << 30, 1 << 30])],
        [helper.make_tensor_value_info("y", F, [1 << 30, 1 << 30])])
    save(g, path)


def reshape_target(path):
    # A constant Reshape target of 2^80 elements: finding 6.
    shape = helper.make_tensor("shape", I64, [2], [1 << 40, 1 << 40])
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="big_reshape")],
        "g", [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, None)], [shape])
    save(g, path)


def expand_output(path):
    # Expand to [2^30, 2^30]: the node's output is refused (finding 8).
    shape = helper.make_tensor("shape", I64, [2], [1 << 30, 1 << 30])
    g = helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["y"], name="big_expand")],
        "g", [helper.make_tensor_value_info("x", F, [1, 1])],
        [helper.make_tensor_value_info("y", F, None)], [shape])
    save(g, path)


def scatternd_rank0(path):
    # ScatterND on rank-0 data: finding 5.
    g = helper.make_graph(
        [helper.make_node("ScatterND", ["data", "idx", "upd"], ["y"],
                          name="scatter0")], "g",
        [helper.make_tensor_value_info("data", F, []),
         helper.make_tensor_value_info("idx", I64, [1, 1]),
         helper.make_tensor_value_info("upd", F, [1])],
        [helper.make_tensor_value_info("y", F, None)])
    save(g, path)


def slice_huge_step(path):
    # Slice x[1:3:2^63-1]: one element; ceil(2 / step) overflowed (finding 11).
    starts = helper.make_tensor("starts", I64, [1], [1])
    ends = helper.make_tensor("ends", I64, [1], [3])
    axes = helper.make_tensor("axes", I64, [1], [0])
    steps = helper.make_tensor("steps", I64, [1], [(1 << 63) - 1])
    g = helper.make_graph(
        [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"],
                          name="huge_step")], "g",
        [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, None)], [starts, ends, axes, steps])
    save(g, path)


MODELS = {
    "initializer_dims": initializer_dims,
    "input_dims": input_dims,
    "reshape_target": reshape_target,
    "expand_output": expand_output,
    "scatternd_rank0": scatternd_rank0,
    "slice_huge_step": slice_huge_step,
}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit("usage: make_hostile_model.py {%s} OUT.onnx" % "|".join(MODELS))
    MODELS[sys.argv[1]](sys.argv[2])
