"""Proxies that know their example values: len, iteration, zip, sizes, cat, shape control flow."""

import math

import pytest
import torch
import torch.nn as nn

import ember
from helpers import assert_fx_fails, nodes, targets


class ListInputs(nn.Module):
    """zip over a ModuleList and a list of tensors, len() of inputs, cat over proxies."""

    def __init__(self):
        super().__init__()
        self.towers = nn.ModuleList([nn.Linear(2, 3), nn.Linear(4, 3), nn.Linear(5, 3)])

    def forward(self, xs):
        assert len(xs) == len(self.towers)
        outs = [tower(x) for tower, x in zip(self.towers, xs)]
        return torch.cat(outs, dim=1)


def test_zip_modulelist_with_list_of_tensors():
    model = ListInputs()
    xs = [torch.randn(3, 2), torch.randn(3, 4), torch.randn(3, 5)]
    assert_fx_fails(model)
    gm = ember.symbolic_trace(model, (xs,))
    # One placeholder per list element, in order; each tower applied to its own input.
    assert targets(gm, "placeholder") == ["xs_1", "xs_2", "xs_3"]
    calls = nodes(gm, "call_module")
    assert [(c.target, c.args[0].target) for c in calls] == [
        ("towers.0", "xs_1"), ("towers.1", "xs_2"), ("towers.2", "xs_3")]
    (cat,) = nodes(gm, "call_function", torch.cat)
    assert [a.name for a in cat.args[0]] == ["towers_0", "towers_1", "towers_2"]
    assert torch.allclose(gm(xs), model(xs))


class ProxyOfList(nn.Module):
    """Iterating and len() of a proxy whose value is a list (the result of split)."""

    def forward(self, x):
        chunks = x.split(2, dim=1)
        n = len(chunks)
        scaled = [c * (i + 1) for i, c in enumerate(chunks)]
        return torch.cat(scaled, dim=1) / n


def test_len_and_iteration_of_proxy():
    model = ProxyOfList()
    x = torch.randn(3, 6)
    assert_fx_fails(model)
    gm = ember.symbolic_trace(model, (x,))
    getitems = [n for n in gm.graph.nodes if n.target is __import__("operator").getitem]
    assert [g.args[1] for g in getitems] == [0, 1, 2]
    assert len(nodes(gm, "call_method", "split")) == 1
    assert torch.allclose(gm(x), model(x))


class SizeArithmetic(nn.Module):
    """ints and floats from sizes; shape-based control flow; torch.zeros from a size."""

    def forward(self, x):
        batch, dim = x.shape
        scale = 1.0 / math.sqrt(x.size(-1))
        if x.dim() == 2 and dim > 3:
            x = x * scale
        else:
            x = x - 1
        pad = torch.zeros(x.size(0), 2)
        for _ in range(int(dim / 4)):
            x = x + 1
        return torch.cat([x, pad], dim=1).view(batch, -1, 2)


def test_sizes_give_ints_and_floats_and_shape_branches_specialize():
    model = SizeArithmetic()
    x = torch.randn(3, 8)
    assert_fx_fails(model)
    gm = ember.symbolic_trace(model, (x,))
    code = gm.code
    assert "sqrt" in code and "sub" not in code  # the else-branch was not taken
    assert len(nodes(gm, "call_function", __import__("operator").add)) == 2  # range(8 / 4)
    # Sizes flow symbolically into view/zeros: batch is not baked in.
    (zeros,) = nodes(gm, "call_function", torch.zeros)
    assert isinstance(zeros.args[0], torch.fx.Node) and zeros.args[0].target == "size"
    view = nodes(gm, "call_method", "view")[0]
    assert isinstance(view.args[1], torch.fx.Node)
    assert torch.allclose(gm(x), model(x))
    x5 = torch.randn(5, 8)
    assert torch.allclose(gm(x5), model(x5))


class DataBranch(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x + 1
        return x - 1


@pytest.mark.parametrize("convert", [bool, int, float])
def test_data_dependent_control_flow_raises(convert):
    class Convert(nn.Module):
        def forward(self, x):
            return x * convert(x.sum() > 0)

    with pytest.raises(ember.DataDependentControlFlowError, match="depends on tensor values"):
        ember.symbolic_trace(Convert(), (torch.randn(3),))


def test_data_branch_error_names_source_line():
    with pytest.raises(ember.DataDependentControlFlowError, match=r"test_proxies.py:\d+: if x.sum\(\) > 0"):
        ember.symbolic_trace(DataBranch(), (torch.randn(3),))


def test_without_example_inputs_len_needs_them():
    with pytest.raises(ember.TraceError, match="example inputs"):
        ember.Tracer().trace(ProxyOfList())


def test_node_meta_records_example_values():
    gm = ember.symbolic_trace(ProxyOfList(), (torch.randn(3, 6),))
    split = nodes(gm, "call_method", "split")[0]
    assert [tuple(t.shape) for t in split.meta["ember_value"]] == [(3, 2)] * 3
    assert split.meta["ember_static"] is False


class DictLeaf(nn.Module):
    """A leaf returning a dict (as TorchRec's EmbeddingCollection does)."""

    def forward(self, x):
        return {"b": x * 2, "a": x + 1}


class DictViews(nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = DictLeaf()

    def forward(self, x):
        d = self.leaf(x)
        items = [v * (i + 1) for i, (k, v) in enumerate(d.items())]
        values = [v - 1 for v in d.values()]
        keyed = [d[k] for k in d.keys()]
        return torch.cat(items + values + keyed, dim=1)


def test_iteration_of_dict_views():
    """for k, v in d.items() / d.values() / d.keys() of a dict proxy: the example's keys as
    constants, each value a d[key] getitem of the dict (plain torch.fx cannot iterate them)."""
    model = DictViews()
    x = torch.randn(3, 2)
    gm = ember.symbolic_trace(model, (x,), leaf_modules=["leaf"])
    getitems = [n for n in gm.graph.nodes if n.target is __import__("operator").getitem]
    assert [g.args[1] for g in getitems] == ["b", "a"] * 3
    assert all(g.args[0].target == "leaf" for g in getitems)
    assert torch.allclose(gm(x), model(x))
    assert torch.allclose(gm(torch.ones(5, 2)), model(torch.ones(5, 2)))
