"""TorchRec-style sparse modules that ember exports as single ``ember`` domain nodes.

``EmbeddingBagCollection`` looks each feature of a KeyedJaggedTensor up in its table and pools
the bags; it returns a ``KeyedTensor`` ([B, sum of dims] with key -> column range). Without
TorchRec these give the same model shape (an EBC fed by a KJT); with TorchRec its own classes
are leaves too.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

from .kjt import kjt_fields

POOLINGS = ("sum", "mean", "max")


@dataclass
class EmbeddingBagConfig:
    """One table: ``num_embeddings`` rows of ``embedding_dim``, read by ``feature_names``."""

    name: str
    num_embeddings: int
    embedding_dim: int
    feature_names: List[str] = field(default_factory=list)
    pooling: str = "sum"


class KeyedTensor:
    """Pooled embeddings: ``values()`` is [B, sum(D)]; key i owns its D_i columns, in order."""

    def __init__(self, keys: Sequence[str], length_per_key: Sequence[int], values: torch.Tensor):
        self._keys = list(keys)
        self._lengths = [int(d) for d in length_per_key]
        self._values = values

    def keys(self) -> List[str]:
        return list(self._keys)

    def values(self) -> torch.Tensor:
        return self._values

    def length_per_key(self) -> List[int]:
        return list(self._lengths)

    def offset_per_key(self) -> List[int]:
        out = [0]
        for d in self._lengths:
            out.append(out[-1] + d)
        return out

    def __getitem__(self, key: str) -> torch.Tensor:
        i = self._keys.index(key)
        start = self.offset_per_key()[i]
        return self._values[:, start:start + self._lengths[i]]

    def to_dict(self) -> Dict[str, torch.Tensor]:
        return {k: self[k] for k in self._keys}


class EmbeddingBagCollection(nn.Module):
    """Pooled lookups of every KJT feature in its table (TorchRec's EmbeddingBagCollection).

    The output keys are the features in table order (table 0's features, then table 1's ...);
    a feature of the KJT that no table reads is ignored. A weighted KJT's weights are
    per-sample weights (sum pooling only).
    """

    def __init__(self, tables: Sequence[EmbeddingBagConfig]):
        super().__init__()
        if not tables:
            raise ValueError("EmbeddingBagCollection needs at least one table")
        self.tables = list(tables)
        self.embedding_bags = nn.ModuleDict()
        seen = set()
        for t in self.tables:
            if t.pooling not in POOLINGS:
                raise ValueError(f"table '{t.name}': pooling must be one of {POOLINGS}")
            if not t.feature_names:
                raise ValueError(f"table '{t.name}' reads no feature")
            for f in t.feature_names:
                if f in seen:
                    raise ValueError(f"feature '{f}' is read by two tables")
                seen.add(f)
            self.embedding_bags[t.name] = nn.EmbeddingBag(t.num_embeddings, t.embedding_dim,
                                                          mode=t.pooling)

    def feature_names(self) -> List[str]:
        return [f for t in self.tables for f in t.feature_names]

    def forward(self, features) -> KeyedTensor:
        keys, values, lengths, weights = kjt_fields(features)
        batch = lengths.numel() // len(keys) if keys else 0
        per_key_lengths = lengths.view(len(keys), batch)
        counts = per_key_lengths.sum(1).tolist()
        starts = [0]
        for c in counts:
            starts.append(starts[-1] + int(c))
        pooled, dims = [], []
        for t in self.tables:
            bag = self.embedding_bags[t.name]
            for f in t.feature_names:
                k = keys.index(f)
                ids = values[starts[k]:starts[k + 1]]
                offsets = torch.cat([per_key_lengths[k].new_zeros(1),
                                     per_key_lengths[k].cumsum(0)[:-1]])
                w = None if weights is None else weights[starts[k]:starts[k + 1]]
                pooled.append(F.embedding_bag(ids, bag.weight, offsets, mode=t.pooling,
                                              per_sample_weights=w))
                dims.append(t.embedding_dim)
        return KeyedTensor(self.feature_names(), dims, torch.cat(pooled, dim=1))
