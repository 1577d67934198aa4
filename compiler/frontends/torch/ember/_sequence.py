"""TorchRec's ``EmbeddingCollection`` (sequence embeddings) and the JaggedTensors it returns.

``EmbeddingCollection(kjt)`` looks every id up in its feature's table without pooling and
returns ``Dict[str, JaggedTensor]`` (one entry per (table, feature), in table order; a feature
read by several tables is keyed ``feature@table``). The exporter writes it as

* ``ember.EmbeddingCollection(kjt, weight_0, ...)`` with one output per entry of the dict, each
  a jagged value (attributes ``feature_tables``, ``table_names``, ``module``); the KJT is
  permuted first (``ember.KJTPermute``) when it holds other keys or another order. A feature
  read by several tables would repeat a key of that KJT: the tables are then cut into
  consecutive groups that read no feature twice, one node each (as for EmbeddingBagCollection);
* ``jt.values()`` -> ``ember.JaggedValues`` (``[N, D]`` float, N the run-time id count: at
  the doubled batch of ``_batch.py`` a KJT read by an EmbeddingCollection gets one more id per
  key, so that N is never taken for the batch),
  ``jt.offsets()`` -> ``ember.JaggedOffsets`` (``[B + 1]`` int64), ``jt.lengths()`` ->
  ``ember.JaggedLengths`` (``[B]`` int64; the importer reads them from the collection's KJT),
  each followed by a Cast when TorchRec's have the KJT's int32 lengths type,
  ``jt.to_padded_dense(desired_length=L, padding_value=p)`` and
  ``torch.ops.fbgemm.jagged_to_padded_dense(jt.values(), [jt.offsets()], [L], p)`` ->
  ``ember.JaggedToPadded`` (``[B, L, D]``, attributes ``max_length``, ``padding``).

Anything else done with a JaggedTensor (``to_dense()``, ``weights()``, indexing it, passing it to
another op or returning it) is an ExportError naming the node, the module it was traced in and
the collection that made the JaggedTensor.
"""

import operator
from typing import Any, Dict, List, Set

import torch
import torch.fx
import torch.nn as nn

EMBER_DOMAIN = "ember"

# What the exporter writes for a JaggedTensor; named in the errors.
SUPPORTED = ("values(), offsets(), lengths(), to_padded_dense(desired_length=L, "
             "padding_value=p) and torch.ops.fbgemm.jagged_to_padded_dense(values, [offsets], "
             "[L], p) of its values() and offsets()")


class Jagged:
    """A JaggedTensor the exporter knows: one output of an ember.EmbeddingCollection node."""

    def __init__(self, name: str, value: Any, key: str, module: str):
        self.name = name  # the node's output (an ONNX value of no tensor type)
        self.value = value  # the example's JaggedTensor
        self.key = key  # its key in the collection's result
        self.module = module  # the collection's module path

    def describe(self) -> str:
        return f"the JaggedTensor '{self.key}' of EmbeddingCollection '{self.module}'"


class DictView:
    """``d.items()`` / ``d.values()`` of an exported dict: only iterated (the tracer records
    the iteration as ``d[key]`` reads)."""

    def __init__(self, source: Any):
        self.source = source


def is_embedding_collection(mod: nn.Module) -> bool:
    """TorchRec's EmbeddingCollection (plain or quantized; not a subclass, whose forward may
    differ)."""
    cls = type(mod)
    return cls.__name__ == "EmbeddingCollection" and cls.__module__ in (
        "torchrec.modules.embedding_modules", "torchrec.quant.embedding_modules")


def _tables(conv, node, mod: nn.Module):
    """(name, f32 weight, feature names, result keys) per table, in the module's order."""
    configs = list(mod.embedding_configs())
    names_by_table = list(mod.embedding_names_by_table())
    tables = []
    for config, result_keys in zip(configs, names_by_table):
        weight = mod.embeddings[config.name].weight
        if not weight.is_floating_point():
            raise conv.error(node, f"table '{config.name}' has {weight.dtype} rows (float "
                                   "tables only)")
        if weight.dtype != torch.float32:
            # TorchRec looks the rows up in the table's dtype and returns them .float():
            # the same numbers as an f32 copy of the table.
            weight = weight.detach().float()
        tables.append((str(config.name), weight, list(config.feature_names), list(result_keys)))
    return tables


