"""ember.export: ONNX with standard ops and the ember domain, checked by a numpy reference."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")

import ember  # noqa: E402
import onnx_reference  # noqa: E402
from export_models import branchy, tiny_dlrm, tiny_kjt  # noqa: E402
from helpers import assert_fx_fails  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    model, inputs = tiny_dlrm()
    path = str(tmp_path_factory.mktemp("export") / "dlrm.onnx")
    ember.export(model, inputs, path)
    return model, inputs, onnx.load(path)


def test_plain_fx_fails_on_the_model():
    assert_fx_fails(tiny_dlrm()[0])


def test_signature_follows_forward_with_kjt_flattened(exported):
    _, _, m = exported
    # The KJT's parts feed one ember.KJT node (the per-key idiom), so they are named as
    # ember-compile's KJT input "kjt"; the value count and the batch are symbolic.
    assert [i.name for i in m.graph.input] == ["dense", "kjt.values", "kjt.lengths"]
    assert _dims(m.graph.input) == [["B", 3], ["N_kjt_values"], ["2*B"]]
    assert [o.name for o in m.graph.output] == ["output_0"]
    assert _dims(m.graph.output) == [["B", 1]]
    assert {(o.domain, o.version) for o in m.opset_import} == {("", 17), ("ember", 1)}


def _dims(values):
    return [[d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim] for v in values]


def test_static_batch_keeps_the_example_shapes():
    model, inputs = tiny_dlrm()
    m = ember.to_onnx(model, inputs, dynamic_batch=False)
    assert _dims(m.graph.input) == [[3, 3], ["N_kjt_values"], [6]]
    assert _dims(m.graph.output) == [[3, 1]]
    assert "ScatterND" in {n.op_type for n in m.graph.node}  # the slice write's box


def test_embedding_bags_are_ember_nodes_with_weight_initializers(exported):
    model, _, m = exported
    # values.split(lengths.view(K, -1).sum(1).tolist()) + cumsum offsets into each bag: one
    # KJT, split per key, one single-table collection per bag (no Split / CumSum left).
    ember_nodes = [n for n in m.graph.node if n.domain == "ember"]
    assert [n.op_type for n in ember_nodes] == ["KJT", "KJTSplit", "EmbeddingBagCollection",
                                                "EmbeddingBagCollection"]
    kjt, split, bag0, bag1 = ember_nodes
    assert list(kjt.input) == ["kjt.values", "kjt.lengths"]
    assert list(bag0.input) == [split.output[0], "tables.0.weight"]
    assert list(bag1.input) == [split.output[1], "tables.1.weight"]
    pooling = [onnx.helper.get_attribute_value(a) for n in (bag0, bag1) for a in n.attribute
               if a.name == "pooling"]
    assert pooling == [[b"sum"], [b"mean"]]
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    assert np.array_equal(inits["tables.1.weight"], model.tables[1].weight.detach().numpy())
    ops = {n.op_type for n in m.graph.node}
    # The slice write into a [B, ...] tensor: Slice + a fill of the box's run-time Shape +
    # Concat (a ScatterND's box indices would hold the example's batch).
    assert {"Gemm", "Concat", "Sigmoid", "Shape"} <= ops
    assert not ops & {"Loop", "Split", "CumSum", "ScatterND"}


def test_reference_evaluation_matches_eager(exported):
    model, (dense, kjt), m = exported
    (out,) = onnx_reference.run(m, {"dense": dense.numpy(), "kjt.values": kjt.values().numpy(),
                                    "kjt.lengths": kjt.lengths().numpy()})
    expected = model(dense, kjt).detach().numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    # Another batch with the same shapes (ids at the table edge, an empty bag).
    other = ember.KeyedJaggedTensor(["a", "b"], torch.tensor([9, 0, 9, 1, 2, 3, 4]),
                                    torch.tensor([0, 3, 1, 1, 1, 1]))
    dense2 = torch.randn(3, 3)
    (out2,) = onnx_reference.run(m, {"dense": dense2.numpy(), "kjt.values": other.values().numpy(),
                                     "kjt.lengths": other.lengths().numpy()})
    np.testing.assert_allclose(out2, model(dense2, other).detach().numpy(), rtol=1e-5, atol=1e-6)
    # Other batches (the export's batch is symbolic): 1 and 5.
    for batch, lengths in ((1, [2, 0]), (5, [1, 0, 2, 1, 0, 3, 1, 1, 0, 2])):
        ids = torch.arange(sum(lengths)) % 10
        kjt3 = ember.KeyedJaggedTensor(["a", "b"], ids, torch.tensor(lengths))
        dense3 = torch.randn(batch, 3)
        (out3,) = onnx_reference.run(m, {"dense": dense3.numpy(), "kjt.values": ids.numpy(),
                                         "kjt.lengths": kjt3.lengths().numpy()})
        assert out3.shape == (batch, 1)
        np.testing.assert_allclose(out3, model(dense3, kjt3).detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_failed_module_raises_and_writes_nothing(tmp_path):
    model, inputs = branchy()
    path = tmp_path / "b.onnx"
    with pytest.raises(ember.TraceError, match=r"gate: DataDependentControlFlowError") as info:
        ember.export(model, inputs, str(path))
    assert list(info.value.failures) == ["gate"]
    assert not path.exists() and os.listdir(tmp_path) == []


def test_unsupported_operation_raises_export_error(tmp_path):
    class Odd(torch.nn.Module):
        def forward(self, x):
            return torch.atan2(x, x + 1)

    path = tmp_path / "odd.onnx"
    with pytest.raises(ember.ExportError, match=r"node 'atan2'.*not supported"):
        ember.export(Odd(), (torch.randn(2),), str(path))
    assert os.listdir(tmp_path) == []


def test_write_through_a_view_is_written_back(tmp_path):
    class ViewWrite(torch.nn.Module):
        def forward(self, x):
            y = x * 2
            y[:, :1].add_(1)
            return y

    path = tmp_path / "v.onnx"
    ember.export(ViewWrite(), (torch.randn(2, 3),), str(path))
    m = onnx.load(str(path))
    ops = [n.op_type for n in m.graph.node]
    assert "Concat" in ops and "ScatterND" not in ops  # the view's new value goes back into y
    for batch in (1, 2, 5):
        x = torch.randn(batch, 3)
        np.testing.assert_allclose(onnx_reference.run(m, {"x": x.numpy()})[0],
                                   ViewWrite()(x).numpy(), rtol=1e-6)
    static = ember.to_onnx(ViewWrite(), (torch.randn(2, 3),), dynamic_batch=False)
    assert "ScatterND" in [n.op_type for n in static.graph.node]


def test_write_through_a_view_of_a_view_is_refused(tmp_path):
    class ViewViewWrite(torch.nn.Module):
        def forward(self, x):
            y = x * 2
            y[:, 1:][:, :1].add_(1)
            return y

    with pytest.raises(ember.ExportError, match="view of part of a view"):
        ember.export(ViewViewWrite(), (torch.randn(2, 3),), str(tmp_path / "v.onnx"))
    assert os.listdir(tmp_path) == []


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(HERE, "..", "..", "compiler", "frontends", "torch"), HERE]))
    return subprocess.run([sys.executable, "-m", "ember", "export", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_command_line(tmp_path):
    ok = _cli("export_models:tiny_dlrm", str(tmp_path / "m.onnx"), cwd=str(tmp_path))
    assert ok.returncode == 0, ok.stderr
    assert [i.name for i in onnx.load(str(tmp_path / "m.onnx")).graph.input] == ["dense", "kjt.values", "kjt.lengths"]
    assert _dims(onnx.load(str(tmp_path / "m.onnx")).graph.input)[0] == ["B", 3]
    fixed = _cli("export_models:tiny_dlrm", str(tmp_path / "s.onnx"), "--static-batch",
                 cwd=str(tmp_path))
    assert fixed.returncode == 0, fixed.stderr
    assert _dims(onnx.load(str(tmp_path / "s.onnx")).graph.input)[0] == [3, 3]
    bad = _cli("export_models:branchy", str(tmp_path / "b.onnx"), cwd=str(tmp_path))
    assert bad.returncode == 1 and "gate: DataDependentControlFlowError" in bad.stderr
    assert not (tmp_path / "b.onnx").exists()
    wrong = _cli("export_models:not_a_model", str(tmp_path / "c.onnx"), cwd=str(tmp_path))
    assert wrong.returncode == 1 and "not an nn.Module" in wrong.stderr


def test_mixed_standard_ops_match_eager(tmp_path):
    from export_models import mixed_ops

    model, inputs = mixed_ops()
    path = str(tmp_path / "mixed.onnx")
    ember.export(model, inputs, path)
    m = onnx.load(path)
    ops = [n.op_type for n in m.graph.node]
    assert {"Gather", "LayerNormalization", "ReduceMean", "Transpose", "Unsqueeze", "Squeeze",
            "Slice", "Cast"} <= set(ops)
    bags = {n.input[0]: {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
            for n in m.graph.node if n.op_type == "EmbeddingBag"}
    assert bags["wbag.weight"]["padding_idx"] == 0
    # A 2-D [B, L] input with a symbolic B: a KJT with lengths L (ConstantOfShape of B) into a
    # one-table collection; with the example's batch, an EmbeddingBag with constant offsets.
    ebc = [n for n in m.graph.node if n.op_type == "EmbeddingBagCollection"]
    assert [n.input[1] for n in ebc] == ["bag2d.weight"] and "ConstantOfShape" in ops
    assert [a.strings for a in ebc[0].attribute if a.name == "pooling"] == [[b"max"]]
    static = ember.to_onnx(model, inputs, dynamic_batch=False)
    static_bags = {n.input[0]: {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
                   for n in static.graph.node if n.op_type == "EmbeddingBag"}
    assert static_bags["bag2d.weight"]["mode"] == b"max"
    assert "padding_idx" not in static_bags["bag2d.weight"]
    feeds = {i.name: t.numpy() for i, t in zip(m.graph.input, inputs)}
    outs = onnx_reference.run(m, feeds)
    for got, want in zip(outs, model(*inputs)):
        np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_write_through_a_full_range_view_is_a_write_to_the_base():
    """y = z[0:n] and z[:, :].contiguous() alias all of z: in-place ops on them change z."""
    import test_e2e_kjt

    model = test_e2e_kjt.InPlaceFullSlices().eval()
    inputs = (torch.randn(3, 4), torch.tensor([1, 2, 9]), torch.tensor([0, 1, 1]))
    m = ember.to_onnx(model, inputs)
    got = onnx_reference.run(m, {"x": inputs[0].numpy(), "ids": inputs[1].numpy(),
                                 "offsets": inputs[2].numpy()})
    with torch.no_grad():
        want = [t.numpy() for t in model(*inputs)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    ops = [n.op_type for n in m.graph.node]
    assert ops.count("Relu") == 1 and ops.count("Sub") == 1 and "ScatterND" not in ops


class _OwnParameters(torch.nn.Module):
    """Reads its own parameters in forward (``x @ self.w``, ParameterList items, F.linear
    on them), as TorchRec's crossnets do. torch.fx patches nn.Module.__getattr__ while
    tracing; resolving such a parameter used to recurse for ever."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 3))
        self.v = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(2, 3)) for _ in range(2)])
        self.b = torch.nn.Parameter(torch.randn(2))

    def forward(self, x):
        y = x @ self.w
        z = torch.nn.functional.linear(y, self.v[0], self.b)             # Gemm
        z3 = torch.nn.functional.linear(y.unsqueeze(1), self.v[1])       # Transpose + MatMul
        return z + z3.squeeze(1)


