"""TorchRec's EmbeddingCollection (sequence embeddings) through ember.export, the ONNX importer,
and ember-compile / ember-run against TorchRec eager.

The export cases check the ONNX graph (ember.EmbeddingCollection and the Jagged* nodes, the
symbolic batch) and evaluate it with the independent numpy reference (onnx_reference.py)
against TorchRec eager; the import cases run ember-translate on the export; the end-to-end
cases compile and run the plan (rtol 1e-4). Optional: skipped unless TorchRec is importable
(ctest test `torchrec`).
"""

import os
import subprocess

import numpy as np
import pytest
import torch
import torch.nn as nn

torchrec = pytest.importorskip("torchrec", reason="TorchRec is not importable "
                               "(bash scripts/setup-torchrec-venv.sh makes a venv with it)")
onnx = pytest.importorskip("onnx")
pytestmark = pytest.mark.torchrec

import ember  # noqa: E402
import onnx_reference  # noqa: E402
from e2e import compile_and_run, export_and_compile, kjt_arrays, run_plan, tool  # noqa: E402
from torchrec import EmbeddingCollection, EmbeddingConfig, KeyedJaggedTensor  # noqa: E402

DIM = 4
PAD_LEN = 3
DENSE_IN = 5
ROWS = {"t_ui": 60, "t_ctx": 30}
FEATURES = {"f_user": "t_ui", "f_item": "t_ui", "f_ctx": "t_ctx"}  # 2 tables, 3 features
KJT_KEYS = ["f_item", "f_ctx", "f_user"]  # another order than the tables read them
RTOL, ATOL = 1e-4, 1e-6


def make_ec(need_indices=False):
    return EmbeddingCollection(tables=[
        EmbeddingConfig(name="t_ui", embedding_dim=DIM, num_embeddings=ROWS["t_ui"],
                        feature_names=["f_user", "f_item"]),
        EmbeddingConfig(name="t_ctx", embedding_dim=DIM, num_embeddings=ROWS["t_ctx"],
                        feature_names=["f_ctx"]),
    ], device=torch.device("cpu"), need_indices=need_indices)


class PaddedSequenceModel(nn.Module):
    """Each feature's sequence padded (truncated) to PAD_LEN rows by to_padded_dense, flattened,
    concatenated with the dense features into an MLP."""

    def __init__(self):
        super().__init__()
        self.sparse = nn.Module()
        self.sparse.ec = make_ec()
        self.mlp = nn.Sequential(nn.Linear(3 * PAD_LEN * DIM + DENSE_IN, 16), nn.ReLU(),
                                 nn.Linear(16, 1))

    def forward(self, dense_features, sparse_features):
        seqs = self.sparse.ec(sparse_features)
        padded = []
        for key, jt in seqs.items():
            pad = 0.25 if key == "f_ctx" else 0.0
            padded.append(jt.to_padded_dense(desired_length=PAD_LEN, padding_value=pad)
                          .flatten(1))
        return torch.sigmoid(self.mlp(torch.cat(padded + [dense_features], dim=1)))


class JaggedReadsModel(nn.Module):
    """Every read of a JaggedTensor the exporter writes, returned: values(), offsets(),
    lengths(), fbgemm's jagged_to_padded_dense of values() and [offsets()]."""

    def __init__(self):
        super().__init__()
        self.ec = make_ec()

    def forward(self, sparse_features):
        seqs = self.ec(sparse_features)
        user, ctx = seqs["f_user"], seqs["f_ctx"]
        dense = torch.ops.fbgemm.jagged_to_padded_dense(ctx.values(), [ctx.offsets()], [2], -1.0)
        return user.values() * 2.0, user.offsets(), ctx.lengths(), dense


def widened(model):
    """TorchRec's tables start small; wider random weights make every id matter. Eval mode."""
    torch.manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.4)
    return model.eval()


def random_kjt(batch, seed, empty=(), max_len=5, keys=KJT_KEYS, lengths_dtype=torch.int64):
    """Random sequences (lengths 0..max_len, some longer than PAD_LEN); every row of a feature
    in ``empty`` is empty; a non-empty feature's last id is at its table's edge."""
    g = torch.Generator().manual_seed(seed)
    lengths, values = [], []
    for key in keys:
        rows = ROWS[FEATURES[key]]
        lens = torch.zeros(batch, dtype=torch.int64) if key in empty else \
            torch.randint(0, max_len + 1, (batch,), generator=g)
        ids = torch.randint(0, rows, (int(lens.sum()),), generator=g)
        if ids.numel():
            ids[-1] = rows - 1
        lengths.append(lens)
        values.append(ids)
    return KeyedJaggedTensor.from_lengths_sync(keys=list(keys), values=torch.cat(values),
                                               lengths=torch.cat(lengths).to(lengths_dtype))