def convert_embedding_collection(conv, node: torch.fx.Node, mod: nn.Module, features: Any,
                                 value: Any) -> None:
    """``ec(kjt)``: one ember.EmbeddingCollection node per group of tables reading no feature
    twice (one group unless a feature is read by several tables); the result is a dict of
    Jagged reps keyed like TorchRec's."""
    path = str(node.target)
    if type(mod).__module__.startswith("torchrec.quant."):
        raise conv.error(node, "TorchRec's quantized EmbeddingCollection (packed int8/int4 "
                               "rows) is not supported by the exporter; export the float model")
    if mod.need_indices():
        raise conv.error(node, "EmbeddingCollection with need_indices=True (the ids as the "
                               "JaggedTensors' weights) is not supported by the exporter")
    rep = conv.env.get(features) if isinstance(features, torch.fx.Node) else None
    if not (isinstance(rep, tuple) and rep and rep[0] == "kjt"):
        raise conv.error(node, "the EmbeddingCollection input must be a KeyedJaggedTensor")
    _, kjt_name, kjt_keys, weighted = rep
    if weighted:
        # TorchRec's EmbeddingCollection reads only the ids and lengths: a KJT's weights
        # would be dropped without a word. Refused, like an unweighted EmbeddingBagCollection
        # given a weighted KJT.
        raise conv.error(node, "TorchRec's EmbeddingCollection ignores the KJT's weights; "
                               "pass a KJT without weights")
    if not isinstance(value, dict):
        raise conv.error(node, f"the EmbeddingCollection returned {type(value).__name__}, "
                               "not a dict of JaggedTensors")
    tables = _tables(conv, node, mod)
    missing = [f for t in tables for f in t[2] if f not in kjt_keys]
    if missing:
        raise conv.error(node, f"the KJT has no feature(s) {missing}")
    groups: List[list] = []
    seen: Set[str] = set()
    for table in tables:
        if not groups or seen & set(table[2]):
            groups.append([])
            seen = set()
        groups[-1].append(table)
        seen |= set(table[2])
    result: Dict[str, Jagged] = {}
    for group in groups:
        wanted = [f for t in group for f in t[2]]
        kjt = kjt_name
        if wanted != kjt_keys:
            kjt = conv.emit("KJTPermute", [kjt_name], node, domain=EMBER_DOMAIN,
                            permutation=[kjt_keys.index(f) for f in wanted])[0]
        weights, feature_tables, result_keys = [], [], []
        for i, (name, weight, feature_names, keys) in enumerate(group):
            weights.append(conv.const(weight, f"{path}.embeddings.{name}.weight"))
            feature_tables.extend([i] * len(feature_names))
            result_keys.extend(keys)
        outs = conv.emit("EmbeddingCollection", [kjt] + weights, node, n_out=len(wanted),
                         domain=EMBER_DOMAIN, feature_tables=feature_tables,
                         table_names=[t[0] for t in group], module=path)
        for key, out in zip(result_keys, outs):
            if key not in value:
                raise conv.error(node, f"the EmbeddingCollection's result has no key '{key}' "
                                       f"(it has {list(value)})")
            result[key] = Jagged(out, value[key], key, path)
    if list(result) != list(value):
        raise conv.error(node, f"the EmbeddingCollection's result keys {list(value)} are not "
                               f"its tables' features {list(result)}")
    conv.env[node] = ("dict", result)


def describe_output(rep: Any) -> str:
    """What a graph output that is no tensor is, when it is a JaggedTensor (or a dict of them)
    of an EmbeddingCollection: appended to the exporter's error."""
    if isinstance(rep, tuple) and rep and rep[0] == "dict":
        rep = next((v for v in rep[1].values() if isinstance(v, Jagged)), rep)
    if isinstance(rep, Jagged):
        return (f" ({rep.describe()}; return its values(), offsets(), lengths() or "
                "to_padded_dense(desired_length=L))")
    return ""


def _jagged_args(conv, node: torch.fx.Node) -> List[Jagged]:
    found: List[Jagged] = []

    def visit(a):
        rep = conv.env.get(a)
        if isinstance(rep, Jagged):
            found.append(rep)
        elif isinstance(rep, tuple) and rep and rep[0] == "dict" and any(
                isinstance(v, Jagged) for v in rep[1].values()):
            found.append(next(v for v in rep[1].values() if isinstance(v, Jagged)))
        return a

    torch.fx.node.map_arg((node.args, node.kwargs), visit)
    return found


def _op_name(target: Any) -> str:
    """``fbgemm.jagged_to_padded_dense`` for torch.ops.fbgemm.jagged_to_padded_dense (the
    overload packet or one overload)."""
    name = str(target) if type(target).__module__.startswith("torch._ops") else ""
    return name[:-len(".default")] if name.endswith(".default") else name


def convert_jagged_op(conv, node: torch.fx.Node, target: Any, args: list, kw: dict,
                      value: Any) -> bool:
    """Reads of an EmbeddingCollection's result and its JaggedTensors; False if the node
    involves none."""
    first = conv.env.get(args[0]) if args and isinstance(args[0], torch.fx.Node) else None
    if node.op == "call_method" and target in ("items", "values") and isinstance(first, tuple) \
            and first and first[0] == "dict" and not kw and len(args) == 1:
        conv.env[node] = DictView(first)
        return True
    if _op_name(target) == "fbgemm.jagged_to_padded_dense":
        return _fbgemm_to_padded(conv, node, args, kw, value)
    if isinstance(first, Jagged) and node.op == "call_method":
        _jagged_method(conv, node, first, target, args[1:], kw, value)
        return True
    if target is operator.getitem and isinstance(first, tuple) and first and first[0] == "dict":
        return False  # d[key]: the exporter's dict lookup
    jagged = _jagged_args(conv, node)
    if jagged:
        what = f"{node.op} {getattr(target, '__name__', target)}"
        raise conv.error(node, f"{what} of {jagged[0].describe()} is not supported by the "
                               f"exporter (only {SUPPORTED} are)")
    return False


