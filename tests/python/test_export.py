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
    # ember-compile's KJT input "kjt"; the value count is symbolic.
    assert [i.name for i in m.graph.input] == ["dense", "kjt.values", "kjt.lengths"]
    dims = [[d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim]
            for i in m.graph.input]
    assert dims == [[3, 3], ["N_kjt_values"], [6]]
    assert [o.name for o in m.graph.output] == ["output_0"]
    assert {(o.domain, o.version) for o in m.opset_import} == {("", 17), ("ember", 1)}


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
    assert {"Gemm", "ScatterND", "Concat", "Sigmoid"} <= ops
    assert not ops & {"Loop", "Split", "CumSum"}


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
    ops = [n.op_type for n in onnx.load(str(path)).graph.node]
    assert "ScatterND" in ops  # the view's new value goes back into y


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
    assert bags["bag2d.weight"]["mode"] == b"max" and "padding_idx" not in bags["bag2d.weight"]
    assert bags["wbag.weight"]["padding_idx"] == 0
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
