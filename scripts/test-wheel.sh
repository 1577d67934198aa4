#!/usr/bin/env bash
# The wheel stage of README's test command: builds the `ember` wheel
# (pyproject.toml, scikit-build-core) from the release build tree, installs it
# into a fresh venv and runs the DLRM example from it, outside the source tree:
# `python -m ember compile`, the `ember-run` entry point, `ember.Session`, and
# `python -m ember export` of a small model, each checked against torch; then
# the Python runtime tests (tests/python: runtime API, pipelined runs on 2
# ranks, commands) with the installed package (EMBER_TEST_INSTALLED=1).
#
#   bash scripts/test-wheel.sh          (after cmake --build --preset release)
#
# The builder venv (build/wheel-venv) holds the pinned scikit-build-core; the
# test venv sees Debian's torch 1.13, numpy and onnx (--system-site-packages)
# and gets the wheel with --no-index: nothing else is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
builder=build/wheel-venv
pins='scikit-build-core==1.1.2
pathspec==1.1.1
packaging==26.4'
if [ ! -f "$builder/.ember-pins" ] || [ "$(cat "$builder/.ember-pins")" != "$pins" ] \
    || ! "$builder/bin/python" -c 'import scikit_build_core' 2>/dev/null; then
  rm -rf "$builder"
  /usr/bin/python3 -m venv "$builder"
  printf '%s\n' "$pins" > "$builder/requirements.txt"
  "$builder/bin/python" -m pip install -q --disable-pip-version-check --no-input \
    -r "$builder/requirements.txt"
  printf '%s\n' "$pins" > "$builder/.ember-pins"
fi

work=$(mktemp -d /tmp/ember-wheel-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "== building the wheel (reusing build/release)"
start=$(date +%s)
# build-dir: the release tree, so that only what changed is rebuilt; the
# defines keep that tree's tests and benchmarks configured.
"$builder/bin/python" -m pip wheel -q --disable-pip-version-check --no-build-isolation \
  --no-deps -w "$work/dist" --config-settings build-dir=build/release \
  --config-settings cmake.define.EMBER_BUILD_TESTS=ON .
wheel=$(ls "$work"/dist/ember-*.whl)
echo "   $(basename "$wheel") ($(( $(stat -c %s "$wheel") / 1024 / 1024 )) MiB) in $(( $(date +%s) - start )) s"

echo "== installing it into a fresh venv"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check --no-index --no-deps "$wheel"
export PATH="$work/venv/bin:$PATH"
unset PYTHONPATH EMBER_COMPILE EMBER_RUN EMBER_PYTHON_LIB
py="$work/venv/bin/python"
cd "$work" # nothing of the source tree on sys.path from here on

"$py" - <<'PY'
import ember, ember.runtime
site = ember.__file__
assert "/venv/" in site, f"ember comes from {site}, not the installed wheel"
assert "/venv/" in ember.runtime._rt.__file__, ember.runtime._rt.__file__
print("   ember from", site.rsplit("/", 2)[0])
PY

echo "== the DLRM example from the wheel"
"$py" -W ignore "$repo/examples/dlrm/export.py" dlrm --batch 64 >/dev/null
"$py" -m ember compile dlrm/model.onnx -o dlrm/dlrm.plan --max-batch 64
ember-run dlrm/dlrm.plan --inputs dlrm/inputs.npz --output-dir dlrm/out --repeat 3 >/dev/null
"$py" - <<'PY'
import glob
import numpy as np
import ember
expected = np.load("dlrm/expected.npy")
out = np.load(glob.glob("dlrm/out/*.npy")[0])
err = float(np.abs(out.reshape(expected.shape) - expected).max())
assert err < 1e-5, f"ember-run: max abs error {err}"
inputs = dict(np.load("dlrm/inputs.npz"))
session = ember.Session("dlrm/dlrm.plan", threads=2)
got = session.run(inputs)
err2 = float(np.abs(next(iter(got.values())).reshape(expected.shape) - expected).max())
assert err2 < 1e-5, f"ember.Session: max abs error {err2}"
print(f"   ember-run and ember.Session match torch (max abs error {max(err, err2):.2e})")
PY

echo "== python -m ember export, from the wheel"
cat > tiny_model.py <<'PY'
import torch, torch.nn as nn
class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(100, 8, mode="sum")
        self.mlp = nn.Linear(8 + 4, 1)
    def forward(self, dense, ids, offsets):
        return torch.sigmoid(self.mlp(torch.cat([dense, self.bag(ids, offsets)], 1)))
def make():
    torch.manual_seed(0)
    ids = torch.tensor([1, 5, 99, 7, 0]); offsets = torch.tensor([0, 2, 2])
    return Tiny().eval(), (torch.randn(3, 4), ids, offsets)
PY
"$py" -m ember export tiny_model:make tiny.onnx >/dev/null
ember-compile tiny.onnx -o tiny.plan
"$py" - <<'PY'
import numpy as np, torch
import ember, tiny_model
model, (dense, ids, offsets) = tiny_model.make()
session = ember.Session("tiny.plan")
names = [t["name"] for t in session.signature["inputs"]]
out = session.run(dict(zip(names, [dense, ids, offsets])))
err = float(np.abs(next(iter(out.values())) - model(dense, ids, offsets).detach().numpy()).max())
assert err < 1e-5, f"max abs error {err}"
print(f"   exported, compiled and run from the wheel (max abs error {err:.2e})")
PY
echo "== the Python runtime tests against the installed wheel"
EMBER_TEST_INSTALLED=1 EMBER_COMPILE="$work/venv/bin/ember-compile" \
  EMBER_RUN="$work/venv/bin/ember-run" "$py" -m pytest -q -p no:cacheprovider \
  "$repo/tests/python/test_runtime_api.py" "$repo/tests/python/test_runtime_pipelined.py" \
  "$repo/tests/python/test_commands.py"
echo "test-wheel: passed"
