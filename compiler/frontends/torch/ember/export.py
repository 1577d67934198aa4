"""ember.export: trace a model and write an ONNX file that ember-compile accepts.

Standard ONNX ops (opset 17) where they are exact; the ``ember`` domain (version 1) for
EmbeddingBag and KJT construction. The batch is symbolic by default (``B``: dim 0 of dense
inputs and outputs, ``K*B`` KJT lengths): ``_batch.py`` finds the dims that depend on it and
shape computations use the run-time shape there; ``dynamic_batch=False`` keeps every dim the
example's. In-place ops and slice writes are functionalized here when the mutated tensor is not
a view (a write through a view is refused with an error naming the node).
"""

import operator
import os
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from . import _batch, _progress, _quant_ebc, _sequence
from .errors import TraceError
from ._kjt_idiom import match_per_key_bag, split_by_per_key_sizes
from .kjt import make_kjt
from .modules import EmbeddingBagCollection
from .recursive import trace
from .tracer import LeafSpec

OPSET = 17
EMBER_DOMAIN = "ember"
INT64_MAX = 2 ** 63 - 1  # an open slice end (ONNX Slice clamps it to the run-time size)


class ExportError(TraceError):
    """The traced graph holds something the exporter cannot express in ONNX."""


def _onnx():
    try:
        import onnx  # noqa: F401
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as e:  # pragma: no cover - onnx is a dependency of export only
        raise ExportError("ember.export needs the 'onnx' package") from e
    return onnx, TensorProto, helper, numpy_helper


_DTYPES = {
    torch.float32: "FLOAT", torch.float64: "DOUBLE", torch.float16: "FLOAT16",
    torch.bfloat16: "BFLOAT16", torch.int64: "INT64", torch.int32: "INT32",
    torch.int16: "INT16", torch.int8: "INT8", torch.uint8: "UINT8", torch.bool: "BOOL",
}

_BINARY = {
    operator.add: "Add", operator.iadd: "Add", torch.add: "Add", "add": "Add", "add_": "Add",
    operator.sub: "Sub", operator.isub: "Sub", torch.sub: "Sub", "sub": "Sub", "sub_": "Sub",
    operator.mul: "Mul", operator.imul: "Mul", torch.mul: "Mul", "mul": "Mul", "mul_": "Mul",
    operator.truediv: "Div", operator.itruediv: "Div", torch.div: "Div", "div": "Div", "div_": "Div",
    operator.matmul: "MatMul", torch.matmul: "MatMul", torch.mm: "MatMul", torch.bmm: "MatMul",
    "matmul": "MatMul", "mm": "MatMul", "bmm": "MatMul",
}
_INPLACE = {operator.iadd, operator.isub, operator.imul, operator.itruediv,
            "add_", "sub_", "mul_", "div_", "relu_", "sigmoid_", "tanh_"}
_UNARY = {
    torch.relu: "Relu", F.relu: "Relu", "relu": "Relu", "relu_": "Relu",
    torch.sigmoid: "Sigmoid", "sigmoid": "Sigmoid", "sigmoid_": "Sigmoid",
    torch.tanh: "Tanh", "tanh": "Tanh", "tanh_": "Tanh", torch.exp: "Exp", "exp": "Exp",
    operator.neg: "Neg", torch.neg: "Neg", "neg": "Neg",
}
_FILLED_LIKE = {"new_zeros", "new_ones", "new_full", "zeros_like", "ones_like",
                torch.zeros_like, torch.ones_like}
_IDENTITY = {"contiguous", "clone", "detach", torch.clone}
_VIEW_PRODUCERS = {"view", "reshape", "flatten", "transpose", "permute", "t", "squeeze",
                   "unsqueeze", "split", operator.getitem, torch.flatten, torch.transpose,
                   torch.split, torch.squeeze, torch.unsqueeze, torch.reshape}


class _Tensor:
    def __init__(self, name: str, value: torch.Tensor, view_of: Optional["_Tensor"] = None,
                 full_view: bool = False, view_index: Any = None, alt: Any = None):
        self.name = name
        self.value = value
        # The value at twice the example's batch (dynamic-batch export), else None.
        self.alt = alt
        self.view_of = view_of
        # A view of all of view_of's elements in the same layout (x[:, :], x.contiguous()):
        # a write through it is a write to the base.
        self.full_view = full_view and view_of is not None
        # For a view of part of view_of made by indexing it directly (x[:, 2:5]): the
        # index (as traced), so that an in-place op on the view can be written back.
        self.view_index = view_index if view_of is not None else None


class _Bounds:
    def __init__(self):
        self.starts: List[int] = []
        self.ends: List[int] = []
        self.axes: List[int] = []
        self.steps: List[int] = []
        self.squeeze: List[int] = []
        self.unsqueeze: List[int] = []
        self.full = True  # every slice covers its whole dim

    def add(self, start: int, end: int, axis: int, step: int) -> None:
        self.starts.append(start), self.ends.append(end), self.axes.append(axis)
        self.steps.append(step)


