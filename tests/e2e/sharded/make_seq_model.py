"""A sequence-embedding model for the sharded end-to-end test: TorchRec's
EmbeddingCollection over a keyed jagged tensor input, written directly in
ONNX (Ember's `ember` domain: KJT, EmbeddingCollection, JaggedToPadded)
with a symbolic batch.

Features hist, query, cat; tables t_text (50 x 8) read by hist and query (a
table shared by two features) and t_cat (30 x 4) read by cat. Each feature's
rows are padded (or truncated) to 4 ids: outputs "hist" [B, 4, 8], "query"
[B, 4, 8], "cat" [B, 4, 4] (padding -1), and "score" [B, 1] = the sum over
ids and columns of hist's padded rows times w, plus b (dense math after the
sequence lookups).
Inputs: s.values [N] and key-major s.lengths [3 * B] (int64): bags of 0 to
6 ids (longer than the padding, and every cat bag of every fourth sample
empty), ids at the table edges.
The expected outputs are computed here with numpy (TorchRec's
EmbeddingCollection + JaggedTensor.to_padded_dense semantics).

usage: make_seq_model.py OUTDIR [--batch B] [--seed S]
writes OUTDIR/model.onnx, OUTDIR/<input>.npy, OUTDIR/io.txt and
OUTDIR/expected_<output>.npy
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KEYS = ["hist", "query", "cat"]
TABLES = [("t_text", 50, 8), ("t_cat", 30, 4)]
FEATURE_TABLES = [0, 0, 1]
MAX_LENGTH = 4
PADDING = [0.0, 0.0, -1.0]


def make_inputs(batch, gen):
    lengths = gen.integers(0, 7, size=(len(KEYS), batch))
    lengths[2, ::4] = 0
    values = []
    for k, t in enumerate(FEATURE_TABLES):
        rows = TABLES[t][1]
        for b in range(batch):
            ids = gen.integers(0, rows, size=lengths[k, b])
            if ids.size and b == batch - 1:
                ids[0], ids[-1] = 0, rows - 1
            values.append(ids)
    return (np.concatenate(values).astype(np.int64),
            lengths.reshape(-1).astype(np.int64))


def reference(values, lengths, tables, w, bias):
    batch = lengths.size // len(KEYS)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    padded = []
    for k, t in enumerate(FEATURE_TABLES):
        dim = TABLES[t][2]
        out = np.full((batch, MAX_LENGTH, dim), PADDING[k], np.float32)
        for b in range(batch):
            ids = values[offsets[k * batch + b]:offsets[k * batch + b + 1]]
            ids = ids[:MAX_LENGTH]
            out[b, :ids.size] = tables[t][ids]
        padded.append(out)
    summed = padded[0].astype(np.float64).sum(axis=1)
    score = summed @ w.T.astype(np.float64) + bias
    return padded + [score.astype(np.float32)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir")
    parser.add_argument("--batch", type=int, default=13)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    gen = np.random.default_rng(args.seed)
    tables = [gen.standard_normal((rows, dim)).astype(np.float32)
              for _, rows, dim in TABLES]
    w = (gen.standard_normal((1, TABLES[0][2])) / 4).astype(np.float32)
    bias = np.array([0.1], np.float32)
    nodes = [
        helper.make_node("KJT", ["s.values", "s.lengths"], ["kjt"],
                         name="features", domain="ember", keys=KEYS),
        helper.make_node("EmbeddingCollection",
                         ["kjt"] + [name for name, _, _ in TABLES],
                         ["j_" + k for k in KEYS], name="sparse.ec",
                         domain="ember", feature_tables=FEATURE_TABLES,
                         table_names=[name for name, _, _ in TABLES],
                         module="sparse.ec"),
    ]
    for k, key in enumerate(KEYS):
        nodes.append(helper.make_node(
            "JaggedToPadded", ["j_" + key], [key], name="pad_" + key,
            domain="ember", max_length=MAX_LENGTH, padding=PADDING[k]))
    nodes += [
        helper.make_node("ReduceSum", ["hist", "axis1"], ["summed"],
                         name="sum_ids", keepdims=0),
        helper.make_node("Gemm", ["summed", "w", "bias"], ["score"],
                         name="over", transB=1),
    ]
    inits = [numpy_helper.from_array(t, name)
             for t, (name, _, _) in zip(tables, TABLES)]
    inits += [numpy_helper.from_array(w, "w"),
              numpy_helper.from_array(bias, "bias"),
              numpy_helper.from_array(np.array([1], np.int64), "axis1")]
    outputs = [helper.make_tensor_value_info(
        key, TensorProto.FLOAT,
        ["batch", MAX_LENGTH, TABLES[FEATURE_TABLES[k]][2]])
        for k, key in enumerate(KEYS)]
    outputs.append(helper.make_tensor_value_info("score", TensorProto.FLOAT,
                                                 ["batch", 1]))
    graph = helper.make_graph(
        nodes, "seq_model",
        [helper.make_tensor_value_info("s.values", TensorProto.INT64, ["n"]),
         helper.make_tensor_value_info("s.lengths", TensorProto.INT64,
                                       ["keys_x_batch"])],
        outputs, inits)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("ember", 1)])
    onnx.save(model, os.path.join(args.outdir, "model.onnx"))
    values, lengths = make_inputs(args.batch, gen)
    np.save(os.path.join(args.outdir, "s.values.npy"), values)
    np.save(os.path.join(args.outdir, "s.lengths.npy"), lengths)
    names = KEYS + ["score"]
    for name, want in zip(names, reference(values, lengths, tables, w, bias)):
        np.save(os.path.join(args.outdir, "expected_%s.npy" % name), want)
    with open(os.path.join(args.outdir, "io.txt"), "w") as f:
        f.write("inputs s.values s.lengths\noutputs %s\n" % " ".join(names))


if __name__ == "__main__":
    main()
