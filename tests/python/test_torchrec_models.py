"""TorchRec's stock models (torchrec.models.dlrm: DLRM, DLRM_DCN, DLRM_Projection), built
with TorchRec's own EmbeddingBagCollection / EmbeddingBagConfig / KeyedJaggedTensor, through
ember.export -> ember-compile -> ember-run on one rank, compared with TorchRec eager.

Optional: skipped unless TorchRec is importable (ctest test `torchrec` runs it in the venv
of scripts/setup-torchrec-venv.sh). Small sizes, fixed seeds; edge cases: batch 1, a
feature whose bags are all empty, ids at the table edge, another value count than the
example's.
"""

import os

import numpy as np
import pytest
import torch
import torch.nn as nn

torchrec = pytest.importorskip("torchrec", reason="TorchRec is not importable "
                               "(bash scripts/setup-torchrec-venv.sh makes a venv with it)")
pytest.importorskip("onnx")
pytestmark = pytest.mark.torchrec

import ember  # noqa: E402
from e2e import compile_and_run, kjt_arrays  # noqa: E402
from torchrec import EmbeddingBagCollection, EmbeddingBagConfig, KeyedJaggedTensor  # noqa: E402
from torchrec.models.dlrm import DLRM, DLRM_DCN, DLRM_Projection  # noqa: E402

ROWS = {"f_user": 300, "f_item": 200, "f_ctx": 100}
KEYS = list(ROWS)
DIM = 8
DENSE_IN = 6
RTOL, ATOL = 1e-4, 1e-6


def make_ebc():
    return EmbeddingBagCollection(tables=[
        EmbeddingBagConfig(name=f"t_{key[2:]}", embedding_dim=DIM, num_embeddings=rows,
                           feature_names=[key])
        for key, rows in ROWS.items()], device=torch.device("cpu"))


def make_model(kind: str) -> nn.Module:
    torch.manual_seed(0)
    if kind == "DLRM":
        model = DLRM(embedding_bag_collection=make_ebc(), dense_in_features=DENSE_IN,
                     dense_arch_layer_sizes=[16, DIM], over_arch_layer_sizes=[12, 1])
    elif kind == "DLRM_DCN":
        model = DLRM_DCN(embedding_bag_collection=make_ebc(), dense_in_features=DENSE_IN,
                         dense_arch_layer_sizes=[16, DIM], over_arch_layer_sizes=[12, 1],
                         dcn_num_layers=2, dcn_low_rank_dim=4)
    elif kind == "DLRM_Projection":
        model = DLRM_Projection(embedding_bag_collection=make_ebc(), dense_in_features=DENSE_IN,
                                dense_arch_layer_sizes=[16, DIM], over_arch_layer_sizes=[12, 1],
                                interaction_branch1_layer_sizes=[16, 3 * DIM],
                                interaction_branch2_layer_sizes=[16, 2 * DIM])
    else:
        raise ValueError(kind)
    return widened(model)


def widened(model: nn.Module) -> nn.Module:
    """TorchRec initializes small weights (outputs near one value for every sample); wider
    random weights make the comparison sensitive to every input. In eval mode."""
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.4)
    return model.eval()


def random_kjt(batch: int, seed: int, empty_key: str = "f_ctx", max_len: int = 4):
    """Random bags (some empty); every bag of ``empty_key`` is empty; the last id of a
    non-empty feature is at its table's edge."""
    g = torch.Generator().manual_seed(seed)
    lengths, values = [], []
    for key in KEYS:
        lens = torch.zeros(batch, dtype=torch.int64) if key == empty_key else \
            torch.randint(0, max_len + 1, (batch,), generator=g)
        if key != empty_key and int(lens.sum()) == 0:
            lens[0] = 1
        ids = torch.randint(0, ROWS[key], (int(lens.sum()),), generator=g)
        if ids.numel():
            ids[-1] = ROWS[key] - 1
        lengths.append(lens)
        values.append(ids)
    return KeyedJaggedTensor.from_lengths_sync(keys=KEYS, values=torch.cat(values),
                                               lengths=torch.cat(lengths))


