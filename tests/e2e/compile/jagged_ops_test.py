"""ember.jagged.from_padded (padded_to_jagged) and ember.jagged.to_padded of an MLIR module
(Inputs/jagged_from_padded.mlir): compiled by ember-compile, run by ember-run on random
padded rows and lengths (an empty row, a full row), against numpy; a row longer than the
padded length is a run-time error naming the kernel, with no outputs.

usage: jagged_ops_test.py EMBER_COMPILE EMBER_RUN WORKDIR
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


def run(runner, plan, work, padded, offsets, tag):
    np.save(os.path.join(work, "padded.npy"), padded)
    np.save(os.path.join(work, "offsets.npy"), offsets)
    out = os.path.join(work, "out_" + tag)
    proc = subprocess.run([runner, plan, "--input", "padded=" + os.path.join(work, "padded.npy"),
                           "--input", "offsets=" + os.path.join(work, "offsets.npy"),
                           "--output-dir", out], capture_output=True, text=True)
    return proc, out


def main():
    compiler, runner, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    plan = os.path.join(work, "m.plan")
    proc = subprocess.run([compiler, os.path.join(HERE, "Inputs", "jagged_from_padded.mlir"),
                           "-o", plan], capture_output=True, text=True)
    if proc.returncode != 0:
        fail("ember-compile failed", proc)
    gen = np.random.default_rng(1)
    for batch in (1, 5):
        padded = gen.standard_normal((batch, 3, 2)).astype(np.float32)
        lengths = gen.integers(0, 4, size=batch)
        lengths[0] = 0 if batch > 1 else 3
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        proc, out = run(runner, plan, work, padded, offsets, str(batch))
        if proc.returncode != 0:
            fail("ember-run failed at batch %d" % batch, proc)
        values = np.concatenate([padded[b, :lengths[b]] for b in range(batch)])
        repadded = np.full((batch, 4, 2), -1.0, np.float32)
        for b in range(batch):
            repadded[b, :lengths[b]] = padded[b, :lengths[b]]
        for name, want in (("values", values), ("repadded", repadded)):
            got = np.load(os.path.join(out, name + ".npy"))
            if got.shape != want.shape or not np.array_equal(got, want):
                fail("%s at batch %d: %s\nvs\n%s" % (name, batch, got, want))
    proc, out = run(runner, plan, work, np.zeros((2, 3, 2), np.float32),
                    np.array([0, 4, 5], np.int64), "long")
    if proc.returncode == 0 or "padded_to_jagged" not in proc.stderr:
        fail("a row longer than the padding was not refused", proc)
    if os.path.exists(out) and os.listdir(out):
        fail("outputs written after an error")
    print("PASS")


if __name__ == "__main__":
    main()
