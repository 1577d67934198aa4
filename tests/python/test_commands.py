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


def test_export_arguments_are_checked_before_torch(tmp_path):
    """python -m ember export: --help and bad arguments answer without importing torch
    (torch hidden: importing it would fail), with argparse's status 2 for what it
    refuses and 1 for the values the exporter refuses; valid arguments without torch
    are a clear error, not a traceback, and write nothing."""
    out = str(tmp_path / "m.onnx")
    usage = run_module(["export", "--help"], {})
    assert usage.returncode == 0 and "--external-data-threshold" in usage.stdout, usage.stderr
    cases = [
        (["export", "mod:make", out, "--external-data", "sometimes"], 2, "invalid choice"),
        (["export", "mod:make", out, "--external-data-threshold", "ten"], 2, "invalid int value"),
        (["export", "mod:make"], 2, "required: output"),
        (["export", "mod:make", out, "--external-data-threshold", "-5"], 1,
         "--external-data-threshold must be >= 0, got -5"),
        (["export", "make", out], 1, "'make' is not of the form module:function"),
        (["export", "mod:", out], 1, "'mod:' is not of the form module:function"),
        (["export", "mod:make", out, "--inputs", ":inputs"], 1,
         "':inputs' is not of the form module:function"),
        (["export", "mod:make", out], 1, "the exporter needs torch"),
    ]
    for args, status, message in cases:
        proc = run_module(args, {}, cwd=str(tmp_path))
        assert proc.returncode == status and message in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr, (args, proc.stderr)
    assert os.listdir(tmp_path) == []


def _python(script, hide_torch):
    env = dict(os.environ)
    source = [] if os.environ.get("EMBER_TEST_INSTALLED") == "1" else [PKG]
    env["PYTHONPATH"] = os.pathsep.join([*([NO_TORCH] if hide_torch else []), *source,
                                         env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)


def test_import_ember_imports_neither_torch_nor_the_runtime():
    """`import ember` is cheap (the command line, ember-compile, ember-run, a serving
    process): torch and the runtime are imported on the first use of one of their names."""
    proc = _python("import sys, ember\n"
                   "print(sorted(m for m in ('torch', 'ember.runtime', 'ember.export')\n"
                   "             if m in sys.modules))\n", hide_torch=False)
    assert proc.returncode == 0 and proc.stdout == "[]\n", (proc.stdout, proc.stderr)
    # Without torch: the tracer's names are absent (AttributeError, so hasattr is False).
    proc = _python("import ember\n"
                   "try:\n"
                   "    ember.trace\n"
                   "except AttributeError as e:\n"
                   "    assert 'need torch' in str(e), e\n"
                   "else:\n"
                   "    raise AssertionError('ember.trace without torch')\n"
                   "assert not hasattr(ember, 'export')\n"
                   "assert ember.__all__ == ['EmberError', 'Session'], ember.__all__\n"
                   "assert 'Session' in dir(ember) and 'trace' not in dir(ember)\n"
                   "print('ok')\n", hide_torch=True)
    assert proc.returncode == 0 and proc.stdout == "ok\n", (proc.stdout, proc.stderr)