def eager(model, *inputs):
    """The outputs flattened as the export orders them, as numpy arrays."""
    with torch.no_grad():
        out = model(*inputs)
    flat = []

    def walk(x):
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        else:
            flat.append(x.numpy())

    walk(out)
    return flat


def reference(model_proto, feeds):
    return onnx_reference.run(model_proto, feeds)


def ember_nodes(m):
    return [n for n in m.graph.node if n.domain == "ember"]


def attr(node, name):
    return onnx.helper.get_attribute_value(next(a for a in node.attribute if a.name == name))


def dims(value_info):
    return [d.dim_param or (d.dim_value if d.HasField("dim_value") else None)
            for d in value_info.type.tensor_type.shape.dim]


# ---------------------------------------------------------------------------- export
def test_embedding_collection_exports_one_node_per_collection():
    """One ember.EmbeddingCollection over the permuted KJT, TorchRec's table names and module
    path, one jagged output per feature in the result's order; to_padded_dense per feature is
    JaggedToPadded (max_length, padding). The batch stays symbolic."""
    model = widened(PaddedSequenceModel())
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=1))
    m = ember.to_onnx(model, example)
    nodes = ember_nodes(m)
    assert [n.op_type for n in nodes] == ["KJT", "KJTPermute", "EmbeddingCollection",
                                         "JaggedToPadded", "JaggedToPadded", "JaggedToPadded"]
    kjt, permute, ec, *padded = nodes
    assert attr(kjt, "keys") == [k.encode() for k in KJT_KEYS]
    assert attr(permute, "permutation") == [2, 0, 1]  # f_user, f_item, f_ctx
    assert list(ec.input) == [permute.output[0], "sparse.ec.embeddings.t_ui.weight",
                              "sparse.ec.embeddings.t_ctx.weight"]
    assert attr(ec, "feature_tables") == [0, 0, 1]
    assert attr(ec, "table_names") == [b"t_ui", b"t_ctx"]
    assert attr(ec, "module") == b"sparse.ec"
    assert len(ec.output) == 3
    assert [p.input[0] for p in padded] == list(ec.output)  # f_user, f_item, f_ctx
    assert [attr(p, "max_length") for p in padded] == [PAD_LEN] * 3
    assert [attr(p, "padding") for p in padded] == [0.0, 0.0, 0.25]
    inits = {t.name: t for t in m.graph.initializer}
    assert list(inits["sparse.ec.embeddings.t_ui.weight"].dims) == [ROWS["t_ui"], DIM]
    assert [i.name for i in m.graph.input] == [
        "dense_features", "sparse_features.values", "sparse_features.lengths"]
    assert [dims(i) for i in m.graph.input] == [
        ["B", DENSE_IN], ["N_sparse_features_values"], ["3*B"]]
    assert [dims(o) for o in m.graph.output] == [["B", 1]]


@pytest.mark.parametrize("batch", [1, 4, 7])
def test_exported_graph_computes_torchrec_eager(batch):
    """The export (at batch 4) evaluated by the numpy reference equals TorchRec eager at other
    batches and value counts, rows longer and shorter than the padded length."""
    model = widened(PaddedSequenceModel())
    m = ember.to_onnx(model, (torch.randn(4, DENSE_IN), random_kjt(4, seed=1)))
    dense, kjt = torch.randn(batch, DENSE_IN), random_kjt(batch, seed=10 + batch)
    (got,) = reference(m, {"dense_features": dense.numpy(), **kjt_arrays("sparse_features", kjt)})
    (want,) = eager(model, dense, kjt)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lengths_dtype", [torch.int64, torch.int32])
