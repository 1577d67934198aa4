#!/usr/bin/python3
"""Writes the seed inputs of fuzz/corpus/<target>/ (seed-*; regression
inputs of fixed findings are named regress-* and are kept by hand).

usage: /usr/bin/python3 fuzz/make_corpus.py [--build build/release] [TARGET ...]

Seeds come from the repository's test inputs: the lit tests' MLIR cases, the
sharding planner's JSON inputs, ONNX models and plans the release build's
tests made (run `ctest --preset release` first: build/release/e2e_work and
build/release/tests/lit/.../Output), plans written by ember-make-test-plan and
ember-compile, and small .npy/.npz files written here with numpy. Every seed
is kept under 64 KiB. Re-running replaces the seed-* files only.
"""
import argparse
import glob
import hashlib
import io
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
MAX_SEED = 64 * 1024
PROTO_DIR = os.path.join(ROOT, "runtime", "src")
PROTO = os.path.join(PROTO_DIR, "plan", "ember_plan.proto")


def write_seeds(target, seeds):
    """seeds: list of (name, bytes); replaces the target's seed-* files."""
    out = os.path.join(CORPUS, target)
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "seed-*")):
        os.remove(old)
    seen = set()
    kept = 0
    for name, data in seeds:
        if len(data) > MAX_SEED:
            continue
        digest = hashlib.sha1(data).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60]
        with open(os.path.join(out, "seed-%s-%s" % (safe, digest[:8])), "wb") as f:
            f.write(data)
        kept += 1
    print("%s: %d seeds" % (target, kept))


def npy_bytes(array, version=None):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asanyarray(array), version=version,
                              allow_pickle=False)
    return buf.getvalue()


def npy_seeds():
    seeds = [
        ("f32", npy_bytes(np.arange(6, dtype=np.float32).reshape(2, 3))),
        ("f16", npy_bytes(np.ones((3,), dtype=np.float16))),
        ("f64_scalar", npy_bytes(np.float64(2.5))),
        ("i8", npy_bytes(np.array([-1, 2, 3], dtype=np.int8))),
        ("u8", npy_bytes(np.array([[1, 2], [3, 4]], dtype=np.uint8))),
        ("i32", npy_bytes(np.array([7, 8, 9], dtype=np.int32))),
        ("i64_empty", npy_bytes(np.zeros((0, 4), dtype=np.int64))),
        ("bool", npy_bytes(np.array([True, False, True]))),
        ("v2", npy_bytes(np.ones((2, 2), dtype=np.float32), version=(2, 0))),
        ("v3", npy_bytes(np.ones((1, 1, 2), dtype=np.int32), version=(3, 0))),
        ("big_endian", npy_bytes(np.ones(2, dtype=">f4"))),
        ("fortran", npy_bytes(np.asfortranarray(np.ones((2, 3), np.float32)))),
        ("rank8", npy_bytes(np.zeros((1,) * 8, dtype=np.float32))),
    ]
    return seeds


def npz_bytes(arrays, compressed):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def npz_seeds():
    small = {"dense": np.arange(8, dtype=np.float32).reshape(2, 4),
             "sparse.values": np.array([1, 2, 3], dtype=np.int64),
             "sparse.lengths": np.array([1, 0, 2, 0, 0, 0], dtype=np.int64)}
    seeds = [("stored", npz_bytes(small, False)),
             ("deflated", npz_bytes(small, True)),
             ("empty", npz_bytes({}, False)),
             ("one_bool", npz_bytes({"b": np.array([True])}, True))]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        with zf.open("x.npy", "w", force_zip64=True) as f:
            f.write(npy_bytes(np.ones(3, np.float32)))
    seeds.append(("zip64", buf.getvalue()))
    return seeds


def run(cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)


def rename_weights(plan_path, text, new_base):
    """The plan's weights files renamed from <base>.rankN.weights to
    <new_base>.rankN.weights (the fuzz target writes model.rank0.weights)."""
    if text:
        with open(plan_path) as f:
            t = f.read()
        return re.sub(r'path: "[^"]*\.rank(\d+)\.weights"',
                      r'path: "%s.rank\1.weights"' % new_base, t).encode()
    with open(plan_path, "rb") as f:
        decoded = subprocess.run(
            ["protoc", "--proto_path=" + PROTO_DIR,
             "--decode=ember.plan.Plan", PROTO],
            input=f.read(), stdout=subprocess.PIPE, check=True).stdout.decode()
    decoded = re.sub(r'path: "[^"]*\.rank(\d+)\.weights"',
                     r'path: "%s.rank\1.weights"' % new_base, decoded)
    return subprocess.run(
        ["protoc", "--proto_path=" + PROTO_DIR, "--encode=ember.plan.Plan",
         PROTO], input=decoded.encode(), stdout=subprocess.PIPE,
        check=True).stdout