class _Converter:
    progress: Optional["_progress.Phase"] = None  # advanced once per graph node

    def __init__(self, gm: torch.fx.GraphModule, batch: Optional[_batch.BatchInfo] = None):
        self.onnx, self.TP, self.helper, self.numpy_helper = _onnx()
        self.gm = gm
        self.batch = batch
        # (size at the example's batch, size at twice that) -> (ONNX value, dim) holding it.
        self.dim_sources: Dict[Tuple[int, int], Tuple[str, int]] = {}
        self.nodes: List[Any] = []
        self.initializers: List[Any] = []
        # Initializers of at least this many bytes keep their tensor here instead of a copy
        # of its bytes in the proto (None: every initializer is copied into the proto); the
        # exporter then writes them as external data or copies them in (_finish_initializers).
        self.defer_bytes: Optional[int] = None
        self.deferred: Dict[str, torch.Tensor] = {}
        self.init_names: Dict[int, str] = {}
        self.inputs: List[Any] = []
        self.outputs: List[Any] = []
        self.env: Dict[torch.fx.Node, Any] = {}
        self.counter = 0
        self.uses_ember = False
        self.constant_memo: Dict[torch.fx.Node, bool] = {}
        # Keyed tensors made of several collections' columns (a feature read by two tables).
        self.concatenated_keyed: Set[str] = set()
        # (values, lengths, weights, K) of a per-key KJT idiom -> its K single-key KJTs.
        self.per_key_kjts: Dict[Tuple[str, str, Optional[str], int], List[str]] = {}

    # ---------------------------------------------------------------- helpers
    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}__{self.counter}"

    def error(self, node: torch.fx.Node, what: str) -> ExportError:
        return ExportError(f"cannot export node '{node.name}' ({node.op} {_target_name(node)})"
                           f"{_module_of(node)}: {what}")

    def elem_type(self, t: torch.Tensor, node: Optional[torch.fx.Node] = None) -> int:
        name = _DTYPES.get(t.dtype)
        if name is None:
            raise ExportError(f"dtype {t.dtype} has no ONNX element type"
                              + (f" (node '{node.name}')" if node is not None else ""))
        return getattr(self.TP, name)

    def const(self, array: Any, name_hint: str = "const", dtype: Optional[torch.dtype] = None) -> str:
        t = array if isinstance(array, torch.Tensor) else torch.tensor(array, dtype=dtype)
        if dtype is not None:
            t = t.to(dtype)
        key = id(array) if isinstance(array, nn.Parameter) else None
        if key is not None and key in self.init_names:
            return self.init_names[key]
        name = self.fresh(name_hint) if key is None else name_hint
        arr = t.detach().cpu()
        if arr.dtype == torch.bfloat16:
            raise ExportError(f"bfloat16 constant '{name_hint}' is not supported yet")
        if self.defer_bytes is not None and arr.numel() * arr.element_size() >= self.defer_bytes:
            # Large: the proto holds the type only; the tensor itself is kept (no copy).
            proto = self.TP()
            proto.name = name
            proto.dims.extend(arr.shape)
            proto.data_type = self.elem_type(arr)
            self.initializers.append(proto)
            self.deferred[name] = arr
        else:
            self.initializers.append(self.numpy_helper.from_array(arr.numpy(), name))
        if key is not None:
            self.init_names[key] = name
        return name

    def emit(self, op: str, inputs: Sequence[str], node: torch.fx.Node, n_out: int = 1,
             domain: str = "", **attrs) -> List[str]:
        outs = [self.fresh(node.name) for _ in range(n_out)]
        self.nodes.append(self.helper.make_node(op, list(inputs), outs, name=self.fresh(node.name),
                                                domain=domain, **attrs))
        if domain == EMBER_DOMAIN:
            self.uses_ember = True
        return outs

    def tensor(self, arg: Any, node: torch.fx.Node, like: Optional[torch.Tensor] = None) -> str:
        """ONNX value name for an fx argument (tensor node or Python scalar)."""
        if isinstance(arg, torch.fx.Node):
            rep = self.env[arg]
            if isinstance(rep, _Tensor):
                return rep.name
            if isinstance(rep, tuple) and rep[0] == "const":
                if self.depends_on_batch(arg):
                    return self.batch_scalar(arg, rep[1], node, like)
                return self.const(rep[1], "c", like.dtype if like is not None and not isinstance(rep[1], torch.Tensor) else None)
            raise self.error(node, f"argument '{arg.name}' is not a tensor")
        if isinstance(arg, (int, float, bool)):
            return self.const(arg, "scalar", like.dtype if like is not None else None)
        raise self.error(node, f"unsupported argument {arg!r}")

    def concrete(self, arg: Any, node: torch.fx.Node, alt: bool = False,
                 dynamic_ok: bool = False) -> Any:
        """Python value of a static argument (ints, lists of ints...); with ``alt``, its value
        at twice the example's batch. A value that depends on the batch is an error unless
        ``dynamic_ok`` (the caller handles both values)."""
        if isinstance(arg, torch.fx.Node):
            rep = self.env[arg]
            if isinstance(rep, tuple) and rep[0] == "const":
                if self.depends_on_batch(arg):
                    if not dynamic_ok:
                        raise self.error(node, f"'{arg.name}' depends on the batch size, which "
                                               "is symbolic here (export with "
                                               "dynamic_batch=False for the example's batch)")
                    if alt:
                        return self.batch.alt[arg.name]
                return rep[1]
            raise self.error(node, f"argument '{arg.name}' must be known at export time")
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.concrete(a, node, alt, dynamic_ok) for a in arg)
        if isinstance(arg, slice):  # x[0:x.size(0)]: bounds computed from sizes
            return slice(self.concrete(arg.start, node, alt, dynamic_ok),
                         self.concrete(arg.stop, node, alt, dynamic_ok),
                         self.concrete(arg.step, node, alt, dynamic_ok))
        return arg

    # ---------------------------------------------------------------- dynamic batch
    def depends_on_batch(self, node: torch.fx.Node) -> bool:
        return self.batch is not None and node.name in self.batch.dependent

    def dynamic_dims(self, rep: "_Tensor") -> List[int]:
        """Dims of ``rep`` whose size depends on the batch."""
        if rep.alt is None or not isinstance(rep.alt, torch.Tensor):
            return []
        return [d for d in range(rep.value.dim()) if rep.value.shape[d] != rep.alt.shape[d]]

    def attach_alt(self, rep: Any, alt: Any) -> None:
        """Records the value at twice the batch on the reps a node produced, and makes their
        batch-dependent dims sources for run-time shapes."""
        if isinstance(rep, _Tensor) and isinstance(alt, torch.Tensor):
            if rep.alt is None and alt.dim() == rep.value.dim():
                rep.alt = alt
            for d in self.dynamic_dims(rep):
                self.dim_sources.setdefault((int(rep.value.shape[d]), int(rep.alt.shape[d])),
                                            (rep.name, d))
        elif isinstance(rep, tuple) and rep and rep[0] == "list" and isinstance(alt, (list, tuple)):
            for r, a in zip(rep[1], alt):
                self.attach_alt(r, a)
        elif isinstance(rep, tuple) and rep and rep[0] == "dict" and isinstance(alt, dict):
            for k, r in rep[1].items():
                self.attach_alt(r, alt.get(k))
        elif isinstance(rep, tuple) and rep and rep[0] == "keyed" and hasattr(alt, "values"):
            self.attach_alt(rep[1], alt.values())

    def dim_tensor(self, size: int, alt_size: int, node) -> str:
        """A 1-D int64 [1] value holding a dim's run-time size."""
        if size == alt_size:
            return self.const([size], "dim", torch.int64)
        source = self.dim_sources.get((int(size), int(alt_size)))
        if source is None:
            raise self.error(node, f"a size ({size} at the example's batch) depends on the "
                                   "batch in a way the exporter cannot compute at run time "
                                   "(export with dynamic_batch=False)")
        name, d = source
        return self.emit("Shape", [name], node, start=d, end=d + 1)[0]

    def shape_tensor(self, shape, alt_shape, node, infer: bool = True) -> str:
        """The 1-D int64 shape ``shape`` at run time: a constant when no dim depends on the
        batch (or, with ``infer``, when one does: written -1, as Reshape infers it), else a
        Concat of constants and Shape slices."""
        shape = [int(d) for d in shape]
        dyn = [] if alt_shape is None else [d for d in range(len(shape))
                                            if shape[d] != int(alt_shape[d])]
        if not dyn:
            return self.const(shape, "shape", torch.int64)
        if infer and len(dyn) == 1:
            return self.const([-1 if d in dyn else n for d, n in enumerate(shape)], "shape",
                              torch.int64)
        parts = [self.dim_tensor(shape[d], int(alt_shape[d]), node) for d in range(len(shape))]
        return self.emit("Concat", parts, node, axis=0)[0]

    def filled(self, node, value: torch.Tensor, alt: Any, fill: Any) -> "_Tensor":
        """A tensor of ``value``'s shape filled with ``fill``: a constant, or ConstantOfShape
        of the run-time shape when its shape depends on the batch."""
        if not isinstance(alt, torch.Tensor) or alt.shape == value.shape:
            return _Tensor(self.const(torch.full(tuple(value.shape), fill, dtype=value.dtype),
                                      node.name), value)
        shape = self.shape_tensor(value.shape, alt.shape, node, infer=False)
        fill_t = self.numpy_helper.from_array(
            torch.tensor([fill], dtype=value.dtype).numpy(), "value")
        out = self.emit("ConstantOfShape", [shape], node, value=fill_t)[0]
        return _Tensor(out, value, alt=alt)

    def batch_scalar(self, arg: torch.fx.Node, value: Any, node, like) -> str:
        """A Python number that depends on the batch (``x.size(0)``) used as a tensor
        operand: its run-time value, as a scalar of ``like``'s dtype."""
        alt = self.batch.alt.get(arg.name)
        if not isinstance(value, int) or not isinstance(alt, int):
            raise self.error(node, f"'{arg.name}' depends on the batch size and is not a size "
                                   "(export with dynamic_batch=False)")
        out = self.dim_tensor(value, alt, node)
        out = self.emit("Squeeze", [out, self.const([0], "axes", torch.int64)], node)[0]
        dtype = like.dtype if like is not None else torch.int64
        if dtype != torch.int64:
            out = self.emit("Cast", [out], node, to=self.elem_type(torch.empty(0, dtype=dtype)))[0]
        return out

    def input_shape(self, node: torch.fx.Node, name: str, value: torch.Tensor,
                    ragged: bool) -> List[Any]:
        if ragged:
            return [f"N_{name.replace('.', '_')}"]
        params = self.batch.dim_params.get(node.target) if self.batch else None
        shape: List[Any] = list(value.shape)
        for d, p in enumerate(params or []):
            if p:
                shape[d] = p
        return shape

    def output_shape(self, rep: "_Tensor") -> List[Any]:
        shape: List[Any] = list(rep.value.shape)
        for d in self.dynamic_dims(rep):
            b = self.batch.batch
            shape[d] = _batch.BATCH if (d == 0 and shape[d] == b and rep.alt.shape[d] == 2 * b) \
                else None
        for d in getattr(rep, "count_dims", ()):  # a run-time value count, also in static exports
            shape[d] = None
        return shape

    # ---------------------------------------------------------------- driver
    def kjt_input_names(self) -> Dict[str, str]:
        """Graph inputs of a KJT argument (placeholders ``x_1``, ``x_2`` [, ``x_3``] that feed
        one KJT construction) are named ``x.values``, ``x.lengths`` [, ``x.weights``]:
        ember-compile turns them into the plan's KJT input ``x``."""
        names: Dict[str, str] = {}
        for node in self.gm.graph.nodes:
            if node.target is not make_kjt:
                continue
            parts = list(node.args[1:])
            if not parts or not all(isinstance(p, torch.fx.Node) and p.op == "placeholder"
                                    for p in parts):
                continue
            bases = {p.target.rsplit("_", 1)[0] for p in parts}
            if len(bases) != 1 or any(p.target in names for p in parts):
                continue
            base = bases.pop()
            for p, suffix in zip(parts, ("values", "lengths", "weights")):
                names[p.target] = f"{base}.{suffix}"
        return names

    def ragged_inputs(self) -> set:
        """Placeholders whose size is a value count, not a shape: the 1-D ids and
        per-sample weights of EmbeddingBags, and KJT values / weights. They are exported with a
        symbolic dim (``N_<input>``) so that the compiled plan takes any count."""
        ragged = set()
        for node in self.gm.graph.nodes:
            parts = []
            if node.target is make_kjt:
                parts = [node.args[1]] + list(node.args[3:4])
            elif split_by_per_key_sizes(node):
                parts = [node.args[0]]
            elif node.op == "call_module" and isinstance(self.gm.get_submodule(node.target),
                                                         nn.EmbeddingBag):
                bound = dict(zip(["input", "offsets", "per_sample_weights"], node.args))
                bound.update(node.kwargs)
                parts = [bound.get("input"), bound.get("per_sample_weights")]
            for p in parts:
                p = _elementwise_source(p)
                if isinstance(p, torch.fx.Node) and p.op == "placeholder":
                    value = p.meta.get("ember_value")
                    if isinstance(value, torch.Tensor) and value.dim() == 1:
                        ragged.add(p.target)
        return ragged

    def convert(self, graph_name: str):
        input_names = self.kjt_input_names()
        ragged = self.ragged_inputs()
        for node in self.gm.graph.nodes:
            value = node.meta.get("ember_value")
            if node.op == "placeholder":
                if not isinstance(value, torch.Tensor):
                    raise self.error(node, "graph inputs must be tensors (flattened lists / KJTs are)")
                name = input_names.get(node.target, node.target)
                shape = self.input_shape(node, name, value, node.target in ragged)
                self.inputs.append(self.helper.make_tensor_value_info(
                    name, self.elem_type(value, node), shape))
                self.env[node] = _Tensor(name, value)
            elif node.op == "output":
                self.convert_output(node)
            elif node.meta.get("ember_static") and not _is_mutation(node):
                if isinstance(value, torch.Tensor) and self.depends_on_batch(node):
                    self.env[node] = self.batch_constant(node, node.meta["ember_const"])
                elif isinstance(value, torch.Tensor):
                    snapshot = node.meta["ember_const"]
                    self.env[node] = _Tensor(self.const(snapshot, node.name), snapshot)
                else:
                    self.env[node] = ("const", value)
            elif node.op == "get_attr":
                if value is None:  # a constant torch.fx added itself (_tensor_constant<n>)
                    value = _attribute(self.gm, node.target)
                if not isinstance(value, torch.Tensor):
                    raise self.error(node, "attribute is not a tensor")
                self.env[node] = _Tensor(self.const(value, node.target), value)
            elif node.op == "call_module":
                self.convert_module(node, self.gm.get_submodule(node.target), value)
            else:
                self.convert_op(node, value)
            if self.batch is not None and node.op != "output":
                self.attach_alt(self.env.get(node), self.batch.alt.get(node.name))
            if self.progress is not None:
                self.progress.advance(1)
        self.remove_dead_nodes()
        self.name_kjt_inputs()
        graph = self.helper.make_graph(self.nodes, graph_name, self.inputs, self.outputs,
                                       self.initializers)
        opsets = [self.helper.make_opsetid("", OPSET)]
        if self.uses_ember:
            opsets.append(self.helper.make_opsetid(EMBER_DOMAIN, 1))
        model = self.helper.make_model(graph, opset_imports=opsets, producer_name="ember")
        model.ir_version = min(model.ir_version, 8)
        return model

    def batch_constant(self, node, snapshot: torch.Tensor) -> "_Tensor":
        """A shape-only tensor whose value depends on the batch (``torch.zeros(x.size(0), 2)``):
        ConstantOfShape when it is filled with one value, else an error."""
        alt = self.batch.alt.get(node.name)
        flat, alt_flat = snapshot.reshape(-1), alt.reshape(-1) if isinstance(alt, torch.Tensor) else None
        if (alt_flat is not None and alt.dim() == snapshot.dim() and flat.numel() and alt_flat.numel()
                and bool((flat == flat[0]).all()) and bool((alt_flat == flat[0]).all())):
            return self.filled(node, snapshot, alt, flat[0].item())
        raise self.error(node, "a tensor computed from the batch size (not a constant fill) is "
                               "not exported with a dynamic batch (export with "
                               "dynamic_batch=False)")

    def remove_dead_nodes(self) -> None:
        """Drops nodes and initializers no output depends on (e.g. the Split / CumSum of a
        per-key KJT idiom that was exported as KJT nodes instead)."""
        used = {o.name for o in self.outputs}
        kept = []
        for n in reversed(self.nodes):
            if any(o in used for o in n.output):
                kept.append(n)
                used.update(i for i in n.input if i)
        self.nodes = kept[::-1]
        self.initializers = [t for t in self.initializers if t.name in used]

    def name_kjt_inputs(self) -> None:
        """Graph inputs ``x_1``, ``x_2`` [, ``x_3``] that are exactly the parts of one KJT
        node become ``x.values``, ``x.lengths`` [, ``x.weights``] (ember-compile's KJT
        input ``x``)."""
        inputs = {i.name: i for i in self.inputs}
        renames: Dict[str, str] = {}
        for n in self.nodes:
            if n.domain != EMBER_DOMAIN or n.op_type != "KJT":
                continue
            parts = list(n.input)
            if not all(p in inputs and p not in renames for p in parts) or \
                    any(p.endswith((".values", ".lengths", ".weights")) for p in parts):
                continue
            bases = {p.rsplit("_", 1)[0] for p in parts}
            if len(bases) != 1 or len(set(parts)) != len(parts):
                continue
            base = bases.pop()
            for p, suffix in zip(parts, ("values", "lengths", "weights")):
                if f"{base}.{suffix}" not in inputs:
                    renames[p] = f"{base}.{suffix}"
        if not renames:
            return
        for i in self.inputs:
            if i.name in renames:
                i.name = renames[i.name]
                for d in i.type.tensor_type.shape.dim:
                    if d.dim_param.startswith("N_"):
                        d.dim_param = "N_" + i.name.replace(".", "_")
        for n in self.nodes:
            for j, name in enumerate(n.input):
                if name in renames:
                    n.input[j] = renames[name]

    def convert_output(self, node: torch.fx.Node) -> None:
        leaves = []

        def walk(a):
            if isinstance(a, (list, tuple)):
                for x in a:
                    walk(x)
            elif isinstance(a, dict):
                for x in a.values():
                    walk(x)
            else:
                leaves.append(a)

        walk(node.args[0])
        for i, leaf in enumerate(leaves):
            rep = self.env.get(leaf) if isinstance(leaf, torch.fx.Node) else None
            if not isinstance(rep, _Tensor):
                raise self.error(node, f"output {i} is not a tensor"
                                 + _sequence.describe_output(rep))
            name = f"output_{i}"
            self.nodes.append(self.helper.make_node("Identity", [rep.name], [name], name=name))
            self.outputs.append(self.helper.make_tensor_value_info(
                name, self.elem_type(rep.value), self.output_shape(rep)))

    # ---------------------------------------------------------------- modules
    def convert_module(self, node: torch.fx.Node, mod: nn.Module, value: Any) -> None:
        args = list(node.args)
        kw = dict(node.kwargs)
        x = args[0] if args else kw.get("input")
        if isinstance(mod, nn.Linear):
            bias = None if mod.bias is None else self.const(mod.bias, f"{node.target}.bias")
            out = self.linear(node, self.tensor(x, node), self.env[x].value.dim(),
                              self.const(mod.weight, f"{node.target}.weight"), bias)
            self.env[node] = _Tensor(out, value)
        elif isinstance(mod, (nn.ReLU, nn.Sigmoid, nn.Tanh)):
            op = {nn.ReLU: "Relu", nn.Sigmoid: "Sigmoid", nn.Tanh: "Tanh"}[type(mod)]
            self.env[node] = _Tensor(self.emit(op, [self.tensor(x, node)], node)[0], value)
        elif isinstance(mod, (nn.Identity, nn.Dropout)):
            if isinstance(mod, nn.Dropout) and mod.training:
                raise self.error(node, "Dropout in training mode (call model.eval())")
            self.env[node] = self.env[x]
        elif isinstance(mod, nn.LayerNorm):
            ins = [self.tensor(x, node), self.const(mod.weight, f"{node.target}.weight"),
                   self.const(mod.bias, f"{node.target}.bias")]
            out = self.emit("LayerNormalization", ins, node, axis=-len(mod.normalized_shape),
                            epsilon=float(mod.eps))[0]
            self.env[node] = _Tensor(out, value)
        elif isinstance(mod, nn.Embedding):
            if mod.max_norm is not None:
                raise self.error(node, "nn.Embedding with max_norm is not supported")
            w = self.const(mod.weight, f"{node.target}.weight")
            self.env[node] = _Tensor(self.emit("Gather", [w, self.tensor(x, node)], node, axis=0)[0], value)
        elif isinstance(mod, nn.EmbeddingBag):
            self.convert_embedding_bag(node, mod, args, kw, value)
        elif isinstance(mod, EmbeddingBagCollection) or _is_torchrec_ebc(mod):
            if _quant_ebc.is_quantized_ebc(mod):
                # FBGEMM's packed rows, converted to Ember's row-wise quantized tables.
                try:
                    tables = _quant_ebc.quantized_ebc_tables(mod)
                except ValueError as e:
                    raise self.error(node, f"TorchRec's quantized EmbeddingBagCollection: {e}")
            else:
                tables = _ebc_tables(mod)
            rep = self.env.get(x) if isinstance(x, torch.fx.Node) else None
            if (_is_torchrec_ebc(mod) and not mod.is_weighted() and isinstance(rep, tuple)
                    and rep[0] == "kjt" and rep[3]):
                raise self.error(node, "an unweighted TorchRec EmbeddingBagCollection ignores "
                                       "the KJT's weights; pass a KJT without weights")
            self.convert_ebc(node, tables, x, value)
        elif _sequence.is_embedding_collection(mod):
            _sequence.convert_embedding_collection(self, node, mod, x, value)
        else:
            raise self.error(node, f"module type {type(mod).__name__} is not supported by the exporter")

    def linear(self, node, x: str, x_rank: int, weight: str, bias: Optional[str]) -> str:
        """x @ weight^T (+ bias), as nn.Linear and F.linear compute it: one Gemm for a 2-D x,
        Transpose + MatMul (+ Add) otherwise."""
        if x_rank == 2:
            return self.emit("Gemm", [x, weight] + ([bias] if bias else []), node, transB=1)[0]
        if x_rank < 2:
            raise self.error(node, f"linear of a {x_rank}-D input (2-D or more expected)")
        wt = self.emit("Transpose", [weight], node, perm=[1, 0])[0]
        out = self.emit("MatMul", [x, wt], node)[0]
        if bias:
            out = self.emit("Add", [out, bias], node)[0]
        return out

    def convert_embedding_bag(self, node, mod: nn.EmbeddingBag, args, kw, value) -> None:
        if mod.max_norm is not None:
            raise self.error(node, "nn.EmbeddingBag with max_norm is not supported")
        names = ["input", "offsets", "per_sample_weights"]
        bound = dict(zip(names, args))
        bound.update(kw)
        per_key = match_per_key_bag(bound.get("input"), bound.get("offsets"),
                                    bound.get("per_sample_weights"))
        if per_key is not None and mod.padding_idx is None and not mod.include_last_offset:
            self.convert_per_key_bag(node, mod, per_key, value)
            return
        ids = bound["input"]
        ids_value = self.env[ids].value
        offsets = bound.get("offsets")
        ids_name = self.tensor(ids, node)
        if ids_value.dim() == 2 and 0 in self.dynamic_dims(self.env[ids]):
            self.convert_fixed_length_bags(node, mod, ids_name, ids_value, bound, value)
            return
        if ids_value.dim() == 2:  # fixed-length bags: flatten ids, offsets 0, L, 2L, ...
            b, length = ids_value.shape
            ids_name = self.emit("Reshape", [ids_name, self.const([-1], "shape", torch.int64)], node)[0]
            offsets_name = self.const(list(range(0, b * length, length)) or [0], "offsets", torch.int64)
            if b == 0:
                raise self.error(node, "2-D input with batch 0")
        elif offsets is None:
            raise self.error(node, "1-D input needs offsets")
        else:
            offsets_name = self.tensor(offsets, node)
        ins = [self.const(mod.weight, f"{node.target}.weight"), ids_name, offsets_name]
        psw = bound.get("per_sample_weights")
        if psw is not None:
            ins.append(self.tensor(psw, node))
        attrs = {"mode": mod.mode, "include_last_offset": int(bool(mod.include_last_offset))}
        if mod.padding_idx is not None:
            attrs["padding_idx"] = int(mod.padding_idx)
        out = self.emit("EmbeddingBag", ins, node, domain=EMBER_DOMAIN, **attrs)[0]
        self.env[node] = _Tensor(out, value)

    def convert_fixed_length_bags(self, node, mod: nn.EmbeddingBag, ids: str, ids_value,
                                  bound, value) -> None:
        """A 2-D ``[B, L]`` input with a run-time B: one KJT whose lengths are all L
        (row sums of ones of the input's shape) and a one-table EmbeddingBagCollection (ONNX has no Range over
        a run-time size for the offsets 0, L, 2L, ...)."""
        if mod.padding_idx is not None:
            raise self.error(node, "nn.EmbeddingBag with padding_idx and a 2-D input is not "
                                   "exported with a dynamic batch (export with "
                                   "dynamic_batch=False)")
        flat = self.const([-1], "shape", torch.int64)
        parts = [self.emit("Reshape", [ids, flat], node)[0]]
        # lengths: ones of ids' shape summed over each row (a fill of ids' own run-time shape,
        # which the plan emitter can size).
        one = self.numpy_helper.from_array(np.array([1], dtype=np.float32), "value")
        ones = self.emit("ConstantOfShape", [self.emit("Shape", [ids], node)[0]], node,
                         value=one)[0]
        sums = self.emit("ReduceSum", [ones, self.const([1], "axes", torch.int64)], node,
                         keepdims=0)[0]
        parts.append(self.emit("Cast", [sums], node, to=self.TP.INT64)[0])
        psw = bound.get("per_sample_weights")
        if psw is not None:
            parts.append(self.emit("Reshape", [self.tensor(psw, node), flat], node)[0])
        kjt = self.emit("KJT", parts, node, domain=EMBER_DOMAIN, keys=["key0"])[0]
        weight = self.const(mod.weight, f"{node.target}.weight")
        out = self.emit("EmbeddingBagCollection", [kjt, weight], node, domain=EMBER_DOMAIN,
                        feature_tables=[0], pooling=[mod.mode])[0]
        self.env[node] = _Tensor(out, value)

    def convert_per_key_bag(self, node, mod: nn.EmbeddingBag, match, value) -> None:
        """An EmbeddingBag over key k of a KJT read through the per-key idiom (_kjt_idiom.py):
        one ember.KJT + ember.KJTSplit per KJT, then a one-table EmbeddingBagCollection."""
        parts_in = [self.tensor(match.values, node), self.tensor(match.lengths, node)]
        if match.weights is not None:
            parts_in.append(self.tensor(match.weights, node))
        key = (parts_in[0], parts_in[1], parts_in[2] if len(parts_in) > 2 else None,
               match.num_keys)
        if key not in self.per_key_kjts:
            kjt = self.emit("KJT", parts_in, node, domain=EMBER_DOMAIN,
                            keys=[f"key{i}" for i in range(match.num_keys)])[0]
            self.per_key_kjts[key] = self.emit("KJTSplit", [kjt], node, n_out=match.num_keys,
                                               domain=EMBER_DOMAIN,
                                               key_counts=[1] * match.num_keys)
        part = self.per_key_kjts[key][match.key]
        weight = self.const(mod.weight, f"{node.target}.weight")
        out = self.emit("EmbeddingBagCollection", [part, weight], node, domain=EMBER_DOMAIN,
                        feature_tables=[0], pooling=[mod.mode])[0]
        self.env[node] = _Tensor(out, value)

    def convert_ebc(self, node, tables, features, value) -> None:
        """ember.EmbeddingBagCollection nodes over the KJT (permuted first when the module
        reads its features in another order than the KJT holds them). ``tables``: (name,
        weight, pooling, feature names[, format, dim]) per table, in the module's order
        (format: "f32" when absent; a collection with another format gets the attributes
        table_formats and table_dims). A feature read by
        several tables (TorchRec's "f@t0", "f@t1" keys) would repeat a key in one KJT: the
        tables are then cut into consecutive groups that read no feature twice, one
        collection each, and their columns concatenated in table order."""
        rep = self.env.get(features) if isinstance(features, torch.fx.Node) else None
        if not (isinstance(rep, tuple) and rep[0] == "kjt"):
            raise self.error(node, "the EmbeddingBagCollection input must be a KJT")
        _, kjt_name, kjt_keys, weighted = rep
        missing = [f for t in tables for f in t[3] if f not in kjt_keys]
        if missing:
            raise self.error(node, f"the KJT has no feature(s) {missing}")
        groups: List[list] = []
        seen: Set[str] = set()
        for table in tables:
            if not groups or seen & set(table[3]):
                groups.append([])
                seen = set()
            groups[-1].append(table)
            seen |= set(table[3])
        outs = []
        for group in groups:
            wanted = [f for t in group for f in t[3]]
            kjt = kjt_name
            if wanted != kjt_keys:
                kjt = self.emit("KJTPermute", [kjt_name], node, domain=EMBER_DOMAIN,
                                permutation=[kjt_keys.index(f) for f in wanted])[0]
            weights, feature_tables, pooling = [], [], []
            for i, (name, weight, mode, feature_names, *_) in enumerate(group):
                weights.append(self.const(weight, f"{node.target}.embedding_bags.{name}.weight"))
                pooling.append(mode)
                feature_tables.extend([i] * len(feature_names))
            formats = [t[4] if len(t) > 4 else "f32" for t in group]
            quantized = {}
            if any(f != "f32" for f in formats):
                quantized = dict(table_formats=formats, table_dims=[
                    int(t[5]) if len(t) > 5 else int(t[1].shape[1]) for t in group])
            # The tables' names and the module path: the sharding planner names the tables
            # so and writes TorchRec's ShardingPlan shape ({module path: {table: ...}}).
            outs.append(self.emit("EmbeddingBagCollection", [kjt] + weights, node,
                                  domain=EMBER_DOMAIN, feature_tables=feature_tables,
                                  pooling=pooling, table_names=[str(t[0]) for t in group],
                                  module=str(node.target), **quantized)[0])
        if len(outs) == 1:
            out = outs[0]
        else:
            out = self.emit("Concat", outs, node, axis=1)[0]
            self.concatenated_keyed.add(out)
        self.env[node] = ("keyed", _Tensor(out, value.values()), value)

    def convert_keyed(self, node, target, args, value) -> bool:
        """Reads of a KeyedTensor: values(), kt[key], to_dict(). False if not one."""
        rep = self.env.get(args[0]) if args and isinstance(args[0], torch.fx.Node) else None
        if not (isinstance(rep, tuple) and rep[0] == "keyed"):
            return False
        _, values, kt = rep
        if target == "values":
            self.env[node] = values
        elif target == "keys":
            self.env[node] = ("const", list(kt.keys()))
        elif target is operator.getitem and isinstance(self.concrete(args[1], node), str):
            self.env[node] = self.keyed_get(node, values, kt, self.concrete(args[1], node), value)
        elif target == "to_dict":
            # One get per key (the unused ones are dropped with the dead nodes).
            self.env[node] = ("dict", {k: self.keyed_get(node, values, kt, k, value[k])
                                       for k in kt.keys()})
        else:
            raise self.error(node, "only values(), [key] and to_dict() of a KeyedTensor are "
                                   "exported")
        return True

    def keyed_get(self, node, values: _Tensor, kt, key: str, value) -> _Tensor:
        """kt[key]: ember.KeyedTensorGet of the collection's output (its key's columns)."""
        if key not in kt.keys():
            raise self.error(node, f"the KeyedTensor has no key '{key}'")
        i = kt.keys().index(key)
        start, dim = int(kt.offset_per_key()[i]), int(kt.length_per_key()[i])
        if values.name in self.concatenated_keyed:
            # Several collections' columns: the key's columns of their concatenation.
            out = self.emit("Slice", [values.name, self.const([start], "starts", torch.int64),
                                      self.const([start + dim], "ends", torch.int64),
                                      self.const([1], "axes", torch.int64)], node)[0]
            return _Tensor(out, value)
        out = self.emit("KeyedTensorGet", [values.name], node, domain=EMBER_DOMAIN, key=key,
                        start=start, dim=dim)[0]
        return _Tensor(out, value)

    # ---------------------------------------------------------------- ops
    def convert_op(self, node: torch.fx.Node, value: Any) -> None:
        target = node.target
        args, kw = list(node.args), dict(node.kwargs)
        if self.convert_keyed(node, target, args, value):
            return
        if _sequence.convert_jagged_op(self, node, target, args, kw, value):
            return
        if target in _BINARY and node.op in ("call_function", "call_method"):
            like = value if isinstance(value, torch.Tensor) else None
            if target == "add" or target == "add_" or target is torch.add:
                if kw.get("alpha", 1) != 1:
                    raise self.error(node, "alpha != 1 is not supported")
            a, b = args[0], args[1] if len(args) > 1 else kw.get("other")
            out = self.emit(_BINARY[target], [self.tensor(a, node, like), self.tensor(b, node, like)], node)[0]
            self.bind(node, out, value, mutated=args[0] if target in _INPLACE else None)
        elif target in _UNARY:
            out = self.emit(_UNARY[target], [self.tensor(args[0], node)], node)[0]
            self.bind(node, out, value, mutated=args[0] if target in _INPLACE else None)
        elif target in _FILLED_LIKE:
            # Contents do not depend on the input's data, only on its (static) shape.
            fill = {"new_zeros": 0, "zeros_like": 0, torch.zeros_like: 0, "new_ones": 1,
                    "ones_like": 1, torch.ones_like: 1}.get(target)
            if fill is None:
                fill = self.concrete(args[2] if len(args) > 2 else kw["fill_value"], node)
            self.env[node] = self.filled(node, value, self.alt_of(node), fill)
        elif target in _IDENTITY:
            # clone is a copy; contiguous/detach alias their input (a later write shows in both).
            copy = target in ("clone", torch.clone)
            src = self.env[args[0]]
            self.env[node] = _Tensor(self.tensor(args[0], node), value,
                                     view_of=None if copy else self.base_of(args[0]),
                                     full_view=src.view_of is None or src.full_view)
        elif target in (F.linear, torch.nn.functional.linear):
            x = args[0]
            weight = args[1] if len(args) > 1 else kw.get("weight")
            bias = args[2] if len(args) > 2 else kw.get("bias")
            self.env[node] = _Tensor(self.linear(node, self.tensor(x, node), self.env[x].value.dim(),
                                                 self.tensor(weight, node),
                                                 None if bias is None else self.tensor(bias, node)),
                                     value)
        elif target is torch.cat or target is torch.concat:
            tensors = args[0]
            dim = args[1] if len(args) > 1 else kw.get("dim", 0)
            if isinstance(tensors, torch.fx.Node):
                rep = self.env[tensors]
                names = [t.name for t in rep[1]] if isinstance(rep, tuple) and rep[0] == "list" else None
                if names is None:
                    raise self.error(node, "cat of a non-list value")
            else:
                names = [self.tensor(t, node) for t in tensors]
            out = self.emit("Concat", names, node, axis=int(self.concrete(dim, node)))[0]
            self.env[node] = _Tensor(out, value)
        elif target is torch.stack:
            tensors = args[0]
            dim = int(self.concrete(args[1] if len(args) > 1 else kw.get("dim", 0), node))
            dim %= value.dim()
            axes = self.const([dim], "axes", torch.int64)
            parts = [self.emit("Unsqueeze", [self.tensor(t, node), axes], node)[0]
                     for t in tensors]
            out = parts[0] if len(parts) == 1 else self.emit("Concat", parts, node, axis=dim)[0]
            self.env[node] = _Tensor(out, value)
        elif target in (torch.softmax, F.softmax, "softmax"):
            dim = args[1] if len(args) > 1 else kw.get("dim")
            if dim is None:
                raise self.error(node, "softmax without dim")
            if kw.get("dtype") is not None or (len(args) > 2 and args[2] is not None):
                raise self.error(node, "softmax with a dtype is not supported")
            axis = int(self.concrete(dim, node)) % value.dim()
            out = self.emit("Softmax", [self.tensor(args[0], node)], node, axis=axis)[0]
            self.env[node] = _Tensor(out, value)
        elif target is torch.tensordot:
            self.convert_tensordot(node, args, kw, value)
        elif target in ("view", "reshape", "flatten", torch.flatten, torch.reshape):
            alt = self.alt_of(node)
            shape = self.shape_tensor(value.shape, None if alt is None else alt.shape, node)
            out = self.emit("Reshape", [self.tensor(args[0], node), shape], node)[0]
            self.env[node] = _Tensor(out, value, view_of=self.base_of(args[0]))
        elif target in ("transpose", torch.transpose, "permute", "t"):
            rank = self.env[args[0]].value.dim()
            if target == "permute":
                dims = args[1:] if not isinstance(args[1], (list, tuple)) else args[1]
                perm = [int(d) % rank for d in self.concrete(list(dims), node)]
            elif target == "t":
                perm = list(range(rank))[::-1]
            else:
                d0, d1 = (int(self.concrete(d, node)) % rank for d in args[1:3])
                perm = list(range(rank))
                perm[d0], perm[d1] = perm[d1], perm[d0]
            out = self.emit("Transpose", [self.tensor(args[0], node)], node, perm=perm)[0]
            self.env[node] = _Tensor(out, value, view_of=self.base_of(args[0]))
        elif target in ("unsqueeze", torch.unsqueeze, "squeeze", torch.squeeze):
            rank = self.env[args[0]].value.dim()
            dim = args[1] if len(args) > 1 else kw.get("dim")
            op = "Unsqueeze" if target in ("unsqueeze", torch.unsqueeze) else "Squeeze"
            ins = [self.tensor(args[0], node)]
            if dim is not None:
                d = int(self.concrete(dim, node))
                d = d % (rank + 1) if op == "Unsqueeze" else d % rank
                ins.append(self.const([d], "axes", torch.int64))
            out = self.emit(op, ins, node)[0]
            self.env[node] = _Tensor(out, value, view_of=self.base_of(args[0]))
        elif target in ("sum", torch.sum, "mean", torch.mean):
            self.convert_reduce(node, args, kw, value)
        elif target in ("cumsum", torch.cumsum):
            dim = int(self.concrete(args[1] if len(args) > 1 else kw["dim"], node))
            out = self.emit("CumSum", [self.tensor(args[0], node), self.const(dim, "axis", torch.int64)], node)[0]
            self.env[node] = _Tensor(out, value)
        elif target in ("split", torch.split):
            self.convert_split(node, args, kw, value)
        elif target == "tolist":
            src = self.env[args[0]]
            if not isinstance(src, _Tensor) or src.value.dim() != 1:
                raise self.error(node, "tolist() of a non 1-D tensor")
            self.env[node] = ("sizes", src)
        elif target in ("to", "float", "long", "int", "double", "half", "bool", "type_as"):
            if not isinstance(value, torch.Tensor):
                raise self.error(node, "conversion to a non-tensor")
            out = self.emit("Cast", [self.tensor(args[0], node)], node, to=self.elem_type(value, node))[0]
            self.env[node] = _Tensor(out, value)
        elif target is operator.getitem:
            self.convert_getitem(node, args, value)
        elif target is operator.setitem:
            self.convert_setitem(node, args)
        elif target is make_kjt:
            ins = [self.tensor(a, node) for a in args[1:] if a is not None]
            out = self.emit("KJT", ins, node, domain=EMBER_DOMAIN, keys=list(args[0]))[0]
            self.env[node] = ("kjt", out, list(args[0]), len(ins) == 3)
        else:
            raise self.error(node, "operation not supported by the exporter")

    def alt_of(self, node: torch.fx.Node) -> Any:
        return None if self.batch is None else self.batch.alt.get(node.name)

    def bind(self, node, out: str, value, mutated: Optional[torch.fx.Node]) -> None:
        rep = _Tensor(out, value)
        self.env[node] = rep
        if mutated is not None:
            self.rebind(node, mutated, rep)

    def rebind(self, node: torch.fx.Node, mutated: torch.fx.Node, rep: _Tensor) -> None:
        """An in-place write: every later use of the mutated tensor sees the new value."""
        old = self.env[mutated]
        if not isinstance(old, _Tensor):
            raise self.error(node, "in-place write on a non-tensor")
        base = old
        if old.view_of is not None and not old.full_view:
            if old.view_index is None:
                raise self.error(node, "in-place write through a view of part of a view "
                                       "is not exported yet")
            # x[index] op= ...: the new value of the view goes back into its base.
            base = old.view_of
            out = self.scatter_into(node, base, old.view_index, rep.name, rep.value)
            for key, r in list(self.env.items()):
                if r is old:
                    self.env[key] = rep
            self.rebind(node, self.node_of(base), _Tensor(out, base.value, alt=base.alt))
            return
        if old.view_of is not None:
            base = old.view_of  # a full-range view: the write replaces the base's value
        for other, r in list(self.env.items()):
            if isinstance(r, _Tensor) and r.view_of is base and not r.full_view and any(
                    u for u in other.users if _after(u, node)):
                raise self.error(node, f"'{other.name}' views the mutated tensor and is used after the write")
        for key, r in list(self.env.items()):
            if r is old or r is base or (isinstance(r, _Tensor) and r.view_of is base
                                         and r.full_view):
                self.env[key] = rep

    def node_of(self, rep: _Tensor) -> torch.fx.Node:
        """A node whose value is ``rep`` (the base of a view)."""
        for key, r in self.env.items():
            if r is rep:
                return key
        raise RuntimeError("internal error: a view's base has no node")

    def scatter_into(self, node, rep: _Tensor, index, update: Any, update_value,
                     fill: Any = None) -> str:
        """ScatterND of ``update`` into the elements ``rep[index]`` selects (``index`` as
        traced); returns the new value's name. When a dim of ``rep`` depends on the batch,
        the box is written with Slices and Concats of the run-time shape instead."""
        if self.dynamic_dims(rep):
            return self.write_box(node, rep, index, update, update_value, fill)
        index = self.concrete(index, node)
        value = rep.value  # after the write (the example value was mutated in place)
        box = torch.arange(value.numel()).reshape(value.shape)[index]
        coords = np.stack(np.unravel_index(box.reshape(-1).numpy(), tuple(value.shape)), axis=-1)
        indices = self.const(torch.from_numpy(coords.astype(np.int64)).reshape(*box.shape, value.dim()),
                             "indices", torch.int64)
        upd = self.emit("Expand", [update, self.const(list(box.shape), "shape", torch.int64)],
                        node)[0]
        if update_value is not None and update_value.dtype != value.dtype:
            upd = self.emit("Cast", [upd], node, to=self.elem_type(value, node))[0]
        return self.emit("ScatterND", [rep.name, indices, upd], node)[0]

    def write_box(self, node, rep: _Tensor, index, update: str, update_value,
                  fill: Any = None) -> str:
        """``rep[index] = update`` for a box of slices with step 1 and ints, on a tensor whose
        shape depends on the batch: the box's update (Expand to the box's run-time shape) is
        put between the parts of ``rep`` before and after the box, one dim at a time."""
        b = self.index_bounds(node, rep, index)
        if b.unsqueeze or any(st != 1 for st in b.steps):
            raise self.error(node, "a slice write with None or a step other than 1 into a "
                                   "tensor whose shape depends on the batch")
        box = self.emit("Slice", [rep.name, self.const(b.starts, "starts", torch.int64),
                                  self.const(b.ends, "ends", torch.int64),
                                  self.const(b.axes, "axes", torch.int64)], node)[0]
        target = box
        if b.squeeze:
            target = self.emit("Squeeze", [box, self.const(b.squeeze, "axes", torch.int64)],
                               node)[0]
        shape = self.emit("Shape", [target], node)[0]
        if fill is not None:  # x[box] = 0.5: a splat of the box's shape
            fill_t = self.numpy_helper.from_array(
                torch.tensor([fill], dtype=rep.value.dtype).numpy(), "value")
            upd = self.emit("ConstantOfShape", [shape], node, value=fill_t)[0]
        else:
            upd = self.emit("Expand", [update, shape], node)[0]
        if update_value is not None and update_value.dtype != rep.value.dtype:
            upd = self.emit("Cast", [upd], node, to=self.elem_type(rep.value, node))[0]
        if b.squeeze:
            upd = self.emit("Unsqueeze", [upd, self.const(b.squeeze, "axes", torch.int64)],
                            node)[0]
        dims = [(a, s, e) for s, e, a in zip(b.starts, b.ends, b.axes)
                if not (s == 0 and (e == INT64_MAX or (e >= rep.value.shape[a]
                                                       and a not in self.dynamic_dims(rep))))]

        def piece(x: str, axis: int, start: int, end: int) -> str:
            return self.emit("Slice", [x, self.const([start], "starts", torch.int64),
                                       self.const([end], "ends", torch.int64),
                                       self.const([axis], "axes", torch.int64)], node)[0]

        def assemble(x: str, rest) -> str:
            if not rest:
                return upd
            axis, start, end = rest[0]
            parts = []
            if start != 0:
                parts.append(piece(x, axis, 0, start))
            parts.append(assemble(piece(x, axis, start, end), rest[1:]))
            static = axis not in self.dynamic_dims(rep)
            if end != INT64_MAX and not (static and end >= rep.value.shape[axis]):
                parts.append(piece(x, axis, end, INT64_MAX))
            return parts[0] if len(parts) == 1 else self.emit("Concat", parts, node, axis=axis)[0]

        return assemble(rep.name, dims)

    def base_of(self, arg: torch.fx.Node) -> _Tensor:
        rep = self.env[arg]
        return rep.view_of or rep

    def convert_tensordot(self, node, args, kw, value) -> None:
        """torch.tensordot(a, b, dims): a's contracted dims moved last and b's first
        (Transpose), each flattened to 2-D (Reshape; the free dims of a may hold the batch,
        b's may not), one MatMul, and the result reshaped to a's then b's free dims."""
        a, b = args[0], args[1]
        dims = args[2] if len(args) > 2 else kw.get("dims", 2)
        ra, rb = self.env[a].value, self.env[b].value
        dims = self.concrete(dims, node)
        if isinstance(dims, int):
            da, db = list(range(ra.dim() - dims, ra.dim())), list(range(dims))
        else:
            da, db = ([dims[0]] if isinstance(dims[0], int) else list(dims[0]),
                      [dims[1]] if isinstance(dims[1], int) else list(dims[1]))
        da, db = [int(d) % ra.dim() for d in da], [int(d) % rb.dim() for d in db]
        if len(da) != len(db):
            raise self.error(node, "tensordot: dims of a and b differ in number")
        if isinstance(b, torch.fx.Node) and self.depends_on_batch(b):
            raise self.error(node, "tensordot whose second operand depends on the batch "
                                   "is not supported")
        free_a = [d for d in range(ra.dim()) if d not in da]
        free_b = [d for d in range(rb.dim()) if d not in db]
        k = 1
        for d in da:
            k *= int(ra.shape[d])
        x, w = self.tensor(a, node), self.tensor(b, node)
        if free_a + da != list(range(ra.dim())):
            x = self.emit("Transpose", [x], node, perm=free_a + da)[0]
        if db + free_b != list(range(rb.dim())):
            w = self.emit("Transpose", [w], node, perm=db + free_b)[0]
        x = self.emit("Reshape", [x, self.const([-1, k], "shape", torch.int64)], node)[0]
        w = self.emit("Reshape", [w, self.const([k, -1], "shape", torch.int64)], node)[0]
        out = self.emit("MatMul", [x, w], node)[0]
        alt = self.alt_of(node)
        shape = self.shape_tensor(value.shape, None if alt is None else alt.shape, node)
        self.env[node] = _Tensor(self.emit("Reshape", [out, shape], node)[0], value)

    def convert_reduce(self, node, args, kw, value) -> None:
        dim = args[1] if len(args) > 1 else kw.get("dim")
        keepdim = int(bool(args[2] if len(args) > 2 else kw.get("keepdim", False)))
        x = self.tensor(args[0], node)
        rank = self.env[args[0]].value.dim()
        dims = list(range(rank)) if dim is None else self.concrete(dim, node)
        dims = [int(d) % rank for d in (dims if isinstance(dims, (list, tuple)) else [dims])]
        if kw.get("dtype") is not None:
            raise self.error(node, "dtype= is not supported")
        if node.target in ("sum", torch.sum):
            out = self.emit("ReduceSum", [x, self.const(dims, "axes", torch.int64)], node, keepdims=keepdim)[0]
        else:
            out = self.emit("ReduceMean", [x], node, axes=dims, keepdims=keepdim)[0]
        self.env[node] = _Tensor(out, value)

    def convert_split(self, node, args, kw, value) -> None:
        src = self.env[args[0]]
        sizes_arg = args[1] if len(args) > 1 else kw.get("split_size_or_sections", kw.get("split_size"))
        dim = int(self.concrete(args[2] if len(args) > 2 else kw.get("dim", 0), node))
        parts = list(value)
        if isinstance(sizes_arg, torch.fx.Node) and isinstance(self.env[sizes_arg], tuple) \
                and self.env[sizes_arg][0] == "sizes":
            sizes = self.env[sizes_arg][1].name
            if self.env[sizes_arg][1].value.dtype != torch.int64:
                sizes = self.emit("Cast", [sizes], node, to=self.TP.INT64)[0]
        else:
            if (dim % max(src.value.dim(), 1)) in self.dynamic_dims(src):
                raise self.error(node, "split with constant sizes along a dim that depends on "
                                       "the batch (export with dynamic_batch=False)")
            sizes = self.const([p.shape[dim] for p in parts], "split", torch.int64)
        outs = self.emit("Split", [src.name, sizes], node, n_out=len(parts), axis=dim)
        self.env[node] = ("list", [_Tensor(o, p, view_of=self.base_of(args[0])) for o, p in zip(outs, parts)])

    def convert_getitem(self, node, args, value) -> None:
        base, index = args
        rep = self.env[base]
        if isinstance(rep, tuple) and rep[0] == "list":
            self.env[node] = rep[1][int(self.concrete(index, node))]
            return
        if isinstance(rep, tuple) and rep[0] == "const" and isinstance(rep[1], (list, tuple)):
            self.env[node] = ("const", rep[1][int(self.concrete(index, node))])
            return
        if isinstance(rep, tuple) and rep[0] == "dict":
            key = self.concrete(index, node)
            if key not in rep[1]:
                raise self.error(node, f"no key {key!r}")
            self.env[node] = rep[1][key]
            return
        if not isinstance(rep, _Tensor):
            raise self.error(node, "indexing a non-tensor value")
        index = index if isinstance(index, tuple) else (index,)
        if any(self.is_tensor_index(item) for item in index):
            self.convert_tensor_index(node, rep, index, value)
            return
        b = self.index_bounds(node, rep, index)
        name = rep.name
        gathers = [(a, st) for a, st in zip(b.axes, b.starts)
                   if a in b.squeeze and a in self.dynamic_dims(rep)]
        if gathers and not b.unsqueeze:
            # x[-1] on a run-time dim: Gather of one constant index (a Slice there has a
            # run-time size, which Squeeze cannot drop).
            (axis, start), = gathers[:1]
            keep = [i for i, a in enumerate(b.axes) if a != axis]
            b.axes, b.starts, b.ends, b.steps = ([v[i] for i in keep] for v in
                                                 (b.axes, b.starts, b.ends, b.steps))
            b.squeeze = [a for a in b.squeeze if a != axis]
            if len(gathers) > 1:
                raise self.error(node, "several int indices on dims that depend on the batch")
            name = self.emit("Gather", [name, self.const(start, "index", torch.int64)], node,
                             axis=axis)[0]
            # Later axes moved down by one.
            b.axes = [a - 1 if a > axis else a for a in b.axes]
            b.squeeze = [a - 1 if a > axis else a for a in b.squeeze]
        if b.axes:
            name = self.emit("Slice", [name, self.const(b.starts, "starts", torch.int64),
                                       self.const(b.ends, "ends", torch.int64),
                                       self.const(b.axes, "axes", torch.int64),
                                       self.const(b.steps, "steps", torch.int64)], node)[0]
        if b.squeeze:
            name = self.emit("Squeeze", [name, self.const(b.squeeze, "axes", torch.int64)], node)[0]
        if b.unsqueeze:
            name = self.emit("Unsqueeze", [name, self.const(b.unsqueeze, "axes", torch.int64)], node)[0]
        direct = rep.view_of is None or rep.full_view
        full = not b.squeeze and not b.unsqueeze and direct and b.full
        self.env[node] = _Tensor(name, value, view_of=self.base_of(base), full_view=full,
                                 view_index=index if direct and not full else None)

    def index_bounds(self, node, rep: "_Tensor", index: tuple) -> "_Bounds":
        """ONNX Slice bounds (and squeezed / unsqueezed axes) of ``rep[index]`` for ints,
        slices, None and ``...``. On a dim that depends on the batch a bound is written
        relative to the run-time size where the two traced batches say so (``x[-1]``,
        ``x[1:]``, ``x[:x.size(0) - 1]``)."""
        index = index if isinstance(index, tuple) else (index,)
        shape = list(rep.value.shape)
        alt_shape = list(rep.alt.shape) if isinstance(rep.alt, torch.Tensor) else shape
        items = self.concrete(index, node, dynamic_ok=True)
        alt_items = self.concrete(index, node, alt=True, dynamic_ok=True)
        b = _Bounds()
        axis = out_axis = 0
        for item, alt_item in zip(items, alt_items):
            if item is None:
                b.unsqueeze.append(out_axis)
                out_axis += 1
                continue
            if item is Ellipsis:
                remaining = sum(1 for i in index if i is not None and i is not Ellipsis)
                skip = len(shape) - axis - (remaining - 1 if remaining else 0)
                axis += skip
                out_axis += skip
                continue
            if axis >= len(shape):
                raise self.error(node, f"too many indices for a {len(shape)}-D tensor")
            n, n2 = shape[axis], alt_shape[axis]
            if isinstance(item, slice):
                start, stop, step = item.indices(n)
                start2, stop2, step2 = alt_item.indices(n2)
                if step <= 0 or step != step2:
                    raise self.error(node, "slices with step <= 0")
                onnx_start = self.bound(node, start, start2, n, n2, is_end=False)
                onnx_end = self.bound(node, stop, stop2, n, n2, is_end=True)
                b.full = b.full and onnx_start == 0 and step == 1 and (
                    onnx_end == INT64_MAX or (n == n2 and onnx_end == n))
                if not (onnx_start == 0 and onnx_end == INT64_MAX and step == 1):
                    b.add(onnx_start, onnx_end, axis, step)  # ':' on a run-time dim: nothing
                axis += 1
                out_axis += 1
            elif isinstance(item, int):
                i = item % n if n else item
                i2 = alt_item % n2 if n2 else alt_item
                start = self.bound(node, i, i2, n, n2, is_end=False)
                end = start + 1 if start != -1 else INT64_MAX
                b.add(start, end, axis, 1)
                b.squeeze.append(axis)
                b.full = False
                axis += 1
            else:
                raise self.error(node, f"index {item!r} (only ints, slices, None and ...)")
        return b

    def bound(self, node, at: int, alt_at: int, n: int, alt_n: int, is_end: bool) -> int:
        """One Slice bound: the same position at both batches is a constant; the same
        distance from the end is negative (or INT64_MAX at the end itself)."""
        if at == alt_at:
            return at
        if at - n == alt_at - alt_n:
            return at - n if at != n else INT64_MAX
        raise self.error(node, f"a slice bound ({at} at the example's batch) depends on the "
                               "batch in a way the exporter cannot write (export with "
                               "dynamic_batch=False)")

    def is_tensor_index(self, item: Any) -> bool:
        if isinstance(item, torch.Tensor) or _is_int_list(item):
            return True
        return isinstance(item, torch.fx.Node) and isinstance(self.env.get(item), _Tensor)

    def constant_value(self, arg: Any) -> Optional[torch.Tensor]:
        """The value of a tensor that depends on no graph input (a buffer, ``buf[0]``, a
        list of ints, ``torch.arange(x.size(1))``...), else None."""
        if isinstance(arg, torch.Tensor):
            return arg
        if _is_int_list(arg):
            return torch.tensor(arg, dtype=torch.int64)
        if not isinstance(arg, torch.fx.Node) or not self.is_constant(arg):
            return None
        rep = self.env.get(arg)
        if isinstance(rep, tuple) and rep[0] == "const":
            value = rep[1]
        elif "ember_const" in arg.meta:
            value = arg.meta["ember_const"]  # a shape-only value, before later in-place ops
        elif arg.op == "get_attr" and arg.meta.get("ember_value") is None:
            value = _attribute(self.gm, arg.target)
        else:
            value = arg.meta.get("ember_value")
        return value if isinstance(value, torch.Tensor) else None

    def is_constant(self, node: torch.fx.Node) -> bool:
        """True when ``node``'s value depends on no graph input: attributes, shape-only
        values, and pure ops on those."""
        memo = self.constant_memo
        if node in memo:
            return memo[node]
        rep = self.env.get(node)
        if (isinstance(rep, tuple) and rep[0] == "const") or node.op == "get_attr":
            result = True
        elif node.op not in ("call_function", "call_method") or _is_mutation(node):
            result = False
        elif node.meta.get("ember_static"):
            result = True
        else:
            inputs: List[torch.fx.Node] = []
            torch.fx.node.map_arg((node.args, node.kwargs), inputs.append)
            result = all(self.is_constant(i) for i in inputs)
        memo[node] = result
        return result

    def convert_tensor_index(self, node, rep: "_Tensor", index: tuple, value) -> None:
        """``x[:, i, j]`` with index tensors on consecutive dims after full slices (torch's
        advanced indexing, e.g. DLRM's ``interactions[:, triu[0], triu[1]]``): constant
        indices become one Gather over those dims flattened (flat index ``i * size_j + j``);
        a single run-time index tensor is a Gather on its dim."""
        shape = list(rep.value.shape)
        items = list(index)
        if any(i is Ellipsis for i in items):
            at = items.index(Ellipsis)
            fill = len(shape) - (len(items) - 1)
            items = items[:at] + [slice(None)] * fill + items[at + 1:]
        if len(items) > len(shape):
            raise self.error(node, f"too many indices for a {len(shape)}-D tensor")
        tensor_dims = [d for d, i in enumerate(items) if self.is_tensor_index(i)]
        first, count = tensor_dims[0], len(tensor_dims)
        if tensor_dims != list(range(first, first + count)):
            raise self.error(node, "index tensors on dims that are not next to each other")
        for d, item in enumerate(items):
            if d in tensor_dims:
                continue
            item = self.concrete(item, node, dynamic_ok=True)
            if not (isinstance(item, slice) and item.indices(shape[d]) == (0, shape[d], 1)):
                raise self.error(node, f"index {item!r} beside index tensors (only full "
                                       f"slices ':' are exported there)")
        sizes = shape[first:first + count]
        constants = [self.constant_value(items[d]) for d in tensor_dims]
        for c in constants:
            if c is not None and (c.dtype == torch.bool or c.is_floating_point()):
                raise self.error(node, f"index tensor of dtype {c.dtype} (integer indices only)")
        if all(c is not None for c in constants):
            idx = torch.broadcast_tensors(*[c.to(torch.int64) for c in constants])
            flat = torch.zeros_like(idx[0])
            for c, size in zip(idx, sizes):
                if c.numel() and (int(c.min()) < -size or int(c.max()) >= size):
                    raise self.error(node, f"index out of range for a dim of size {size}")
                flat = flat * size + c % size
            data = rep.name
            if count > 1:
                merged = shape[:first] + [int(np.prod(sizes))] + shape[first + count:]
                alt_merged = None
                if self.dynamic_dims(rep):
                    if any(d in self.dynamic_dims(rep) for d in tensor_dims):
                        raise self.error(node, "constant index tensors on a dim that depends "
                                               "on the batch")
                    a = list(rep.alt.shape)
                    alt_merged = a[:first] + [int(np.prod(sizes))] + a[first + count:]
                data = self.emit("Reshape", [data, self.shape_tensor(merged, alt_merged, node)],
                                 node)[0]
            indices = self.const(flat, "indices", torch.int64)
        elif count == 1:
            indices = self.tensor(items[first], node)
            if self.env[items[first]].value.dtype not in (torch.int64, torch.int32):
                raise self.error(node, "index tensor of dtype "
                                       f"{self.env[items[first]].value.dtype} (integer indices only)")
            data = rep.name
        else:
            raise self.error(node, "several index tensors computed from the inputs (only one, "
                                   "or constant ones, are exported)")
        out = self.emit("Gather", [data, indices], node, axis=first)[0]
        self.env[node] = _Tensor(out, value)

    def convert_setitem(self, node, args) -> None:
        base, index, update = args
        rep = self.env[base]
        if not isinstance(rep, _Tensor):
            raise self.error(node, "item assignment into a non-tensor")
        upd = self.tensor(update, node, like=rep.value)
        update_value = self.env[update].value if isinstance(update, torch.fx.Node) else None
        fill = update if isinstance(update, (int, float, bool)) else None
        out = self.scatter_into(node, rep, index, upd, update_value, fill)
        self.env[node] = None
        self.rebind(node, base, _Tensor(out, rep.value, alt=rep.alt))


