"""TorchRec's quantized EmbeddingBagCollection (torchrec.quant, FBGEMM's packed int8/int4
rows) through ember.export -> ember-compile -> ember-run, against TorchRec's quantized eager
output.

The models are quantized with TorchRec's own API (torchrec.inference.modules
.quantize_embeddings, EmbeddingBagCollection.from_float with a qconfig); the export converts
each table's rows to Ember's row-wise quantized layout (codes, then float32 scale and bias)
exactly, so the plan computes what TorchRec computes up to float rounding. Optional: skipped
unless TorchRec is importable (ctest test `torchrec`).
"""

import copy
import os

import numpy as np
import pytest
import torch
import torch.nn as nn

torchrec = pytest.importorskip("torchrec", reason="TorchRec is not importable "
                               "(bash scripts/setup-torchrec-venv.sh makes a venv with it)")
onnx = pytest.importorskip("onnx")
pytestmark = pytest.mark.torchrec

import ember  # noqa: E402
from e2e import export_and_compile, kjt_arrays, run_plan  # noqa: E402
from test_torchrec_models import (DENSE_IN, DIM, KEYS, ROWS, make_model, random_kjt,  # noqa: E402
                                  run_inputs, weighted_kjt, widened, WeightedModel)
from torchrec import EmbeddingBagCollection, EmbeddingBagConfig, KeyedJaggedTensor  # noqa: E402
from torchrec import PoolingType  # noqa: E402
from torchrec.inference.modules import quantize_embeddings  # noqa: E402
from torchrec.quant.embedding_modules import EmbeddingBagCollection as QuantEBC  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402

RTOL, ATOL = 1e-4, 1e-6
WEIGHT_DTYPES = {"int8": torch.quint8, "int4": torch.quint4x2}


def quantized_dlrm(bits: str) -> nn.Module:
    """TorchRec's DLRM (widened weights) with its EmbeddingBagCollection quantized by
    TorchRec's inference API: FBGEMM int8 or int4 rows, float32 outputs."""
    return quantize_embeddings(make_model("DLRM"), dtype=WEIGHT_DTYPES[bits], inplace=True,
                               output_dtype=torch.float)


def eager(model, *inputs):
    with torch.no_grad():
        return model(*inputs).numpy()


def tbe_rows(qebc):
    """{table name: (padded rows [R, W] uint8 as FBGEMM stores them, dim, data type, TBE)}
    read from the quantized collection's TBEs (mode 0: whole rows, qparams and padding)."""
    out = {}
    for configs, emb in zip(qebc._key_to_tables.values(), qebc._emb_modules):
        rows = emb.split_embedding_weights_with_scale_bias(split_scale_bias_mode=0)
        for config, spec, (w, _, _) in zip(configs, emb.embedding_specs, rows):
            out[config.name] = (w, int(spec[2]), config.data_type.name, emb)
    return out


def expected_ember_rows(padded, dim, data_type, emb):
    """Ember's rows from FBGEMM's, written out here independently of the exporter: FBGEMM
    puts a 4-byte fp16 scale and fp16 bias before the codes (after them with
    reverse_qparam), then pads the row; Ember wants the codes, then float32 scale and
    float32 bias."""
    code_bytes = dim if data_type == "INT8" else dim // 2
    padded = padded.numpy()
    if emb.reverse_qparam:
        codes, qparams = padded[:, :code_bytes], padded[:, code_bytes:code_bytes + 4]
    else:
        qparams, codes = padded[:, :4], padded[:, 4:4 + code_bytes]
    scale_bias = np.ascontiguousarray(qparams).view(np.float16).astype(np.float32)
    return np.concatenate([codes, np.ascontiguousarray(scale_bias).view(np.uint8)], axis=1)


def dequantize(rows, dim, fmt):
    """Float values of Ember rows (the runtime's formula value = code * scale + bias)."""
    code_bytes = dim if fmt == "int8_rowwise" else dim // 2
    codes = rows[:, :code_bytes]
    if fmt == "int4_rowwise":
        codes = np.stack([codes & 15, codes >> 4], axis=2).reshape(len(rows), dim)
    scale_bias = np.ascontiguousarray(rows[:, code_bytes:]).view(np.float32)
    return codes.astype(np.float32) * scale_bias[:, :1] + scale_bias[:, 1:]


def collection_node(model_proto):
    (node,) = [n for n in model_proto.graph.node if n.op_type == "EmbeddingBagCollection"]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model_proto.graph.initializer}
    return node, attrs, inits


