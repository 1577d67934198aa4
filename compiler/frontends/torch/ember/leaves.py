"""Which modules the tracer keeps as leaves (call_module nodes) instead of tracing into."""

import sys
from typing import Set, Tuple, Type, Union

import torch.nn as nn

_REGISTERED: Set[type] = set()


def register_leaf(module_type: Type[nn.Module]) -> None:
    """Make every instance of ``module_type`` (and its subclasses) a leaf in all tracers."""
    if not (isinstance(module_type, type) and issubclass(module_type, nn.Module)):
        raise TypeError(f"register_leaf expects an nn.Module subclass, got {module_type!r}")
    _REGISTERED.add(module_type)


def unregister_leaf(module_type: Type[nn.Module]) -> None:
    """Undo :func:`register_leaf`; raises KeyError if the type was not registered."""
    if module_type not in _REGISTERED:
        raise KeyError(f"{module_type!r} is not a registered leaf type")
    _REGISTERED.discard(module_type)


def is_registered_leaf(m: Union[nn.Module, Type[nn.Module]]) -> bool:
    """True if ``m`` (an instance or a type) is an instance/subclass of a registered leaf type."""
    cls = m if isinstance(m, type) else type(m)
    return any(issubclass(cls, t) for t in _REGISTERED)


_TORCHREC_LEAVES = (
    ("torchrec.modules.embedding_modules", ("EmbeddingBagCollection", "EmbeddingCollection")),
    ("torchrec.quant.embedding_modules", ("EmbeddingBagCollection", "EmbeddingCollection")),
    (
        "torchrec.modules.fused_embedding_modules",
        ("FusedEmbeddingBagCollection", "FusedEmbeddingCollection"),
    ),
    (
        "torchrec.modules.fp_embedding_modules",
        ("FeatureProcessedEmbeddingBagCollection",),
    ),
)


def embedding_leaf_types() -> Tuple[type, ...]:
    """nn.EmbeddingBag, nn.Embedding, and TorchRec's embedding collections whose modules are
    imported. A model holding one of TorchRec's collections has imported its module (the
    class is defined there), so TorchRec itself (seconds to import) is never imported here."""
    from .modules import EmbeddingBagCollection

    types = [nn.EmbeddingBag, nn.Embedding, EmbeddingBagCollection]
    for module_name, names in _TORCHREC_LEAVES:
        module = sys.modules.get(module_name)
        for name in names:
            cls = getattr(module, name, None)
            if isinstance(cls, type):
                types.append(cls)
    return tuple(types)
