"""In-place ops and slice writes are recorded as written (the compiler functionalizes them)."""

import operator

import torch
import torch.nn as nn

import ember
from helpers import assert_fx_fails, nodes


class SliceWrites(nn.Module):
    def forward(self, x, y):
        out = torch.zeros_like(x)
        out[:, 1:3] = y                 # slice write
        out[0] = x[0] * 2               # row write
        out += x                        # in-place operator
        out.mul_(0.5)                   # in-place method
        view = out[:, :2]
        view.add_(1)                    # write through a view
        return out


def test_inplace_and_slice_writes_recorded_in_order():
    model = SliceWrites()
    x, y = torch.randn(4, 5), torch.randn(4, 2)
    assert_fx_fails(model)
    gm = ember.symbolic_trace(model, (x, y))
    seq = [(n.op, n.target) for n in gm.graph.nodes
           if n.target in (operator.setitem, operator.iadd, "mul_", "add_")]
    assert seq == [("call_function", operator.setitem), ("call_function", operator.setitem),
                   ("call_function", operator.iadd), ("call_method", "mul_"), ("call_method", "add_")]
    first = nodes(gm, "call_function", operator.setitem)[0]
    assert first.args[1] == (slice(None), slice(1, 3))
    assert first.args[2].target == "y"
    # add_ writes through a view of out: its receiver is the getitem view, not out itself.
    add_ = nodes(gm, "call_method", "add_")[0]
    assert add_.args[0].target is operator.getitem
    assert torch.allclose(gm(x, y), model(x, y))


def test_tracing_does_not_mutate_example_inputs():
    class Mutates(nn.Module):
        def forward(self, x):
            x[0] = 0
            x.add_(1)
            return x

    x = torch.ones(2, 2)
    gm = ember.symbolic_trace(Mutates(), (x,))
    assert torch.equal(x, torch.ones(2, 2))
    assert torch.equal(gm(x.clone()), torch.tensor([[1.0, 1.0], [2.0, 2.0]]))
