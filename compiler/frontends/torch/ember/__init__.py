"""Ember's PyTorch frontend: a torch.fx tracer for recommendation models.

    import ember
    graphs = ember.trace(model, example_inputs)       # robust recursive trace
    gm = graphs[""]                                    # root graph (a torch.fx.GraphModule)
    graphs.is_failed("sparse.arch"), graphs.failure_msg("sparse.arch")
    ember.export(model, example_inputs, "model.onnx")  # ONNX for ember-compile
"""

from .awaitable import NoWait, is_awaitable
from .errors import DataDependentControlFlowError, ExampleEvaluationError, TraceError
from .export import ExportError, export, to_onnx
from .kjt import KeyedJaggedTensor, make_kjt
from .modules import EmbeddingBagCollection, EmbeddingBagConfig, KeyedTensor
from .leaves import is_registered_leaf, register_leaf, unregister_leaf
from .recursive import GraphCollection, trace
from .tracer import Tracer, symbolic_trace

__all__ = [
    "DataDependentControlFlowError",
    "EmbeddingBagCollection",
    "EmbeddingBagConfig",
    "KeyedTensor",
    "ExampleEvaluationError",
    "ExportError",
    "GraphCollection",
    "KeyedJaggedTensor",
    "NoWait",
    "TraceError",
    "Tracer",
    "is_awaitable",
    "is_registered_leaf",
    "make_kjt",
    "register_leaf",
    "symbolic_trace",
    "to_onnx",
    "trace",
    "export",
    "unregister_leaf",
]
