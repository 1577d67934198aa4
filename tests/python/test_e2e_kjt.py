"""export -> ember-compile -> ember-run equals eager PyTorch, for models fed by KJTs.

A TorchRec-style model: a KeyedJaggedTensor input feeding an EmbeddingBagCollection
(ember's own; TorchRec's when installed is in test_torchrec.py), sum / mean / max pooling,
weighted KJTs, features read in another order than the KJT holds them (a KJT permute), a KJT
key that no table reads, a KJT built inside forward, the hand-written per-key idiom
(values.split(lengths.view(K, -1).sum(1).tolist()) into nn.EmbeddingBags), DLRM-style models
built from nn.EmbeddingBag, and in-place ops through full-range views. Random data with fixed
seeds; edge cases: empty bags, no ids at all, batch 1, ids at the table edge, other value counts
than the example had, a KJT input given as offsets.
"""

import operator

import numpy as np
import pytest
import torch
import torch.nn as nn

pytest.importorskip("onnx")

import ember  # noqa: E402
from e2e import compile_and_run, kjt_arrays  # noqa: E402
from ember import EmbeddingBagCollection, EmbeddingBagConfig  # noqa: E402

ROWS = {"user": 50, "item": 30, "ctx": 20}


def random_kjt(keys, batch, weighted=False, max_len=4, seed=0, edge=True):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, max_len + 1, (len(keys) * batch,), generator=g)
    if edge:
        lengths[0] = 0  # an empty bag
    values = []
    for k, key in enumerate(keys):
        n = int(lengths[k * batch:(k + 1) * batch].sum())
        ids = torch.randint(0, ROWS[key], (n,), generator=g)
        if edge and n:
            ids[-1] = ROWS[key] - 1  # an id at the table edge
        values.append(ids)
    values = torch.cat(values)
    weights = torch.rand(values.numel(), generator=g) if weighted else None
    return ember.KeyedJaggedTensor(list(keys), values, lengths, weights)


class SparseModel(nn.Module):
    """TorchRec-style: pooled embeddings of a KJT, a dense tower, one key's columns read by
    name (``pooled["user"]``) and through ``to_dict()``."""

    def __init__(self, poolings=("sum", "mean", "max"), dense_in=3):
        super().__init__()
        torch.manual_seed(0)
        self.ebc = EmbeddingBagCollection([
            EmbeddingBagConfig("t_item", ROWS["item"], 4, ["item"], poolings[0]),
            EmbeddingBagConfig("t_user", ROWS["user"], 8, ["user"], poolings[1]),
            EmbeddingBagConfig("t_ctx", ROWS["ctx"], 4, ["ctx"], poolings[2]),
        ])
        self.dense = nn.Sequential(nn.Linear(dense_in, 4), nn.ReLU())
        self.over = nn.Linear(16 + 4, 1)

    def forward(self, dense, features):
        pooled = self.ebc(features)
        x = torch.cat([pooled.values(), self.dense(dense)], dim=1)
        return torch.sigmoid(self.over(x)), pooled["user"], pooled.to_dict()["ctx"]