def _bind(conv, node, name: str, value: Any, source: Jagged, role: str):
    from .export import _Tensor

    rep = _Tensor(name, value)
    rep.jagged_part = (source, role)  # fbgemm.jagged_to_padded_dense reads values and offsets
    if role == "values":
        rep.count_dims = (0,)  # N: an output of it has a run-time dim 0 (export.py)
    conv.env[node] = rep
    return rep


def _cast_like(conv, node, name: str, value: Any) -> str:
    if isinstance(value, torch.Tensor) and value.dtype != torch.int64:
        return conv.emit("Cast", [name], node, to=conv.elem_type(value, node))[0]
    return name


def _offsets(conv, node, jagged: Jagged) -> str:
    return conv.emit("JaggedOffsets", [jagged.name], node, domain=EMBER_DOMAIN)[0]


def _jagged_method(conv, node, jagged: Jagged, method: str, args: list, kw: dict,
                   value: Any) -> None:
    if method == "values" and not args and not kw:
        out = conv.emit("JaggedValues", [jagged.name], node, domain=EMBER_DOMAIN)[0]
        _bind(conv, node, out, value, jagged, "values")
    elif method == "offsets" and not args and not kw:
        out = _cast_like(conv, node, _offsets(conv, node, jagged), value)
        _bind(conv, node, out, value, jagged, "offsets")
    elif method == "lengths" and not args and not kw:
        out = conv.emit("JaggedLengths", [jagged.name], node, domain=EMBER_DOMAIN)[0]
        _bind(conv, node, _cast_like(conv, node, out, value), value, jagged, "lengths")
    elif method == "to_padded_dense":
        bound = dict(zip(["desired_length", "padding_value"], args))
        bound.update(kw)
        unknown = set(bound) - {"desired_length", "padding_value"}
        if unknown:
            raise conv.error(node, f"to_padded_dense() argument(s) {sorted(unknown)}")
        length = bound.get("desired_length")
        if length is None:
            raise conv.error(node, f"to_padded_dense() of {jagged.describe()} without "
                                   "desired_length pads to the longest row, which depends "
                                   "on the data; pass desired_length=L")
        _to_padded(conv, node, jagged, conv.concrete(length, node),
                   conv.concrete(bound.get("padding_value", 0.0), node), value)
    else:
        raise conv.error(node, f"JaggedTensor.{method}() of {jagged.describe()} is not "
                               f"supported by the exporter (only {SUPPORTED} are)")


def _to_padded(conv, node, jagged: Jagged, length: Any, padding: Any, value: Any) -> None:
    if isinstance(length, bool) or not isinstance(length, int) or length <= 0:
        raise conv.error(node, f"padded length {length!r} of {jagged.describe()} (a positive "
                               "int known at export time)")
    if isinstance(padding, bool) or not isinstance(padding, (int, float)):
        raise conv.error(node, f"padding value {padding!r} (a number known at export time)")
    out = conv.emit("JaggedToPadded", [jagged.name], node, domain=EMBER_DOMAIN,
                    max_length=int(length), padding=float(padding))[0]
    from .export import _Tensor

    conv.env[node] = _Tensor(out, value)


def _fbgemm_to_padded(conv, node, args: list, kw: dict, value: Any) -> bool:
    """``torch.ops.fbgemm.jagged_to_padded_dense(values, [offsets], [L], padding)`` where
    values and offsets are one EmbeddingCollection JaggedTensor's (what TorchRec's
    to_padded_dense calls)."""
    bound = dict(zip(["values", "offsets", "max_lengths", "padding_value"], args))
    bound.update(kw)
    offsets = bound.get("offsets")
    offsets = offsets[0] if isinstance(offsets, (list, tuple)) and len(offsets) == 1 else None
    parts = []
    for role, arg in (("values", bound.get("values")), ("offsets", offsets)):
        rep = conv.env.get(arg) if isinstance(arg, torch.fx.Node) else None
        part = getattr(rep, "jagged_part", None)
        if part is None or part[1] != role:
            raise conv.error(node, "fbgemm.jagged_to_padded_dense is exported only for the "
                                   "values() and [offsets()] of one EmbeddingCollection "
                                   f"JaggedTensor (its {role} argument is not)")
        parts.append(part[0])
    if parts[0] is not parts[1]:
        raise conv.error(node, f"fbgemm.jagged_to_padded_dense of the values of "
                               f"{parts[0].describe()} with the offsets of "
                               f"{parts[1].describe()}")
    lengths = conv.concrete(bound.get("max_lengths"), node)
    if not (isinstance(lengths, (list, tuple)) and len(lengths) == 1):
        raise conv.error(node, f"max_lengths {lengths!r} (one length expected)")
    _to_padded(conv, node, parts[0], lengths[0],
               conv.concrete(bound.get("padding_value", 0.0), node), value)
    return True


