"""How example inputs map to placeholders: dicts, kwargs, defaults, no example inputs."""

import pytest
import torch
import torch.nn as nn

import ember
from helpers import assert_fx_fails, nodes, targets


class DictInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.helpers = [nn.Linear(3, 3)]

    def forward(self, batch, scale=2.0):
        y = self.lin(batch["dense"]) * scale
        y = self.lin(y)  # the same module twice
        a, b = y.chunk(2, dim=0)
        return {"sum": a + b, "ids": batch["ids"] + len(batch)}


def make_batch():
    return {"dense": torch.randn(4, 3), "ids": torch.tensor([1, 2])}


def test_dict_input_is_flattened_and_output_restructured():
    model = DictInput()
    batch = make_batch()
    assert_fx_fails(model)
    gm = ember.symbolic_trace(model, (batch,))
    assert targets(gm, "placeholder") == ["batch_1", "batch_2", "scale"]
    assert targets(gm, "call_module") == ["lin", "lin"]
    out, ref = gm(batch, 2.0), model(batch)
    assert set(out) == {"sum", "ids"}
    assert torch.allclose(out["sum"], ref["sum"]) and torch.equal(out["ids"], ref["ids"])


def test_example_kwargs_bind_by_name():
    model = DictInput()
    batch = make_batch()
    graphs = ember.trace(model, (), example_kwargs={"batch": batch, "scale": 3.0})
    gm = graphs[""]
    assert graphs.failed_paths == []
    assert nodes(gm, "placeholder", "scale")[0].meta["ember_value"] == 3.0
    assert torch.allclose(gm(batch, 3.0)["sum"], model(batch, scale=3.0)["sum"])


def test_without_example_inputs_behaves_like_fx_plus_paths():
    class Plain(nn.Module):
        def __init__(self):
            super().__init__()
            self.t = [nn.Linear(2, 2)]

        def forward(self, x):
            return self.t[0](x).relu()

    model = Plain()
    assert_fx_fails(model, NameError)
    tracer = ember.Tracer()
    gm = tracer.graph_module(tracer.trace(model))
    assert targets(gm, "call_module") == ["t.0"]
    assert "ember_value" not in nodes(gm, "call_module")[0].meta
    x = torch.randn(3, 2)
    assert gm.get_submodule("t.0") is model.t[0]
    assert torch.allclose(gm(x), model(x))


def test_mismatched_example_inputs_are_a_trace_error():
    with pytest.raises(ember.TraceError, match="do not match"):
        ember.symbolic_trace(DictInput(), (make_batch(), 1.0, 2.0))
