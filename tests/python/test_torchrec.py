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
    # TorchRec's KJT flattens itself (values, weights, lengths, offsets; the unused ones
    # None): the traced forward takes those leaves.
    from torch.utils._pytree import tree_flatten
    assert torch.allclose(gm(*tree_flatten(kjt)[0]), model(kjt))


def test_export_compile_run_equals_eager(tmp_path):
    """TorchRec's EmbeddingBagCollection and KJT through ember.export -> ember-compile ->
    ember-run (the KJT's keys in another order than the tables read them)."""
    pytest.importorskip("onnx")
    import numpy as np
    from e2e import compile_and_run

    class ValuesModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = make_model()

        def forward(self, kjt):
            return self.inner.over(self.inner.ebc(kjt).values())

    model = ValuesModel().eval()
    example = KeyedJaggedTensor.from_lengths_sync(
        keys=["b", "a"], values=torch.tensor([1, 2, 3, 4, 5, 6, 9]),
        lengths=torch.tensor([2, 0, 1, 1, 3, 0]))
    kjt = KeyedJaggedTensor.from_lengths_sync(
        keys=["b", "a"], values=torch.tensor([9, 0, 3, 4]), lengths=torch.tensor([0, 1, 1, 2, 0, 0]))
    got = compile_and_run(model, (example,), {"kjt.values": kjt.values().numpy(),
                                              "kjt.lengths": kjt.lengths().numpy()}, tmp_path)
    with torch.no_grad():
        want = model(kjt).numpy()
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
