"""KeyedJaggedTensor inputs are flattened into values / lengths (/ weights) with static keys."""

import operator

import pytest
import torch
import torch.nn as nn

import ember
from helpers import assert_fx_fails, nodes, targets


class PerFeatureBags(nn.Module):
    """Per-key EmbeddingBags over a KJT: keys drive Python loops, split sizes come from data."""

    def __init__(self, keys, rows=10, dim=4):
        super().__init__()
        self.keys = list(keys)
        self.bags = nn.ModuleDict({k: nn.EmbeddingBag(rows, dim, mode="sum") for k in keys})

    def forward(self, kjt):
        keys = kjt.keys()
        lengths = kjt.lengths().view(len(keys), -1)
        per_key = kjt.values().split(lengths.sum(1).tolist())
        weights = kjt.weights_or_none()
        per_key_w = weights.split(lengths.sum(1).tolist()) if weights is not None else [None] * len(keys)
        pooled = []
        for key, ids, lens, w in zip(keys, per_key, lengths, per_key_w):
            offsets = torch.cat([lens.new_zeros(1), lens.cumsum(0)[:-1]])
            pooled.append(self.bags[key](ids, offsets, per_sample_weights=w))
        return torch.cat(pooled, dim=1)


def make_kjt(weighted=False):
    # key "a": bags [1,2] [] [3]; key "b": bags [4] [5,6,9] [] ; batch 3
    values = torch.tensor([1, 2, 3, 4, 5, 6, 9])
    lengths = torch.tensor([2, 0, 1, 1, 3, 0])
    weights = torch.rand(7) if weighted else None
    return ember.KeyedJaggedTensor(["a", "b"], values, lengths, weights)


@pytest.mark.parametrize("weighted", [False, True])
def test_kjt_input_is_flattened(weighted):
    model = PerFeatureBags(["a", "b"])
    kjt = make_kjt(weighted)
    assert_fx_fails(model)
    gm = ember.symbolic_trace(model, (kjt,))
    expected = ["kjt_1", "kjt_2"] + (["kjt_3"] if weighted else [])
    assert targets(gm, "placeholder") == expected
    assert targets(gm, "call_module") == ["bags.a", "bags.b"]
    # values feed the split, lengths feed the view; keys are constants (no node for keys()).
    split = nodes(gm, "call_method", "split")[0]
    assert split.args[0].target == "kjt_1"
    assert nodes(gm, "call_method", "view")[0].args[0].target == "kjt_2"
    assert not nodes(gm, "call_method", "keys")
    bag_b = nodes(gm, "call_module", "bags.b")[0]
    assert bag_b.args[0].target is operator.getitem and bag_b.args[0].args == (split, 1)
    assert torch.allclose(gm(kjt), model(kjt))
    # Another batch with the same keys runs through the same graph.
    other = ember.KeyedJaggedTensor(["a", "b"], torch.tensor([7, 8, 0]), torch.tensor([1, 0, 0, 2]),
                                    torch.rand(3) if weighted else None)
    assert torch.allclose(gm(other), model(other))


class KJTLeafConsumer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ebc = PerFeatureBags(["a", "b"])
        self.top = nn.Linear(8, 1)

    def forward(self, values, lengths):
        kjt = ember.KeyedJaggedTensor(["a", "b"], values * 1, lengths)
        return self.top(self.ebc(kjt))


def test_kjt_built_in_forward_and_passed_to_leaf_records_construction():
    model = KJTLeafConsumer()
    kjt = make_kjt()
    args = (kjt.values(), kjt.lengths())
    gm = ember.symbolic_trace(model, args, leaf_modules=[PerFeatureBags])
    (make,) = nodes(gm, "call_function", ember.make_kjt)
    assert make.args[0] == ["a", "b"]
    assert make.args[1].target is operator.mul and make.args[2].target == "lengths"
    ebc = nodes(gm, "call_module", "ebc")[0]
    assert ebc.args == (make,)
    assert torch.allclose(gm(*args), model(*args))


def test_kjt_api():
    kjt = make_kjt(weighted=True)
    assert kjt.keys() == ["a", "b"] and kjt.stride() == 3
    assert kjt.offsets().tolist() == [0, 2, 2, 3, 4, 7, 7]
    assert kjt.weights() is kjt.weights_or_none()
    with pytest.raises(ValueError):
        make_kjt().weights()