@pytest.mark.parametrize("bits", ["int8", "int4"])
def test_exported_rows_are_torchrec_rows_converted(bits):
    """The exported tables are uint8 initializers holding exactly TorchRec's packed rows
    converted to Ember's layout (codes unchanged, fp16 scale and bias as float32, no
    padding); table_formats / table_dims say the format. Dequantized, they are the float
    model's weights up to the quantization step."""
    float_model = make_model("DLRM")
    model = quantize_embeddings(copy.deepcopy(float_model), dtype=WEIGHT_DTYPES[bits],
                                inplace=False)
    qebc = model.sparse_arch.embedding_bag_collection
    proto = ember.to_onnx(model, (torch.randn(3, DENSE_IN), random_kjt(3, seed=1, empty_key="")))
    node, attrs, inits = collection_node(proto)
    fmt = f"{bits}_rowwise"
    assert attrs["table_formats"] == [fmt.encode()] * 3
    assert attrs["table_dims"] == [DIM] * 3
    names = [n.decode() for n in attrs["table_names"]]
    assert names == ["t_user", "t_item", "t_ctx"]
    rows = tbe_rows(qebc)
    for name, weight in zip(names, node.input[1:]):
        got = inits[weight]
        padded, dim, data_type, emb = rows[name]
        assert data_type == bits.upper()
        assert padded.shape[1] % 16 == 0  # FBGEMM pads each row to 16 bytes
        want = expected_ember_rows(padded, dim, data_type, emb)
        assert got.dtype == np.uint8 and got.shape == (ROWS["f_" + name[2:]],
                                                        (dim if bits == "int8" else dim // 2) + 8)
        np.testing.assert_array_equal(got, want)
        weights = float_model.sparse_arch.embedding_bag_collection.embedding_bags[name].weight
        step = (weights.max(1).values - weights.min(1).values).detach().numpy()[:, None] / (
            255 if bits == "int8" else 15)
        err = np.abs(dequantize(got, dim, fmt) - weights.detach().numpy())
        assert (err <= step * 0.5 + 2e-3).all()


@pytest.mark.parametrize("sharding", [None, "table_wise", "row_wise", "column_wise"])
@pytest.mark.parametrize("bits", ["int8", "int4"])
def test_quantized_dlrm_matches_torchrec_eager(bits, sharding, tmp_path, record_property):
    """TorchRec's DLRM with int8 (or int4) tables, on one rank and with the tables sharded
    on 2 ranks (the shards are rows of the quantized bytes; a column shard keeps its rows'
    scale and bias), equals TorchRec's quantized eager output at batch 7."""
    model = quantized_dlrm(bits)
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=3, empty_key=""))
    args = () if sharding is None else ("--world-size", "2", "--sharding", sharding)
    plan = export_and_compile(model, example, tmp_path, "qdlrm", compile_args=args)
    with open(plan, "rb") as f:
        text = f.read()
    assert f"{bits}_rowwise".encode() in text
    if sharding is not None:
        assert b"kjt_all_to_all" in text, "the tables were not sharded"
    g = torch.Generator().manual_seed(7)
    dense, kjt = torch.randn(7, DENSE_IN, generator=g), random_kjt(7, seed=7)
    run_args = () if sharding is None else ("--nproc", "2")
    (got,) = run_plan(plan, run_inputs(dense, kjt), tmp_path, "qdlrm", run_args=run_args)
    want = eager(model, dense, kjt)
    assert got.shape == want.shape == (7, 1)
    assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    assert np.ptp(want) > 1e-2
    if sharding is None:  # quantized sums in FBGEMM's order: as close
        (fbgemm,) = run_plan(plan, run_inputs(dense, kjt), tmp_path, "qdlrm_fbgemm",
                             run_args=("--quantized-sums", "fbgemm"))
        assert_allclose(fbgemm, want, rtol=RTOL, atol=ATOL)
    # The quantization shows: the float model's output is not within the tolerance.
    assert not np.allclose(eager(make_model("DLRM"), dense, kjt), want, rtol=RTOL, atol=ATOL)
    record_property("max_abs_diff", float(np.abs(got - want).max()))


@pytest.mark.parametrize("sharding", [None, "table_wise", "row_wise"])
def test_weighted_quantized_ebc_matches_eager(sharding, tmp_path):
    """A weighted EmbeddingBagCollection quantized with from_float (a qconfig of
    torch.quint8 weights): the KJT's weights scale the dequantized rows, on one rank and
    on 2 ranks, as in TorchRec's quantized eager."""
    torch.manual_seed(0)
    model = widened(WeightedModel())
    model.sparse.qconfig = torch.quantization.QConfig(
        activation=torch.quantization.PlaceholderObserver.with_args(dtype=torch.float),
        weight=torch.quantization.PlaceholderObserver.with_args(dtype=torch.quint8))
    model.sparse = QuantEBC.from_float(model.sparse)
    assert model.sparse.is_weighted()
    args = () if sharding is None else ("--world-size", "2", "--sharding", sharding)
    plan = export_and_compile(model, (weighted_kjt(4, seed=3),), tmp_path, "qweighted",
                              compile_args=args)
    kjt = weighted_kjt(9, seed=9)
    run_args = () if sharding is None else ("--nproc", "2")
    (got,) = run_plan(plan, kjt_arrays("sparse_features", kjt), tmp_path, "qweighted",
                      run_args=run_args)
    want = eager(model, kjt)
    assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    unweighted = eager(model, KeyedJaggedTensor.from_lengths_sync(
        keys=KEYS, values=kjt.values(), lengths=kjt.lengths(),
        weights=torch.ones(kjt.values().numel())))
    assert np.abs(unweighted - want).max() > 1e-3