def test_jagged_reads_export(lengths_dtype):
    """values() is JaggedValues ([N, D], N not the batch even when the example has N == B),
    offsets() JaggedOffsets ([B + 1]), lengths() JaggedLengths ([B]), each cast back to the
    KJT's int32 lengths type when TorchRec's are; fbgemm.jagged_to_padded_dense of values()
    and [offsets()] is JaggedToPadded. Evaluated against eager at another batch."""
    model = widened(JaggedReadsModel())
    # f_user has exactly B = 3 ids in the example: its values' dim must still not be B.
    example = KeyedJaggedTensor.from_lengths_sync(
        keys=KJT_KEYS, values=torch.tensor([1, 2, 3, 4, 5, 6, 7]),
        lengths=torch.tensor([1, 1, 0, 2, 0, 0, 1, 1, 1], dtype=lengths_dtype))
    m = ember.to_onnx(model, (example,))
    ops = [n.op_type for n in ember_nodes(m)]
    # (ctx's values and offsets read by fbgemm make no node of their own)
    assert ops == ["KJT", "KJTPermute", "EmbeddingCollection", "JaggedToPadded", "JaggedValues",
                   "JaggedOffsets", "JaggedLengths"]
    padded = ember_nodes(m)[3]
    assert attr(padded, "max_length") == 2 and attr(padded, "padding") == -1.0
    casts = [n for n in m.graph.node if n.op_type == "Cast"]
    assert len(casts) == (2 if lengths_dtype == torch.int32 else 0)
    assert [dims(o)[0] for o in m.graph.output] == [None, None, "B", "B"]
    int_type = onnx.TensorProto.INT32 if lengths_dtype == torch.int32 else onnx.TensorProto.INT64
    assert [o.type.tensor_type.elem_type for o in m.graph.output] == [
        onnx.TensorProto.FLOAT, int_type, int_type, onnx.TensorProto.FLOAT]
    kjt = random_kjt(6, seed=3, lengths_dtype=lengths_dtype)
    got = reference(m, kjt_arrays("sparse_features", kjt))
    for g, w in zip(got, eager(model, kjt)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_dict_reads_trace_and_export():
    """d[key], d.values(), d.items() and d.keys() of the collection's result."""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.ec = make_ec()

        def forward(self, kjt):
            seqs = self.ec(kjt)
            a = [jt.values().sum(0) for jt in seqs.values()]
            b = [seqs[k].lengths() for k in seqs.keys()]
            c = [jt.to_padded_dense(2) for _, jt in seqs.items()]
            return a, b, torch.cat(c, dim=1)

    model = widened(Model())
    m = ember.to_onnx(model, (random_kjt(3, seed=2),))
    assert [n.op_type for n in ember_nodes(m)].count("EmbeddingCollection") == 1
    kjt = random_kjt(5, seed=4)
    got = reference(m, kjt_arrays("kjt", kjt))
    for g, w in zip(got, eager(model, kjt)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_feature_read_by_two_tables():
    """TorchRec keys a feature read by two tables "f@table": the tables are cut into groups
    that read no feature twice, one EmbeddingCollection each, outputs in TorchRec's order."""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.ec = EmbeddingCollection(tables=[
                EmbeddingConfig(name="t_ui", embedding_dim=DIM, num_embeddings=ROWS["t_ui"],
                                feature_names=["f_user", "f_item"]),
                EmbeddingConfig(name="t_u2", embedding_dim=DIM, num_embeddings=ROWS["t_ui"],
                                feature_names=["f_user"]),
            ], device=torch.device("cpu"))

        def forward(self, kjt):
            seqs = self.ec(kjt)
            assert list(seqs) == ["f_user@t_ui", "f_item", "f_user@t_u2"]
            return tuple(seqs[k].to_padded_dense(PAD_LEN) for k in seqs)

    model = widened(Model())
    m = ember.to_onnx(model, (random_kjt(3, seed=2),))
    ecs = [n for n in ember_nodes(m) if n.op_type == "EmbeddingCollection"]
    assert [attr(n, "table_names") for n in ecs] == [[b"t_ui"], [b"t_u2"]]
    assert [attr(n, "feature_tables") for n in ecs] == [[0, 0], [0]]
    assert all(attr(n, "module") == b"ec" for n in ecs)
    kjt = random_kjt(4, seed=5)
    got = reference(m, kjt_arrays("kjt", kjt))
    for g, w in zip(got, eager(model, kjt)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_fp16_table_is_its_exact_f32_copy():
    """An FP16 table: TorchRec looks the fp16 rows up and returns them .float(); the export
    writes the f32 copy of the table, which gives the same numbers."""
    from torchrec.types import DataType

    ec = EmbeddingCollection(tables=[EmbeddingConfig(
        name="t_ui", embedding_dim=DIM, num_embeddings=ROWS["t_ui"],
        feature_names=["f_user", "f_item"], data_type=DataType.FP16)],
        device=torch.device("cpu"))
    assert ec.embeddings["t_ui"].weight.dtype == torch.float16
    model = _seq_model(lambda d: d["f_item"].to_padded_dense(PAD_LEN), ec)
    keys = ["f_user", "f_item"]
    m = ember.to_onnx(model, (random_kjt(3, seed=2, keys=keys),))
    (table,) = [t for t in m.graph.initializer if t.name.startswith("sparse.ec.embeddings.t_ui")]
    assert table.data_type == onnx.TensorProto.FLOAT
    kjt = random_kjt(4, seed=8, keys=keys)
    (got,) = reference(m, kjt_arrays("kjt", kjt))
    (want,) = eager(model, kjt)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------- errors
def _seq_model(body, ec=None):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.sparse = nn.Module()
            self.sparse.ec = ec if ec is not None else make_ec()

        def forward(self, kjt):
            return body(self.sparse.ec(kjt))

    return Model().eval()


def _refused(model, kjt, tmp_path, pattern):
    with pytest.raises(ember.ExportError, match=pattern):
        ember.export(model, (kjt,), str(tmp_path / "m.onnx"))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("body,pattern", [
    (lambda d: d["f_user"].to_dense()[0],
     r"JaggedTensor\.to_dense\(\) of the JaggedTensor 'f_user' of EmbeddingCollection "
     r"'sparse\.ec' is not supported by the exporter \(only values\(\), offsets\(\)"),
    (lambda d: d["f_user"].weights_or_none(),
     r"JaggedTensor\.weights_or_none\(\) of the JaggedTensor 'f_user' of EmbeddingCollection "
     r"'sparse\.ec' is not supported"),
    (lambda d: d["f_ctx"].to_padded_dense(),
     r"to_padded_dense\(\) of the JaggedTensor 'f_ctx' of EmbeddingCollection 'sparse\.ec' "
     r"without desired_length pads to the longest row, which depends on the data"),
    (lambda d: torch.ops.fbgemm.jagged_to_padded_dense(
        d["f_user"].values(), [d["f_ctx"].offsets()], [2], 0.0),
     r"fbgemm\.jagged_to_padded_dense of the values of the JaggedTensor 'f_user' of "
     r"EmbeddingCollection 'sparse\.ec' with the offsets of the JaggedTensor 'f_ctx'"),
    (lambda d: torch.ops.fbgemm.jagged_to_padded_dense(
        d["f_user"].values() + 1, [d["f_user"].offsets()], [2], 0.0),
     r"fbgemm\.jagged_to_padded_dense is exported only for the values\(\) and \[offsets\(\)\] "
     r"of one EmbeddingCollection JaggedTensor \(its values argument is not\)"),
    (lambda d: d["f_item"],
     r"node 'output' \(output output\): output 0 is not a tensor \(the JaggedTensor 'f_item' "
     r"of EmbeddingCollection 'sparse\.ec'; return its values\(\)"),
    (lambda d: d,
     r"output 0 is not a tensor \(the JaggedTensor 'f_user' of EmbeddingCollection 'sparse\.ec'"),
], ids=["to_dense", "weights", "to_padded_no_length", "fbgemm_two_jaggeds", "fbgemm_computed",
        "jagged_output", "dict_output"])
def test_unsupported_jagged_reads_name_the_collection(body, pattern, tmp_path):
    _refused(_seq_model(body), random_kjt(3, seed=6), tmp_path, pattern)


def test_need_indices_is_refused(tmp_path):
    model = _seq_model(lambda d: d["f_user"].values(), make_ec(need_indices=True))
    _refused(model, random_kjt(3, seed=6), tmp_path,
             r"in module 'sparse\.ec': EmbeddingCollection with need_indices=True")


def test_weighted_kjt_is_refused(tmp_path):
    """TorchRec's EmbeddingCollection ignores a KJT's weights: refused, not dropped."""
    kjt = random_kjt(3, seed=6)
    weighted = KeyedJaggedTensor.from_lengths_sync(
        keys=KJT_KEYS, values=kjt.values(), lengths=kjt.lengths(),
        weights=torch.rand(kjt.values().numel()))
    _refused(_seq_model(lambda d: d["f_user"].values()), weighted, tmp_path,
             r"in module 'sparse\.ec': TorchRec's EmbeddingCollection ignores the KJT's weights")


def test_quantized_embedding_collection_is_refused(tmp_path):
    """TorchRec's quantized EmbeddingCollection keeps FBGEMM's packed rows: refused, naming
    the module, instead of writing the packed bytes as a float table."""
    from torchrec.quant.embedding_modules import EmbeddingCollection as QuantEC

    ec = make_ec()
    ec.qconfig = torch.quantization.QConfig(
        activation=torch.quantization.PlaceholderObserver.with_args(dtype=torch.qint8),
        weight=torch.quantization.PlaceholderObserver.with_args(dtype=torch.qint8))
    model = _seq_model(lambda d: d["f_user"].values(), QuantEC.from_float(ec))
    _refused(model, random_kjt(3, seed=6), tmp_path,
             r"in module 'sparse\.ec': TorchRec's quantized EmbeddingCollection")


def test_missing_feature_is_refused(tmp_path):
    kjt = random_kjt(3, seed=6, keys=["f_user", "f_item"])
    with pytest.raises(Exception, match="f_ctx"):  # TorchRec eager fails first (KeyError)
        ember.export(_seq_model(lambda d: d["f_user"].values()), (kjt,),
                     str(tmp_path / "m.onnx"))
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------- import
def test_export_imports_as_embedding_collection(tmp_path):
    """ember-translate: one ember.embedding_collection with the tables made from the
    initializers and TorchRec's names, ember.jagged.to_padded per feature."""
    translate = tool("EMBER_TRANSLATE", "ember-translate")
    model = widened(PaddedSequenceModel())
    path = str(tmp_path / "seq.onnx")
    ember.export(model, (torch.randn(4, DENSE_IN), random_kjt(4, seed=1)), path)
    proc = subprocess.run([translate, "--import-onnx", path], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    ir = proc.stdout
    assert ('!ember.kjt<["f_item", "f_ctx", "f_user"], values = i64, lengths = i64> '
            '{onnx.name = "sparse_features"}') in ir
    assert "ember.kjt.permute %arg1 [2, 0, 1]" in ir
    assert ir.count("ember.table.from_tensor") == 2
    assert ('feature_tables = [0, 0, 1] {ember.module = "sparse.ec", '
            'ember.table_names = ["t_ui", "t_ctx"]}') in ir
    assert ("-> !ember.jagged<f32, [4]>, !ember.jagged<f32, [4]>, !ember.jagged<f32, [4]>"
            in ir)
    assert ir.count("ember.jagged.to_padded") == 3
    assert "max_length = 3 padding = 2.500000e-01 : f32" in ir


# ---------------------------------------------------------------------------- end to end
def run_inputs(dense, kjt):
    return {"dense_features": dense.numpy(), **kjt_arrays("sparse_features", kjt)}


@pytest.mark.parametrize("batch,empty", [(5, ()), (1, ()), (4, tuple(KJT_KEYS))],
                         ids=["batch5", "batch1", "all_empty"])
def test_padded_sequence_model_matches_torchrec_eager(batch, empty, tmp_path):
    """EmbeddingCollection (2 tables, 3 features), each feature padded to PAD_LEN rows by
    to_padded_dense, into an MLP: exported once at batch 4, compiled, run at batch 5 (rows
    longer and shorter than PAD_LEN), batch 1, and with every feature empty (no ids at
    all), against TorchRec eager."""
    model = widened(PaddedSequenceModel())
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=1))
    g = torch.Generator().manual_seed(batch)
    dense, kjt = torch.randn(batch, DENSE_IN, generator=g), random_kjt(batch, seed=20 + batch,
                                                                     empty=empty)
    if empty:
        assert kjt.values().numel() == 0
    (got,) = compile_and_run(model, example, run_inputs(dense, kjt), tmp_path, "seq")
    (want,) = eager(model, dense, kjt)
    assert got.shape == want.shape == (batch, 1)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_jagged_reads_match_torchrec_eager(tmp_path):
    """values(), offsets(), lengths() and fbgemm's jagged_to_padded_dense of an
    EmbeddingCollection's result, compiled and run, against TorchRec eager."""
    model = widened(JaggedReadsModel())
    plan = export_and_compile(model, (random_kjt(3, seed=2),), tmp_path, "reads")
    for batch in (1, 6):
        kjt = random_kjt(batch, seed=30 + batch)
        got = run_plan(plan, kjt_arrays("sparse_features", kjt), tmp_path, "reads")
        want = eager(model, kjt)
        assert len(got) == len(want) == 4
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)


def test_static_batch_export_keeps_the_id_count_dynamic(tmp_path):
    """dynamic_batch=False fixes B at the example's, not N: values() returned as it is has a
    run-time dim 0, and the plan runs on another id count."""
    model = _seq_model(lambda d: (d["f_user"].values(), d["f_ctx"].to_padded_dense(2)))
    widened(model)
    example = random_kjt(3, seed=2)
    m = ember.to_onnx(model, (example,), dynamic_batch=False)
    assert [dims(o) for o in m.graph.output] == [[None, DIM], [3, 2, DIM]]
    kjt = random_kjt(3, seed=9)
    assert kjt.lengths()[-3:].sum() != example.lengths()[-3:].sum()  # f_user's count differs
    got = compile_and_run(model, (example,), kjt_arrays("kjt", kjt), tmp_path, "static",
                          dynamic_batch=False)
    for g, w in zip(got, eager(model, kjt)):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)


