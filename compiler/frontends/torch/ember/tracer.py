"""ember.Tracer: a torch.fx Tracer for recommendation models.

Differences from torch.fx.Tracer:
  * embedding modules, user-named modules and registered leaf types stay leaves;
  * modules held in plain lists / dicts (not registered submodules) get a path;
  * awaitable values get an explicit ``wait`` node when used;
  * with example inputs, every node carries its example value (``node.meta['ember_value']``)
    so len(), iteration, ints/floats from sizes and shape-based ``if`` work; Python control
    flow on tensor *data* raises DataDependentControlFlowError;
  * ``x[i] = y`` and in-place operators are recorded as nodes (setitem, iadd, ...);
  * list / tuple / dict / KeyedJaggedTensor inputs are flattened into one placeholder per
    tensor (through torch.fx's own concrete_args mechanism, so user concrete_args behave
    exactly as in torch.fx).
"""

import contextlib
import functools
import copy
import inspect
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

import torch
import torch.fx
import torch.nn as nn

from . import leaves
from ._compat import is_pytree_node_registered, placeholder_marker, tree_flatten, tree_map
from .awaitable import is_awaitable
from .errors import DataDependentControlFlowError, ExampleEvaluationError, TraceError, user_stack_line
from .kjt import is_kjt_like, kjt_fields, make_kjt, rebuild_kjt, register_kjt_type
from .proxy import UNKNOWN, EmberProxy, is_static, require_known, value_of

# Attributes / methods whose result depends only on metadata (shape, dtype, device, keys).
STATIC_ATTRS = frozenset(
    {"shape", "dtype", "device", "ndim", "is_cuda", "is_sparse", "layout", "is_quantized"}
)
STATIC_METHODS = frozenset(
    {"size", "dim", "numel", "nelement", "ndimension", "get_device", "is_contiguous",
     "is_floating_point", "element_size", "keys", "stride"}
)
STATIC_FUNCTIONS = (len, torch.numel)
# dict views (keys first): iterating d.keys() / d.values() / d.items() of a traced dict.
_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
# torch factory functions take sizes as Python ints; while tracing they are recorded as nodes
# when a size is a proxy (instead of being specialized into a constant tensor).
FACTORY_FUNCTIONS = ("zeros", "ones", "empty", "full", "arange", "rand", "randn", "randint",
                     "eye", "tensor", "as_tensor", "linspace")

LeafSpec = Union[str, type]


def _map_structure(fn: Callable[[Any], Any], obj: Any) -> Any:
    """Apply fn to every leaf of nested list/tuple/dict/slice/KJT structures."""
    if isinstance(obj, torch.fx.Proxy):
        return fn(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[_map_structure(fn, x) for x in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map_structure(fn, x) for x in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _map_structure(fn, v)) for k, v in obj.items())
    if isinstance(obj, slice):
        return slice(_map_structure(fn, obj.start), _map_structure(fn, obj.stop),
                     _map_structure(fn, obj.step))
    if is_kjt_like(obj):
        keys, values, lengths, weights = kjt_fields(obj)
        return rebuild_kjt(type(obj), keys, _map_structure(fn, values), _map_structure(fn, lengths),
                           None if weights is None else _map_structure(fn, weights))
    return fn(obj)


def _collect_proxies(obj: Any) -> List[torch.fx.Proxy]:
    found: List[torch.fx.Proxy] = []

    def visit(x):
        if isinstance(x, torch.fx.Proxy):
            found.append(x)
        return x

    _map_structure(visit, obj)
    return found


def _clone_tensors(obj: Any) -> Any:
    def clone(x):
        return x.detach().clone() if isinstance(x, torch.Tensor) else x

    return _map_structure(clone, obj)


def _is_structured(value: Any) -> bool:
    return isinstance(value, (list, tuple, dict)) or is_kjt_like(value)


def _sanitize(name: str) -> str:
    return "".join(c if (c.isalnum() or c == "_") else "_" for c in str(name)) or "_"



def _placeholders_like(example: Any, PH: Any) -> Any:
    """``example`` with every pytree leaf replaced by torch.fx's PH marker. A KJT class
    whose constructor checks its tensors (TorchRec's, registered with pytree by TorchRec
    itself) is copied and its tensor fields replaced instead, which keeps the library's own
    pytree structure (and so what the traced GraphModule accepts)."""
    fields = getattr(type(example), "_fields", None)
    if is_kjt_like(example) and fields:
        ph = copy.copy(example)
        for field in fields:
            if getattr(ph, field, None) is not None:
                setattr(ph, field, PH)
        return ph
    return tree_map(lambda _: PH, example)