_SIZE_PRESERVING = {operator.add, operator.sub, operator.mul, torch.add, torch.sub, torch.mul,
                    "add", "sub", "mul", "to", "long", "int", "float", "clone", "contiguous",
                    "detach", torch.clone}


def _elementwise_source(node: Any) -> Any:
    """The tensor a chain of size-preserving ops with scalar operands (``ids + 1``,
    ``ids.long()``) starts from: its value count is the count of the result."""
    while (isinstance(node, torch.fx.Node) and node.op in ("call_function", "call_method")
           and node.target in _SIZE_PRESERVING and node.args
           and isinstance(node.args[0], torch.fx.Node)
           and not any(isinstance(a, torch.fx.Node) for a in node.args[1:])):
        node = node.args[0]
    return node


def _is_torchrec_ebc(mod: nn.Module) -> bool:
    cls = type(mod)
    return cls.__name__ == "EmbeddingBagCollection" and cls.__module__.startswith("torchrec.")


def _ebc_tables(mod: nn.Module):
    """(name, weight, pooling, feature names) of each table of ember's or TorchRec's
    EmbeddingBagCollection."""
    if isinstance(mod, EmbeddingBagCollection):
        return [(t.name, mod.embedding_bags[t.name].weight, t.pooling, list(t.feature_names))
                for t in mod.tables]
    tables = []
    for config in mod.embedding_bag_configs():
        pooling = getattr(config.pooling, "name", str(config.pooling)).lower()
        if pooling not in ("sum", "mean"):
            raise ExportError(f"table '{config.name}': pooling {config.pooling} is not supported")
        tables.append((config.name, mod.embedding_bags[config.name].weight, pooling,
                       list(config.feature_names)))
    return tables