def run_inputs(dense, kjt):
    return {"dense_features": dense.numpy(), **kjt_arrays("sparse_features", kjt)}


def eager(model, dense, kjt):
    with torch.no_grad():
        return model(dense, kjt).numpy()


@pytest.mark.parametrize("batch", [1, 5])
@pytest.mark.parametrize("kind", ["DLRM", "DLRM_DCN", "DLRM_Projection"])
def test_stock_model_matches_torchrec_eager(kind, batch, tmp_path, record_property):
    model = make_model(kind)
    g = torch.Generator().manual_seed(batch)
    example = (torch.randn(batch, DENSE_IN, generator=g), random_kjt(batch, seed=1, empty_key=""))
    # The plan is compiled once from the example and run on other data: another value count,
    # a feature with only empty bags.
    dense, kjt = torch.randn(batch, DENSE_IN, generator=g), random_kjt(batch, seed=2)
    assert int(kjt.lengths()[2 * batch:].sum()) == 0
    got = compile_and_run(model, example, run_inputs(dense, kjt), tmp_path, kind)
    want = eager(model, dense, kjt)
    assert len(got) == 1 and got[0].shape == want.shape == (batch, 1)
    np.testing.assert_allclose(got[0], want, rtol=RTOL, atol=ATOL)
    record_property("max_abs_diff", float(np.abs(got[0] - want).max()))
    if batch > 1:
        assert np.ptp(want) > 1e-2  # the samples differ: a mixed-up batch would show


def test_stock_dlrm_onnx_uses_importer_ops(tmp_path):
    """The interaction's triu pairs are one constant Gather; the MLPs are Gemms."""
    onnx = pytest.importorskip("onnx")
    model = make_model("DLRM")
    path = str(tmp_path / "dlrm.onnx")
    ember.export(model, (torch.randn(4, DENSE_IN), random_kjt(4, seed=3, empty_key="")), path)
    m = onnx.load(path)
    ops = [n.op_type for n in m.graph.node]
    assert ops.count("Gather") == 1 and ops.count("Gemm") == 4 and ops.count("MatMul") == 1
    assert [n.op_type for n in m.graph.node if n.domain == "ember"] == [
        "KJT", "EmbeddingBagCollection", "KeyedTensorGet", "KeyedTensorGet", "KeyedTensorGet"]
    assert [i.name for i in m.graph.input] == [
        "dense_features", "sparse_features.values", "sparse_features.lengths"]


def test_unsupported_stock_module_names_its_path(tmp_path):
    """DLRM_DCN whose crossnet calls an op the exporter does not know (logcumsumexp): the
    error names the node, the module path and the operation, and no file is written."""

    class OddCross(nn.Module):
        def forward(self, x):
            return torch.logcumsumexp(x, dim=1)

    model = make_model("DLRM_DCN")
    model.inter_arch.crossnet = OddCross()
    example = (torch.randn(3, DENSE_IN), random_kjt(3, seed=4))
    with pytest.raises(ember.ExportError,
                       match=r"node 'logcumsumexp' \(call_function logcumsumexp\) in module "
                             r"'inter_arch\.crossnet': operation not supported by the exporter"):
        ember.export(model, example, str(tmp_path / "odd.onnx"))
    assert os.listdir(tmp_path) == []