def eager(model, *inputs):
    with torch.no_grad():
        out = model(*inputs)
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def check(model, example, run_inputs, arrays, tmp_path, name="model"):
    got = compile_and_run(model, example, arrays, tmp_path, name)
    want = eager(model, *run_inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("poolings", [("sum", "mean", "max"), ("max", "sum", "mean")])
def test_kjt_into_embedding_bag_collection(poolings, tmp_path):
    model = SparseModel(poolings).eval()
    keys = ["user", "item", "ctx"]  # KJT order differs from the tables' feature order
    batch = 5
    example = (torch.randn(batch, 3), random_kjt(keys, batch, seed=1))
    # Run on other data than the example: another value count, same batch.
    dense, kjt = torch.randn(batch, 3), random_kjt(keys, batch, seed=2, max_len=6)
    assert kjt.values().numel() != example[1].values().numel()
    check(model, example, (dense, kjt),
          {"dense": dense.numpy(), **kjt_arrays("features", kjt)}, tmp_path)


def test_weighted_kjt_and_unread_key(tmp_path):
    class Weighted(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(3)
            self.ebc = EmbeddingBagCollection([
                EmbeddingBagConfig("t0", ROWS["item"], 6, ["item"], "sum"),
                EmbeddingBagConfig("t1", ROWS["user"], 2, ["user"], "sum"),
            ])

        def forward(self, kjt):
            return self.ebc(kjt).values() + 0.5

    model = Weighted().eval()
    keys = ["item", "ctx", "user"]  # "ctx" is read by no table
    example = (random_kjt(keys, 4, weighted=True, seed=4),)
    kjt = random_kjt(keys, 4, weighted=True, seed=5)
    check(model, example, (kjt,), kjt_arrays("kjt", kjt), tmp_path)


def test_batch_one_and_all_bags_empty_for_a_key(tmp_path):
    model = SparseModel().eval()
    keys = ["item", "user", "ctx"]  # already in table order: no permute
    example = (torch.randn(1, 3), random_kjt(keys, 1, seed=6))
    values = torch.tensor([ROWS["item"] - 1, 0, 7], dtype=torch.int64)
    lengths = torch.tensor([1, 0, 2])  # user's only bag is empty (mean pools to zeros)
    kjt = ember.KeyedJaggedTensor(keys, values, lengths)
    dense = torch.randn(1, 3)
    check(model, example, (dense, kjt), {"dense": dense.numpy(), **kjt_arrays("features", kjt)},
          tmp_path)


class BagDLRM(nn.Module):
    """DLRM-style: nn.EmbeddingBag tables fed by (ids, offsets), bottom and top MLPs."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(7)
        self.bags = nn.ModuleList([nn.EmbeddingBag(40, 4, mode="sum"),
                                   nn.EmbeddingBag(25, 4, mode="mean")])
        self.bottom = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 4), nn.ReLU())
        self.top = nn.Sequential(nn.Linear(12, 6), nn.ReLU(), nn.Linear(6, 1))

    def forward(self, dense, ids0, offsets0, ids1, offsets1):
        pooled = [self.bottom(dense), self.bags[0](ids0, offsets0), self.bags[1](ids1, offsets1)]
        return torch.sigmoid(self.top(torch.cat(pooled, dim=1)))


def bag_inputs(batch, seed):
    g = torch.Generator().manual_seed(seed)
    out = [torch.randn(batch, 5, generator=g)]
    for rows in (40, 25):
        lengths = torch.randint(0, 4, (batch,), generator=g)
        lengths[0] = 0
        ids = torch.randint(0, rows, (int(lengths.sum()),), generator=g)
        if ids.numel():
            ids[0] = rows - 1
        out += [ids, torch.cat([lengths.new_zeros(1), lengths.cumsum(0)[:-1]])]
    return tuple(out)


@pytest.mark.parametrize("batch", [6, 1])
def test_dlrm_from_embedding_bags(batch, tmp_path):
    model = BagDLRM().eval()
    example = bag_inputs(batch, seed=8)
    run = bag_inputs(batch, seed=9)
    names = ["dense", "ids0", "offsets0", "ids1", "offsets1"]
    check(model, example, run, {n: t.numpy() for n, t in zip(names, run)}, tmp_path)


def test_all_bags_empty(tmp_path):
    """No ids at all (N = 0): every pooled row is zero, the plan still runs."""
    model = SparseModel().eval()
    keys = ["item", "user", "ctx"]
    example = (torch.randn(2, 3), random_kjt(keys, 2, seed=10))
    kjt = ember.KeyedJaggedTensor(keys, torch.zeros(0, dtype=torch.int64),
                                  torch.zeros(6, dtype=torch.int64))
    dense = torch.randn(2, 3)
    check(model, example, (dense, kjt), {"dense": dense.numpy(), **kjt_arrays("features", kjt)},
          tmp_path)


def test_kjt_built_inside_forward(tmp_path):
    """A KJT made in forward from computed tensors (not a KJT argument): the plan reads the
    computed values and the plain lengths input."""

    class Built(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(11)
            self.ebc = EmbeddingBagCollection([
                EmbeddingBagConfig("t0", ROWS["ctx"], 3, ["ctx"], "mean"),
                EmbeddingBagConfig("t1", ROWS["item"], 5, ["item"], "max")])

        def forward(self, ids, lengths):
            kjt = ember.KeyedJaggedTensor(["ctx", "item"], ids + 1, lengths)
            return self.ebc(kjt).values()

    model = Built().eval()
    example = (torch.tensor([0, 3, 5, 7]), torch.tensor([1, 1, 0, 2]))
    ids, lengths = torch.tensor([2, 18, 28, 0, 9]), torch.tensor([0, 2, 1, 2])
    check(model, example, (ids, lengths), {"ids": ids.numpy(), "lengths": lengths.numpy()},
          tmp_path)


class PerKeyModel(nn.Module):
    """Hand-written per-key lookups (no collection): the KJT's values split by per-key
    lengths sums, offsets from cumsum, one nn.EmbeddingBag per key, a dense head."""

    def __init__(self, modes=("sum", "mean", "max")):
        super().__init__()
        torch.manual_seed(12)
        self.bags = nn.ModuleList([nn.EmbeddingBag(ROWS[k], 3, mode=m)
                                   for k, m in zip(["user", "item", "ctx"], modes)])
        self.head = nn.Linear(9, 2)

    def forward(self, kjt):
        lengths = kjt.lengths().view(len(kjt.keys()), -1)
        per_key = kjt.values().split(lengths.sum(1).tolist())
        weights = kjt.weights_or_none()
        per_key_w = (weights.split(lengths.sum(1).tolist()) if weights is not None
                     else [None] * len(self.bags))
        pooled = []
        for bag, ids, lens, w in zip(self.bags, per_key, lengths, per_key_w):
            offsets = torch.cat([lens.new_zeros(1), lens.cumsum(0)[:-1]])
            pooled.append(bag(ids, offsets, per_sample_weights=w))
        return torch.relu(self.head(torch.cat(pooled, dim=1)))


@pytest.mark.parametrize("weighted", [False, True])
def test_per_key_idiom_of_embedding_bags(weighted, tmp_path):
    """torch.fx cannot trace this (len(), split sizes from data); the exporter recognizes the
    idiom as one KJT split per key (docs/frontend-torch.md) and the plan matches eager."""
    model = PerKeyModel(("sum", "sum", "sum") if weighted else ("sum", "mean", "max")).eval()
    keys = ["user", "item", "ctx"]
    example = (random_kjt(keys, 4, weighted=weighted, seed=13),)
    kjt = random_kjt(keys, 4, weighted=weighted, seed=14, max_len=6)
    check(model, example, (kjt,), kjt_arrays("kjt", kjt), tmp_path)


class InPlaceFullSlices(nn.Module):
    """In-place ops, also through full-range views (a write there is a write to the base),
    and full-range slices that the compiler drops (simplify-slices)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(15)
        self.lin = nn.Linear(4, 6)
        self.bag = nn.EmbeddingBag(10, 2, mode="sum")

    def forward(self, x, ids, offsets):
        z = torch.cat([self.lin(x), self.bag(ids, offsets)], 1)
        z += 1
        y = z[0:z.size(0)]      # a full-range view of z
        y.relu_()               # ... so z changes too
        w = z[:, :].contiguous()
        w.sub_(0.25)            # and again (w, y and z are one tensor)
        return y[:, 0:8] + z, w


def test_inplace_writes_through_full_range_views(tmp_path):
    model = InPlaceFullSlices().eval()
    example = (torch.randn(3, 4), torch.tensor([1, 2, 9]), torch.tensor([0, 1, 1]))
    run = (torch.randn(3, 4), torch.tensor([9, 0, 0, 4]), torch.tensor([0, 0, 3]))
    check(model, example, run, {n: t.numpy() for n, t in zip(["x", "ids", "offsets"], run)},
          tmp_path)


def test_kjt_input_given_as_offsets(tmp_path):
    """ember-run also takes a KJT input as NAME.values + NAME.offsets."""
    model = SparseModel().eval()
    keys = ["user", "item", "ctx"]
    example = (torch.randn(3, 3), random_kjt(keys, 3, seed=16))
    dense, kjt = torch.randn(3, 3), random_kjt(keys, 3, seed=17)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), kjt.lengths().cumsum(0)])
    check(model, example, (dense, kjt), {"dense": dense.numpy(), "features.values":
                                         kjt.values().numpy(), "features.offsets": offsets.numpy()},
          tmp_path)