def _after(user: torch.fx.Node, node: torch.fx.Node) -> bool:
    n = node.next
    while n.op != "root":
        if n is user:
            return True
        n = n.next
    return False


def _is_mutation(node: torch.fx.Node) -> bool:
    return node.target is operator.setitem or node.target in _INPLACE


def _is_int_list(item: Any) -> bool:
    """``x[:, [0, 2]]``: a list of ints is an index tensor in torch."""
    return (isinstance(item, list) and bool(item)
            and all(isinstance(i, int) and not isinstance(i, bool) for i in item))


def _module_of(node: torch.fx.Node) -> str:
    """' in module 'path'' for a node recorded inside a traced submodule's forward (or for
    a call of a submodule), else ''."""
    path = node.target if node.op == "call_module" else node.meta.get("ember_module_path")
    return f" in module '{path}'" if path else ""


def _attribute(gm: nn.Module, target: str) -> Any:
    obj: Any = gm
    for part in target.split("."):
        obj = getattr(obj, part, None)
    return obj


def _target_name(node: torch.fx.Node) -> str:
    t = node.target
    return t if isinstance(t, str) else getattr(t, "__name__", str(t))


def _normalize_foreign_kjts(gm: torch.fx.GraphModule) -> None:
    """A KJT class that pytree flattens by itself (TorchRec's: values, weights, lengths,
    offsets, unused ones None) is rebuilt in the traced graph by calling the class on its
    placeholders, and its None fields become placeholders asserted to be None. Rewrite such
    constructions into ``make_kjt(keys, values, lengths[, weights])`` and drop the None
    placeholders, so that the KJT exports like ember's own."""
    import inspect

    graph = gm.graph
    for node in list(graph.nodes):
        cls = node.target
        if (node.op != "call_function" or not isinstance(cls, type)
                or not getattr(cls, "_fields", None) or not hasattr(cls, "lengths")
                or not hasattr(cls, "keys")):
            continue
        try:
            bound = inspect.signature(cls.__init__).bind(None, *node.args, **node.kwargs).arguments
        except TypeError:
            continue
        keys, values = bound.get("keys"), bound.get("values")
        lengths, weights = bound.get("lengths"), bound.get("weights")
        if not isinstance(keys, (list, tuple)) or values is None or lengths is None:
            continue
        with graph.inserting_before(node):
            new = graph.call_function(make_kjt, (list(keys), values, lengths, weights))
        new.meta = dict(node.meta)
        new.meta["ember_kjt_class"] = cls  # _batch.py rebuilds it to run the graph again
        node.replace_all_uses_with(new)
        graph.erase_node(node)
    for node in list(graph.nodes):
        if (node.op == "call_function"
                and getattr(node.target, "__name__", "") == "_assert_is_none"):
            graph.erase_node(node)
    for node in list(graph.nodes):
        if node.op == "placeholder" and not node.users and node.meta.get("ember_value") is None:
            graph.erase_node(node)
    graph.lint()
    gm.recompile()