def test_quantized_ebc_with_quantized_outputs_is_refused(tmp_path):
    """TorchRec's quantized EmbeddingBagCollection exports (test_torchrec_quant.py), but
    not with qint8 activations (its outputs would not be float32, which Ember's lookups
    produce): the export refuses it naming the module, and writes nothing."""
    from torchrec.quant.embedding_modules import EmbeddingBagCollection as QuantEBC

    ebc = make_ebc()
    ebc.qconfig = torch.quantization.QConfig(
        activation=torch.quantization.PlaceholderObserver.with_args(dtype=torch.qint8),
        weight=torch.quantization.PlaceholderObserver.with_args(dtype=torch.qint8))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.sparse = QuantEBC.from_float(ebc)

        def forward(self, kjt):
            return self.sparse(kjt).values()

    with pytest.raises(ember.ExportError,
                       match=r"in module 'sparse': TorchRec's quantized EmbeddingBagCollection: "
                             r"output_dtype torch\.qint8 is not supported"):
        ember.export(Model(), (random_kjt(3, seed=5, empty_key=""),), str(tmp_path / "q.onnx"))
    assert os.listdir(tmp_path) == []


def test_unsupported_stock_leaf_module_names_its_path(tmp_path):
    """TorchRec's EmbeddingCollection with need_indices=True (the ids as the JaggedTensors'
    weights) is not exported: the error names the module path (the plain collection is,
    tests/python/test_torchrec_sequence.py)."""
    from torchrec import EmbeddingCollection, EmbeddingConfig

    class Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.sparse = nn.Module()
            self.sparse.ec = EmbeddingCollection(tables=[EmbeddingConfig(
                name="t", embedding_dim=4, num_embeddings=10, feature_names=["f_user"])],
                device=torch.device("cpu"), need_indices=True)

        def forward(self, kjt):
            return self.sparse.ec(kjt)["f_user"].values()

    kjt = KeyedJaggedTensor.from_lengths_sync(keys=["f_user"], values=torch.tensor([1, 2, 9]),
                                              lengths=torch.tensor([2, 1]))
    with pytest.raises(ember.ExportError, match=r"in module 'sparse\.ec': EmbeddingCollection "
                                                r"with need_indices=True .* is not supported"):
        ember.export(Seq(), (kjt,), str(tmp_path / "seq.onnx"))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kind", ["DLRM", "DLRM_DCN", "DLRM_Projection"])
def test_stock_model_one_export_runs_at_every_batch(kind, tmp_path, record_property):
    """Exported once at batch 4 (the batch is symbolic), compiled once without and once with
    --max-batch 16, run at batches 1, 3, 8 and 16 against TorchRec eager; batch 17 is above
    the bound: a clean input error naming the KJT input and the batch symbol."""
    from e2e import export_and_compile, run_plan

    model = make_model(kind)
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=3, empty_key=""))
    diffs = {}
    for args in ((), ("--max-batch", "16")):
        name = kind + ("_bounded" if args else "")
        plan = export_and_compile(model, example, tmp_path, name, compile_args=args)
        for batch in (1, 3, 8, 16):
            g = torch.Generator().manual_seed(100 + batch)
            dense, kjt = torch.randn(batch, DENSE_IN, generator=g), random_kjt(batch, seed=batch)
            (got,) = run_plan(plan, run_inputs(dense, kjt), tmp_path, name)
            want = eager(model, dense, kjt)
            assert got.shape == want.shape == (batch, 1)
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
            diffs[f"{name}@{batch}"] = float(np.abs(got - want).max())
    dense, kjt = torch.randn(17, DENSE_IN), random_kjt(17, seed=17)
    proc = run_plan(plan, run_inputs(dense, kjt), tmp_path, kind + "_bounded", expect_ok=False)
    assert proc.returncode == 1
    assert ("KJT input 'sparse_features' batch size: 'B' is 17 for sparse_features, above the "
            "plan's bound of 16") in proc.stderr
    assert not (tmp_path / f"{kind}_bounded.out" / "output_0.npy").exists()
    record_property("max_abs_diff", max(diffs.values()))


