"""Proxies that carry the value the example inputs give them.

Each node the tracer records stores in ``node.meta``:
  * ``ember_value``  — the value computed from the example inputs (or UNKNOWN),
  * ``ember_static`` — True when that value depends only on shapes / dtypes / keys
    (never on tensor data), so Python control flow may specialize on it.
"""

import operator
from typing import Any

import torch.fx
from torch.fx.proxy import Attribute

from .errors import TraceError


class _Unknown:
    """Marker: no example value is known (tracing without example inputs)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


def value_of(proxy: torch.fx.Proxy) -> Any:
    return proxy.node.meta.get("ember_value", UNKNOWN)


def is_static(proxy: torch.fx.Proxy) -> bool:
    return bool(proxy.node.meta.get("ember_static", False))


class EmberProxy(torch.fx.Proxy):
    """torch.fx.Proxy whose len/iter/bool/int/float use the example value when that is allowed."""

    def __getattr__(self, k: str) -> "EmberAttribute":
        return EmberAttribute(self, k)

    def __len__(self) -> int:
        return self.tracer.proxy_len(self)

    def __iter__(self):
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __int__(self) -> int:
        return self.tracer.to_scalar(self, int)

    def __index__(self) -> int:
        return self.tracer.to_scalar(self, operator.index)

    def __float__(self) -> float:
        return self.tracer.to_scalar(self, float)

    def __setitem__(self, key, value) -> None:
        self.tracer.create_proxy("call_function", operator.setitem, (self, key, value), {})


def _define_inplace(name: str) -> None:
    op = getattr(operator, name)

    def impl(self, other):
        return self.tracer.create_proxy("call_function", op, (self, other), {})

    impl.__name__ = f"__{name}__"
    setattr(EmberProxy, f"__{name}__", impl)


for _name in ("iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow",
              "iand", "ior", "ixor", "ilshift", "irshift", "imatmul"):
    _define_inplace(_name)


class EmberAttribute(EmberProxy, Attribute):
    """Attribute access on an EmberProxy (``x.shape``, ``x.size``...), materialized lazily."""

    def __init__(self, root: torch.fx.Proxy, attr: str):
        Attribute.__init__(self, root, attr)


def require_known(proxy: torch.fx.Proxy, what: str) -> Any:
    value = value_of(proxy)
    if value is UNKNOWN:
        raise TraceError(
            f"{what} of '{proxy.node.name}' needs its example value: pass example inputs "
            f"(ember.trace(model, example_inputs) or Tracer.trace(..., example_inputs=...))"
        )
    return value
