"""The per-key KJT idiom of hand-written recommendation models, found in a traced graph.

Code that does not use an EmbeddingBagCollection reads a KJT's parts itself::

    lengths = kjt.lengths().view(len(keys), -1)                  # [K, B]
    per_key = kjt.values().split(lengths.sum(1).tolist())        # data-dependent sizes
    per_key_w = kjt.weights().split(lengths.sum(1).tolist())     # optional
    for bag, ids, lens, w in zip(bags, per_key, lengths, per_key_w):
        offsets = torch.cat([lens.new_zeros(1), lens.cumsum(0)[:-1]])
        pooled.append(bag(ids, offsets, per_sample_weights=w))

``match_per_key_bag`` recognizes an ``nn.EmbeddingBag`` call fed this way (the graph
structure, not only the values), so that the exporter can emit it as a lookup of key ``k`` of
one KJT (``ember.KJT`` + ``ember.KJTSplit`` + ``ember.EmbeddingBagCollection``) instead of
Split / CumSum / Concat over run-time sizes.
"""

import operator
from dataclasses import dataclass
from typing import Any, Optional

import torch
import torch.fx


@dataclass
class PerKeyBag:
    values: torch.fx.Node
    lengths: torch.fx.Node
    weights: Optional[torch.fx.Node]
    num_keys: int
    key: int


def _is(node: Any, *targets) -> bool:
    return isinstance(node, torch.fx.Node) and node.op in ("call_method", "call_function") \
        and node.target in targets


def _getitem(node: Any):
    """(base, index) of ``base[index]``, else None."""
    if _is(node, operator.getitem) and len(node.args) == 2:
        return node.args
    return None


def _lengths_view(node: Any):
    """(L, K) when ``node`` is ``L.view(K, -1)`` / ``L.reshape(K, -1)`` of a 1-D L."""
    if not _is(node, "view", "reshape", torch.reshape):
        return None
    args = list(node.args[1:])
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = list(args[0])
    if len(args) != 2 or not isinstance(args[0], int) or args[1] != -1:
        return None
    source = node.args[0]
    value = source.meta.get("ember_value") if isinstance(source, torch.fx.Node) else None
    if not isinstance(value, torch.Tensor) or value.dim() != 1 or args[0] <= 0:
        return None
    return source, args[0]


def _per_key_sizes(node: Any):
    """The ``[K, B]`` lengths view when ``node`` is ``view.sum(1).tolist()``."""
    if not _is(node, "tolist") or len(node.args) != 1:
        return None
    total = node.args[0]
    if not _is(total, "sum", torch.sum):
        return None
    dim = total.args[1] if len(total.args) > 1 else total.kwargs.get("dim")
    if dim != 1 or total.kwargs.get("keepdim", False):
        return None
    return total.args[0] if _lengths_view(total.args[0]) else None


def _split_part(node: Any):
    """(source, lengths view, k) when ``node`` is ``source.split(sizes)[k]`` with per-key
    sizes."""
    item = _getitem(node)
    if item is None or not isinstance(item[1], int):
        return None
    split, k = item
    if not _is(split, "split", torch.split) or len(split.args) != 2 or split.kwargs:
        return None
    view = _per_key_sizes(split.args[1])
    return (split.args[0], view, k) if view is not None else None


def _exclusive_offsets_of(node: Any):
    """``lens`` when ``node`` is ``cat([lens.new_zeros(1), lens.cumsum(0)[:-1]])``."""
    if not _is(node, torch.cat) or len(node.args) < 1 or not isinstance(node.args[0], (list, tuple)):
        return None
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    if dim != 0 or len(node.args[0]) != 2:
        return None
    zeros, tail = node.args[0]
    if not _is(zeros, "new_zeros") or zeros.args[1:] not in ((1,), ((1,),), ([1],)):
        return None
    lens = zeros.args[0]
    item = _getitem(tail)
    if item is None or item[1] != slice(None, -1, None):
        return None
    cumsum = item[0]
    if not _is(cumsum, "cumsum", torch.cumsum) or cumsum.args[0] is not lens:
        return None
    dim = cumsum.args[1] if len(cumsum.args) > 1 else cumsum.kwargs.get("dim")
    return lens if dim == 0 else None


def match_per_key_bag(ids: Any, offsets: Any, weights: Any) -> Optional[PerKeyBag]:
    """The per-key idiom for one EmbeddingBag call (ids, offsets, per_sample_weights)."""
    part = _split_part(ids)
    if part is None:
        return None
    values, view, k = part
    lengths, num_keys = _lengths_view(view)
    lens = _exclusive_offsets_of(offsets)
    if lens is None or _getitem(lens) != (view, k) or not 0 <= k < num_keys:
        return None
    weights_source = None
    if weights is not None:
        wpart = _split_part(weights)
        if wpart is None or wpart[2] != k or not _same_view(wpart[1], view):
            return None
        weights_source = wpart[0]
    return PerKeyBag(values, lengths, weights_source, num_keys, k)


def _same_view(a: torch.fx.Node, b: torch.fx.Node) -> bool:
    return a is b or _lengths_view(a) == _lengths_view(b)


def split_by_per_key_sizes(node: torch.fx.Node) -> bool:
    """True for ``x.split(view.sum(1).tolist())``: x's size is a value count."""
    return _is(node, "split", torch.split) and len(node.args) == 2 \
        and _per_key_sizes(node.args[1]) is not None