class _Wrapper(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)


class _Wrapper3(_Wrapper):
    def forward(self, x, i, j):
        return self.inner(x, i, j)


def test_module_reading_its_own_parameters_exports(tmp_path):
    model = _Wrapper(_OwnParameters()).eval()
    x = torch.randn(5, 4)
    path = str(tmp_path / "own.onnx")
    ember.export(model, (x,), path)
    m = onnx.load(path)
    ops = [n.op_type for n in m.graph.node]
    assert ops.count("Gemm") == 1 and ops.count("MatMul") == 2
    with torch.no_grad():
        want = model(x).numpy()
    got = onnx_reference.run(m, {"x": x.numpy()})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


class _TensorIndexing(torch.nn.Module):
    """DLRM's pairwise interactions ``inter[:, triu[0], triu[1]]`` (a buffer's rows as index
    tensors), a tensor literal behind ``...``, a list of ints, an index computed from a
    shape, and one index tensor given as input."""

    def __init__(self):
        super().__init__()
        self.register_buffer("triu", torch.triu_indices(4, 4, offset=1), persistent=False)

    def forward(self, x, idx):
        inter = torch.bmm(x, torch.transpose(x, 1, 2))
        pairs = inter[:, self.triu[0], self.triu[1]]
        cols = x[..., torch.tensor([3, -1, 0])]
        rows = x[:, :, [0, 2]]
        first = x[:, torch.arange(x.size(1) - 1)]
        return pairs, cols, x[:, idx], rows, first