def _inline_wrapped_functions(gm: torch.fx.GraphModule, depth: int = 0) -> None:
    """Calls of Python functions that torch.fx keeps opaque (``@torch.fx.wrap``, as TorchRec
    wraps many helpers, e.g. deepfm's ``_get_flatten_input``) are traced on their example
    arguments and their nodes put in place of the call, so that the exporter sees the torch
    ops inside. A function that does not trace (data-dependent control flow, ...) or returns
    more than one value stays a call (the exporter then names it)."""
    import inspect

    from .tracer import symbolic_trace

    graph = gm.graph
    changed = False
    for node in list(graph.nodes):
        fn = node.target
        if (node.op != "call_function" or not inspect.isfunction(fn)
                or fn.__module__.split(".")[0] in ("torch", "ember", "_operator", "operator")
                or node.kwargs):
            continue
        args = list(node.args)
        values = [a.meta.get("ember_value") if isinstance(a, torch.fx.Node) else a
                  for a in args]
        flat_args = torch.utils._pytree.tree_flatten(args)[0]
        if any(isinstance(a, torch.fx.Node) and a.meta.get("ember_value") is None
               for a in flat_args):
            continue
        values = torch.utils._pytree.tree_map(
            lambda a: a.meta["ember_value"] if isinstance(a, torch.fx.Node) else a, args)

        # forward(self, arg0, arg1, ...): the tracer flattens named parameters.
        names = ", ".join(f"arg{i}" for i in range(len(values)))
        scope: Dict[str, Any] = {"fn": fn}
        exec(f"def forward(self, {names}):\n    return fn({names})\n", scope)
        call = type("_Call", (nn.Module,), {"forward": scope["forward"]})()
        try:
            sub = symbolic_trace(call, example_inputs=tuple(values))
        except Exception:
            continue
        placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
        leaves = [a for a in flat_args if isinstance(a, (torch.fx.Node, torch.Tensor))]
        outputs = [n for n in sub.graph.nodes if n.op == "output"]
        out = outputs[0].args[0] if len(outputs) == 1 else None
        # The tracer's outputs are flattened: one tensor is a list of one node.
        single = isinstance(out, (list, tuple)) and len(out) == 1 \
            and isinstance(node.meta.get("ember_value"), torch.Tensor)
        if len(placeholders) != len(leaves) \
                or not (isinstance(out, torch.fx.Node) or single) \
                or any(n.op == "get_attr" for n in sub.graph.nodes):
            continue
        val_map = dict(zip(placeholders, leaves))
        with graph.inserting_before(node):
            result = graph.graph_copy(sub.graph, val_map)
        node.replace_all_uses_with(result[0] if single else result)
        graph.erase_node(node)
        changed = True
    if changed:
        graph.lint()
        gm.recompile()
        if depth < 4:  # wrapped functions that call wrapped functions
            _inline_wrapped_functions(gm, depth + 1)


