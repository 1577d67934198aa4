"""ember.trace: robust recursive tracing into a GraphCollection.

When a module cannot be traced, it becomes a leaf of its parent's graph, the failure is
recorded (module path, exception, source line), and its own submodules are traced
separately with the inputs they received when the failed module ran on the example inputs.
"""

from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, Union

import torch
import torch.fx
import torch.nn as nn

from .errors import ExampleEvaluationError, TraceError, user_source_line
from .tracer import LeafSpec, Tracer, _clone_tensors

ModuleRef = Union[str, nn.Module]


class GraphCollection:
    """The graphs of a recursive trace, by module path ('' is the root), and its failures."""

    def __init__(self, model: nn.Module):
        self.model = model
        self.graphs: Dict[str, torch.fx.GraphModule] = {}
        self.failures: Dict[str, str] = {}
        self.exceptions: Dict[str, BaseException] = {}
        self.visited: Set[str] = set()
        self._paths = {id(m): name for name, m in model.named_modules()}

    def _path(self, m: ModuleRef) -> str:
        if isinstance(m, str):
            return m
        path = self._paths.get(id(m))
        if path is None:
            raise KeyError(f"{type(m).__name__} is not a submodule of the traced model")
        return path

    def __getitem__(self, m: ModuleRef) -> torch.fx.GraphModule:
        return self.graphs[self._path(m)]

    def __contains__(self, m: ModuleRef) -> bool:
        return self._path(m) in self.graphs

    def __iter__(self):
        return iter(self.graphs.items())

    def failure_msg(self, m: ModuleRef) -> Optional[str]:
        """'path: ExceptionType: message (at file:line: code)' for a failed module, else None."""
        return self.failures.get(self._path(m))

    def is_failed(self, m: ModuleRef) -> bool:
        return self._path(m) in self.failures

    def is_unvisited(self, m: ModuleRef) -> bool:
        """True for a module that was never called while tracing the example inputs."""
        return self._path(m) not in self.visited

    @property
    def failed_paths(self) -> List[str]:
        return sorted(self.failures)

    def raise_if_failed(self) -> None:
        if self.failures:
            lines = "\n".join(f"  {msg}" for _, msg in sorted(self.failures.items()))
            raise TraceError(
                f"{len(self.failures)} module(s) could not be traced:\n{lines}", self.failures
            )

    def __repr__(self) -> str:
        return f"GraphCollection(graphs={sorted(self.graphs)}, failed={self.failed_paths})"


def _format_failure(path: str, exc: BaseException) -> str:
    where = user_source_line(exc)
    shown = path or "<root>"
    msg = f"{shown}: {type(exc).__name__}: {exc}"
    if where and where not in str(exc):
        msg += f" (at {where})"
    return msg


def _observe_inputs(module: nn.Module, prefix: str, args: tuple, kwargs: dict) -> Dict[str, Tuple[tuple, dict]]:
    """Run ``module`` eagerly and record the first inputs of every submodule, by full path."""
    paths = {id(m): name for name, m in module.named_modules()}
    observed: Dict[str, Tuple[tuple, dict]] = {}
    original_call = nn.Module.__call__

    def recording_call(mod, *a, **k):
        name = paths.get(id(mod))
        if name is not None:
            full = f"{prefix}.{name}" if prefix and name else (prefix or name)
            if full not in observed:
                observed[full] = (_clone_tensors(tuple(a)), _clone_tensors(dict(k)))
        return original_call(mod, *a, **k)

    nn.Module.__call__ = recording_call
    try:
        with torch.no_grad():
            original_call(module, *args, **kwargs)
    except Exception as e:
        raise ExampleEvaluationError(
            f"running module '{prefix or '<root>'}' on its example inputs failed: {type(e).__name__}: {e}"
        ) from e
    finally:
        nn.Module.__call__ = original_call
    return observed


class _RecursiveTrace:
    def __init__(self, model: nn.Module, leaf_modules: Optional[Sequence[LeafSpec]]):
        self.collection = GraphCollection(model)
        self.leaf_modules = list(leaf_modules or ())
        self.leaf_probe = Tracer(leaf_modules=self.leaf_modules)

    def run(self, module: nn.Module, path: str, args: tuple, kwargs: dict,
            concrete_args: Optional[Dict[str, Any]]) -> None:
        coll = self.collection
        coll.visited.add(path)
        failed_here: List[str] = []
        while True:
            tracer = Tracer(leaf_modules=self.leaf_modules)
            tracer.path_prefix = path
            tracer.forced_leaves = set(coll.failures)
            try:
                graph = tracer.trace(module, concrete_args, example_inputs=args, example_kwargs=kwargs)
                break
            except ExampleEvaluationError:
                raise
            except Exception as e:  # any tracing failure is recorded, not raised
                failed = getattr(e, "_ember_module_path", None) or path
                if failed in coll.failures:  # cannot make progress: report, do not loop
                    raise
                coll.failures[failed] = _format_failure(failed, e)
                coll.exceptions[failed] = e
                if failed == path:
                    self._trace_children(module, path, _observe_inputs(module, path, args, kwargs))
                    return
                failed_here.append(failed)
        coll.graphs[path] = tracer.graph_module(graph)
        coll.visited |= tracer.visited
        for failed in failed_here:
            sub = tracer._modules_by_path.get(self._relative(failed, path))
            if sub is not None:
                self._trace_children(sub, failed, tracer.observed_inputs)

    @staticmethod
    def _relative(full: str, prefix: str) -> str:
        return full[len(prefix) + 1:] if prefix else full

    def _trace_children(self, module: nn.Module, path: str, observed: Dict[str, Tuple[tuple, dict]]) -> None:
        for name, child in module.named_children():
            child_path = f"{path}.{name}" if path else name
            if child_path not in observed:
                continue  # never called on the example inputs: stays unvisited
            self.collection.visited.add(child_path)
            if self.leaf_probe.is_leaf_module(child, child_path):
                continue
            child_args, child_kwargs = observed[child_path]
            self.run(child, child_path, child_args, child_kwargs, None)


def trace(model: nn.Module, example_inputs: Any = (), leaf_modules: Optional[Sequence[LeafSpec]] = None,
          concrete_args: Optional[Dict[str, Any]] = None,
          example_kwargs: Optional[Dict[str, Any]] = None) -> GraphCollection:
    """Robust recursive trace of ``model`` on ``example_inputs`` (a tuple of positional
    arguments, or a single tensor). Never raises for untraceable modules: see
    GraphCollection.failure_msg / is_failed. Raises ExampleEvaluationError when the model
    itself fails on the example inputs."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"ember.trace expects an nn.Module, got {type(model).__name__}")
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    runner = _RecursiveTrace(model, leaf_modules)
    runner.run(model, "", tuple(example_inputs), dict(example_kwargs or {}), concrete_args)
    return runner.collection
