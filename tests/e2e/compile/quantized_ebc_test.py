"""End to end: an ember.EmbeddingBagCollection over row-wise quantized tables (int8_rowwise,
int4_rowwise, and an f32 table beside them) -> ember-compile -> ember-run, compared with a
numpy reference that dequantizes the rows (value = code * scale + bias) and pools them.

usage: quantized_ebc_test.py CASE EMBER_COMPILE EMBER_RUN WORKDIR

Cases: single (one rank), row_wise, column_wise, table_wise (2 ranks, the tables sharded
so: row blocks of bytes, column shards with their rows' scale and bias). The model and the
reference are tests/lit/onnx/Inputs/make_quantized_model.py's quant_ebc (which the lit test
ember-quantized-ebc.test imports and lowers). Needs /usr/bin/python3 with onnx and numpy
(exit 77, skipped, without onnx).
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "lit", "onnx", "Inputs"))

CASES = {"single": [], "row_wise": ["--world-size", "2", "--sharding", "row_wise"],
         "column_wise": ["--world-size", "2", "--sharding", "column_wise"],
         "table_wise": ["--world-size", "2", "--sharding", "table_wise"]}


def run(cmd):
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        print("FAIL: exit", proc.returncode)
        print("stdout:", proc.stdout)
        print("stderr:", proc.stderr)
        sys.exit(1)
    return proc


def main():
    case, compiler, runner, work = sys.argv[1:5]
    if case not in CASES:
        sys.exit(f"unknown case {case} ({', '.join(CASES)})")
    try:
        import make_quantized_model as mq
    except ImportError as e:  # onnx missing
        print("SKIP:", e)
        sys.exit(77)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    onnx_path, plan = os.path.join(work, "q.onnx"), os.path.join(work, "q.plan")
    with open(onnx_path, "wb") as f:
        f.write(mq.MODELS["quant_ebc"]().SerializeToString())
    run([compiler, onnx_path, "-o", plan, *CASES[case]])
    mq.write_inputs(work)
    out = os.path.join(work, "out")
    run([runner, plan, "--inputs", os.path.join(work, "in.npz"), "--output-dir", out]
        + (["--nproc", "2"] if CASES[case] else []))
    mq.compare(os.path.join(work, "want.npy"), os.path.join(out, "pooled.npy"))
    print("PASS")


if __name__ == "__main__":
    main()