def _refuse_variable_batch_kjts(example_inputs: Any, path: str = "input") -> None:
    """TorchRec's variable-batch KJTs (VBE: a batch size per key, ``inverse_indices``)
    flatten to values and lengths only: exported, they would silently read as one batch
    for every key. Refuse them, naming where they are."""
    if isinstance(example_inputs, (list, tuple)):
        for i, x in enumerate(example_inputs):
            _refuse_variable_batch_kjts(x, f"{path}[{i}]")
    elif isinstance(example_inputs, dict):
        for k, x in example_inputs.items():
            _refuse_variable_batch_kjts(x, f"{path}[{k!r}]")
    elif callable(getattr(example_inputs, "variable_stride_per_key", None)):
        if example_inputs.variable_stride_per_key():
            raise ExportError(
                f"{path}: a variable-batch KeyedJaggedTensor (TorchRec VBE: "
                "stride_per_key_per_rank / inverse_indices) is not supported by the "
                "exporter; pass a KJT with one batch size for every key")


def _convert(model: nn.Module, example_inputs: Any, leaf_modules, concrete_args,
             dynamic_batch: bool, defer_bytes: Optional[int]):
    """The ONNX ModelProto of ``model`` (not checked yet) and the tensors of the
    initializers of at least ``defer_bytes`` bytes, whose bytes it does not hold."""
    _refuse_variable_batch_kjts(example_inputs)
    with _progress.Phase(f"tracing {type(model).__name__}", 1, "items") as tracing:
        graphs = trace(model, example_inputs, leaf_modules=leaf_modules,
                       concrete_args=concrete_args)
        graphs.raise_if_failed()
        gm = graphs[""]
        _inline_wrapped_functions(gm)
        _normalize_foreign_kjts(gm)
        batch = _batch_info(gm) if dynamic_batch else None
        tracing.advance(1)
    converter = _Converter(gm, batch)
    converter.defer_bytes = defer_bytes
    with _progress.Phase("converting", len(gm.graph.nodes), "items") as converting:
        converter.progress = converting
        onnx_model = converter.convert(type(model).__name__)
    kept = {t.name for t in onnx_model.graph.initializer}
    return onnx_model, {k: v for k, v in converter.deferred.items() if k in kept}


