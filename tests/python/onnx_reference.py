"""A naive numpy evaluator for the ONNX subset ember.export emits (independent reference).

Written from the ONNX operator specs and docs/frontend-onnx.md (ember.EmbeddingBag), not from
the exporter: it checks that an exported file computes what the eager model computes.
"""

import numpy as np
from onnx import numpy_helper


def _embedding_bag(node, weight, ids, offsets, psw=None):
    attrs = {a.name: a for a in node.attribute}
    mode = attrs["mode"].s.decode() if "mode" in attrs else "sum"
    pad = attrs["padding_idx"].i if "padding_idx" in attrs else None
    if pad is not None and pad < 0:
        pad += weight.shape[0]
    include_last = attrs["include_last_offset"].i if "include_last_offset" in attrs else 0
    bounds = list(offsets) + ([] if include_last else [len(ids)])
    bags = len(bounds) - 1
    out = np.zeros((bags, weight.shape[1]), dtype=weight.dtype)
    for b in range(bags):
        rows = []
        for j in range(bounds[b], bounds[b + 1]):
            if pad is not None and ids[j] == pad:
                continue
            row = weight[ids[j]].astype(np.float64)
            rows.append(row * (psw[j] if psw is not None else 1.0))
        if not rows:
            continue
        stacked = np.stack(rows)
        out[b] = {"sum": stacked.sum(0), "mean": stacked.mean(0), "max": stacked.max(0)}[mode]
    return out


class _Kjt:
    """A KJT value: keys, values, key-major lengths, optional weights."""

    def __init__(self, keys, values, lengths, weights=None):
        self.keys, self.values, self.lengths, self.weights = list(keys), values, lengths, weights
        assert len(lengths) % len(keys) == 0
        self.batch = len(lengths) // len(keys)

    def key_parts(self, k):
        """(ids, lengths, weights) of key k."""
        starts = np.concatenate([[0], np.cumsum(self.lengths)])
        lo, hi = starts[k * self.batch], starts[(k + 1) * self.batch]
        w = None if self.weights is None else self.weights[lo:hi]
        return self.values[lo:hi], self.lengths[k * self.batch:(k + 1) * self.batch], w


def _kjt_split(kjt, counts):
    out, key = [], 0
    for c in counts:
        parts = [kjt.key_parts(k) for k in range(key, key + c)]
        cat = lambda i, dt: np.concatenate([p[i] for p in parts]) if parts else np.zeros(0, dt)
        out.append(_Kjt(kjt.keys[key:key + c], cat(0, kjt.values.dtype), cat(1, kjt.lengths.dtype),
                        None if kjt.weights is None else cat(2, np.float32)))
        key += c
    return out


def _embedding_bag_collection(node, kjt, *weights):
    feature_tables, pooling = _attr(node, "feature_tables"), _attr(node, "pooling")
    pooled = []
    for k, t in enumerate(feature_tables):
        pooled.append(_pool(weights[t], *kjt.key_parts(k), pooling[t]))
    return np.concatenate(pooled, axis=1).astype(np.float32)


def _pool(weight, ids, lengths, w, mode):
    """Bags of consecutive ids (one per length) pooled with ``mode``; empty bags are 0."""
    out, pos = np.zeros((len(lengths), weight.shape[1]), np.float32), 0
    for b, n in enumerate(lengths):
        if n:
            rows = weight[ids[pos:pos + n]].astype(np.float64)
            if w is not None:
                rows = rows * w[pos:pos + n, None]
            out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
        pos += n
    return out


class _Jagged:
    """A jagged value (docs/frontend-onnx.md, ember.EmbeddingCollection): values [N, D...] and
    the rows' lengths [B]."""

    def __init__(self, values, lengths):
        self.values, self.lengths = values, np.asarray(lengths, dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)]).astype(np.int64)