class MixedModel(nn.Module):
    """Per-table weight types (int8, int4, fp16) and a mean-pooled table: TorchRec's
    quantized collection groups its tables by pooling, so its output holds t_user, t_ctx
    (sum), then t_item (mean)."""

    def __init__(self):
        super().__init__()
        self.sparse = EmbeddingBagCollection(tables=[
            EmbeddingBagConfig(name="t_user", embedding_dim=DIM, num_embeddings=ROWS["f_user"],
                               feature_names=["f_user"]),
            EmbeddingBagConfig(name="t_item", embedding_dim=4, num_embeddings=ROWS["f_item"],
                               feature_names=["f_item"], pooling=PoolingType.MEAN),
            EmbeddingBagConfig(name="t_ctx", embedding_dim=DIM, num_embeddings=ROWS["f_ctx"],
                               feature_names=["f_ctx"]),
        ], device=torch.device("cpu"))
        self.over = nn.Linear(2 * DIM + 4 + 4, 1)  # t_user, t_ctx, t_item, then f_item again

    def forward(self, sparse_features):
        kt = self.sparse(sparse_features)
        return torch.sigmoid(self.over(torch.cat([kt.values(), kt["f_item"]], dim=1)))


@pytest.mark.parametrize("sharding", [None, "row_wise"])
def test_mixed_weight_types_and_pooling(sharding, tmp_path):
    """quantize_embeddings with per_table_weight_dtype: int8, int4 and fp16 tables in one
    collection (table_formats per table; the partitioning groups lookups by format)."""
    torch.manual_seed(0)
    model = quantize_embeddings(widened(MixedModel()), dtype=torch.quint8, inplace=True,
                                per_table_weight_dtype={"t_item": torch.quint4x2,
                                                        "t_ctx": torch.float16})
    example = (random_kjt(4, seed=3, empty_key=""),)
    _, attrs, _ = collection_node(ember.to_onnx(model, example))
    assert attrs["table_names"] == [b"t_user", b"t_ctx", b"t_item"]
    assert attrs["table_formats"] == [b"int8_rowwise", b"f16", b"int4_rowwise"]
    args = () if sharding is None else ("--world-size", "2", "--sharding", sharding)
    plan = export_and_compile(model, example, tmp_path, "mixed", compile_args=args)
    kjt = random_kjt(6, seed=6)
    run_args = () if sharding is None else ("--nproc", "2")
    (got,) = run_plan(plan, kjt_arrays("sparse_features", kjt), tmp_path, "mixed",
                      run_args=run_args)
    assert_allclose(got, eager(model, kjt), rtol=RTOL, atol=ATOL)


def _sparse_only(qebc):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.sparse = qebc

        def forward(self, kjt):
            return self.sparse(kjt).values()
    return Model()


def _quantized_ebc(weight_dtype, output_dtype=torch.float, dim=DIM):
    ebc = EmbeddingBagCollection(tables=[
        EmbeddingBagConfig(name=f"t_{key[2:]}", embedding_dim=dim, num_embeddings=rows,
                           feature_names=[key]) for key, rows in ROWS.items()],
        device=torch.device("cpu"))
    ebc.qconfig = torch.quantization.QConfig(
        activation=torch.quantization.PlaceholderObserver.with_args(dtype=output_dtype),
        weight=torch.quantization.PlaceholderObserver.with_args(dtype=weight_dtype))
    return QuantEBC.from_float(ebc)


@pytest.mark.parametrize("weight_dtype,output_dtype,dim,message", [
    (torch.quint8, torch.float16, DIM,
     r"TorchRec's quantized EmbeddingBagCollection: output_dtype torch\.float16 is not "
     r"supported"),
    (torch.quint2x4, torch.float, 16,
     r"TorchRec's quantized EmbeddingBagCollection: table 't_user': data type INT2 is not "
     r"supported"),
])
def test_unsupported_quantized_ebc_is_refused(weight_dtype, output_dtype, dim, message,
                                              tmp_path):
    """What Ember has no table format or output for is refused naming the module path,
    and no file is written."""
    model = _sparse_only(_quantized_ebc(weight_dtype, output_dtype, dim))
    with pytest.raises(ember.ExportError, match=r"in module 'sparse': " + message):
        ember.export(model, (random_kjt(3, seed=5, empty_key=""),), str(tmp_path / "q.onnx"))
    assert os.listdir(tmp_path) == []