def test_dense_and_sparse_batches_must_agree(tmp_path):
    """The dense input and the KJT share the batch symbol B: different batches are an input
    error naming both, not a short output."""
    from e2e import export_and_compile, run_plan

    model = make_model("DLRM")
    plan = export_and_compile(model, (torch.randn(4, DENSE_IN), random_kjt(4, seed=3)),
                              tmp_path, "dlrm")
    proc = run_plan(plan, run_inputs(torch.randn(3, DENSE_IN), random_kjt(5, seed=5)),
                    tmp_path, "dlrm", expect_ok=False)
    assert proc.returncode == 1
    assert "'B' is" in proc.stderr and "dense_features" in proc.stderr, proc.stderr


def test_stock_dlrm_two_rank_data_parallel_equals_one_rank(tmp_path):
    """ember-compile --world-size 2 --sharding data_parallel; ember-run --nproc 2 splits the
    global batch of 8 (dense rows and KJT bags) over the ranks and gathers the outputs: they
    equal the single-rank plan's on the same global batch, and TorchRec eager."""
    from e2e import export_and_compile, run_plan

    model = make_model("DLRM")
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=3, empty_key=""))
    single = export_and_compile(model, example, tmp_path, "single")
    multi = export_and_compile(model, example, tmp_path, "multi",
                               compile_args=("--world-size", "2", "--sharding", "data_parallel"))
    g = torch.Generator().manual_seed(8)
    dense, kjt = torch.randn(8, DENSE_IN, generator=g), random_kjt(8, seed=8)
    (one,) = run_plan(single, run_inputs(dense, kjt), tmp_path, "single")
    (two,) = run_plan(multi, run_inputs(dense, kjt), tmp_path, "multi", run_args=("--nproc", "2"))
    assert two.shape == one.shape == (8, 1)
    np.testing.assert_array_equal(two, one)
    np.testing.assert_allclose(two, eager(model, dense, kjt), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("nproc", [2, 4])
@pytest.mark.parametrize("sharding", ["table_wise", "row_wise", "column_wise",
                                      "table_row_wise", "auto"])
@pytest.mark.parametrize("kind", ["DLRM", "DLRM_DCN", "DLRM_Projection"])
def test_stock_model_sharded_equals_one_rank_and_eager(kind, sharding, nproc, tmp_path):
    """TorchRec's DLRM, DLRM_DCN and DLRM_Projection with their EmbeddingBagCollection tables sharded (every
    sharding type, 2 and 4 ranks, 2 ranks per node): the input dist sends the KJT's bags to
    the tables' ranks, the output dist returns the pooled rows. The outputs on a global
    batch of 11 (uneven over the ranks) equal the single-rank plan's and TorchRec eager."""
    from e2e import export_and_compile, run_plan

    model = make_model(kind)
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=3, empty_key=""))
    single = export_and_compile(model, example, tmp_path, "single")
    multi = export_and_compile(model, example, tmp_path, "multi", compile_args=(
        "--world-size", str(nproc), "--sharding", sharding, "--ranks-per-node", "2"))
    if sharding != "auto":
        with open(multi, "rb") as f:
            assert b"kjt_all_to_all" in f.read(), "the tables were not sharded"
    g = torch.Generator().manual_seed(11)
    dense, kjt = torch.randn(11, DENSE_IN, generator=g), random_kjt(11, seed=11)
    (one,) = run_plan(single, run_inputs(dense, kjt), tmp_path, "single")
    (many,) = run_plan(multi, run_inputs(dense, kjt), tmp_path, "multi",
                       run_args=("--nproc", str(nproc)))
    assert many.shape == one.shape == (11, 1)
    np.testing.assert_allclose(many, one, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(many, eager(model, dense, kjt), rtol=RTOL, atol=ATOL)


def _torchrec_planner_plan(model, world_size, constraints=None):
    """TorchRec's own planner on a CPU topology, for the model's EmbeddingBagCollection."""
    from torchrec.distributed.embeddingbag import EmbeddingBagCollectionSharder
    from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology

    planner = EmbeddingShardingPlanner(
        topology=Topology(world_size=world_size, compute_device="cpu"),
        constraints=constraints)
    return planner.plan(model, [EmbeddingBagCollectionSharder()])


def test_torchrec_planner_plan_compiles_with_ember(tmp_path):
    """TorchRec's EmbeddingShardingPlanner plans the DLRM's tables (t_item constrained to
    table_column_wise, the others its own choice); ember.torchrec_plan's plan_to_json
    writes it; t_user is then set row_wise by hand (TorchRec's planner offers no row_wise on
    a CPU topology); ember-compile --plan takes it (tables matched by TorchRec's names, the
    plan followed, not replanned), and the 2-rank run equals TorchRec eager."""
    import json
    import subprocess

    from e2e import export_and_compile, run_plan, tool
    from ember.torchrec_plan import plan_to_json
    from torchrec.distributed.planner import ParameterConstraints

    model = make_model("DLRM")
    plan = plan_to_json(_torchrec_planner_plan(model, 2, constraints={
        "t_item": ParameterConstraints(sharding_types=["table_column_wise"])}))
    assert set(plan) == {"sparse_arch.embedding_bag_collection"}
    tables = plan["sparse_arch.embedding_bag_collection"]
    assert set(tables) == {"t_user", "t_item", "t_ctx"}
    assert tables["t_item"]["sharding_type"] == "table_column_wise"
    rows = ROWS["f_user"]
    half = (rows + 1) // 2
    tables["t_user"] = {"sharding_type": "row_wise", "compute_kernel": "fused", "ranks": [0, 1],
                        "sharding_spec": {"shards": [
                            {"shard_offsets": [0, 0], "shard_sizes": [half, DIM],
                             "placement": "rank:0/cpu"},
                            {"shard_offsets": [half, 0], "shard_sizes": [rows - half, DIM],
                             "placement": "rank:1/cpu"}]}}
    plan_file = tmp_path / "torchrec_plan.json"
    plan_file.write_text(json.dumps(plan))
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=3, empty_key=""))
    sharded = export_and_compile(model, example, tmp_path, "sharded",
                                 compile_args=("--world-size", "2", "--plan", str(plan_file)))
    with open(sharded, "rb") as f:
        # t_user row-wise over both ranks: its partial sums come back by reduce-scatter.
        assert b"reduce_scatter" in f.read()
    g = torch.Generator().manual_seed(9)
    dense, kjt = torch.randn(9, DENSE_IN, generator=g), random_kjt(9, seed=9)
    (got,) = run_plan(sharded, run_inputs(dense, kjt), tmp_path, "sharded",
                      run_args=("--nproc", "2"))
    np.testing.assert_allclose(got, eager(model, dense, kjt), rtol=RTOL, atol=ATOL)
    # What Ember compiled is what the JSON said: its own plan export shows it back
    # (table_column_wise as column_wise, the same shards).
    report = tmp_path / "report.json"
    proc = subprocess.run([tool("EMBER_COMPILE", "ember-compile"), str(tmp_path / "sharded.onnx"),
                           "-o", str(report), "--world-size", "2", "--plan", str(plan_file),
                           "--emit", "sharding-plan"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    back = json.loads(report.read_text())["sparse_arch.embedding_bag_collection"]
    assert back["t_user"]["sharding_type"] == "row_wise"
    assert back["t_item"]["sharding_type"] == "column_wise"
    assert [s["shard_sizes"] for s in back["t_item"]["sharding_spec"]["shards"]] == \
        [s["shard_sizes"] for s in tables["t_item"]["sharding_spec"]["shards"]]
    assert back["t_ctx"]["sharding_type"] == tables["t_ctx"]["sharding_type"]


@pytest.mark.parametrize("sharding", ["table_wise", "row_wise", "column_wise", "data_parallel"])
def test_ember_plan_loads_into_torchrec(sharding, tmp_path):
    """ember-compile --emit sharding-plan writes TorchRec's ShardingPlan shape with TorchRec's
    table names under the collection's module path; ember.torchrec_plan.plan_from_json makes a
    torchrec ShardingPlan of it whose shards tile every table exactly once (or, data
    parallel, replicate it on every rank)."""
    import json
    import subprocess

    from e2e import export_and_compile, tool
    from ember.torchrec_plan import plan_from_json
    from torchrec.distributed.types import ParameterSharding, ShardingPlan

    model = make_model("DLRM")
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=3, empty_key=""))
    export_and_compile(model, example, tmp_path, "m")
    out = tmp_path / "plan.json"
    proc = subprocess.run([tool("EMBER_COMPILE", "ember-compile"), str(tmp_path / "m.onnx"),
                           "-o", str(out), "--world-size", "2", "--sharding", sharding,
                           "--emit", "sharding-plan"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    plan = plan_from_json(json.loads(out.read_text()))
    assert isinstance(plan, ShardingPlan)
    module_plan = plan.plan["sparse_arch.embedding_bag_collection"]
    rows = {"t_user": ROWS["f_user"], "t_item": ROWS["f_item"], "t_ctx": ROWS["f_ctx"]}
    assert set(module_plan) == set(rows)
    for name, ps in module_plan.items():
        assert isinstance(ps, ParameterSharding) and ps.sharding_type == sharding
        if sharding == "data_parallel":
            assert ps.sharding_spec is None and sorted(ps.ranks) == [0, 1]
            continue
        area = sum(s.shard_sizes[0] * s.shard_sizes[1] for s in ps.sharding_spec.shards)
        assert area == rows[name] * DIM, name
        assert all(str(s.placement).startswith("rank:") for s in ps.sharding_spec.shards)


def test_plan_from_json_refuses_tables_outside_a_module():
    from ember.torchrec_plan import plan_from_json

    with pytest.raises(ValueError, match="outside a module"):
        plan_from_json({"t_user": {"sharding_type": "data_parallel", "ranks": [0, 1],
                                   "sharding_spec": None}})
    with pytest.raises(ValueError, match="malformed"):
        plan_from_json({"m": {"t": {"sharding_spec": None}}})


def test_plan_to_json_refuses_a_spec_without_shards():
    from types import SimpleNamespace

    from ember.torchrec_plan import plan_to_json

    sharding = SimpleNamespace(sharding_type="table_wise", compute_kernel="fused", ranks=[0],
                               sharding_spec=object())
    with pytest.raises(ValueError, match="table 't' of 'm': sharding spec object has no shard"):
        plan_to_json(SimpleNamespace(plan={"m": {"t": sharding}}))


class SharedFeatureModel(nn.Module):
    """TorchRec's EmbeddingBagCollection with f_user read by two tables (TorchRec's keys
    "f_user@t_user", "f_ctx", "f_item", "f_user@t_user2"), its values and one key read by name
    into a small over-arch."""

    def __init__(self):
        super().__init__()
        self.sparse = EmbeddingBagCollection(tables=[
            EmbeddingBagConfig(name="t_user", embedding_dim=DIM, num_embeddings=ROWS["f_user"],
                               feature_names=["f_user", "f_ctx"]),
            EmbeddingBagConfig(name="t_item", embedding_dim=DIM, num_embeddings=ROWS["f_item"],
                               feature_names=["f_item"]),
            EmbeddingBagConfig(name="t_user2", embedding_dim=4,
                               num_embeddings=ROWS["f_user"], feature_names=["f_user"]),
        ], device=torch.device("cpu"))
        width = 2 * DIM + DIM + 4  # t_user (two features), t_item, t_user2
        self.over = nn.Linear(width + 4 + 4, 1)

    def forward(self, dense_features, sparse_features):
        kt = self.sparse(sparse_features)
        return torch.sigmoid(self.over(torch.cat(
            [kt.values(), kt["f_user@t_user2"], dense_features[:, :4]], dim=1)))


@pytest.mark.parametrize("sharding", [None, "table_wise", "row_wise"])
def test_feature_read_by_two_tables(sharding, tmp_path):
    """A feature read by two tables: the export cuts the collection into groups that read
    no feature twice and concatenates their columns in TorchRec's order (a key of the
    second group read by name too). Matches TorchRec eager on one rank and with the tables
    sharded on 2 ranks."""
    from e2e import export_and_compile, run_plan

    torch.manual_seed(0)
    model = widened(SharedFeatureModel())
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=3, empty_key=""))
    args = () if sharding is None else ("--world-size", "2", "--sharding", sharding)
    plan = export_and_compile(model, example, tmp_path, "shared", compile_args=args)
    g = torch.Generator().manual_seed(7)
    dense, kjt = torch.randn(7, DENSE_IN, generator=g), random_kjt(7, seed=7)
    run_args = () if sharding is None else ("--nproc", "2")
    (got,) = run_plan(plan, run_inputs(dense, kjt), tmp_path, "shared", run_args=run_args)
    want = eager(model, dense, kjt)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    assert np.ptp(want) > 1e-2