class Tracer(torch.fx.Tracer):
    """torch.fx Tracer subclass; see the module docstring.

    ``leaf_modules``: module paths (e.g. ``"sparse.ebc"``), class names (``"MyLookup"``) or
    module types that must stay leaves.
    """

    def __init__(self, leaf_modules: Optional[Sequence[LeafSpec]] = None, **kwargs):
        super().__init__(**kwargs)
        self._leaf_names: Set[str] = set()
        self._leaf_types: List[type] = []
        for spec in leaf_modules or ():
            if isinstance(spec, str):
                self._leaf_names.add(spec)
            elif isinstance(spec, type) and issubclass(spec, nn.Module):
                self._leaf_types.append(spec)
            else:
                raise TypeError(f"leaf_modules entries must be str or nn.Module types, got {spec!r}")
        # Set by ember.trace for recursive tracing.
        self.path_prefix: str = ""
        self.forced_leaves: Set[str] = set()
        self._reset_state()

    # ---- registry (class-level, shared by every tracer) ----
    register_leaf = staticmethod(leaves.register_leaf)
    unregister_leaf = staticmethod(leaves.unregister_leaf)
    is_registered_leaf = staticmethod(leaves.is_registered_leaf)

    def _reset_state(self) -> None:
        self._placeholder_values: Dict[str, Any] = {}
        self._values_enabled = False
        self._evaluating = 0
        self._modules_by_path: Dict[str, nn.Module] = {}
        self._unregistered: Optional[Dict[int, Tuple[str, Any]]] = None
        self._unregistered_objs: Dict[str, Any] = {}
        self._synthetic_count = 0
        self._wait_cache: Dict[torch.fx.Node, torch.fx.Proxy] = {}
        self._kjt_cache: Dict[int, Tuple[Any, torch.fx.Proxy]] = {}
        self._awaited: Dict[int, Tuple[Any, Any]] = {}
        self._no_wait_receiver: Optional[torch.fx.Node] = None
        self._module_stack: List[str] = []
        self.visited: Set[str] = set()
        self.observed_inputs: Dict[str, Tuple[tuple, dict]] = {}

    def full_path(self, path: str) -> str:
        if not self.path_prefix:
            return path
        return f"{self.path_prefix}.{path}" if path else self.path_prefix

    # ------------------------------------------------------------------ trace
    def trace(
        self,
        root: Union[nn.Module, Callable[..., Any]],
        concrete_args: Optional[Dict[str, Any]] = None,
        example_inputs: Optional[Sequence[Any]] = None,
        example_kwargs: Optional[Dict[str, Any]] = None,
    ) -> torch.fx.Graph:
        """Trace ``root``. With ``example_inputs`` (positional) / ``example_kwargs``, every
        proxy knows its example value, and structured inputs are flattened."""
        self._reset_state()
        if example_inputs is not None and not isinstance(example_inputs, (tuple, list)):
            example_inputs = (example_inputs,)
        if example_inputs is not None or example_kwargs:
            concrete_args = self._prepare_inputs(
                root, concrete_args, tuple(example_inputs or ()), dict(example_kwargs or {})
            )
        self.visited.add(self.path_prefix)
        with torch.no_grad(), self._patched_factories():
            graph = super().trace(root, concrete_args)
        if type(getattr(graph, "_codegen", None)).__name__ == "_PyTreeCodeGen":
            # torch.fx's pytree codegen cannot print placeholder defaults (1.13 emits invalid
            # Python); the flattened forward takes every argument explicitly anyway.
            for node in graph.nodes:
                if node.op == "placeholder":
                    node.args = ()
        return graph

    @contextlib.contextmanager
    def _patched_factories(self):
        originals = {name: getattr(torch, name) for name in FACTORY_FUNCTIONS}

        def make_wrapper(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                if not self._evaluating and _collect_proxies((args, kwargs)):
                    return self.create_proxy("call_function", fn, args, kwargs)
                return fn(*args, **kwargs)

            return wrapper

        try:
            for name, fn in originals.items():
                setattr(torch, name, make_wrapper(fn))
            yield
        finally:
            for name, fn in originals.items():
                setattr(torch, name, fn)

    def _prepare_inputs(self, root, concrete_args, args: tuple, kwargs: dict) -> Optional[Dict[str, Any]]:
        """Bind example inputs to forward's parameters; map placeholder names to values and
        turn structured example inputs into torch.fx PH structures (flattened placeholders)."""
        fn = root.forward if isinstance(root, nn.Module) else root
        sig = inspect.signature(inspect.unwrap(fn))
        params = list(sig.parameters.values())
        if isinstance(root, nn.Module) and params and params[0].name == "self":
            params = params[1:]
        try:
            bound = inspect.Signature(params).bind_partial(*args, **kwargs).arguments
        except TypeError as e:
            raise TraceError(f"example inputs do not match forward{sig}: {e}") from e
        PH = placeholder_marker()
        user_concrete = dict(concrete_args or {})
        new_concrete = dict(user_concrete)
        self._values_enabled = True
        for param in params:
            name = param.name
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            has_example = name in bound
            example = _clone_tensors(bound[name]) if has_example else UNKNOWN
            if name in user_concrete:
                user_leaves, _ = tree_flatten(user_concrete[name])
                ex_leaves = tree_flatten(example)[0] if has_example else None
                for i, leaf in enumerate(user_leaves):
                    if leaf is PH:
                        value = ex_leaves[i] if ex_leaves is not None and i < len(ex_leaves) else UNKNOWN
                    else:
                        value = leaf
                    self._placeholder_values[f"{name}_{i + 1}"] = value
                continue
            if not has_example:
                if param.default is not inspect.Parameter.empty:
                    self._placeholder_values[name] = param.default
                continue
            if _is_structured(example) and not is_awaitable(example):
                if is_kjt_like(example) and not is_pytree_node_registered(type(example)):
                    register_kjt_type(type(example))
                ex_leaves, _ = tree_flatten(example)
                new_concrete[name] = _placeholders_like(example, PH)
                for i, leaf in enumerate(ex_leaves):
                    self._placeholder_values[f"{name}_{i + 1}"] = leaf
            else:
                self._placeholder_values[name] = example
        return new_concrete or None

    # ------------------------------------------------------------------ proxies
    def proxy(self, node: torch.fx.Node) -> torch.fx.Proxy:
        return EmberProxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        if (kind == "call_method" and args and isinstance(args[0], torch.fx.Proxy)
                and is_awaitable(value_of(args[0])) and hasattr(value_of(args[0]), target)):
            # A method of the awaitable itself (wait(), ...): do not wait the receiver first.
            self._no_wait_receiver = args[0].node
        try:
            proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                         proxy_factory_fn)
        finally:
            receiver, self._no_wait_receiver = self._no_wait_receiver, None
        node = proxy.node
        if self._module_stack:
            node.meta["ember_module_path"] = self._module_stack[-1]
        if self._values_enabled:
            value, static = self._evaluate(kind, target, args, kwargs, node, receiver)
            node.meta["ember_value"] = value
            node.meta["ember_static"] = static
            if static and isinstance(value, torch.Tensor):
                # Snapshot: the example value may be mutated in place later in forward.
                node.meta["ember_const"] = value.detach().clone()
        return proxy

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        if kind == "get_attr" and self._values_enabled and "ember_value" not in node.meta:
            # torch.fx stores tensors that are not attributes (``buf[0]`` used as an index)
            # as ``_tensor_constant<n>`` attributes through create_node, not create_proxy.
            node.meta["ember_value"] = self._resolve_attr(target)
            node.meta["ember_static"] = False
        return node

    # ------------------------------------------------------------------ values
    def _concrete(self, obj: Any, receiver: Optional[torch.fx.Node] = None) -> Any:
        def leaf(x):
            if isinstance(x, torch.fx.Proxy):
                node = x.node
                if node in self._wait_cache and node is not receiver:
                    return value_of(self._wait_cache[node])
                return value_of(x)
            if id(x) in self._awaited and self._awaited[id(x)][0] is x:
                return self._concrete(self._awaited[id(x)][1])
            return x

        return _map_structure(leaf, obj)

    def _evaluate(self, kind, target, args, kwargs, node, receiver) -> Tuple[Any, bool]:
        if kind == "placeholder":
            return self._placeholder_values.get(target, UNKNOWN), False
        if kind == "get_attr":
            return self._resolve_attr(target), False
        if kind == "output":
            return UNKNOWN, False
        cargs = self._concrete(args, receiver)
        ckwargs = self._concrete(kwargs, receiver)
        if any(v is UNKNOWN for v in tree_flatten((cargs, ckwargs))[0]):
            return UNKNOWN, False
        self._evaluating += 1
        try:
            if kind == "call_function":
                value = target(*cargs, **ckwargs)
            elif kind == "call_method":
                value = getattr(cargs[0], target)(*cargs[1:], **ckwargs)
            elif kind == "call_module":
                value = self._modules_by_path[target](*cargs, **ckwargs)
            else:
                return UNKNOWN, False
        except TraceError:
            raise
        except Exception as e:
            where = user_stack_line()
            raise ExampleEvaluationError(
                f"running {kind} {getattr(target, '__name__', target)!s} (node '{node.name}') on the "
                f"example inputs failed: {type(e).__name__}: {e}" + (f" [at {where}]" if where else "")
            ) from e
        finally:
            self._evaluating -= 1
        return value, self._static_result(kind, target, args, kwargs)

    @staticmethod
    def _static_result(kind, target, args, kwargs) -> bool:
        if kind == "call_module":
            return False
        if kind == "call_function" and target is getattr and len(args) >= 2:
            if args[1] in STATIC_ATTRS:
                return True
        if kind == "call_method" and target in STATIC_METHODS:
            return True
        if kind == "call_function" and target in STATIC_FUNCTIONS:
            return True
        proxies = _collect_proxies((args, kwargs))
        return bool(proxies) and all(is_static(p) for p in proxies)

    def _resolve_attr(self, target: str) -> Any:
        if target in self._unregistered_objs:
            return self._unregistered_objs[target]
        obj: Any = self.root
        # While tracing, torch.fx patches nn.Module.__getattr__ to record parameter reads
        # (which would call back here for ever): read the attributes as plain values.
        self._evaluating += 1
        try:
            for part in target.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            return UNKNOWN
        finally:
            self._evaluating -= 1
        return obj

    # ---- Python protocol hooks used by EmberProxy ----
    def to_bool(self, obj: torch.fx.Proxy) -> bool:
        return bool(self._specializable(obj, "bool()"))

    def to_scalar(self, obj: torch.fx.Proxy, convert: Callable[[Any], Any]) -> Any:
        return convert(self._specializable(obj, f"{getattr(convert, '__name__', 'scalar')}()"))

    def _specializable(self, obj: torch.fx.Proxy, what: str) -> Any:
        value = require_known(obj, what)
        where = user_stack_line()
        if is_static(obj):
            _record_specialization(obj, what, where)
        else:
            raise DataDependentControlFlowError(
                f"data-dependent control flow: {what} of '{obj.node.name}' depends on tensor "
                f"values, not only on shapes" + (f" (at {where})" if where else "")
                + "; make that module a leaf or pass the value through concrete_args"
            )
        return value

    def proxy_len(self, obj: torch.fx.Proxy) -> int:
        value = require_known(obj, "len()")
        _record_specialization(obj, "len()", user_stack_line())
        return len(value)

    def iter(self, obj: torch.fx.Proxy):
        value = require_known(obj, "iteration")
        _record_specialization(obj, "len()", user_stack_line())
        if isinstance(value, dict):
            return iter(list(value.keys()))
        if isinstance(value, _DICT_VIEWS):
            return self._iter_dict_view(obj, value)
        return iter([obj[i] for i in range(len(value))])

    def _iter_dict_view(self, obj: torch.fx.Proxy, value: Any):
        """``for k, v in d.items()`` (and ``d.keys()`` / ``d.values()``) on a dict proxy: the
        keys are the example's (constants), each value a ``d[key]`` getitem node."""
        node = obj.node
        keys = list(value) if isinstance(value, _DICT_VIEWS[0]) else None
        if keys is None:
            src = node.args[0] if node.op == "call_method" and node.args else None
            src_value = src.meta.get("ember_value") if isinstance(src, torch.fx.Node) else None
            if node.target not in ("items", "values") or not isinstance(src_value, dict):
                raise TraceError(f"cannot iterate '{node.name}': a dict view whose dict is "
                                 "not a traced value")
            keys = list(src_value.keys())
            d = self.proxy(src)
            if node.target == "values":
                return iter([d[k] for k in keys])
            return iter([(k, d[k]) for k in keys])
        return iter(keys)

    def keys(self, obj: torch.fx.Proxy):
        # A recorded call (torch.fx's Proxy.keys() calls back here: never call obj.keys()).
        return torch.fx.proxy.Attribute(obj, "keys")()

    # ------------------------------------------------------------------ args
    def create_arg(self, a: Any):
        if isinstance(a, torch.fx.Proxy):
            node = a.node
            if node is not self._no_wait_receiver and is_awaitable(value_of(a)):
                return self._wait_proxy(a).node
            return node
        if isinstance(a, nn.Parameter):
            path = self._unregistered_attr_path(a)
            if path is not None:
                return self.create_proxy("get_attr", path, (), {}).node
        if is_kjt_like(a) and _collect_proxies(a):
            return self._kjt_node(a)
        if is_awaitable(a) and not isinstance(a, torch.fx.Proxy):
            cached = self._awaited.get(id(a))
            if cached is None or cached[0] is not a:
                cached = (a, a.wait())
                self._awaited[id(a)] = cached
            return self.create_arg(cached[1])
        return super().create_arg(a)

    def _wait_proxy(self, proxy: torch.fx.Proxy) -> torch.fx.Proxy:
        node = proxy.node
        if node not in self._wait_cache:
            self._wait_cache[node] = self.create_proxy("call_method", "wait", (proxy,), {})
        return self._wait_cache[node]

    def _kjt_node(self, kjt: Any) -> torch.fx.Node:
        cached = self._kjt_cache.get(id(kjt))
        if cached is None or cached[0] is not kjt:
            keys, values, lengths, weights = kjt_fields(kjt)
            args = (list(keys), values, lengths) + ((weights,) if weights is not None else ())
            cached = (kjt, self.create_proxy("call_function", make_kjt, args, {}))
            self._kjt_cache[id(kjt)] = cached
        return cached[1].node

    # ------------------------------------------------------------------ modules
    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        full = self.full_path(module_qualified_name)
        if full in self.forced_leaves:
            return True
        if (module_qualified_name in self._leaf_names or full in self._leaf_names
                or type(m).__name__ in self._leaf_names):
            return True
        if self._leaf_types and isinstance(m, tuple(self._leaf_types)):
            return True
        if leaves.is_registered_leaf(m) or isinstance(m, leaves.embedding_leaf_types()):
            return True
        return super().is_leaf_module(m, module_qualified_name)

    def path_of_module(self, mod: nn.Module) -> str:
        try:
            path = super().path_of_module(mod)
        except NameError:
            entry = self._unregistered_index().get(id(mod))
            if entry is not None and entry[1] is mod:
                path = entry[0]
            else:
                self._synthetic_count += 1
                path = f"_ember_unregistered_{self._synthetic_count}_{_sanitize(type(mod).__name__)}"
                self._unregistered_index()[id(mod)] = (path, mod)
        self._modules_by_path[path] = mod
        return path

    def _unregistered_index(self) -> Dict[int, Tuple[str, Any]]:
        """Modules (and their parameters) reachable only through plain list/tuple/dict
        attributes of the root's modules, by id -> (path, object)."""
        if self._unregistered is not None:
            return self._unregistered
        index: Dict[int, Tuple[str, Any]] = {}
        root = self.root
        registered = {id(m) for m in root.modules()} if isinstance(root, nn.Module) else set()

        def add_module(path: str, m: nn.Module) -> None:
            if id(m) in registered or id(m) in index:
                return
            index[id(m)] = (path, m)
            for name, p in list(m.named_parameters(recurse=False)) + list(m.named_buffers(recurse=False)):
                if id(p) not in index:
                    index[id(p)] = (f"{path}.{name}", p)
            for name, child in m.named_children():
                add_module(f"{path}.{name}", child)
            scan_containers(path, m)

        def scan_containers(prefix: str, m: nn.Module) -> None:
            for attr, val in vars(m).items():
                if attr in ("_parameters", "_buffers", "_modules") or attr.startswith("__"):
                    continue
                items: List[Tuple[str, Any]] = []
                if isinstance(val, (list, tuple)):
                    items = [(str(i), v) for i, v in enumerate(val)]
                elif isinstance(val, dict):
                    items = [(_sanitize(k), v) for k, v in val.items()]
                for key, v in items:
                    if isinstance(v, nn.Module):
                        base = f"{prefix}.{_sanitize(attr)}" if prefix else _sanitize(attr)
                        add_module(f"{base}.{key}", v)

        if isinstance(root, nn.Module):
            for name, m in root.named_modules():
                scan_containers(name, m)
        self._unregistered = index
        self._unregistered_objs.update({path: obj for path, obj in index.values()})
        return index

    def _unregistered_attr_path(self, t: torch.Tensor) -> Optional[str]:
        if isinstance(self.root, nn.Module):
            for p in self.root.parameters():
                if p is t:
                    return None
        entry = self._unregistered_index().get(id(t))
        if entry is not None and entry[1] is t:
            return entry[0]
        return None

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: Dict[str, Any]):
        if self._evaluating:
            return attr_val
        if isinstance(attr_val, nn.Parameter):
            path = self._unregistered_attr_path(attr_val)
            if path is not None:
                if path not in parameter_proxy_cache:
                    parameter_proxy_cache[path] = self.create_proxy("get_attr", path, (), {})
                return parameter_proxy_cache[path]
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def call_module(self, m: nn.Module, forward: Callable[..., Any], args, kwargs):
        if self._evaluating:
            # Running a leaf on concrete values: record what each submodule receives so the
            # children of a failed module can be traced on their own.
            try:
                path = self.full_path(self.path_of_module(m))
            except Exception:
                path = None
            if path is not None:
                self.visited.add(path)
                if path not in self.observed_inputs:
                    self.observed_inputs[path] = (_clone_tensors(tuple(args)), _clone_tensors(dict(kwargs)))
            return forward(*args, **kwargs)
        path = self.path_of_module(m)
        full = self.full_path(path)
        self.visited.add(full)
        if self.is_leaf_module(m, path):
            if full not in self.observed_inputs and self._values_enabled:
                self.observed_inputs[full] = (self._concrete(tuple(args)), self._concrete(dict(kwargs)))
            return super().call_module(m, forward, args, kwargs)
        self._module_stack.append(full)
        try:
            return super().call_module(m, forward, args, kwargs)
        except Exception as e:
            if not hasattr(e, "_ember_module_path"):
                try:
                    e._ember_module_path = full  # innermost traced module that raised
                except Exception:
                    pass
            raise
        finally:
            self._module_stack.pop()

    # ------------------------------------------------------------------ results
    def graph_module(self, graph: torch.fx.Graph, class_name: Optional[str] = None) -> torch.fx.GraphModule:
        """A GraphModule for ``graph`` whose submodules/attributes include the unregistered ones."""
        attrs: Dict[str, Any] = {}
        for node in graph.nodes:
            if node.op == "call_module":
                attrs[node.target] = self._modules_by_path[node.target]
            elif node.op == "get_attr":
                value = self._resolve_attr(node.target)
                if value is UNKNOWN:
                    raise TraceError(f"get_attr target '{node.target}' cannot be resolved")
                attrs[node.target] = value
        name = class_name or (type(self.root).__name__ if isinstance(self.root, nn.Module) else "Traced")
        # Install shorter paths first so that 'a' exists before 'a.b' is added to it.
        ordered = dict(sorted(attrs.items(), key=lambda kv: kv[0].count(".")))
        return torch.fx.GraphModule(ordered, graph, class_name=name)


def symbolic_trace(root: nn.Module, example_inputs: Optional[Sequence[Any]] = None,
                   concrete_args: Optional[Dict[str, Any]] = None,
                   leaf_modules: Optional[Sequence[LeafSpec]] = None) -> torch.fx.GraphModule:
    """Trace ``root`` with ember.Tracer (no failure recovery) and return a GraphModule."""
    tracer = Tracer(leaf_modules=leaf_modules)
    graph = tracer.trace(root, concrete_args, example_inputs=example_inputs)
    return tracer.graph_module(graph)


def _record_specialization(obj: torch.fx.Proxy, what: str, where: Optional[str]) -> None:
    """The trace baked in ``obj``'s example value (``int()``, ``bool()``, ``len()``): the
    exporter refuses a dynamic batch when that value depends on the batch size."""
    # The graph's last node so far: an index() that torch's argument parser makes while
    # checking an int list (``torch.reshape(x, (B, -1))``) is followed by the node that
    # records the call with the proxy itself, which bakes nothing in.
    last = obj.tracer.graph._root.prev
    obj.node.meta.setdefault("ember_specialized", []).append((what, where, last))
