"""ember.all_reduce and ember.all_gather of a hand-partitioned 2-rank module (MLIR input):
compiled by ember-compile, run by ember-run --nproc 2 on one global batch (split over the
ranks, outputs gathered in rank order), against numpy; and the reductions the runtime has
no kernel for are refused by the compiler with a clear error and no plan.

usage: collectives_test.py CASE EMBER_COMPILE EMBER_RUN WORKDIR   (CASE: run | errors)
"""
import os
import shutil
import subprocess
import sys

import numpy as np

RANK = '''
  func.func @main_rank{r}(%x: tensor<?x4xf32> {{onnx.dim_params = ["B", ""], onnx.name = "x"}})
      -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) attributes {{ember.rank = {r} : i64}} {{
    %s = ember.all_reduce sum %x group<ranks = [0, 1]> : tensor<?x4xf32> -> !ember.awaitable<tensor<?x4xf32>>
    %m = ember.all_reduce {reduce} %x group<ranks = [0, 1]> : tensor<?x4xf32> -> !ember.awaitable<tensor<?x4xf32>>
    %g = ember.all_gather %x group<ranks = [0, 1]> : tensor<?x4xf32> -> !ember.awaitable<tensor<?x4xf32>>
    %ws = ember.wait %s : !ember.awaitable<tensor<?x4xf32>>
    %wm = ember.wait %m : !ember.awaitable<tensor<?x4xf32>>
    %wg = ember.wait %g : !ember.awaitable<tensor<?x4xf32>>
    return %ws, %wm, %wg : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  }}'''


def module(reduce):
    return ("module attributes {ember.world_size = 2 : i64} {"
            + "".join(RANK.format(r=r, reduce=reduce) for r in (0, 1)) + "\n}\n")


def fail(msg, proc=None):
    print("FAIL:", msg)
    if proc is not None:
        print(proc.stdout, proc.stderr)
    sys.exit(1)


def main():
    case, compiler, runner, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    src, plan = os.path.join(work, "m.mlir"), os.path.join(work, "m.plan")
    if case == "errors":
        for reduce in ("mean", "min"):
            open(src, "w").write(module(reduce))
            proc = subprocess.run([compiler, src, "-o", plan], capture_output=True, text=True)
            if proc.returncode == 0 or "supports sum and max reductions" not in proc.stderr:
                fail("all_reduce %s was not refused clearly" % reduce, proc)
            if os.path.exists(plan):
                fail("a refused compile left " + plan)
        print("PASS")
        return
    open(src, "w").write(module("max"))
    proc = subprocess.run([compiler, src, "-o", plan], capture_output=True, text=True)
    if proc.returncode != 0:
        fail("ember-compile failed", proc)
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    np.save(os.path.join(work, "x.npy"), x)
    out = os.path.join(work, "out")
    proc = subprocess.run([runner, plan, "--nproc", "2", "--input",
                           "x=" + os.path.join(work, "x.npy"), "--output-dir", out],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        fail("ember-run --nproc 2 failed", proc)
    got = [np.load(os.path.join(out, "output%d.npy" % i)) for i in range(3)]
    mine = [x[:3], x[3:]]  # the global batch of 6, 3 rows per rank
    want_sum = np.concatenate([mine[0] + mine[1]] * 2)
    want_max = np.concatenate([np.maximum(mine[0], mine[1])] * 2)
    want_gather = np.concatenate([x, x])
    for name, g, w in (("sum", got[0], want_sum), ("max", got[1], want_max),
                       ("gather", got[2], want_gather)):
        if g.shape != w.shape or not np.allclose(g, w, rtol=1e-6, atol=1e-6):
            fail("%s: %s\nvs\n%s" % (name, g, w))
    print("PASS")


if __name__ == "__main__":
    main()
