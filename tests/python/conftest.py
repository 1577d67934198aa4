import os
import sys

import pytest

# The source tree's package, unless EMBER_TEST_INSTALLED=1 asks to test the installed
# one (scripts/test-wheel.sh runs the runtime tests against the wheel so).
_PACKAGE_ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "compiler", "frontends", "torch")
if os.environ.get("EMBER_TEST_INSTALLED") != "1" and \
        os.path.abspath(_PACKAGE_ROOT) not in [os.path.abspath(p) for p in sys.path]:
    sys.path.insert(0, os.path.abspath(_PACKAGE_ROOT))

import torch  # noqa: E402


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def pytest_configure(config):
    config.addinivalue_line("markers", "torchrec: needs TorchRec (skipped when it is not importable)")
