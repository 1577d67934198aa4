"""Leaf modules: embeddings, user-named modules, registered leaf types."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

import ember
from helpers import assert_fx_fails, nodes, targets

# Where this process's ember comes from (the source tree, or the installed package).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))


class DataDependentLookup(nn.Module):
    """Untraceable on purpose: branches on tensor values."""

    def __init__(self):
        super().__init__()
        self.table = nn.EmbeddingBag(20, 4, mode="sum")

    def forward(self, ids, offsets):
        if ids.max() >= 20:
            raise ValueError("id out of range")
        return self.table(ids, offsets)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lookup = DataDependentLookup()
        self.emb = nn.Embedding(20, 4)
        self.proj = nn.Linear(4, 2)

    def forward(self, ids, offsets):
        pooled = self.lookup(ids, offsets)
        seq = self.emb(ids[:2]).sum(0)
        return self.proj(pooled + seq)


@pytest.fixture
def inputs():
    return torch.tensor([1, 2, 3, 19, 0]), torch.tensor([0, 2])


def test_plain_fx_fails_on_model():
    assert_fx_fails(Model())


def test_embedding_modules_are_leaves_by_default(inputs):
    model = Model()
    tracer = ember.Tracer(leaf_modules=["lookup"])
    gm = tracer.graph_module(tracer.trace(model, example_inputs=inputs))
    assert targets(gm, "call_module") == ["lookup", "emb", "proj"]
    assert tracer.is_leaf_module(nn.EmbeddingBag(3, 2), "x")
    assert tracer.is_leaf_module(nn.Embedding(3, 2), "x")
    assert torch.allclose(gm(*inputs), model(*inputs))


def test_tracing_a_model_without_torchrec_does_not_import_it():
    """TorchRec's collections are leaves when their modules are imported (a model holding
    one has imported it); a model without them does not pay TorchRec's import (seconds)."""
    script = (
        "import sys, torch, torch.nn as nn, ember\n"
        "bag = nn.EmbeddingBag(10, 4)\n"
        "tracer = ember.Tracer()\n"
        "tracer.trace(nn.Sequential(bag), example_inputs=(torch.tensor([[1, 2]]),))\n"
        "assert tracer.is_leaf_module(bag, '0')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torchrec'))\n")
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout == "[]\n", (proc.stdout, proc.stderr)


def test_torchrec_collections_are_leaves():
    torchrec = pytest.importorskip("torchrec")
    ebc = torchrec.EmbeddingBagCollection(tables=[torchrec.EmbeddingBagConfig(
        name="t", embedding_dim=4, num_embeddings=10, feature_names=["f"])])
    assert ember.Tracer().is_leaf_module(ebc, "ebc")


def test_package_export_is_the_function_whatever_is_imported():
    """Importing the submodule ember.export binds it on the package (the import system's
    setattr); the package's `export` stays the function."""
    import ember.export as submodule_or_function
    from ember.export import export

    assert ember.export is export and submodule_or_function is export
    setattr(ember, "export", sys.modules["ember.export"])
    assert ember.export is export


def test_without_leaf_the_data_dependent_module_fails(inputs):
    with pytest.raises(ember.DataDependentControlFlowError, match="data-dependent"):
        ember.Tracer().trace(Model(), example_inputs=inputs)


@pytest.mark.parametrize("spec", ["lookup", "DataDependentLookup", DataDependentLookup])
def test_user_named_leaf_by_path_class_name_or_type(spec, inputs):
    tracer = ember.Tracer(leaf_modules=[spec])
    gm = tracer.graph_module(tracer.trace(Model(), example_inputs=inputs))
    lookup = nodes(gm, "call_module", "lookup")
    assert len(lookup) == 1
    assert [a.name for a in lookup[0].args] == ["ids", "offsets"]
    # Nothing of the leaf's body (max, gt, the inner table) leaked into the graph.
    assert "lookup.table" not in targets(gm, "call_module")
    assert not [n for n in gm.graph.nodes if n.op == "call_method" and n.target == "max"]


def test_register_leaf_and_unregister(inputs):
    assert not ember.is_registered_leaf(DataDependentLookup)
    ember.register_leaf(DataDependentLookup)
    try:
        assert ember.is_registered_leaf(DataDependentLookup)
        assert ember.Tracer.is_registered_leaf(DataDependentLookup())
        gm = ember.symbolic_trace(Model(), inputs)
        assert "lookup" in targets(gm, "call_module")
    finally:
        ember.unregister_leaf(DataDependentLookup)
    assert not ember.is_registered_leaf(DataDependentLookup)
    with pytest.raises(KeyError):
        ember.unregister_leaf(DataDependentLookup)
    with pytest.raises(TypeError):
        ember.register_leaf(42)


def test_bad_leaf_spec_is_rejected():
    with pytest.raises(TypeError):
        ember.Tracer(leaf_modules=[3.5])
