"""End-to-end test of the plan emitter's KJT lowering: MLIR -> ember-compile -> ember-run,
compared with a numpy reference written from the op definitions (docs/dialect.md).

usage: kjt_ops_test.py CASE EMBER_COMPILE EMBER_RUN WORKDIR

Cases:
  ops        a weighted KJT argument (i64 values, i32 lengths) through kjt.split,
             kjt.concat, embedding_bag_collection (sum/mean/max tables; run with
             --ember-group-tables, which makes grouped lookups, permutes and regroups),
             keyed_tensor.regroup/values/get, kjt.offsets (i32: lengths_to_offsets + cast),
             kjt.bucketize and kjt.permute of an unweighted KJT; random data, fixed seed, an
             empty bag and ids at the table edges. Runs twice (batch 4 and batch 1).
  offsets    a KJT made by kjt.create from run-time values and offsets (dense inputs), then
             a grouped_lookup and kjt.lengths
  errors     a variable-batch KJT argument and a returned keyed tensor: ember-compile fails
             naming the op, exit 1, no output files
"""
import os
import shutil
import subprocess
import sys

import numpy as np

ROWS = [10, 20, 5]
DIMS = [4, 2, 3]
KEYS = ["a", "b", "c"]


def run(cmd):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def fail(msg, proc=None):
    print("FAIL:", msg)
    if proc is not None:
        print("stdout:", proc.stdout)
        print("stderr:", proc.stderr)
    sys.exit(1)


def dense_literal(a):
    return "dense<%s>" % np.array2string(a, separator=", ", threshold=10**9,
                                         floatmode="unique").replace("\n", "")


def tables(seed=0):
    r = np.random.default_rng(seed)
    return [r.standard_normal((rows, d)).astype(np.float32) for rows, d in zip(ROWS, DIMS)]


def table_ops(ts):
    lines = []
    for i, t in enumerate(ts):
        lines.append("  %%w%d = arith.constant %s : tensor<%dx%dxf32>"
                     % (i, dense_literal(t), t.shape[0], t.shape[1]))
        lines.append("  %%t%d = ember.table.from_tensor %%w%d : tensor<%dx%dxf32> -> "
                     "!ember.table<%dx%d, f32>" % (i, i, *t.shape, *t.shape))
    return lines


def kjt_type(keys, weighted, lengths="i32"):
    return '!ember.kjt<[%s], values = i64, lengths = %s%s>' % (
        ", ".join('"%s"' % k for k in keys), lengths, ", weighted" if weighted else "")


def table_type(i):
    return "!ember.table<%dx%d, f32>" % (ROWS[i], DIMS[i])


OPS_MLIR = """module {{
func.func @main(%f: {kf} {{onnx.name = "f"}})
    -> (tensor<?x7xf32>, tensor<?x2xf32>, tensor<?xi32>, tensor<?xi64>, tensor<?xi32>,
        tensor<?xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?xi32>) {{
{tables}
  %p:2 = ember.kjt.split %f [1, 2] : {kf} -> {ka}, {kbc}
  %cat = ember.kjt.concat %p#1, %p#0 : {kbc}, {ka} -> {kbca}
  %kt = ember.embedding_bag_collection %cat tables(%t1, %t2, %t0)
      feature_tables = [0, 1, 2] pooling = [sum, sum, sum]
      : {kbca}, {tt1}, {tt2}, {tt0}
      -> !ember.keyed_tensor<["b" : 2, "c" : 3, "a" : 4], f32>
  %rg = ember.keyed_tensor.regroup %kt
      : !ember.keyed_tensor<["b" : 2, "c" : 3, "a" : 4], f32>
      -> !ember.keyed_tensor<["a" : 4, "c" : 3], f32>
  %v = ember.keyed_tensor.values %rg : !ember.keyed_tensor<["a" : 4, "c" : 3], f32> -> tensor<?x7xf32>
  %g = ember.keyed_tensor.get %kt["b"] : !ember.keyed_tensor<["b" : 2, "c" : 3, "a" : 4], f32> -> tensor<?x2xf32>
  %off = ember.kjt.offsets %f : {kf} -> tensor<?xi32>
  %b, %perm = ember.kjt.bucketize %p#0 block_sizes = [4] num_buckets = 3
      : {ka} -> {kab}, tensor<?xi64>
  %bl = ember.kjt.lengths %b : {kab} -> tensor<?xi32>
  %bw = ember.kjt.weights %b : {kab} -> tensor<?xf32>
  %unw = ember.kjt.create values(%perm : tensor<?xi64>) lengths(%bl : tensor<?xi32>) -> {kuw}
  %pm = ember.kjt.permute %unw [2, 0] : {kuw} -> {kpm}
  %pv = ember.kjt.values %pm : {kpm} -> tensor<?xi64>
  %bv = ember.kjt.values %b : {kab} -> tensor<?xi64>
  %pl = ember.kjt.lengths %pm : {kpm} -> tensor<?xi32>
  return %v, %g, %off, %bv, %bl, %bw, %perm, %pv, %pl
      : tensor<?x7xf32>, tensor<?x2xf32>, tensor<?xi32>, tensor<?xi64>, tensor<?xi32>,
        tensor<?xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?xi32>
}}
}}
"""


