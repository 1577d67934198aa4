"""A KJT model for the sharded end-to-end test: an EmbeddingBagCollection
over a keyed jagged tensor input, as TorchRec models take their sparse
features, written directly in ONNX (Ember's `ember` domain: KJT,
EmbeddingBagCollection) with a symbolic batch.

Features user, item, ctx, hist; tables t0 (40 x 8, sum) read by user and
hist (a table shared by two features), t1 (60 x 16, mean) read by item,
t2 (30 x 12, max) read by ctx. A second, weighted KJT g (keys clicks,
views; per-value weights) goes into a second collection: tables w0 (50 x 4)
and w1 (20 x 8), weighted sum. Outputs: the pooled keyed tensor's values
("pooled", [B, 44]), sigmoid(pooled . w + b) ("prob", [B, 1]) and the
weighted collection's values ("weighted", [B, 12]).
Inputs: f.values [N] and key-major f.lengths [4 * B] (int64), some bags
empty, every item bag of every fifth sample empty, ids at the table edges;
g.values, g.lengths [2 * B] and g.weights (float32).
The expected outputs are computed here with numpy (an independent
reference of TorchRec's EmbeddingBagCollection semantics).

usage: make_kjt_model.py OUTDIR [--batch B] [--seed S]
writes OUTDIR/model.onnx, OUTDIR/<input>.npy, OUTDIR/io.txt and
OUTDIR/expected_<output>.npy
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KEYS = ["user", "item", "ctx", "hist"]
TABLES = [(40, 8, "sum"), (60, 16, "mean"), (30, 12, "max")]
FEATURE_TABLES = [0, 1, 2, 0]
WIDTH = sum(TABLES[t][1] for t in FEATURE_TABLES)


WEIGHTED_KEYS = ["clicks", "views"]
WEIGHTED_TABLES = [(50, 4), (20, 8)]


def make_weighted_inputs(batch, gen):
    lengths = gen.integers(0, 4, size=(len(WEIGHTED_KEYS), batch))
    values = np.concatenate(
        [gen.integers(0, WEIGHTED_TABLES[k][0], size=lengths[k, b])
         for k in range(len(WEIGHTED_KEYS)) for b in range(batch)]).astype(np.int64)
    weights = gen.random(values.size).astype(np.float32)
    return values, lengths.reshape(-1).astype(np.int64), weights


def weighted_reference(values, lengths, weights, tables):
    batch = lengths.size // len(WEIGHTED_KEYS)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    columns = []
    for k, table in enumerate(tables):
        out = np.zeros((batch, table.shape[1]), np.float64)
        for b in range(batch):
            lo, hi = offsets[k * batch + b], offsets[k * batch + b + 1]
            out[b] = (table[values[lo:hi]].astype(np.float64)
                      * weights[lo:hi, None]).sum(0)
        columns.append(out)
    return np.concatenate(columns, axis=1).astype(np.float32)


def make_inputs(batch, gen):
    lengths = gen.integers(0, 5, size=(len(KEYS), batch))
    lengths[1, ::5] = 0  # empty item bags
    values = []
    for k, t in enumerate(FEATURE_TABLES):
        rows = TABLES[t][0]
        for b in range(batch):
            ids = gen.integers(0, rows, size=lengths[k, b])
            if ids.size and b == batch - 1:
                ids[-1] = rows - 1  # an id at the table edge
            values.append(ids)
    return (np.concatenate(values).astype(np.int64),
            lengths.reshape(-1).astype(np.int64))


def reference(values, lengths, weights, w, bias):
    batch = lengths.size // len(KEYS)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    columns = []
    for k, t in enumerate(FEATURE_TABLES):
        table, (_, dim, mode) = weights[t], TABLES[t]
        out = np.zeros((batch, dim), np.float64)
        for b in range(batch):
            bag = values[offsets[k * batch + b]:offsets[k * batch + b + 1]]
            if bag.size == 0:
                continue
            rows = table[bag].astype(np.float64)
            out[b] = {"sum": rows.sum(0), "mean": rows.mean(0),
                      "max": rows.max(0)}[mode]
        columns.append(out)
    pooled = np.concatenate(columns, axis=1)
    prob = 1.0 / (1.0 + np.exp(-(pooled @ w.T.astype(np.float64) + bias)))
    return pooled.astype(np.float32), prob.astype(np.float32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir")
    parser.add_argument("--batch", type=int, default=13)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    gen = np.random.default_rng(args.seed)
    weights = [gen.standard_normal((rows, dim)).astype(np.float32)
               for rows, dim, _ in TABLES]
    weighted_tables = [gen.standard_normal(shape).astype(np.float32)
                       for shape in WEIGHTED_TABLES]
    w = (gen.standard_normal((1, WIDTH)) / 4).astype(np.float32)
    bias = np.array([0.1], np.float32)
    nodes = [
        helper.make_node("KJT", ["f.values", "f.lengths"], ["kjt"],
                         name="features", domain="ember", keys=KEYS),
        helper.make_node("EmbeddingBagCollection",
                         ["kjt"] + ["t%d" % i for i in range(len(TABLES))],
                         ["pooled"], name="sparse.ebc", domain="ember",
                         feature_tables=FEATURE_TABLES,
                         pooling=[mode for _, _, mode in TABLES]),
        helper.make_node("Gemm", ["pooled", "w", "bias"], ["logit"],
                         name="over", transB=1),
        helper.make_node("Sigmoid", ["logit"], ["prob"], name="sigmoid"),
        helper.make_node("KJT", ["g.values", "g.lengths", "g.weights"], ["gkjt"],
                         name="weighted_features", domain="ember",
                         keys=WEIGHTED_KEYS),
        helper.make_node("EmbeddingBagCollection", ["gkjt", "w0", "w1"],
                         ["weighted"], name="sparse.weighted_ebc",
                         domain="ember", feature_tables=[0, 1],
                         pooling=["sum", "sum"]),
    ]
    inits = [numpy_helper.from_array(t, "t%d" % i)
             for i, t in enumerate(weights)]
    inits += [numpy_helper.from_array(t, "w%d" % i)
              for i, t in enumerate(weighted_tables)]
    inits += [numpy_helper.from_array(w, "w"),
              numpy_helper.from_array(bias, "bias")]
    graph = helper.make_graph(
        nodes, "kjt_model",
        [helper.make_tensor_value_info("f.values", TensorProto.INT64, ["n"]),
         helper.make_tensor_value_info("f.lengths", TensorProto.INT64,
                                       ["keys_x_batch"]),
         helper.make_tensor_value_info("g.values", TensorProto.INT64, ["m"]),
         helper.make_tensor_value_info("g.lengths", TensorProto.INT64,
                                       ["weighted_keys_x_batch"]),
         helper.make_tensor_value_info("g.weights", TensorProto.FLOAT, ["m"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT,
                                       ["batch", WIDTH]),
         helper.make_tensor_value_info("prob", TensorProto.FLOAT,
                                       ["batch", 1]),
         helper.make_tensor_value_info("weighted", TensorProto.FLOAT,
                                       ["batch", 12])],
        inits)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("ember", 1)])
    onnx.save(model, os.path.join(args.outdir, "model.onnx"))
    values, lengths = make_inputs(args.batch, gen)
    np.save(os.path.join(args.outdir, "f.values.npy"), values)
    np.save(os.path.join(args.outdir, "f.lengths.npy"), lengths)
    pooled, prob = reference(values, lengths, weights, w, bias)
    np.save(os.path.join(args.outdir, "expected_pooled.npy"), pooled)
    np.save(os.path.join(args.outdir, "expected_prob.npy"), prob)
    g_values, g_lengths, g_weights = make_weighted_inputs(args.batch, gen)
    np.save(os.path.join(args.outdir, "g.values.npy"), g_values)
    np.save(os.path.join(args.outdir, "g.lengths.npy"), g_lengths)
    np.save(os.path.join(args.outdir, "g.weights.npy"), g_weights)
    np.save(os.path.join(args.outdir, "expected_weighted.npy"),
            weighted_reference(g_values, g_lengths, g_weights, weighted_tables))
    with open(os.path.join(args.outdir, "io.txt"), "w") as f:
        f.write("inputs f.values f.lengths g.values g.lengths g.weights\n"
                "outputs pooled prob weighted\n")


if __name__ == "__main__":
    main()