def to_onnx(model: nn.Module, example_inputs: Any, leaf_modules: Optional[Sequence[LeafSpec]] = None,
            concrete_args: Optional[Dict[str, Any]] = None, dynamic_batch: bool = True):
    """Trace ``model`` and return the ONNX ModelProto (raises TraceError on any failure).
    With ``dynamic_batch`` (the default) the batch is the symbol ``B``; otherwise every dim
    is the example's. Every initializer's bytes are in the proto (see export's
    ``external_data`` for models near protobuf's 2 GiB limit)."""
    onnx_model, _ = _convert(model, example_inputs, leaf_modules, concrete_args, dynamic_batch,
                             None)
    onnx, *_ = _onnx()
    onnx.checker.check_model(onnx_model, full_check=True)
    return onnx_model


#: Initializers of at least this many bytes go to the external data file.
EXTERNAL_DATA_THRESHOLD = 1 << 20
#: With ``external_data=None``, a model whose initializers hold at least this many bytes
#: is written with external data (protobuf refuses messages of 2 GiB).
EXTERNAL_DATA_AUTO_BYTES = 1 << 30
#: Offsets of external tensors are multiples of this (the importer maps them in place).
EXTERNAL_DATA_ALIGNMENT = 4096
#: Bytes written (or checked for zeros) at a time.
_EXTERNAL_CHUNK = 1 << 20