class WeightedModel(nn.Module):
    """TorchRec's weighted EmbeddingBagCollection (is_weighted=True: the KJT's weights scale
    the rows, sum pooling) into a linear layer."""

    def __init__(self):
        super().__init__()
        self.sparse = EmbeddingBagCollection(tables=[
            EmbeddingBagConfig(name=f"t_{key[2:]}", embedding_dim=DIM, num_embeddings=rows,
                               feature_names=[key])
            for key, rows in ROWS.items()], is_weighted=True, device=torch.device("cpu"))
        self.over = nn.Linear(len(ROWS) * DIM, 1)

    def forward(self, sparse_features):
        return torch.sigmoid(self.over(self.sparse(sparse_features).values()))


def weighted_kjt(batch: int, seed: int):
    kjt = random_kjt(batch, seed)
    g = torch.Generator().manual_seed(seed + 100)
    return KeyedJaggedTensor.from_lengths_sync(
        keys=KEYS, values=kjt.values(), lengths=kjt.lengths(),
        weights=torch.rand(kjt.values().numel(), generator=g) + 0.5)


@pytest.mark.parametrize("sharding", [None, "table_wise", "row_wise", "column_wise"])
def test_weighted_ebc_matches_eager(sharding, tmp_path):
    """A weighted EBC: the KJT's per-value weights travel with its ids (through the input
    all-to-all when sharded) and scale the pooled rows, on one rank and on 2 ranks."""
    from e2e import export_and_compile, run_plan

    torch.manual_seed(0)
    model = widened(WeightedModel())
    args = () if sharding is None else ("--world-size", "2", "--sharding", sharding)
    plan = export_and_compile(model, (weighted_kjt(4, seed=3),), tmp_path, "weighted",
                              compile_args=args)
    kjt = weighted_kjt(9, seed=9)
    run_args = () if sharding is None else ("--nproc", "2")
    (got,) = run_plan(plan, kjt_arrays("sparse_features", kjt), tmp_path, "weighted",
                      run_args=run_args)
    with torch.no_grad():
        want = model(kjt).numpy()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    # The weights matter: without them the output differs.
    with torch.no_grad():
        unweighted = model(KeyedJaggedTensor.from_lengths_sync(
            keys=KEYS, values=kjt.values(), lengths=kjt.lengths(),
            weights=torch.ones(kjt.values().numel()))).numpy()
    assert np.abs(unweighted - want).max() > 1e-3


