"""ember.trace: failures become leaves, are recorded, and their children are traced alone."""

import pytest
import torch
import torch.nn as nn

import ember
from helpers import assert_fx_fails, nodes, targets


class Tower(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.relu(self.fc(x)) * x.size(1)


class Gated(nn.Module):
    """The untraceable one: branches on data."""

    def __init__(self, d):
        super().__init__()
        self.pos = Tower(d)
        self.neg = Tower(d)
        self.unused = Tower(d)

    def forward(self, x):
        if x.mean() > 0:
            return self.pos(x)
        return self.neg(x)


class Net(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.bottom = Tower(d)
        self.gated = Gated(d)
        self.top = nn.Sequential(Tower(d), nn.Linear(d, 1))

    def forward(self, x):
        return self.top(self.gated(self.bottom(x)))


@pytest.fixture(scope="module")
def traced():
    torch.manual_seed(0)
    model = Net()
    x = torch.randn(3, 4) + 5.0  # positive mean: Gated takes the `pos` branch
    return model, x, ember.trace(model, (x,))


def test_plain_fx_fails():
    assert_fx_fails(Net())


def test_exactly_the_data_dependent_module_fails(traced):
    model, x, graphs = traced
    assert graphs.failed_paths == ["gated"]
    assert graphs.is_failed("gated") and graphs.is_failed(model.gated)
    assert not graphs.is_failed("") and not graphs.is_failed("bottom")
    msg = graphs.failure_msg("gated")
    assert msg.startswith("gated: DataDependentControlFlowError")
    assert "if x.mean() > 0:" in msg and "test_recursive.py" in msg
    assert graphs.failure_msg("bottom") is None


def test_rest_is_traced_with_failed_module_as_leaf(traced):
    model, x, graphs = traced
    root = graphs[""]
    assert "gated" in targets(root, "call_module")
    assert "bottom.fc" in targets(root, "call_module")  # bottom traced through
    assert "top.0.fc" in targets(root, "call_module")   # Sequential traced through
    assert torch.allclose(root(x), model(x))


def test_children_of_failed_module_traced_separately(traced):
    model, x, graphs = traced
    assert sorted(graphs.graphs) == ["", "gated.pos"]
    pos = graphs["gated.pos"]
    assert targets(pos, "call_module") == ["fc"]
    inner = model.bottom(x)
    assert torch.allclose(pos(inner), model.gated.pos(inner))
    # `neg` and `unused` never ran on the example inputs.
    assert graphs.is_unvisited("gated.neg") and graphs.is_unvisited("gated.unused")
    assert not graphs.is_unvisited("gated.pos") and not graphs.is_unvisited("gated")
    assert "gated.neg" not in graphs


def test_raise_if_failed_names_every_failed_module(traced):
    _, _, graphs = traced
    with pytest.raises(ember.TraceError, match="gated: DataDependentControlFlowError") as info:
        graphs.raise_if_failed()
    assert set(info.value.failures) == {"gated"}


def test_failure_in_root_forward_traces_children():
    class RootBranch(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Tower(4)
            self.b = nn.Linear(4, 4)

        def forward(self, x):
            y = self.a(x)
            if y.sum() > 1e9:
                y = y * 0
            return self.b(y)

    model = RootBranch()
    graphs = ember.trace(model, torch.randn(2, 4))
    assert graphs.failed_paths == [""]
    assert sorted(graphs.graphs) == ["a"]  # b is an nn leaf: nothing to trace
    assert not graphs.is_unvisited("b")


def test_nested_failures_are_all_recorded():
    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Gated(4)
            self.fine = Tower(4)

        def forward(self, x):
            if x.max() > 100:
                return x
            return self.fine(self.inner(x))

    class Top(nn.Module):
        def __init__(self):
            super().__init__()
            self.outer = Outer()

        def forward(self, x):
            return self.outer(x) + 1

    graphs = ember.trace(Top(), torch.randn(2, 4) + 3)
    assert graphs.failed_paths == ["outer", "outer.inner"]
    assert sorted(graphs.graphs) == ["", "outer.fine", "outer.inner.pos"]
    assert targets(graphs[""], "call_module") == ["outer"]


def test_bad_example_inputs_raise_instead_of_being_recorded():
    with pytest.raises(ember.ExampleEvaluationError, match="mat1 and mat2|shapes cannot be multiplied"):
        ember.trace(Net(), (torch.randn(3, 7),))
    with pytest.raises(TypeError):
        ember.trace(lambda x: x, (torch.randn(1),))
