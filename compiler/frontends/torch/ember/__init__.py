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

`import ember` imports neither torch nor the runtime: each is imported on the
first use of one of its names (torch takes seconds to import, which the command
line -- ``python -m ember`` with --help or a bad argument, ember-compile,
ember-run -- and a serving process do not pay).
"""

import importlib
import sys
import types

# The tracer's and exporter's names (they need torch): the submodule of each.
_FRONTEND = {
    "NoWait": "awaitable",
    "is_awaitable": "awaitable",
    "DataDependentControlFlowError": "errors",
    "ExampleEvaluationError": "errors",
    "TraceError": "errors",
    "ExportError": "export",
    "export": "export",
    "to_onnx": "export",
    "KeyedJaggedTensor": "kjt",
    "make_kjt": "kjt",
    "EmbeddingBagCollection": "modules",
    "EmbeddingBagConfig": "modules",
    "KeyedTensor": "modules",
    "is_registered_leaf": "leaves",
    "register_leaf": "leaves",
    "unregister_leaf": "leaves",
    "GraphCollection": "recursive",
    "trace": "recursive",
    "Tracer": "tracer",
    "symbolic_trace": "tracer",
}
# The runtime's names (they need the built _ember_runtime extension, not torch).
_RUNTIME = ("EmberError", "Session")


def _torch_missing():
    """None when torch imports, else the ImportError."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        return e
    return None


def _load_frontend() -> None:
    """Imports the tracer and exporter and binds their names here."""
    for name, submodule in _FRONTEND.items():
        module = importlib.import_module("." + submodule, __name__)
        globals()[name] = getattr(module, name)


def __getattr__(name):
    if name in _RUNTIME:
        from . import runtime
        return getattr(runtime, name)
    if name in _FRONTEND:
        missing = _torch_missing()
        if missing is not None:
            raise AttributeError(f"module 'ember' has no attribute {name!r}: the tracer and "
                                 f"exporter need torch ({missing})")
        _load_frontend()
        return globals()[name]
    if name == "__all__":
        names = list(_RUNTIME) if _torch_missing() is not None else [*_FRONTEND, *_RUNTIME]
        return sorted(names)
    raise AttributeError("module 'ember' has no attribute %r" % name)


def __dir__():
    names = set(globals()) | set(_RUNTIME)
    if _torch_missing() is None:
        names |= set(_FRONTEND)
    return sorted(names)


class _Package(types.ModuleType):
    """Importing the submodule ember.export binds it as the package's attribute
    `export`; the package's `export` is the function, as before the lazy imports."""

    def __setattr__(self, name, value):
        if (name == "export" and isinstance(value, types.ModuleType)
                and value.__name__ == __name__ + ".export"):
            value = value.export
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