def test_variable_batch_kjt_is_refused(tmp_path):
    """A variable-batch KJT (TorchRec VBE: a batch size per key, inverse_indices) flattens
    to its values and lengths only, which would export as one batch for every key and
    compute the wrong thing: the export refuses it, naming the input, and writes nothing."""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.ebc = make_ebc()

        def forward(self, kjt):
            return self.ebc(kjt).values()

    kjt = KeyedJaggedTensor(
        keys=KEYS, values=torch.tensor([1, 2, 3, 4, 5, 6]),
        lengths=torch.tensor([1, 1, 2, 1, 1]),
        stride_per_key_per_rank=[[2], [2], [1]],
        inverse_indices=(KEYS, torch.tensor([[0, 1, 1], [0, 0, 1], [0, 0, 0]])))
    with pytest.raises(ember.ExportError, match=r"input\[0\]: a variable-batch "
                                                r"KeyedJaggedTensor \(TorchRec VBE"):
        ember.export(Model(), (kjt,), str(tmp_path / "vbe.onnx"))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kind", ["VectorCrossNet", "LowRankMixtureCrossNet"])
def test_dcn_crossnet_variants_match_torchrec_eager(kind, tmp_path):
    """DLRM_DCN with TorchRec's other crossnets: VectorCrossNet (torch.tensordot) and
    LowRankMixtureCrossNet (experts: torch.stack, softmax gating, bmm), exported once,
    compiled and run at batch 5 against TorchRec eager."""
    from torchrec.modules.crossnet import LowRankMixtureCrossNet, VectorCrossNet

    model = make_model("DLRM_DCN")
    width = (len(KEYS) + 1) * DIM
    model.inter_arch.crossnet = (
        VectorCrossNet(in_features=width, num_layers=2) if kind == "VectorCrossNet" else
        LowRankMixtureCrossNet(in_features=width, num_layers=2, num_experts=3, low_rank=4))
    widened(model)
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=4))
    g = torch.Generator().manual_seed(5)
    dense, kjt = torch.randn(5, DENSE_IN, generator=g), random_kjt(5, seed=6)
    (got,) = compile_and_run(model, example, run_inputs(dense, kjt), tmp_path, kind)
    np.testing.assert_allclose(got, eager(model, dense, kjt), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("kind", ["DeepFM", "FactorizationMachine"])
def test_deepfm_modules_match_torchrec_eager(kind, tmp_path):
    """TorchRec's DeepFM and FactorizationMachine over an EmbeddingBagCollection's
    per-feature embeddings: their @torch.fx.wrap helper (_get_flatten_input) is traced
    and inlined by the exporter; compiled and run against TorchRec eager."""
    from torchrec.modules.deepfm import DeepFM, FactorizationMachine

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.ebc = make_ebc()
            self.fm = DeepFM(nn.Sequential(nn.Linear(len(KEYS) * DIM, 4), nn.ReLU())) \
                if kind == "DeepFM" else FactorizationMachine()

        def forward(self, kjt):
            kt = self.ebc(kjt).to_dict()
            return self.fm([kt[k] for k in KEYS])

    model = widened(Model())
    example = (random_kjt(4, seed=4),)
    kjt = random_kjt(6, seed=8)
    (got,) = compile_and_run(model, example, kjt_arrays("kjt", kjt), tmp_path, kind)
    with torch.no_grad():
        want = model(kjt).numpy()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_stock_dlrm_in_process_with_torchrec_kjts(tmp_path):
    """ember.Session (the runtime from Python) takes TorchRec's own KeyedJaggedTensor and torch
    tensors as they are and matches TorchRec eager, at batches other than the export's."""
    from e2e import export_and_compile

    try:
        import ember.runtime  # noqa: F401
    except ImportError as error:
        pytest.skip(str(error))
    model = make_model("DLRM")
    example = (torch.randn(4, DENSE_IN), random_kjt(4, seed=3, empty_key=""))
    session = ember.Session(export_and_compile(model, example, tmp_path, "session"))
    for batch in (1, 6):
        g = torch.Generator().manual_seed(200 + batch)
        dense, kjt = torch.randn(batch, DENSE_IN, generator=g), random_kjt(batch, seed=batch)
        (got,) = session.run({"dense_features": dense, "sparse_features": kjt},
                             as_torch=True).values()
        np.testing.assert_allclose(got.numpy(), eager(model, dense, kjt), rtol=RTOL, atol=ATOL)