def ops_mlir(ts):
    return OPS_MLIR.format(
        kf=kjt_type(KEYS, True), ka=kjt_type(["a"], True), kbc=kjt_type(["b", "c"], True),
        kbca=kjt_type(["b", "c", "a"], True),
        kab=kjt_type(["a@0", "a@1", "a@2"], True),
        kuw=kjt_type(["x", "y", "z"], False), kpm=kjt_type(["z", "x"], False),
        tt0=table_type(0), tt1=table_type(1), tt2=table_type(2),
        tables="\n".join(table_ops(ts)))


def random_kjt(batch, seed):
    r = np.random.default_rng(seed)
    lengths = r.integers(0, 4, size=3 * batch).astype(np.int32)
    lengths[0] = 0
    values = []
    for k in range(3):
        n = int(lengths[k * batch:(k + 1) * batch].sum())
        ids = r.integers(0, ROWS[k], size=n).astype(np.int64)
        if n:
            ids[-1] = ROWS[k] - 1
        values.append(ids)
    values = np.concatenate(values)
    weights = r.random(values.size).astype(np.float32)
    return values, lengths, weights


def split_keys(values, lengths, weights, batch, nkeys):
    """Per key: (values, lengths, weights) of a key-major KJT."""
    out, start = [], 0
    for k in range(nkeys):
        lk = lengths[k * batch:(k + 1) * batch]
        n = int(lk.sum())
        out.append((values[start:start + n], lk,
                    None if weights is None else weights[start:start + n]))
        start += n
    return out


def pool(table, ids, lens, w):
    out = np.zeros((len(lens), table.shape[1]), np.float32)
    pos = 0
    for b, n in enumerate(lens):
        for j in range(pos, pos + n):
            out[b] += table[ids[j]] * (w[j] if w is not None else 1.0)
        pos += n
    return out


