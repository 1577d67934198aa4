"""python -m ember compile|run and the ember-compile / ember-run entry points
(ember/_commands.py): arguments and exit status pass through; a missing binary is a
clear error, not a traceback."""

import os
import subprocess
import sys

import pytest

from ember import _commands

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.join(HERE, "..", "..", "compiler", "frontends", "torch")
NO_TORCH = os.path.join(HERE, "no_torch")  # a torch package whose import fails


def run_module(args, env_update, cwd=None):
    """python -m ember ARGS in a process where torch cannot be imported: the commands
    need no torch (and importing it would take seconds per call)."""
    env = dict(os.environ)
    source = [] if os.environ.get("EMBER_TEST_INSTALLED") == "1" else [PKG]
    env["PYTHONPATH"] = os.pathsep.join([NO_TORCH, *source, env.get("PYTHONPATH", "")])
    env.update(env_update)
    for key, value in list(env.items()):
        if value is None:
            del env[key]
    return subprocess.run([sys.executable, "-m", "ember", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_compile_passes_arguments_and_status(tmp_path):
    compiler = os.environ.get("EMBER_COMPILE")
    if not compiler:
        pytest.skip("EMBER_COMPILE is not set (the build's ember-compile)")
    ok = run_module(["compile", "--version"], {})
    assert ok.returncode == 0 and "LLVM" in ok.stdout
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    failed = run_module(["compile", str(bad), "-o", str(tmp_path / "x.plan")], {})
    assert failed.returncode != 0
    assert "bad.onnx" in failed.stderr
    assert not (tmp_path / "x.plan").exists()


def test_run_passes_arguments(tmp_path):
    if not os.environ.get("EMBER_RUN"):
        pytest.skip("EMBER_RUN is not set (the build's ember-run)")
    missing = run_module(["run", str(tmp_path / "nothing.plan")], {})
    assert missing.returncode != 0
    assert "nothing.plan" in missing.stderr


def test_missing_binary_is_a_clear_error(tmp_path):
    if os.path.exists(os.path.join(os.path.dirname(_commands.__file__), "bin")):
        pytest.skip("an installed wheel: its binaries are there")
    proc = run_module(["compile", "--version"], {"EMBER_COMPILE": None})
    assert proc.returncode == 127
    assert "ember-compile is not installed" in proc.stderr
    assert "Traceback" not in proc.stderr
    with pytest.raises(FileNotFoundError, match="EMBER_RUN"):
        old = os.environ.pop("EMBER_RUN", None)
        try:
            _commands.binary("ember-run")
        finally:
            if old is not None:
                os.environ["EMBER_RUN"] = old
