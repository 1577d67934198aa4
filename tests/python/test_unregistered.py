"""Modules held in plain lists / dicts (not registered submodules) get a path."""

import torch
import torch.nn as nn

import ember
from helpers import assert_fx_fails, nodes, targets


class Tower(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d, d))
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(x @ self.weight)


class HiddenModules(nn.Module):
    def __init__(self):
        super().__init__()
        self.tables = [nn.EmbeddingBag(10, 4, mode="mean"), nn.EmbeddingBag(10, 4, mode="sum")]
        self.towers = {"a": Tower(4), "b-c": Tower(4)}  # traced through: parameters too

    def forward(self, ids, offsets):
        pooled = [t(ids, offsets) for t in self.tables]
        return self.towers["a"](pooled[0]) + self.towers["b-c"](pooled[1])


def test_unregistered_modules_are_found():
    model = HiddenModules()
    ids, offsets = torch.tensor([1, 2, 9, 0]), torch.tensor([0, 1])
    assert_fx_fails(model, NameError)
    gm = ember.symbolic_trace(model, (ids, offsets))
    assert targets(gm, "call_module") == ["tables.0", "tables.1", "towers.a.act", "towers.b_c.act"]
    # The towers were traced through: their parameters are get_attr nodes with list paths.
    assert sorted(targets(gm, "get_attr")) == ["towers.a.weight", "towers.b_c.weight"]
    assert gm.get_submodule("tables.1") is model.tables[1]
    assert torch.allclose(gm(ids, offsets), model(ids, offsets))


def test_module_reachable_nowhere_gets_a_synthetic_path():
    outside = nn.Linear(3, 3)

    class UsesGlobal(nn.Module):
        def forward(self, x):
            return outside(x) * 2

    model = UsesGlobal()
    x = torch.randn(2, 3)
    assert_fx_fails(model, NameError)
    gm = ember.symbolic_trace(model, (x,))
    (call,) = nodes(gm, "call_module")
    assert call.target.startswith("_ember_unregistered_1_Linear")
    assert torch.allclose(gm(x), model(x))
