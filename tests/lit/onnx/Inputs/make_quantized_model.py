"""ONNX models with row-wise quantized embedding tables (ember.EmbeddingBagCollection's
table_formats / table_dims attributes) for tests/lit/onnx/ember-quantized-ebc.test.

usage: make_quantized_model.py NAME OUTPUT.onnx

An int8_rowwise table is a uint8 initializer [rows, dim + 8]: dim codes, then the row's
float32 scale and float32 bias; int4_rowwise [rows, dim / 2 + 8]: two codes a byte (low
nibble first), then scale and bias.
"""
import sys

import numpy as np
from onnx import TensorProto, helper

from make_model import F, I64, const, model, rng, vi

MODELS = {}


def register(fn):
    MODELS[fn.__name__] = fn
    return fn


def quantized_rows(codes, scale, bias):
    """Ember rows: uint8 codes [R, C], then float32 scale and bias [R] as bytes."""
    qparams = np.stack([scale, bias], axis=1).astype("<f4").view(np.uint8)
    return np.concatenate([codes.astype(np.uint8), qparams], axis=1)


def int8_table(rows, dim, seed=0):
    r = np.random.default_rng(seed)
    return quantized_rows(r.integers(0, 256, (rows, dim)), r.uniform(0.01, 0.1, rows),
                          r.uniform(-1, 0, rows))


def int4_table(rows, dim, seed=1):
    r = np.random.default_rng(seed)
    codes = r.integers(0, 16, (rows, dim))
    packed = codes[:, 0::2] | (codes[:, 1::2] << 4)
    return quantized_rows(packed, r.uniform(0.05, 0.2, rows), r.uniform(-1, 0, rows))


def collection(tables, formats=None, dims=None, inputs=None, extra_inputs=(), names=None):
    """A KJT [a, b, c] (graph inputs k.values, k.lengths [3*B]) into one collection over
    `tables` (name -> array), feature i reading table i % T."""
    keys = ["a", "b", "c"]
    inputs = list(inputs or tables)
    attrs = {"feature_tables": [i % len(inputs) for i in range(3)],
             "pooling": ["sum"] * len(inputs)}
    if formats is not None:
        attrs["table_formats"] = formats
    if dims is not None:
        attrs["table_dims"] = dims
    if names is not None:
        attrs["table_names"] = names
        attrs["module"] = "sparse"
    nodes = [
        helper.make_node("KJT", ["k.values", "k.lengths"], ["kjt"], name="make_kjt",
                         domain="ember", keys=keys),
        helper.make_node("EmbeddingBagCollection", ["kjt"] + inputs,
                         ["pooled"], name="ebc", domain="ember", **attrs),
    ]
    return model(nodes, [vi("k.values", I64, ["n"]), vi("k.lengths", I64, ["3*B"])]
                 + list(extra_inputs), [vi("pooled", F, ["B", None])],
                 [const(name, array) for name, array in tables.items()],
                 extra_opsets=[helper.make_opsetid("ember", 1)])


FORMATS, DIMS = ["int8_rowwise", "int4_rowwise", "f32"], [8, 8, 2]


def three_tables():
    return {"t0": int8_table(10, 8), "t1": int4_table(6, 8),
            "t2": rng().standard_normal((5, 2)).astype(np.float32)}


@register
def quant_ebc():
    """int8, int4 and f32 tables, with table_dims."""
    return collection(three_tables(), FORMATS, DIMS, names=["t_int8", "t_int4", "t_f32"])


@register
def quant_ebc_no_dims():
    """table_formats only: the dims follow from the row widths (16 - 8, 2 * (12 - 8))."""
    return collection(three_tables(), ["int8_rowwise", "int4_rowwise", "f32"])


@register
def quant_bad_width():
    return collection({"t0": int8_table(10, 4)}, ["int8_rowwise"], [5])


@register
def quant_bad_dtype():
    return collection({"t0": rng().standard_normal((10, 12)).astype(np.float32)},
                      ["int8_rowwise"], [4])


@register
def quant_int8_as_f32():
    return collection({"t0": int8_table(10, 4)}, ["f32"])


@register
def quant_bad_format():
    return collection({"t0": int8_table(10, 4)}, ["int3_rowwise"])


@register
def quant_formats_count():
    return collection(three_tables(), ["int8_rowwise", "int4_rowwise"])


@register
def quant_odd_int4():
    return collection({"t0": int4_table(6, 4)}, ["int4_rowwise"], [3])


@register
def quant_not_initializer():
    """A quantized table fed from a graph input, not an initializer."""
    return collection({}, ["int8_rowwise"], [4], inputs=["tq"],
                      extra_inputs=[vi("tq", TensorProto.UINT8, [10, 12])])


def dequantize(rows, dim, fmt):
    """The float rows of an Ember table (value = code * scale + bias)."""
    if fmt == "f32":
        return rows
    code_bytes = dim if fmt == "int8_rowwise" else dim // 2
    codes = rows[:, :code_bytes].astype(np.int64)
    if fmt == "int4_rowwise":
        codes = np.stack([codes & 15, codes >> 4], axis=2).reshape(len(rows), dim)
    qparams = np.ascontiguousarray(rows[:, code_bytes:]).view("<f4")
    return codes * qparams[:, :1].astype(np.float64) + qparams[:, 1:]


def write_inputs(out_dir):
    """quant_ebc's inputs (k.values, k.lengths: batch 3, some empty bags, ids at the
    tables' edges) and the pooled result a numpy reference computes from the rows."""
    tables = list(three_tables().values())
    lengths = np.array([2, 0, 3, 1, 1, 0, 0, 2, 1], dtype=np.int64)  # a, b, c x 3 samples
    r = np.random.default_rng(7)
    values, want = [], np.zeros((3, sum(DIMS)))
    for f in range(3):
        floats = dequantize(tables[f], DIMS[f], FORMATS[f])
        first = sum(DIMS[:f])
        for b in range(3):
            ids = r.integers(0, len(floats), lengths[3 * f + b])
            if len(ids):
                ids[-1] = len(floats) - 1
            values.append(ids)
            want[b, first:first + DIMS[f]] = floats[ids].sum(axis=0)
    np.savez(f"{out_dir}/in.npz", **{"k.values": np.concatenate(values),
                                     "k.lengths": lengths})
    np.save(f"{out_dir}/want.npy", want)


def compare(want_path, got_path):
    want, got = np.load(want_path), np.load(got_path)
    assert got.shape == want.shape and got.dtype == np.float32, (got.shape, got.dtype)
    diff = np.abs(got - want).max()
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5), f"max abs difference {diff}"
    print("pooled rows match the numpy reference")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--inputs":
        return write_inputs(sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        return compare(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit("usage: make_quantized_model.py {%s} OUT.onnx | --inputs DIR | "
                 "--compare WANT.npy GOT.npy" % "|".join(sorted(MODELS)))
    with open(sys.argv[2], "wb") as f:
        f.write(MODELS[sys.argv[1]]().SerializeToString())


if __name__ == "__main__":
    main()
