#!/usr/bin/env bash
# ctest test `torchrec`: tests/python with the venv of scripts/setup-torchrec-venv.sh
# (PyTorch 2.14, TorchRec 1.9, FBGEMM CPU): the whole suite on PyTorch 2.x, and TorchRec's
# stock models exported, compiled and run (test_torchrec*.py). Exits 77 (ctest: skipped)
# with the reason when the venv does not exist.
#
#   tests/python/run-torchrec-venv.sh VENV_DIR [pytest args...]
set -uo pipefail
venv="$1"
shift
if [ ! -x "$venv/bin/python" ]; then
  echo "torchrec: skipped: no venv at $venv (make it with: bash scripts/setup-torchrec-venv.sh)"
  exit 77
fi
if ! "$venv/bin/python" -c "import torchrec, fbgemm_gpu" 2>/dev/null; then
  echo "torchrec: $venv cannot import torchrec / fbgemm_gpu (rerun scripts/setup-torchrec-venv.sh --force)" >&2
  exit 1
fi
cd "$(dirname "$0")/../.."
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider -rs "$@" tests/python
