"""Which values of a traced graph depend on the batch size, for a dynamic-batch export.

The traced graph is run a second time on the example inputs with the batch doubled (dense
inputs concatenated with themselves along dim 0, KJTs and ``nn.EmbeddingBag`` (ids,
offsets) groups with every key's bags repeated). A dim whose size differs between the two
runs depends on the batch: the exporter writes it from the run-time shape instead of the
example's constant. A Python-level specialization (``int()``, ``bool()``, ``range()``,
``len()``) on a value that depends on the batch cannot be exported with a dynamic batch and
is an ``ExportError`` naming the node and the source line.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set

import torch
import torch.fx
import torch.nn as nn

from ._kjt_idiom import _lengths_view, split_by_per_key_sizes
from .kjt import make_kjt

BATCH = "B"  # the plan's batch symbol (also a KJT input's batch symbol, see plan-emitter-kjt.md)


@dataclass
class BatchInfo:
    batch: int  # the example's batch
    alt_inputs: Dict[str, Any]  # placeholder target -> value at batch 2 * batch
    dim_params: Dict[str, List[Optional[str]]] = field(default_factory=dict)
    alt: Dict[str, Any] = field(default_factory=dict)  # node name -> value at 2 * batch
    dependent: Set[str] = field(default_factory=set)  # static nodes that depend on the batch


def _placeholder(node: Any) -> Optional[torch.fx.Node]:
    return node if isinstance(node, torch.fx.Node) and node.op == "placeholder" else None


def _value(node: torch.fx.Node) -> Any:
    return node.meta.get("ember_value")


def _repeat_keys(values: torch.Tensor, lengths: torch.Tensor, keys: int, extra: bool = False):
    """A key-major KJT's (values, lengths) with each key's bags repeated: batch 2B. With
    ``extra``, each key's last bag also gets one more value (a copy of the key's first, or 0):
    its value count becomes 2N + 1, which no batch-dependent dim (2B, 2B + 1) shares, so a
    dim counting a key's values (an EmbeddingCollection's JaggedTensor values) is never taken
    for the batch, even when the example has N == B."""
    per_key = lengths.reshape(keys, -1)
    sizes = [int(s) for s in per_key.sum(1)]
    new_lengths = torch.cat([per_key, per_key], 1)
    if extra and new_lengths.shape[1]:
        new_lengths[:, -1] += 1
    new_values = None
    if values is not None:
        parts = []
        for p in torch.split(values, sizes):
            parts += [p, p]
            if extra and new_lengths.shape[1]:
                parts.append(p[:1] if p.numel() else p.new_zeros(1))
        new_values = torch.cat(parts) if parts else values
    return new_values, new_lengths.reshape(-1)


class _Groups:
    def __init__(self):
        self.batch: Optional[int] = None
        self.alt: Dict[str, Any] = {}
        self.params: Dict[str, List[Optional[str]]] = {}

    def set_batch(self, b: int) -> None:
        if self.batch is None:
            self.batch = b

    def kjt(self, values, lengths, weights, keys: int, extra: bool = False) -> None:
        v, l, w = (_placeholder(x) for x in (values, lengths, weights))
        if v is None or l is None or any(x.target in self.alt for x in (v, l)):
            return
        lv, vv = _value(l), _value(v)
        if not isinstance(lv, torch.Tensor) or lv.dim() != 1 or keys <= 0 or lv.numel() % keys:
            return
        self.set_batch(lv.numel() // keys)
        self.alt[v.target], self.alt[l.target] = _repeat_keys(vv, lv, keys, extra)
        self.params[l.target] = [f"{keys}*{BATCH}"]
        if w is not None and isinstance(_value(w), torch.Tensor):
            self.alt[w.target] = _repeat_keys(_value(w), lv, keys, extra)[0]

    def bag(self, ids, offsets, psw, include_last: bool) -> None:
        from .export import _elementwise_source

        i, o = _placeholder(_elementwise_source(ids)), _placeholder(offsets)
        if i is None or o is None or o.target in self.alt:
            return
        iv, ov = _value(i), _value(o)
        if not (isinstance(iv, torch.Tensor) and iv.dim() == 1 and isinstance(ov, torch.Tensor)
                and ov.dim() == 1):
            return
        n = iv.numel()
        bags = ov.numel() - (1 if include_last else 0)
        self.set_batch(bags)
        self.alt.setdefault(i.target, torch.cat([iv, iv]))
        head = ov[:-1] if include_last else ov
        self.alt[o.target] = torch.cat([head, ov + n])
        self.params[o.target] = [f"{BATCH}+1" if include_last else BATCH]
        p = _placeholder(_elementwise_source(psw))
        if p is not None and isinstance(_value(p), torch.Tensor):
            self.alt.setdefault(p.target, torch.cat([_value(p), _value(p)]))


def _feeds_embedding_collection(gm: torch.fx.GraphModule, node: torch.fx.Node) -> bool:
    from ._sequence import is_embedding_collection

    return any(u.op == "call_module" and is_embedding_collection(gm.get_submodule(u.target))
               for u in node.users)


def find_batch(gm: torch.fx.GraphModule) -> Optional[BatchInfo]:
    """The example's batch and the inputs at twice that batch; None when the graph has no
    input with a batch dim."""
    groups = _Groups()
    for node in gm.graph.nodes:
        if node.target is make_kjt:
            groups.kjt(node.args[1], node.args[2], node.args[3] if len(node.args) > 3 else None,
                       len(node.args[0]), extra=_feeds_embedding_collection(gm, node))
        elif split_by_per_key_sizes(node):
            view = node.args[1].args[0].args[0]  # tolist <- sum(1) <- lengths.view(K, -1)
            lengths, keys = _lengths_view(view)
            groups.kjt(node.args[0], lengths, None, keys)
        elif node.op == "call_module" and isinstance(gm.get_submodule(node.target),
                                                     nn.EmbeddingBag):
            mod = gm.get_submodule(node.target)
            bound = dict(zip(["input", "offsets", "per_sample_weights"], node.args))
            bound.update(node.kwargs)
            groups.bag(bound.get("input"), bound.get("offsets"), bound.get("per_sample_weights"),
                       bool(mod.include_last_offset))
    # Per-key idiom weights: x.split(sizes) of a placeholder with the same per-key sizes.
    for node in gm.graph.nodes:
        if split_by_per_key_sizes(node):
            view = node.args[1].args[0].args[0]
            lengths, keys = _lengths_view(view)
            src = _placeholder(node.args[0])
            if src is not None and src.target not in groups.alt and \
                    isinstance(_placeholder(lengths), torch.fx.Node):
                groups.alt[src.target] = _repeat_keys(_value(src), _value(lengths), keys)[0]
    dense = [n for n in gm.graph.nodes if n.op == "placeholder" and n.target not in groups.alt
             and isinstance(_value(n), torch.Tensor) and _value(n).dim() >= 1]
    if groups.batch is None and dense:
        groups.set_batch(int(_value(dense[0]).shape[0]))
    if groups.batch is None:
        return None
    for n in dense:
        v = _value(n)
        if int(v.shape[0]) == groups.batch:
            groups.alt[n.target] = torch.cat([v, v])
            groups.params[n.target] = [BATCH] + [None] * (v.dim() - 1)
    # Inputs without a batch dim (index tensors, ...) keep their example value.
    for n in gm.graph.nodes:
        if n.op == "placeholder" and n.target not in groups.alt:
            groups.alt[n.target] = _value(n)
    return BatchInfo(groups.batch, groups.alt, groups.params)


class _AltInterpreter(torch.fx.Interpreter):
    """Runs the traced graph on other inputs and keeps every node's value. A foreign KJT class
    (TorchRec's) that the exporter's normalization replaced by ``make_kjt`` is rebuilt, so
    that its modules see their own KJT type."""

    def __init__(self, gm, inputs: Dict[str, Any]):
        super().__init__(gm)
        self.inputs = inputs
        self.values: Dict[str, Any] = {}

    def run_node(self, n):
        cls = n.meta.get("ember_kjt_class") if n.target is make_kjt else None
        if cls is not None:
            args, _ = self.fetch_args_kwargs_from_env(n)
            weights = args[3] if len(args) > 3 else None
            result = cls(keys=args[0], values=args[1], lengths=args[2], weights=weights)
        else:
            result = super().run_node(n)
        self.values[n.name] = result
        return result

    def placeholder(self, target, args, kwargs):
        return self.inputs.get(target)


def run_at_double_batch(gm: torch.fx.GraphModule, info: BatchInfo) -> None:
    """Runs the graph on ``info.alt_inputs``; fills ``info.alt`` and ``info.dependent``."""
    interp = _AltInterpreter(gm, info.alt_inputs)
    with torch.no_grad():
        interp.run()
    info.alt = interp.values
    for node in gm.graph.nodes:
        if not node.meta.get("ember_static"):
            continue
        inputs: List[torch.fx.Node] = []
        torch.fx.node.map_arg((node.args, node.kwargs), inputs.append)
        if differs(_value(node), info.alt.get(node.name)) or any(
                i.name in info.dependent for i in inputs):
            info.dependent.add(node.name)


def differs(a: Any, b: Any) -> bool:
    """True when two values of one node at two batches differ (shapes, or contents of
    small shape-like values)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return True
        if a.shape != b.shape:
            return True
        if a.numel() <= 4096 and not a.is_floating_point():
            return not torch.equal(a, b)
        return False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) != len(b) or any(differs(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() != b.keys() or any(differs(a[k], b[k]) for k in a)
    if isinstance(a, (int, float, bool)) or isinstance(b, (int, float, bool)):
        return a != b
    return False


def specialization_errors(gm: torch.fx.GraphModule, info: BatchInfo) -> List[str]:
    """Python-level uses of batch-dependent values the trace baked in (``int(x.size(0))``,
    ``if x.size(0) > 1:``, ``range(len(x))``)."""
    problems = []
    for node in gm.graph.nodes:
        for kind, where, last in node.meta.get("ember_specialized", []):
            if kind == "index()" and _recorded_with_proxy(node, last):
                continue
            if kind == "len()":
                a, b = _value(node), info.alt.get(node.name)
                bad = _length(a) != _length(b)
            else:
                bad = node.name in info.dependent
            if bad:
                problems.append(f"{kind} of '{node.name}' depends on the batch size"
                                + (f" (at {where})" if where else ""))
    return problems


def _recorded_with_proxy(node: torch.fx.Node, last: torch.fx.Node) -> bool:
    """True when the node recorded right after ``last`` takes ``node`` as an argument: the
    index() was torch's argument parsing of a call that the graph records symbolically."""
    following = last.next
    if following is None or following.op == "root" or following is node:
        return False
    used: List[torch.fx.Node] = []
    torch.fx.node.map_arg((following.args, following.kwargs), used.append)
    return node in used


def _length(v: Any) -> Optional[int]:
    try:
        return len(v)
    except TypeError:
        return None