def plan_seed(flags, world, plan, weights):
    return bytes([flags, world]) + struct.pack("<I", len(plan)) + plan + weights


def plan_seeds(build):
    seeds = []
    tmp = tempfile.mkdtemp()
    try:
        run([os.path.join(build, "bin", "ember-make-test-plan"), tmp, "3"])
        with open(os.path.join(tmp, "dlrm.rank0.weights"), "rb") as f:
            w = f.read()
        plan = rename_weights(os.path.join(tmp, "dlrm.plan"), False, "model")
        text = rename_weights(os.path.join(tmp, "dlrm.plan.txt"), True, "model")
        seeds += [("dlrm", plan_seed(0, 0, plan, w)),
                  ("dlrm_checksum", plan_seed(1, 0, plan, w)),
                  ("dlrm_run_b2", plan_seed(4 | (2 << 4), 0, plan, w)),
                  ("dlrm_text", plan_seed(2, 0, text, w)),
                  ("dlrm_text_run", plan_seed(2 | 4 | (1 << 4), 0, text, w))]
        compile_ = os.path.join(build, "bin", "ember-compile")
        models = sorted(set(
            glob.glob(os.path.join(build, "e2e_work", "*", "model.onnx")) +
            glob.glob(os.path.join(build, "e2e_work", "*", "b1", "model.onnx")) +
            glob.glob(os.path.join(build, "e2e_work", "*", "q.onnx"))))
        variants = [("", []), ("mb8", ["--max-batch", "8"]),
                    ("w2", ["--world-size", "2"])]
        seen = set()
        for model in models:
            with open(model, "rb") as f:
                digest = hashlib.sha1(f.read()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            label = os.path.basename(os.path.dirname(model))
            if label == "b1":
                label = os.path.basename(os.path.dirname(os.path.dirname(model)))
            for tag, flags in variants:
                out = os.path.join(tmp, "c")
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                try:
                    run([compile_, model, "-o", os.path.join(out, "model.plan")]
                        + flags, stderr=subprocess.DEVNULL)
                except subprocess.CalledProcessError:
                    continue
                with open(os.path.join(out, "model.plan"), "rb") as f:
                    plan = f.read()
                with open(os.path.join(out, "model.rank0.weights"), "rb") as f:
                    w = f.read()
                world = 1 if tag == "w2" else 0
                seeds.append(("%s_%s" % (label, tag or "plain"),
                              plan_seed(4 | (1 << 4), world, plan, w)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return seeds


def session_seed(flags, faults, batch, lengths, ids, weights_mode=0,
                 weights=(), dense=()):
    """fuzz_session_run's request encoding (see Request::read)."""
    b = bytes([flags, faults, batch, 0, 0, 0]) + bytes(lengths) + bytes([0])
    b += bytes(ids) + bytes([weights_mode]) + bytes(weights) + bytes(dense)
    return b


def session_seeds():
    # dlrm: F = 3 keys, B = 2: 6 lengths; the ids are taken modulo rows + 1.
    dlrm = dict(lengths=[1, 2, 0, 1, 3, 1], ids=[3, 1, 4, 9, 2, 6, 5, 0],
                dense=[8, 16, 250, 4, 0, 1, 2, 3])
    weighted = dict(lengths=[2, 1, 0, 1], ids=[1, 6, 2, 0], weights_mode=0,
                    weights=[16, 8, 4, 32],
                    dense=list(range(12)))
    return [
        ("dlrm_cpp", session_seed(0, 0, 2, **dlrm)),
        ("dlrm_c", session_seed(2, 0, 2, **dlrm)),
        ("dlrm_offsets", session_seed(4, 0, 2, **dlrm)),
        ("dlrm_warning_bad_id", session_seed(8, 0, 2, dlrm["lengths"],
                                             [3, 1, 4, 10, 2, 6, 5, 0],
                                             dense=dlrm["dense"])),
        ("dlrm_batch0", session_seed(0, 0, 0, [], [])),
        ("dlrm_extra_input", session_seed(0, 1, 2, **dlrm)),
        ("weighted_cpp", session_seed(1, 0, 2, **weighted)),
        ("weighted_c", session_seed(3, 0, 2, **weighted)),
        ("weighted_offsets", session_seed(5, 0, 2, **weighted)),
    ]


def sharding_seeds():
    seeds = []
    inputs = os.path.join(ROOT, "tests", "lit", "passes", "Inputs")
    for path in sorted(glob.glob(os.path.join(inputs, "plan-sharding-*.json"))):
        with open(path, "rb") as f:
            text = f.read()
        name = os.path.basename(path)
        selector = 0 if "topology" in name else 1 if "stats" in name else 2
        seeds.append((name, bytes([selector]) + text))
    seeds.append(("stats_tables", b"\x01" + b'{"tables": {"t_user": '
                  b'{"pooling_factor": 3}}, "features": {"f_item": '
                  b'{"pooling_factor": 0.5}}}'))
    seeds.append(("plan_dp", b"\x02" + b'{"t_ctx": {"sharding_type": '
                  b'"data_parallel", "compute_kernel": "dense", "ranks": '
                  b'[0, 1, 2, 3]}}'))
    seeds.append(("plan_cw", b"\x02" + b'{"t_user": {"sharding_type": '
                  b'"column_wise", "compute_kernel": "fused", "ranks": [0, 1],'
                  b' "sharding_spec": {"shards": [{"shard_offsets": [0, 0], '
                  b'"shard_sizes": [1000, 8], "placement": "rank:0/cuda:0"}, '
                  b'{"shard_offsets": [0, 8], "shard_sizes": [1000, 8], '
                  b'"placement": "rank:1/cuda:1"}]}}}'))
    for text in [b"t_user=row_wise", b"t_item=table_wise@3",
                 b"t_ctx=auto:fused_uvm_caching", b"t_user=column_wise@0/1",
                 b"t_user=table_row_wise:fused@0/1"]:
        seeds.append(("override", b"\x03" + text))
    for text in [b"auto", b"row_wise", b"data_parallel"]:
        seeds.append(("choice", b"\x04" + text))
    return seeds


def mlir_seeds():
    seeds = []
    files = sorted(glob.glob(os.path.join(ROOT, "tests", "lit", "dialect", "*.mlir")) +
                   glob.glob(os.path.join(ROOT, "tests", "lit", "passes", "*.mlir")))
    for path in files:
        with open(path) as f:
            text = f.read()
        for i, case in enumerate(re.split(r"^// -----\s*$", text, flags=re.M)):
            lines = [l for l in case.splitlines()
                     if not re.match(r"\s*//\s*(RUN|CHECK|expected-)", l)]
            body = "\n".join(lines).strip() + "\n"
            if len(body) > 8:
                seeds.append(("%s_%d" % (os.path.basename(path)[:-5], i),
                              body.encode()))
    return seeds


def onnx_seeds(build):
    seeds = []
    paths = sorted(set(
        glob.glob(os.path.join(build, "e2e_work", "**", "*.onnx"), recursive=True) +
        glob.glob(os.path.join(build, "tests", "lit", "**", "*.onnx"),
                  recursive=True)))
    for path in paths:
        if os.path.getsize(path) > 24 * 1024:
            continue
        with open(path, "rb") as f:
            data = f.read()
        name = os.path.basename(path)[:-5]
        seeds.append((name, b"\x00" + data))
        seeds.append((name + "_nocheck", b"\x01" + data))
    return seeds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("targets", nargs="*")
    args = parser.parse_args()
    makers = {
        "fuzz_npy": npy_seeds,
        "fuzz_npz": npz_seeds,
        "fuzz_plan_loader": lambda: plan_seeds(args.build),
        "fuzz_session_run": session_seeds,
        "fuzz_sharding_json": sharding_seeds,
        "fuzz_mlir_parse": mlir_seeds,
        "fuzz_onnx_import": lambda: onnx_seeds(args.build),
    }
    for target in args.targets or sorted(makers):
        if target not in makers:
            sys.exit("unknown target " + target)
        write_seeds(target, makers[target]())


if __name__ == "__main__":
    main()
