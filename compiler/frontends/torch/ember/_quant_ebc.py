"""TorchRec's quantized EmbeddingBagCollection (``torchrec.quant.embedding_modules``) as
Ember tables.

TorchRec keeps a quantized collection's tables in FBGEMM's inference TBE
(``IntNBitTableBatchedEmbeddingBagsCodegen``): one TBE per pooling mode, each row
``[fp16 scale, fp16 bias, codes]`` padded to the row alignment (``reverse_qparam``
puts scale and bias after the codes). Ember's row-wise quantized rows are the codes
then float32 scale and float32 bias (docs/kernels-embedding.md), so each table is
converted exactly: the codes unchanged, scale and bias widened to float32 (fp16 ->
fp32 is exact), the padding dropped.

=============  ==================  ==============================================
TorchRec type  Ember table format  exported weight
=============  ==================  ==============================================
INT8           ``int8_rowwise``    uint8 ``[rows, dim + 8]``
INT4           ``int4_rowwise``    uint8 ``[rows, dim / 2 + 8]`` (low nibble first)
FP16           ``f16``             float16 ``[rows, dim]``
FP32           ``f32``             float32 ``[rows, dim]``
=============  ==================  ==============================================

Anything else (INT2, FP8, pruned tables, virtual tables, outputs other than float32)
is refused with a ``ValueError`` the exporter reports with the module path.
"""

from typing import List, Tuple

import torch

# TorchRec data type name -> (Ember table format, bits per code or None for floats)
_FORMATS = {"INT8": ("int8_rowwise", 8), "INT4": ("int4_rowwise", 4),
            "FP16": ("f16", None), "FP32": ("f32", None)}


def is_quantized_ebc(mod: torch.nn.Module) -> bool:
    cls = type(mod)
    return (cls.__name__ == "EmbeddingBagCollection"
            and cls.__module__.startswith("torchrec.quant."))


def _name(enum_value) -> str:
    return getattr(enum_value, "name", str(enum_value)).upper()


def ember_rows(codes: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Ember's row-wise quantized rows: ``codes`` (uint8 ``[rows, code bytes]``), then
    ``scale`` and ``bias`` (one per row, any float type) as little-endian float32."""
    rows = codes.shape[0]
    qparams = torch.cat([scale.reshape(rows, 1).float(), bias.reshape(rows, 1).float()], dim=1)
    return torch.cat([codes.contiguous(), qparams.contiguous().view(torch.uint8)], dim=1)


def quantized_ebc_tables(mod: torch.nn.Module) -> List[Tuple]:
    """(name, weight, pooling, feature names, format, dim) of each table of a quantized
    collection, in the order of its output (TorchRec groups the tables by pooling mode:
    the KeyedTensor holds the tables of the first mode, then the next ...)."""
    output_dtype = mod.output_dtype() if callable(getattr(mod, "output_dtype", None)) else None
    if output_dtype not in (None, torch.float32):
        raise ValueError(f"output_dtype {output_dtype} is not supported (Ember's lookups "
                         "return float32; quantize with output_dtype=torch.float)")
    key_to_tables = getattr(mod, "_key_to_tables", None)
    emb_modules = getattr(mod, "_emb_modules", None)
    if key_to_tables is None or emb_modules is None or len(key_to_tables) != len(emb_modules):
        raise ValueError("unexpected layout of TorchRec's quantized EmbeddingBagCollection "
                         "(no _key_to_tables / _emb_modules)")
    tables = []
    for (key, configs), emb in zip(key_to_tables.items(), emb_modules):
        pooling_type, virtual = key if isinstance(key, tuple) else (key, False)
        if virtual or type(emb).__name__ != "IntNBitTableBatchedEmbeddingBagsCodegen":
            raise ValueError(f"tables {[c.name for c in configs]}: {type(emb).__name__} "
                             "(virtual/KV tables) is not supported")
        pooling = _name(pooling_type).lower()
        if pooling not in ("sum", "mean"):
            raise ValueError(f"tables {[c.name for c in configs]}: pooling {pooling_type} "
                             "is not supported")
        if getattr(emb, "scale_bias_size_in_bytes", 4) != 4:
            raise ValueError(f"tables {[c.name for c in configs]}: "
                             f"{emb.scale_bias_size_in_bytes}-byte scale/bias rows are not "
                             "supported (FBGEMM's fp16 scale and bias are)")
        remapped = any(getattr(emb, a, None) is not None and getattr(emb, a).numel() > 0
                       for a in ("index_remappings_array", "index_remapping_hash_table"))
        if remapped or getattr(emb, "index_remapping_hash_table_cpu", None) is not None:
            raise ValueError(f"tables {[c.name for c in configs]}: pruned tables (index "
                             "remapping) are not supported")
        splits = emb.split_embedding_weights_with_scale_bias(split_scale_bias_mode=2)
        for config, spec, (weight, scale, bias) in zip(configs, emb.embedding_specs, splits):
            rows, dim = int(spec[1]), int(spec[2])
            data_type = _name(config.data_type)
            where = f"table '{config.name}'"
            if data_type not in _FORMATS:
                raise ValueError(f"{where}: data type {data_type} is not supported (INT8, "
                                 "INT4, FP16 and FP32 are)")
            if getattr(config, "num_embeddings_post_pruning", None) is not None:
                raise ValueError(f"{where}: pruned tables (num_embeddings_post_pruning) are "
                                 "not supported")
            fmt, bits = _FORMATS[data_type]
            weight = weight.detach().cpu()
            if bits is None:
                dtype = torch.float16 if fmt == "f16" else torch.float32
                table = weight.contiguous().view(dtype)
                if tuple(table.shape) != (rows, dim):
                    raise ValueError(f"{where}: {data_type} rows of {tuple(weight.shape)} "
                                     f"bytes do not hold [{rows}, {dim}]")
            else:
                if bits == 4 and dim % 2:
                    raise ValueError(f"{where}: INT4 with an odd dim ({dim}) is not supported")
                code_bytes = dim * bits // 8
                if (tuple(weight.shape) != (rows, code_bytes) or weight.dtype != torch.uint8
                        or scale is None or bias is None or scale.numel() != rows
                        or bias.numel() != rows):
                    raise ValueError(f"{where}: FBGEMM's {data_type} rows are not "
                                     f"[{rows}, {code_bytes}] uint8 codes with one scale "
                                     "and bias per row")
                table = ember_rows(weight, scale.detach().cpu(), bias.detach().cpu())
            tables.append((config.name, table, pooling, list(config.feature_names), fmt, dim))
    return tables
