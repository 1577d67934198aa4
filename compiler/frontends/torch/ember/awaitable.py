"""Awaitable values (objects with ``wait()``, like TorchRec's NoWait / Awaitable / LazyAwaitable)."""

from typing import Any, Generic, TypeVar

import torch

T = TypeVar("T")


def is_awaitable(obj: Any) -> bool:
    """An object that is not a tensor or module and has a callable ``wait``."""
    if obj is None or isinstance(obj, (torch.Tensor, torch.nn.Module, type)):
        return False
    if isinstance(obj, torch.fx.Proxy):
        return False
    try:
        wait = getattr(type(obj), "wait", None)
    except Exception:
        return False
    return callable(wait)


class NoWait(Generic[T]):
    """An already-available value behind the awaitable interface (mirrors torchrec's NoWait)."""

    def __init__(self, obj: T):
        self._obj = obj

    def wait(self) -> T:
        return self._obj
