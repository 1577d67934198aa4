"""Shared helpers for the tracer tests."""

import pytest
import torch
import torch.fx


def nodes(gm, op=None, target=None):
    out = []
    for n in gm.graph.nodes:
        if op is not None and n.op != op:
            continue
        if target is not None and n.target != target:
            continue
        out.append(n)
    return out


def targets(gm, op):
    return [n.target for n in gm.graph.nodes if n.op == op]


def assert_fx_fails(model, *exc_types):
    """Plain torch.fx.symbolic_trace must fail on this model (the point of each test)."""
    with pytest.raises(exc_types or Exception):
        torch.fx.symbolic_trace(model)


def assert_same(a, b):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        assert torch.allclose(a, b, atol=1e-6), (a, b)