class KeysLoop(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(18)
        self.ebc = EmbeddingBagCollection([
            EmbeddingBagConfig("t0", ROWS["user"], 4, ["user"], "sum"),
            EmbeddingBagConfig("t1", ROWS["item"], 2, ["item"], "mean")])

    def forward(self, kjt):
        pooled = self.ebc(kjt)
        return torch.cat([pooled[k] for k in reversed(pooled.keys())], dim=1)


def test_loop_over_keyed_tensor_keys(tmp_path):
    """Iterating a leaf's KeyedTensor keys: torch.fx fails (it cannot iterate a Proxy); ember
    records keys() and one getitem per key, and the plan reads each key's columns."""
    from helpers import assert_fx_fails, nodes

    model = KeysLoop().eval()
    assert_fx_fails(model)
    keys = ["user", "item"]
    example = (random_kjt(keys, 3, seed=19),)
    gm = ember.trace(model, example)[""]
    (keys_node,) = nodes(gm, "call_method", "keys")
    gets = [n for n in nodes(gm, "call_function", operator.getitem) if n.args[0].target == "ebc"]
    assert [g.args[1].args for g in gets] == [(keys_node, 1), (keys_node, 0)]
    kjt = random_kjt(keys, 3, seed=20)
    check(model, example, (kjt,), kjt_arrays("kjt", kjt), tmp_path)
