"""A keyed jagged tensor (the subset of TorchRec's KeyedJaggedTensor API that Ember traces).

Feature ``keys`` are static; ``values`` holds the ids of all features one after the other
(feature-major: key 0's bags for the whole batch, then key 1's ...), ``lengths`` holds one
bag length per (key, sample), and ``weights`` (optional) one weight per value.
When traced, a KJT input is flattened into its values / lengths (/ weights) placeholders and
its keys stay Python constants.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from ._compat import register_pytree_node


class KeyedJaggedTensor:
    def __init__(
        self,
        keys: Sequence[str],
        values: Any,
        lengths: Any,
        weights: Optional[Any] = None,
    ):
        self._keys: List[str] = list(keys)
        self._values = values
        self._lengths = lengths
        self._weights = weights

    @staticmethod
    def from_lengths_sync(keys, values, lengths, weights=None) -> "KeyedJaggedTensor":
        return KeyedJaggedTensor(keys, values, lengths, weights)

    def keys(self) -> List[str]:
        return list(self._keys)

    def values(self):
        return self._values

    def lengths(self):
        return self._lengths

    def weights(self):
        if self._weights is None:
            raise ValueError("this KeyedJaggedTensor has no weights")
        return self._weights

    def weights_or_none(self):
        return self._weights

    def offsets(self):
        """Exclusive prefix sums of lengths with a leading 0 (size numel(lengths) + 1)."""
        lengths = self._lengths
        return torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, 0)])

    def stride(self) -> int:
        """Batch size: number of bags per key."""
        if not self._keys:
            return 0
        return len(self._lengths) // len(self._keys)

    def to(self, device, non_blocking: bool = False) -> "KeyedJaggedTensor":
        w = self._weights
        return KeyedJaggedTensor(
            self._keys,
            self._values.to(device, non_blocking=non_blocking),
            self._lengths.to(device, non_blocking=non_blocking),
            None if w is None else w.to(device, non_blocking=non_blocking),
        )

    def __repr__(self) -> str:
        return (
            f"KeyedJaggedTensor(keys={self._keys}, values={self._values}, "
            f"lengths={self._lengths}, weights={self._weights})"
        )


def is_kjt_like(obj: Any) -> bool:
    """Duck-typed KJT: has keys(), values() and lengths() and is not a tensor/proxy/dict."""
    if isinstance(obj, (torch.Tensor, torch.fx.Proxy, dict, type)) or obj is None:
        return False
    cls = type(obj)
    return all(callable(getattr(cls, m, None)) for m in ("keys", "values", "lengths"))


def kjt_weights(kjt: Any) -> Any:
    fn = getattr(type(kjt), "weights_or_none", None)
    if fn is not None:
        return kjt.weights_or_none()
    return None


def kjt_fields(kjt: Any) -> Tuple[List[str], Any, Any, Any]:
    return list(kjt.keys()), kjt.values(), kjt.lengths(), kjt_weights(kjt)


def rebuild_kjt(cls: type, keys: List[str], values, lengths, weights=None):
    """Construct a KJT of class ``cls`` (ember's or TorchRec's) from its fields."""
    if cls is KeyedJaggedTensor:
        return KeyedJaggedTensor(keys, values, lengths, weights)
    fields = (values, lengths) + ((weights,) if weights is not None else ())
    if all(isinstance(f, torch.Tensor) for f in fields):
        return cls(keys=keys, values=values, lengths=lengths, weights=weights)
    # Placeholders (torch.fx's PH markers for concrete_args, proxies): TorchRec's
    # constructor checks its tensors (numel, dtype), so build it on empty tensors and
    # put the placeholders in their place.
    empty = torch.empty(0, dtype=torch.long)
    kjt = cls(keys=keys, values=empty, lengths=empty,
              weights=torch.empty(0) if weights is not None else None)
    kjt._values, kjt._lengths, kjt._weights = values, lengths, weights
    return kjt


def make_kjt(keys: List[str], values, lengths, weights=None) -> KeyedJaggedTensor:
    """Graph-level KJT construction (emitted by the tracer when a KJT is passed to a node)."""
    return KeyedJaggedTensor(keys, values, lengths, weights)


def _kjt_flatten(kjt: KeyedJaggedTensor):
    children = [kjt._values, kjt._lengths]
    if kjt._weights is not None:
        children.append(kjt._weights)
    return children, (tuple(kjt._keys), kjt._weights is not None)


def _kjt_unflatten(children, context) -> KeyedJaggedTensor:
    keys, has_weights = context
    weights = children[2] if has_weights else None
    return KeyedJaggedTensor(list(keys), children[0], children[1], weights)


register_pytree_node(KeyedJaggedTensor, _kjt_flatten, _kjt_unflatten)


def register_kjt_type(cls: type) -> None:
    """Teach pytree to flatten another KJT class (e.g. TorchRec's) into values/lengths/weights."""

    def flatten(kjt):
        keys, values, lengths, weights = kjt_fields(kjt)
        children = [values, lengths] + ([weights] if weights is not None else [])
        return children, (tuple(keys), weights is not None)

    def unflatten(children, context):
        keys, has_weights = context
        return rebuild_kjt(cls, list(keys), children[0], children[1],
                           children[2] if has_weights else None)

    register_pytree_node(cls, flatten, unflatten)