def _embedding_collection(node, kjt, *weights):
    """One jagged per KJT key: its ids replaced by their rows of its table (no pooling)."""
    outs = []
    for k, t in enumerate(_attr(node, "feature_tables")):
        ids, lengths, _ = kjt.key_parts(k)
        outs.append(_Jagged(weights[t][ids].astype(np.float32), lengths))
    return outs


def _jagged_to_padded(node, jagged):
    """[B, max_length, D...]: row b's first min(len_b, max_length) values, then padding."""
    length, pad = _attr(node, "max_length"), _attr(node, "padding", 0.0)
    v = jagged.values
    out = np.full((len(jagged.lengths), length) + v.shape[1:], pad, dtype=v.dtype)
    for b, (start, n) in enumerate(zip(jagged.offsets[:-1], jagged.lengths)):
        n = min(int(n), length)
        out[b, :n] = v[start:start + n]
    return out


def _attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            if a.type == a.INT:
                return a.i
            if a.type == a.FLOAT:
                return a.f
            if a.type == a.INTS:
                return list(a.ints)
            if a.type == a.STRING:
                return a.s.decode()
            if a.type == a.STRINGS:
                return [s.decode() for s in a.strings]
            if a.type == a.TENSOR:
                return a.t
    return default


_NP_TYPES = {1: np.float32, 11: np.float64, 10: np.float16, 7: np.int64, 6: np.int32,
             3: np.int8, 2: np.uint8, 9: np.bool_}


