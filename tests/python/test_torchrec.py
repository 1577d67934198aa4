"""The same features on TorchRec's EmbeddingBagCollection and KeyedJaggedTensor.

Optional: skipped unless TorchRec is importable (it is not part of the default environment).
"""

import pytest
import torch
import torch.nn as nn

torchrec = pytest.importorskip("torchrec")
pytestmark = pytest.mark.torchrec

import ember  # noqa: E402
from helpers import nodes, targets  # noqa: E402
from torchrec import EmbeddingBagCollection, EmbeddingBagConfig, KeyedJaggedTensor  # noqa: E402


def make_model():
    tables = [
        EmbeddingBagConfig(name="t0", embedding_dim=4, num_embeddings=10, feature_names=["a"]),
        EmbeddingBagConfig(name="t1", embedding_dim=4, num_embeddings=10, feature_names=["b"]),
    ]

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.ebc = EmbeddingBagCollection(tables=tables, device=torch.device("cpu"))
            self.over = nn.Linear(8, 1)

        def forward(self, kjt):
            pooled = self.ebc(kjt)
            return self.over(torch.cat([pooled[k] for k in pooled.keys()], dim=1))

    return Model()


def make_kjt():
    return KeyedJaggedTensor.from_lengths_sync(
        keys=["a", "b"], values=torch.tensor([1, 2, 3, 4, 5, 6, 9]),
        lengths=torch.tensor([2, 0, 1, 1, 3, 0]))


def test_ebc_is_leaf_and_kjt_is_flattened():
    model = make_model()
    kjt = make_kjt()
    graphs = ember.trace(model, (kjt,))
    assert graphs.failed_paths == []
    gm = graphs[""]
    assert targets(gm, "call_module")[0] == "ebc"
    assert all(n.target.startswith("kjt_") for n in nodes(gm, "placeholder"))
    assert torch.allclose(gm(kjt), model(kjt))
