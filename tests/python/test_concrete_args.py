"""concrete_args behave as in torch.fx."""

import pytest
import torch
import torch.fx
import torch.nn as nn

import ember
from helpers import assert_fx_fails, nodes, targets


class Flagged(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x, use_relu, xs):
        y = self.lin(x)
        if use_relu:
            y = torch.relu(y)
        return y + sum(xs)


def test_concrete_bool_matches_torch_fx():
    model = Flagged()
    x = torch.randn(2, 3)
    xs = [torch.randn(2, 3), torch.randn(2, 3)]
    assert_fx_fails(model)
    # torch.fx itself works once both the flag and the list structure are concrete.
    PH = torch.fx._symbolic_trace.PH
    fx_gm = torch.fx.symbolic_trace(model, concrete_args={"use_relu": True, "xs": [PH, PH]})
    gm = ember.symbolic_trace(model, (x, True, xs), concrete_args={"use_relu": True})
    assert targets(gm, "placeholder") == targets(fx_gm, "placeholder")
    assert [n.op for n in gm.graph.nodes] == [n.op for n in fx_gm.graph.nodes]
    assert len(nodes(gm, "call_function", torch.relu)) == 1
    assert torch.allclose(gm(x, True, xs), model(x, True, xs))
    gm_false = ember.symbolic_trace(model, (x, False, xs), concrete_args={"use_relu": False})
    assert not nodes(gm_false, "call_function", torch.relu)
    assert torch.allclose(gm_false(x, False, xs), model(x, False, xs))


def test_non_concrete_python_flag_is_data():
    model = Flagged()
    x = torch.randn(2, 3)
    with pytest.raises(ember.DataDependentControlFlowError):
        ember.symbolic_trace(model, (x, True, [x]))
