"""ember.table.ref of tables declared with inline rows (Inputs/table_ref.mlir): compiled
by ember-compile, run by ember-run on random bags (an empty bag included) against numpy;
a table whose rows are in an external file, or absent, is refused naming the table, and
no plan is written.

usage: table_ref_test.py EMBER_COMPILE EMBER_RUN WORKDIR
"""
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg, proc=None):
    print("FAIL:", msg)
    if proc is not None:
        print(proc.stdout, proc.stderr)
    sys.exit(1)


def pooled(table, ids, offsets, mean):
    out = np.zeros((len(offsets), table.shape[1]), np.float32)
    ends = list(offsets[1:]) + [len(ids)]
    for b, (s, e) in enumerate(zip(offsets, ends)):
        if e > s:
            rows = table[ids[s:e]]
            out[b] = rows.mean(0) if mean else rows.sum(0)
    return out


def main():
    compiler, runner, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    source = os.path.join(HERE, "Inputs", "table_ref.mlir")
    plan = os.path.join(work, "m.plan")
    proc = subprocess.run([compiler, source, "-o", plan], capture_output=True, text=True)
    if proc.returncode != 0:
        fail("ember-compile failed", proc)
    users = np.array([[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0], [3.0, 3.5, 4.0],
                      [4.0, 4.5, 5.0]], np.float32)
    items = np.array([[-1.0, 0.0, 1.0], [2.0, -2.0, 0.25], [8.0, 16.0, 32.0]], np.float32)
    gen = np.random.default_rng(3)
    batch = 6
    inputs = {}
    for name, rows in (("user", 5), ("item", 3)):
        lengths = gen.integers(0, 4, size=batch)
        lengths[2] = 0
        inputs[name + "_ids"] = gen.integers(0, rows, size=int(lengths.sum())).astype(np.int64)
        inputs[name + "_offsets"] = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    args = [runner, plan, "--output-dir", os.path.join(work, "out")]
    for name, value in inputs.items():
        path = os.path.join(work, name + ".npy")
        np.save(path, value)
        args += ["--input", name + "=" + path]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        fail("ember-run failed", proc)
    got = np.load(os.path.join(work, "out", "out.npy"))
    want = (pooled(users, inputs["user_ids"], inputs["user_offsets"], False) +
            pooled(items, inputs["item_ids"], inputs["item_offsets"], True))
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-6, atol=1e-6):
        fail("output differs from numpy:\n%s\nvs\n%s" % (got, want))

    text = open(source).read()
    bad_cases = {
        "external": (text.replace(
            "init = dense<[[-1.0, 0.0, 1.0], [2.0, -2.0, 0.25], [8.0, 16.0, 32.0]]> : tensor<3x3xf32>",
            'external("items.bin", 0)'), "table @items has its rows in an external file"),
        "absent": (text.replace(
            " init = dense<[[-1.0, 0.0, 1.0], [2.0, -2.0, 0.25], [8.0, 16.0, 32.0]]> : tensor<3x3xf32>",
            ""), "table @items has no inline rows"),
    }
    for case, (source_text, message) in bad_cases.items():
        if source_text == text:
            fail("the %s case did not change the module" % case)
        path = os.path.join(work, case + ".mlir")
        open(path, "w").write(source_text)
        bad_plan = os.path.join(work, case + ".plan")
        proc = subprocess.run([compiler, path, "-o", bad_plan], capture_output=True, text=True)
        if proc.returncode == 0 or message not in proc.stderr:
            fail("%s: expected an error containing %r" % (case, message), proc)
        if os.path.exists(bad_plan) or os.path.exists(os.path.join(work, case + ".rank0.weights")):
            fail("%s: files were left behind after the error" % case)
    print("table_ref: ok")


if __name__ == "__main__":
    main()
