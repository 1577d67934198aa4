"""Ember's PyTorch frontend: a torch.fx tracer for recommendation models.

    import ember
    graphs = ember.trace(model, example_inputs)       # robust recursive trace
    gm = graphs[""]                                    # root graph (a torch.fx.GraphModule)
    graphs.is_failed("sparse.arch"), graphs.failure_msg("sparse.arch")
    ember.export(model, example_inputs, "model.onnx")  # ONNX for ember-compile
    session = ember.Session("model.plan")             # the runtime (ember/runtime.py)
    session.run({"dense": x, "sparse": kjt})

The tracer and exporter need torch; without torch only the runtime
(ember.Session, ember.EmberError) is there, so a serving process needs
neither torch nor the compiler.
"""

try:
    import torch as _torch  # noqa: F401
except ImportError:  # the runtime alone
    _torch = None

if _torch is not None:
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
__all__ += ["EmberError", "Session"]
if _torch is None:
    __all__ = ["EmberError", "Session"]


def __getattr__(name):
    # The runtime module is imported on first use: it needs the built
    # _ember_runtime extension, which the tracer and exporter do not.
    if name in ("Session", "EmberError"):
        from . import runtime
        return getattr(runtime, name)
    raise AttributeError("module 'ember' has no attribute %r" % name)