def test_index_tensors_become_gathers(tmp_path):
    model = _TensorIndexing()
    x, idx = torch.randn(3, 4, 4), torch.tensor([[2, 0], [3, 3]])
    path = str(tmp_path / "idx.onnx")
    ember.export(model, (x, idx), path)
    m = onnx.load(path)
    gathers = [n for n in m.graph.node if n.op_type == "Gather"]
    assert len(gathers) == 5
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    # triu pairs of a 4x4 matrix, flattened: row * 4 + column
    assert inits[gathers[0].input[1]].tolist() == [1, 2, 3, 6, 7, 11]
    assert inits[gathers[1].input[1]].tolist() == [3, 3, 0]  # negative indices wrapped
    assert inits[gathers[2].input[1]].tolist() == [0, 2]
    assert inits[gathers[3].input[1]].tolist() == [0, 1, 2]  # arange(x.size(1) - 1)
    assert gathers[4].input[1] == "idx"
    assert [onnx.helper.get_attribute_value(g.attribute[0]) for g in gathers] == [1, 2, 2, 1, 1]
    feeds = {"x": x.numpy(), "idx": idx.numpy()}
    for got, want in zip(onnx_reference.run(m, feeds), model(x, idx)):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-6)


def test_unsupported_index_tensors_name_the_node_and_module(tmp_path):
    class Apart(torch.nn.Module):
        def forward(self, x, i, j):
            return x[i, :, j]

    class TwoInputs(torch.nn.Module):
        def forward(self, x, i, j):
            return x[:, i, j]

    x, i = torch.randn(3, 3, 3), torch.tensor([0, 2])
    with pytest.raises(ember.ExportError,
                       match=r"node 'getitem'.* in module 'inner': index tensors on dims that "
                             r"are not next to each other"):
        ember.export(_Wrapper3(Apart()), (x, i, i), str(tmp_path / "a.onnx"))
    with pytest.raises(ember.ExportError, match=r"several index tensors computed from the inputs"):
        ember.export(TwoInputs(), (x, i, i), str(tmp_path / "b.onnx"))
    # An index out of range fails already when the example inputs run (naming the line).
    with pytest.raises(ember.TraceError, match=r"IndexError: index 3 is out of bounds.*self.rows"):
        ember.export(_Wrapper(_IndexOutOfRange()), (x,), str(tmp_path / "c.onnx"))
    assert os.listdir(tmp_path) == []


