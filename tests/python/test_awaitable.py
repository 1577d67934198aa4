"""Awaitable values in arguments and results get an explicit wait node."""

import torch
import torch.nn as nn

import ember
from helpers import assert_fx_fails, nodes


class LazyValue:
    """A lazy awaitable (like TorchRec's LazyAwaitable): torch functions wait on it implicitly."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        unwrap = lambda a: a.wait() if isinstance(a, LazyValue) else a  # noqa: E731
        return func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})


class AsyncLookup(nn.Module):
    """Returns an awaitable, like a sharded embedding module."""

    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(10, 3)

    def forward(self, ids):
        return LazyValue(self.table(ids))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lookup = AsyncLookup()
        self.proj = nn.Linear(3, 3)

    def forward(self, ids, dense):
        emb = self.lookup(ids)            # awaitable from a leaf
        x = torch.relu(emb) + 1           # used without wait(): implicit wait
        y = self.proj(emb.wait())         # explicit wait() is recorded as written
        return ember.NoWait(x + y + dense.wait())  # awaitable result and awaitable input


def test_awaitables_get_wait_nodes():
    model = Model()
    ids = torch.tensor([[1, 2], [3, 9]])
    dense = ember.NoWait(torch.randn(2, 2, 3))
    assert_fx_fails(model)
    tracer = ember.Tracer(leaf_modules=[AsyncLookup])
    gm = tracer.graph_module(tracer.trace(model, example_inputs=(ids, dense)))
    waits = nodes(gm, "call_method", "wait")
    lookup = nodes(gm, "call_module", "lookup")[0]
    dense_ph = nodes(gm, "placeholder", "dense")[0]
    waited = sorted(w.args[0].name for w in waits)
    # relu(emb) gets an inserted wait, emb.wait() is recorded, dense.wait() is recorded.
    assert waited == ["dense", "lookup", "lookup"]
    assert all(u.op == "call_method" and u.target == "wait" for u in lookup.users)
    assert all(u.target == "wait" for u in dense_ph.users)
    # The NoWait result is unwrapped: output is a tensor expression, no NoWait object in graph.
    out = nodes(gm, "output")[0]
    assert out.args[0].op == "call_function"
    expected = model(ids, dense).wait()
    assert torch.allclose(gm(ids, dense), expected)


def test_is_awaitable():
    assert ember.is_awaitable(ember.NoWait(1))
    assert not ember.is_awaitable(torch.ones(1))
    assert not ember.is_awaitable(nn.Linear(1, 1))
