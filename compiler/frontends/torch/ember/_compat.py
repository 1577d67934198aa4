"""Differences between PyTorch 1.13 and 2.x that the tracer depends on."""

from typing import Any, Callable

import torch.utils._pytree as _pytree


def is_pytree_node_registered(cls: type) -> bool:
    nodes = getattr(_pytree, "SUPPORTED_NODES", {})
    return cls in nodes


def register_pytree_node(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """Register ``cls`` with torch's pytree and with torch.fx's flatten-spec table (used by
    GraphModules whose inputs were flattened)."""
    _register_fx_flatten_spec(cls, flatten)
    if is_pytree_node_registered(cls):
        return
    register = getattr(_pytree, "register_pytree_node", None)  # torch >= 2.2
    if register is not None:
        register(cls, flatten, unflatten)
    else:  # torch 1.13 .. 2.1
        _pytree._register_pytree_node(cls, flatten, unflatten)


def tree_flatten(obj: Any):
    return _pytree.tree_flatten(obj)


def tree_map(fn: Callable, obj: Any) -> Any:
    return _pytree.tree_map(fn, obj)


def placeholder_marker():
    """torch.fx's PH marker for concrete_args (a PHBase instance in 2.x)."""
    from torch.fx._symbolic_trace import PH

    return PH


def _register_fx_flatten_spec(cls: type, flatten: Callable) -> None:
    import torch.fx._pytree as fx_pytree

    if cls in getattr(fx_pytree, "SUPPORTED_NODES", {}):
        return
    fx_pytree.register_pytree_flatten_spec(cls, lambda obj, spec: flatten(obj)[0])