class _IndexOutOfRange(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("rows", torch.tensor([0, 3]))

    def forward(self, x):
        return x[:, self.rows]


def test_unsupported_op_in_a_submodule_names_the_module(tmp_path):
    class Odd(torch.nn.Module):
        def forward(self, x):
            return torch.atan2(x, x + 1)

    with pytest.raises(ember.ExportError,
                       match=r"node 'atan2' \(call_function atan2\) in module 'inner': operation "
                             r"not supported"):
        ember.export(_Wrapper(Odd()), (torch.randn(2),), str(tmp_path / "odd.onnx"))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("case", ["own_parameters", "tensor_indexing"])
def test_parameters_and_index_tensors_compile_and_run(case, tmp_path):
    """export -> ember-compile -> ember-run equals eager for the two models above."""
    from e2e import compile_and_run

    if case == "own_parameters":
        model, inputs = _Wrapper(_OwnParameters()).eval(), (torch.randn(5, 4),)
        arrays = {"x": inputs[0].numpy()}
    else:
        model = _TensorIndexing()
        inputs = (torch.randn(3, 4, 4), torch.tensor([[2, 0], [3, 3]]))
        arrays = {"x": inputs[0].numpy(), "idx": inputs[1].numpy()}
    got = compile_and_run(model, inputs, arrays, tmp_path, case)
    with torch.no_grad():
        want = model(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)