# ---------------------------------------------------------------------------- sharded
SHARDINGS = ["table_wise", "row_wise", "column_wise", "table_row_wise", "data_parallel"]


@pytest.mark.parametrize("nproc", [2, 4])
@pytest.mark.parametrize("sharding", SHARDINGS)
def test_sharded_sequence_model_matches_torchrec_eager(sharding, nproc, tmp_path):
    """The padded EmbeddingCollection model exported once, compiled for 2 and 4 ranks with
    every table forced to each sharding type (row-wise blocks bucketized, column shards
    of DIM/2 columns where the dim allows, table-row-wise over nodes of 2 ranks), run with
    ember-run --nproc on one global batch of 7 (uneven over the ranks): every id's row
    comes back to its sample's rank by the sequence all-to-all, and the result equals
    TorchRec eager."""
    model = widened(PaddedSequenceModel())
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=1))
    plan = export_and_compile(model, example, tmp_path, "sharded", compile_args=(
        "--world-size", str(nproc), "--sharding", sharding, "--ranks-per-node", "2"))
    if sharding != "data_parallel":
        with open(plan, "rb") as f:
            assert b"sequence_all_to_all" in f.read()
    g = torch.Generator().manual_seed(7)
    dense, kjt = torch.randn(7, DENSE_IN, generator=g), random_kjt(7, seed=77)
    (got,) = run_plan(plan, run_inputs(dense, kjt), tmp_path, "sharded",
                      run_args=("--nproc", str(nproc)))
    (want,) = eager(model, dense, kjt)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_torchrec_planner_plan_for_a_collection_compiles_with_ember(tmp_path):
    """TorchRec's EmbeddingShardingPlanner plans the collection's tables with its
    EmbeddingCollectionSharder (on a CPU topology it offers no row_wise: t_ui is
    constrained to column_wise, t_ctx to table_wise); ember.torchrec_plan.plan_to_json
    writes it; ember-compile --plan follows it (tables matched by TorchRec's names under
    the module path) and the 2-rank run equals TorchRec eager."""
    import json

    from ember.torchrec_plan import plan_to_json
    from torchrec.distributed.embedding import EmbeddingCollectionSharder
    from torchrec.distributed.planner import (EmbeddingShardingPlanner, ParameterConstraints,
                                              Topology)

    model = widened(PaddedSequenceModel())
    planner = EmbeddingShardingPlanner(
        topology=Topology(world_size=2, compute_device="cpu"),
        constraints={"t_ui": ParameterConstraints(sharding_types=["column_wise"]),
                     "t_ctx": ParameterConstraints(sharding_types=["table_wise"])})
    plan = plan_to_json(planner.plan(model, [EmbeddingCollectionSharder()]))
    assert set(plan) == {"sparse.ec"}
    assert set(plan["sparse.ec"]) == {"t_ui", "t_ctx"}
    assert plan["sparse.ec"]["t_ui"]["sharding_type"] == "column_wise"
    plan_file = tmp_path / "torchrec_plan.json"
    plan_file.write_text(json.dumps(plan))
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=1))
    sharded = export_and_compile(model, example, tmp_path, "sharded",
                                 compile_args=("--world-size", "2", "--plan", str(plan_file)))
    g = torch.Generator().manual_seed(5)
    dense, kjt = torch.randn(6, DENSE_IN, generator=g), random_kjt(6, seed=55)
    (got,) = run_plan(sharded, run_inputs(dense, kjt), tmp_path, "sharded",
                      run_args=("--nproc", "2"))
    (want,) = eager(model, dense, kjt)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    # Ember's own plan export shows back what it compiled.
    out = tmp_path / "back.json"
    proc = subprocess.run([tool("EMBER_COMPILE", "ember-compile"), str(tmp_path / "sharded.onnx"),
                           "-o", str(out), "--world-size", "2", "--plan", str(plan_file),
                           "--emit", "sharding-plan"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    back = json.loads(out.read_text())["sparse.ec"]
    for name in ("t_ui", "t_ctx"):
        assert back[name]["sharding_type"] == plan["sparse.ec"][name]["sharding_type"]
        assert [s["shard_sizes"] for s in back[name]["sharding_spec"]["shards"]] == \
            [s["shard_sizes"] for s in plan["sparse.ec"][name]["sharding_spec"]["shards"]]


@pytest.mark.parametrize("sharding", ["table_wise", "row_wise", "column_wise"])
def test_ember_plan_for_a_collection_loads_into_torchrec(sharding, tmp_path):
    """ember-compile --emit sharding-plan of the collection model is TorchRec's ShardingPlan
    shape (module path -> TorchRec table names); plan_from_json makes a ShardingPlan whose
    shards tile every table once."""
    import json

    from ember.torchrec_plan import plan_from_json
    from torchrec.distributed.types import ShardingPlan

    model = widened(PaddedSequenceModel())
    export_and_compile(model, (torch.randn(4, DENSE_IN), random_kjt(4, seed=1)), tmp_path, "m")
    out = tmp_path / "plan.json"
    proc = subprocess.run([tool("EMBER_COMPILE", "ember-compile"), str(tmp_path / "m.onnx"),
                           "-o", str(out), "--world-size", "2", "--sharding", sharding,
                           "--emit", "sharding-plan"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    plan = plan_from_json(json.loads(out.read_text()))
    assert isinstance(plan, ShardingPlan)
    module_plan = plan.plan["sparse.ec"]
    assert set(module_plan) == set(ROWS)
    for name, ps in module_plan.items():
        assert ps.sharding_type == sharding
        area = sum(s.shard_sizes[0] * s.shard_sizes[1] for s in ps.sharding_spec.shards)
        assert area == ROWS[name] * DIM, name


class MeanPooledSequenceModel(nn.Module):
    """Each feature's sequence padded to PAD_LEN and averaged (to_padded_dense(L).mean(1)),
    the way sequence models pool a history: compiled to one jagged_sum per feature, the
    padded tensor never made."""

    def __init__(self):
        super().__init__()
        self.sparse = nn.Module()
        self.sparse.ec = make_ec()
        self.top = nn.Linear(3 * DIM, 1)

    def forward(self, sparse_features):
        seqs = self.sparse.ec(sparse_features)
        pooled = [seqs[k].to_padded_dense(desired_length=PAD_LEN).mean(1) for k in FEATURES]
        return self.top(torch.cat(pooled, dim=1))


@pytest.mark.parametrize("nproc,sharding", [(1, None), (2, "row_wise"), (2, "table_wise")])
def test_mean_pooled_sequences_match_torchrec_eager(nproc, sharding, tmp_path):
    model = widened(MeanPooledSequenceModel())
    args = () if nproc == 1 else ("--world-size", str(nproc), "--sharding", sharding)
    plan = export_and_compile(model, (random_kjt(4, seed=1),), tmp_path, "mean",
                              compile_args=args)
    with open(plan, "rb") as f:
        data = f.read()
    assert b"jagged_sum" in data and b"jagged_to_padded" not in data
    kjt = random_kjt(7, seed=17, empty=("f_ctx",))
    run_args = () if nproc == 1 else ("--nproc", str(nproc))
    (got,) = run_plan(plan, kjt_arrays("sparse_features", kjt), tmp_path, "mean",
                      run_args=run_args)
    (want,) = eager(model, kjt)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
