"""ember.export -> ember-compile -> ember-run, for the end-to-end pytest cases.

The tools are found through EMBER_COMPILE / EMBER_RUN (set by ctest) or in build/release/bin;
without them the e2e tests skip and say why.
"""

import os
import subprocess

import numpy as np
import pytest

import ember

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


def tool(env_name: str, binary: str) -> str:
    path = os.environ.get(env_name) or os.path.join(REPO, "build", "release", "bin", binary)
    if not os.access(path, os.X_OK):
        pytest.skip(f"{binary} not built (set {env_name} or build the release preset)")
    return path


def compile_and_run(model, example_inputs, run_inputs, tmp_path, name="model"):
    """Exports ``model`` on ``example_inputs``, compiles it, runs the plan on ``run_inputs``
    (a dict of arrays as ember-run reads them: dense by name, KJTs as NAME.values / NAME.lengths
    / NAME.weights) and returns the outputs in signature order as numpy arrays."""
    compiler, runner = tool("EMBER_COMPILE", "ember-compile"), tool("EMBER_RUN", "ember-run")
    onnx_path = str(tmp_path / f"{name}.onnx")
    plan_path = str(tmp_path / f"{name}.plan")
    ember.export(model, example_inputs, onnx_path)
    proc = subprocess.run([compiler, onnx_path, "-o", plan_path], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    npz = str(tmp_path / f"{name}.inputs.npz")
    np.savez(npz, **{k: np.ascontiguousarray(v) for k, v in run_inputs.items()})
    out_dir = tmp_path / f"{name}.out"
    proc = subprocess.run([runner, plan_path, "--inputs", npz, "--output-dir", str(out_dir)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    outputs = []
    i = 0
    while (out_dir / f"output_{i}.npy").exists():
        outputs.append(np.load(out_dir / f"output_{i}.npy"))
        i += 1
    return outputs


def kjt_arrays(name, kjt):
    arrays = {f"{name}.values": kjt.values().numpy(), f"{name}.lengths": kjt.lengths().numpy()}
    if kjt.weights_or_none() is not None:
        arrays[f"{name}.weights"] = kjt.weights().numpy()
    return arrays