def reference(ts, values, lengths, weights, batch):
    per_key = split_keys(values, lengths, weights, batch, 3)
    pooled = {k: pool(ts[i], *per_key[i]) for i, k in enumerate(KEYS)}
    v = np.concatenate([pooled["a"], pooled["c"]], axis=1)
    g = pooled["b"]
    off = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    # bucketize key "a": block 4, 3 buckets (ids 0..11 in range; ROWS[0] = 10)
    ids, lens, w = per_key[0]
    buckets = [[[] for _ in range(batch)] for _ in range(3)]
    pos = 0
    for b, n in enumerate(lens):
        for j in range(pos, pos + n):
            u = int(ids[j])
            bucket, local = (u // 4, u % 4) if u < 12 else (u % 3, u // 3)
            buckets[bucket][b].append((local, w[j], j))
        pos += n
    bv, bw, bl, order = [], [], [], []
    for bucket in range(3):
        for b in range(batch):
            bl.append(len(buckets[bucket][b]))
            for local, wj, j in buckets[bucket][b]:
                bv.append(local)
                bw.append(wj)
                order.append(j)
    perm = np.zeros(len(order), np.int64)
    for new, j in enumerate(order):
        perm[j] = new
    bl = np.array(bl, np.int32)
    # unweighted KJT (values = perm, lengths = bl, keys x y z) permuted to [z, x]
    parts = split_keys(perm, bl, None, batch, 3)
    pv = np.concatenate([parts[2][0], parts[0][0]]).astype(np.int64)
    pl = np.concatenate([parts[2][1], parts[0][1]]).astype(np.int32)
    return [v, g, off, np.array(bv, np.int64), bl, np.array(bw, np.float32), perm, pv, pl]


def compile_plan(compiler, source, plan, work, *flags):
    proc = run([compiler, source, "-o", plan, *flags])
    if proc.returncode != 0:
        fail("ember-compile failed", proc)
    return open(plan).read()


def run_plan(runner, plan, work, arrays, tag):
    npz = os.path.join(work, tag + ".npz")
    np.savez(npz, **arrays)
    outdir = os.path.join(work, tag)
    proc = run([runner, plan, "--inputs", npz, "--output-dir", outdir])
    if proc.returncode != 0:
        fail("ember-run failed", proc)
    names = sorted(os.listdir(outdir))
    return outdir, names


def compare(outdir, names, want):
    if len(names) != len(want):
        fail("expected %d outputs, got %s" % (len(want), names))
    for i, w in enumerate(want):
        got = np.load(os.path.join(outdir, names[i]))
        if got.dtype != w.dtype or got.shape != w.shape:
            fail("output %s is %s %s, the reference %s %s"
                 % (names[i], got.dtype, got.shape, w.dtype, w.shape))
        if not np.allclose(got, w, rtol=1e-5, atol=1e-6):
            fail("output %s differs:\n%s\nvs\n%s" % (names[i], got, w))


def case_ops(compiler, runner, work):
    ts = tables()
    src = os.path.join(work, "kjt_ops.mlir")
    open(src, "w").write(ops_mlir(ts))
    plan = os.path.join(work, "kjt_ops.plan.txt")
    text = compile_plan(compiler, src, plan, work)
    for kernel in ("kjt_split", "kjt_concat", "grouped_embedding_bag", "slice", "concat",
                   "lengths_to_offsets", "cast", "kjt_bucketize", "kjt_permute"):
        if 'kernel: "%s"' % kernel not in text:
            fail("the plan has no %s instruction" % kernel)
    if "kjt_inputs" not in text:
        fail("the KJT argument is not a signature KJT input")
    # Output names are the function's results in order ("output_i" when unnamed).
    for batch, seed in ((4, 1), (1, 2)):
        values, lengths, weights = random_kjt(batch, seed)
        outdir, _ = run_plan(runner, plan, work,
                             {"f.values": values, "f.lengths": lengths, "f.weights": weights},
                             "out%d" % batch)
        names = ["output%d.npy" % i for i in range(9)]
        compare(outdir, names, reference(ts, values, lengths, weights, batch))


OFFSETS_MLIR = """module {{
func.func @main(%vals: tensor<?xi64> {{onnx.name = "vals"}}, %offs: tensor<?xi64> {{onnx.name = "offs"}})
    -> (tensor<?x6xf32>, tensor<?xi64>) {{
{tables}
  %k = ember.kjt.create values(%vals : tensor<?xi64>) offsets(%offs : tensor<?xi64>) -> {k}
  %kt = ember.grouped_lookup %k tables(%t0, %t1) feature_tables = [0, 1]
      column_offsets = [0, 4] pooling = mean : {k}, {tt0}, {tt1}
      -> !ember.keyed_tensor<["a" : 4, "b" : 2], f32>
  %v = ember.keyed_tensor.values %kt : !ember.keyed_tensor<["a" : 4, "b" : 2], f32> -> tensor<?x6xf32>
  %l = ember.kjt.lengths %k : {k} -> tensor<?xi64>
  return %v, %l : tensor<?x6xf32>, tensor<?xi64>
}}
}}
"""


def case_offsets(compiler, runner, work):
    ts = tables(3)
    src = os.path.join(work, "kjt_offsets.mlir")
    open(src, "w").write(OFFSETS_MLIR.format(
        tables="\n".join(table_ops(ts)[:4]), k=kjt_type(["a", "b"], False, "i64"),
        tt0=table_type(0), tt1=table_type(1)))
    plan = os.path.join(work, "kjt_offsets.plan.txt")
    text = compile_plan(compiler, src, plan, work)
    for kernel in ("slice", "sub", "grouped_embedding_bag"):
        if 'kernel: "%s"' % kernel not in text:
            fail("the plan has no %s instruction" % kernel)
    for batch, seed in ((5, 4), (1, 5)):
        values, lengths, _ = random_kjt(batch, seed)
        values = values[:int(lengths[:2 * batch].sum())]  # two keys
        lengths = lengths[:2 * batch].astype(np.int64)
        offs = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        outdir, _ = run_plan(runner, plan, work, {"vals": values, "offs": offs},
                             "out%d" % batch)
        per_key = split_keys(values, lengths, None, batch, 2)
        pooled = []
        for i in range(2):
            s = pool(ts[i], *per_key[i])
            n = np.maximum(per_key[i][1], 1).astype(np.float32)[:, None]
            pooled.append(s / n)
        compare(outdir, ["output0.npy", "output1.npy"],
                [np.concatenate(pooled, axis=1), lengths])


def case_errors(compiler, work):
    def expect(mlir, must):
        src = os.path.join(work, "bad.mlir")
        open(src, "w").write(mlir)
        before = os.listdir(work)
        proc = run([compiler, src, "-o", os.path.join(work, "bad.plan")])
        if proc.returncode != 1 or must not in proc.stderr:
            fail("expected exit 1 with %r" % must, proc)
        left = sorted(set(os.listdir(work)) - set(before))
        if left:
            fail("files left behind: %s" % left)
    vb = '!ember.kjt<["a"], values = i64, lengths = i32, variable_batch>'
    expect("func.func @main(%%f: %s) -> tensor<?xi64> {\n"
           "  %%v = ember.kjt.values %%f : %s -> tensor<?xi64>\n"
           "  return %%v : tensor<?xi64>\n}\n" % (vb, vb), "variable batch")
    ts = tables()
    k = kjt_type(["a"], False)
    kt = '!ember.keyed_tensor<["a" : 4], f32>'
    expect("func.func @main(%%f: %s) -> %s {\n%s\n"
           "  %%kt = ember.embedding_bag_collection %%f tables(%%t0) feature_tables = [0] "
           "pooling = [sum] : %s, %s -> %s\n"
           "  return %%kt : %s\n}\n" % (k, kt, "\n".join(table_ops(ts)[:2]), k, table_type(0),
                                        kt, kt), "func.return")


def main():
    case, compiler, runner, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if case == "ops":
        case_ops(compiler, runner, work)
    elif case == "offsets":
        case_offsets(compiler, runner, work)
    elif case == "errors":
        case_errors(compiler, work)
    else:
        fail("unknown case " + case)
    print("PASS")


if __name__ == "__main__":
    main()