def run(model, feeds):
    env = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    env.update(feeds)
    for node in model.graph.node:
        x = [env[i] if i else None for i in node.input]
        op = node.op_type
        if node.domain == "ember":
            if op == "EmbeddingBag":
                outs = [_embedding_bag(node, *x)]
            elif op == "KJT":
                outs = [_Kjt(_attr(node, "keys"), *x)]
            elif op == "KJTSplit":
                outs = _kjt_split(x[0], _attr(node, "key_counts"))
            elif op == "KJTPermute":
                perm = _attr(node, "permutation")
                parts = [x[0].key_parts(k) for k in perm]
                outs = [_Kjt([x[0].keys[k] for k in perm], np.concatenate([p[0] for p in parts]),
                             np.concatenate([p[1] for p in parts]),
                             None if x[0].weights is None else np.concatenate([p[2] for p in parts]))]
            elif op == "KeyedTensorGet":
                start, dim = _attr(node, "start"), _attr(node, "dim")
                outs = [x[0][:, start:start + dim]]
            elif op == "EmbeddingBagCollection":
                outs = [_embedding_bag_collection(node, *x)]
            elif op == "EmbeddingCollection":
                outs = _embedding_collection(node, *x)
            elif op == "JaggedValues":
                outs = [x[0].values]
            elif op == "JaggedOffsets":
                outs = [x[0].offsets]
            elif op == "JaggedLengths":
                outs = [x[0].lengths]
            elif op == "JaggedToPadded":
                outs = [_jagged_to_padded(node, x[0])]
            else:
                raise NotImplementedError(f"ember.{op}")
        elif op == "Identity":
            outs = [x[0]]
        elif op in ("Add", "Sub", "Mul", "Div"):
            a, b = x
            if op == "Div" and np.issubdtype(a.dtype, np.integer):
                outs = [(a // b).astype(a.dtype)]
            else:
                outs = [{"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op](a, b).astype(a.dtype)]
        elif op == "MatMul":
            outs = [np.matmul(*x)]
        elif op == "Gemm":
            a, b = x[0], x[1]
            if _attr(node, "transA", 0):
                a = a.T
            if _attr(node, "transB", 0):
                b = b.T
            y = _attr(node, "alpha", 1.0) * (a @ b)
            if len(x) > 2 and x[2] is not None:
                y = y + _attr(node, "beta", 1.0) * x[2]
            outs = [y.astype(x[0].dtype)]
        elif op == "Relu":
            outs = [np.maximum(x[0], 0)]
        elif op == "Sigmoid":
            outs = [(1 / (1 + np.exp(-x[0]))).astype(x[0].dtype)]
        elif op == "Tanh":
            outs = [np.tanh(x[0])]
        elif op == "Exp":
            outs = [np.exp(x[0])]
        elif op == "Neg":
            outs = [-x[0]]
        elif op == "Concat":
            outs = [np.concatenate(x, axis=_attr(node, "axis"))]
        elif op == "Reshape":
            outs = [x[0].reshape(tuple(int(d) for d in x[1]))]
        elif op == "Transpose":
            outs = [np.transpose(x[0], _attr(node, "perm"))]
        elif op == "Unsqueeze":
            y = x[0]
            for a in sorted(int(v) for v in x[1]):
                y = np.expand_dims(y, a)
            outs = [y]
        elif op == "Squeeze":
            outs = [np.squeeze(x[0], axis=tuple(int(v) for v in x[1]))]
        elif op == "ReduceSum":
            outs = [x[0].sum(axis=tuple(int(v) for v in x[1]), keepdims=bool(_attr(node, "keepdims", 1))).astype(x[0].dtype)]
        elif op == "ReduceMean":
            outs = [x[0].mean(axis=tuple(_attr(node, "axes")), keepdims=bool(_attr(node, "keepdims", 1))).astype(x[0].dtype)]
        elif op == "CumSum":
            outs = [np.cumsum(x[0], axis=int(x[1])).astype(x[0].dtype)]
        elif op == "Split":
            axis = _attr(node, "axis", 0)
            bounds = np.cumsum([int(s) for s in x[1]])[:-1]
            outs = np.split(x[0], bounds, axis=axis)
        elif op == "Cast":
            outs = [x[0].astype(_NP_TYPES[_attr(node, "to")])]
        elif op == "Slice":
            data, starts, ends = x[:3]
            axes = x[3] if len(x) > 3 and x[3] is not None else range(len(starts))
            steps = x[4] if len(x) > 4 and x[4] is not None else [1] * len(starts)
            index = [slice(None)] * data.ndim
            for s, e, a, st in zip(starts, ends, axes, steps):
                index[int(a)] = slice(int(s), int(e), int(st))
            outs = [data[tuple(index)]]
        elif op == "ScatterND":
            data, indices, updates = x
            out = data.copy()
            flat_idx = indices.reshape(-1, indices.shape[-1])
            flat_upd = updates.reshape((flat_idx.shape[0],) + data.shape[indices.shape[-1]:])
            for i, idx in enumerate(flat_idx):
                out[tuple(idx)] = flat_upd[i]
            outs = [out]
        elif op == "Shape":
            dims = np.array(x[0].shape, dtype=np.int64)
            outs = [dims[_attr(node, "start", 0):_attr(node, "end", len(dims))]]
        elif op == "ConstantOfShape":
            fill = numpy_helper.to_array(_attr(node, "value"))
            outs = [np.full(tuple(int(d) for d in x[0]), fill.reshape(-1)[0], dtype=fill.dtype)]
        elif op == "Expand":
            outs = [x[0] * np.ones(tuple(int(d) for d in x[1]), dtype=x[0].dtype)]
        elif op == "Gather":
            outs = [np.take(x[0], x[1], axis=_attr(node, "axis", 0))]
        elif op == "LayerNormalization":
            axis = _attr(node, "axis", -1)
            eps = _attr(node, "epsilon", 1e-5)
            axes = tuple(range(axis % x[0].ndim, x[0].ndim))
            mean = x[0].mean(axis=axes, keepdims=True)
            var = ((x[0] - mean) ** 2).mean(axis=axes, keepdims=True)
            outs = [((x[0] - mean) / np.sqrt(var + eps) * x[1] + x[2]).astype(x[0].dtype)]
        else:
            raise NotImplementedError(op)
        for name, value in zip(node.output, outs):
            env[name] = value
    return [env[o.name] for o in model.graph.output]