def _write_external_data(f, onnx_model, deferred: Dict[str, torch.Tensor], location: str,
                         progress: Optional["_progress.Phase"] = None) -> int:
    """Writes the deferred tensors into the open binary file ``f`` (zero chunks are left as
    holes: a sparse source stays sparse) straight from their memory, and points their
    TensorProtos at ``location``. Returns the file's size."""
    import numpy as np
    TP = _onnx()[1]
    offset = 0
    for proto in onnx_model.graph.initializer:
        tensor = deferred.get(proto.name)
        if tensor is None:
            continue
        offset += (-offset) % EXTERNAL_DATA_ALIGNMENT
        # A contiguous CPU tensor is viewed, never copied (only a non-contiguous one is).
        flat = tensor.contiguous().reshape(-1)
        raw = flat.numpy().view(np.uint8) if flat.numel() else np.zeros(0, np.uint8)
        for start in range(0, raw.size, _EXTERNAL_CHUNK):
            chunk = raw[start:start + _EXTERNAL_CHUNK]
            if chunk.any():
                f.seek(offset + start)
                f.write(memoryview(chunk))
            if progress is not None:
                progress.advance(chunk.size)
        del proto.external_data[:]
        for key, value in (("location", location), ("offset", str(offset)),
                           ("length", str(raw.size))):
            entry = proto.external_data.add()
            entry.key, entry.value = key, value
        proto.data_location = TP.EXTERNAL
        offset += raw.size
    f.truncate(offset)
    return offset


def _write_model(path: str, onnx_model, deferred: Dict[str, torch.Tensor],
                 progress: Optional["_progress.Phase"] = None) -> None:
    """Writes ``onnx_model`` to ``path`` and, when ``deferred`` is not empty, its large
    tensors to ``path + ".data"`` (ONNX external data, location relative to the model):
    both or neither (temporaries in the same directory, renamed at the end)."""
    onnx, *_ = _onnx()
    directory = os.path.dirname(os.path.abspath(path))
    data_name = os.path.basename(path) + ".data"
    temporaries = []

    def temporary(suffix: str) -> str:
        fd, tmp = tempfile.mkstemp(prefix=".ember-export-", suffix=suffix, dir=directory)
        os.close(fd)
        temporaries.append(tmp)
        return tmp

    try:
        tmp_model = temporary(".onnx")
        if deferred:
            tmp_data = temporary(".onnx.data")
            with open(tmp_data, "r+b") as f:
                _write_external_data(f, onnx_model, deferred, os.path.basename(tmp_data),
                                     progress)
                f.flush()
                os.fsync(f.fileno())
            # Checked as written (the checker resolves the data file beside the model).
            with open(tmp_model, "wb") as f:
                f.write(onnx_model.SerializeToString())
            onnx.checker.check_model(tmp_model, full_check=True)
            for proto in onnx_model.graph.initializer:
                for entry in proto.external_data:
                    if entry.key == "location":
                        entry.value = data_name
        with open(tmp_model, "wb") as f:
            f.write(onnx_model.SerializeToString())
            f.flush()
            os.fsync(f.fileno())
        if progress is not None:  # the .onnx file completes it
            progress.advance(max(0, progress.total - progress.done))
        if deferred:
            os.replace(tmp_data, os.path.join(directory, data_name))
        os.replace(tmp_model, path)
        temporaries.clear()
    finally:
        for tmp in temporaries:
            if os.path.exists(tmp):
                os.unlink(tmp)


def _batch_info(gm: torch.fx.GraphModule) -> Optional[_batch.BatchInfo]:
    """The batch-dependent dims of ``gm``'s values (the graph run again at twice the
    example's batch); None when no input has a batch dim."""
    info = _batch.find_batch(gm)
    if info is None:
        return None
    try:
        _batch.run_at_double_batch(gm, info)
    except Exception as e:  # the graph baked the example's batch in somewhere
        raise ExportError(f"the traced graph does not run at another batch than the "
                          f"example's ({type(e).__name__}: {e}); export with "
                          f"dynamic_batch=False for a plan fixed at batch {info.batch}") from e
    problems = _batch.specialization_errors(gm, info)
    if problems:
        raise ExportError("cannot export with a dynamic batch: " + "; ".join(problems)
                          + f"; export with dynamic_batch=False for a plan fixed at batch "
                            f"{info.batch}")
    return info


def export(model: nn.Module, example_inputs: Any, path: str,
           leaf_modules: Optional[Sequence[LeafSpec]] = None,
           concrete_args: Optional[Dict[str, Any]] = None, dynamic_batch: bool = True,
           external_data: Optional[bool] = None,
           external_data_threshold: int = EXTERNAL_DATA_THRESHOLD) -> None:
    """Write ``model`` traced on ``example_inputs`` as ONNX to ``path``. Inputs are forward's
    arguments in order with lists / tuples / KJTs flattened; outputs likewise. The batch is
    symbolic (``B``) unless ``dynamic_batch=False``. Raises TraceError (naming every failed
    module) or ExportError and writes nothing on failure.

    ``external_data``: True writes every initializer of at least ``external_data_threshold``
    bytes to ``path + ".data"`` (ONNX external data, 4096-byte aligned, zero blocks left as
    holes) straight from the parameter's memory, never copying it; False keeps every
    initializer inside the .onnx (at most 2 GiB in all); None (the default) does the first
    when the initializers hold 1 GiB or more, else the second."""
    if external_data_threshold < 0:
        raise ExportError(f"external_data_threshold must be >= 0, got {external_data_threshold}")
    onnx_model, deferred = _convert(model, example_inputs, leaf_modules, concrete_args,
                                    dynamic_batch, external_data_threshold)
    if external_data is None:
        total = sum(t.numel() * t.element_size() for t in deferred.values())
        external_data = total >= EXTERNAL_DATA_AUTO_BYTES
    if not external_data:
        numpy_helper = _onnx()[3]
        for i, proto in enumerate(onnx_model.graph.initializer):
            tensor = deferred.get(proto.name)
            if tensor is not None:
                onnx_model.graph.initializer[i].CopyFrom(
                    numpy_helper.from_array(tensor.numpy(), proto.name))
        deferred = {}
        if onnx_model.ByteSize() >= (1 << 31) - 1:
            raise ExportError(f"the model holds {onnx_model.ByteSize()} bytes, more than an ONNX "
                              "file's 2 GiB: export with external_data=True")
        onnx, *_ = _onnx()
        onnx.checker.check_model(onnx_model, full_check=True)
    # Progress (ember/_progress.py): the external data's bytes, then the .onnx file.
    nbytes = onnx_model.ByteSize() + sum(t.numel() * t.element_size() for t in deferred.values())
    with _progress.Phase(f"writing {os.path.basename(path)}", nbytes) as writing:
        _write_model(path, onnx_model, deferred, writing)
