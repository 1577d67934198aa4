"""Progress of ember.export on stderr (ember/_progress.py; docs/runtime.md, "Progress"):
the same text as the C++ tools, one line per step when not a terminal (none for quick
steps), a tqdm bar on a terminal (lines without tqdm), --quiet / EMBER_QUIET=1, bad input."""

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import pytest

from ember import _progress

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.join(HERE, "..", "..", "compiler", "frontends", "torch")

FACTORY = '''
import torch, torch.nn as nn

class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(4, 3)
        self.bags = nn.EmbeddingBag(1000, 3, mode="sum")

    def forward(self, x, ids, offsets):
        return self.dense(x) + self.bags(ids, offsets)

def make():
    torch.manual_seed(0)
    return Small(), (torch.randn(2, 4), torch.tensor([1, 2, 3]), torch.tensor([0, 1]))
'''

# What each step prints when not a terminal (EMBER_PROGRESS_MIN_SECONDS=0).
LINES = [r"ember export: tracing Small: done in [0-9.]+ s",
         r"ember export: converting: [0-9]+ items in [0-9.]+ s \([0-9.]+/s\)",
         r"ember export: writing small\.onnx: [0-9.]+ [kM]?B in [0-9.]+ s \([0-9.]+ [kMG]?B/s\)"]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    monkeypatch.delenv("EMBER_QUIET", raising=False)
    monkeypatch.delenv("EMBER_PROGRESS_MIN_SECONDS", raising=False)
    _progress.set_quiet(False)
    yield
    _progress.set_quiet(False)


def environment(tmp_path, **extra):
    (tmp_path / "progress_factory.py").write_text(FACTORY)
    env = {k: v for k, v in os.environ.items()
           if k not in ("EMBER_QUIET", "EMBER_PROGRESS_MIN_SECONDS")}
    env["PYTHONPATH"] = os.pathsep.join([PKG, str(tmp_path), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def export_command(*flags):
    return [sys.executable, "-m", "ember", "export", "progress_factory:make", "small.onnx", *flags]


def on_terminal(cmd, env, cwd):
    """Runs cmd with its stdio on a pseudo-terminal; (status, what it wrote)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    out = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        out += data
    os.close(master)
    return proc.wait(timeout=120), out.decode(errors="replace")


def test_text_is_the_tools_text():
    # The same figures as tests/unit/runtime/progress_test.cpp (the C++ library).
    assert _progress.format_bytes(999) == "999 B"
    assert _progress.format_bytes(1200) == "1.20 kB"
    assert _progress.format_bytes(45_600_000) == "45.6 MB"
    assert _progress.format_bytes(8_600_000_000) == "8.60 GB"
    assert _progress.format_duration(7.9) == "7.9 s"
    assert _progress.format_duration(125) == "2 min 05 s"
    assert _progress.format_duration(3720) == "1 h 02 min"
    assert (_progress.format_summary("writing weights", 8_600_000_000, 8_600_000_000, "bytes",
                                     7.9, program="ember-compile")
            == "ember-compile: writing weights: 8.60 GB in 7.9 s (1.09 GB/s)")
    assert (_progress.format_summary("writing weights", 4_300_000_000, 8_600_000_000, "bytes",
                                     7.9, program="ember-compile")
            == "ember-compile: writing weights: 4.30 GB of 8.60 GB in 7.9 s (544 MB/s), "
               "incomplete")
    assert (_progress.format_summary("running passes", 14, 14, "items", 3.5,
                                     program="ember-compile")
            == "ember-compile: running passes: 14 items in 3.5 s (4.00/s)")
    assert (_progress.format_summary("loading model.plan", 1, 1, "items", 3.5,
                                     program="ember-run")
            == "ember-run: loading model.plan: done in 3.5 s")


def test_lines_when_not_a_terminal(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setenv("EMBER_PROGRESS_MIN_SECONDS", "0")
    with _progress.Phase("writing x.onnx", 3000, stream=stream) as phase:
        phase.advance(1000)
        phase.advance(2000)
    with _progress.Phase("stopped early", 4, "items", stream=stream) as phase:
        phase.advance(1)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert re.fullmatch(r"ember export: writing x\.onnx: 3\.00 kB in [0-9.]+ s "
                        r"\([0-9.]+ [kMG]?B/s\)", lines[0]), lines[0]
    assert re.fullmatch(r"ember export: stopped early: 1 item of 4 in [0-9.]+ s "
                        r"\([0-9.]+/s\), incomplete", lines[1]), lines[1]


def test_quick_steps_are_silent_unless_large():
    stream = io.StringIO()
    with _progress.Phase("quick", 1000, stream=stream) as phase:
        phase.advance(1000)
    assert stream.getvalue() == ""
    with _progress.Phase("large", 2_000_000_000, stream=stream) as phase:
        phase.advance(2_000_000_000)  # counted, not written
    assert re.fullmatch(r"ember export: large: 2\.00 GB in [0-9.]+ s \(.*\)\n",
                        stream.getvalue()), stream.getvalue()


def test_quiet_and_bad_input(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setenv("EMBER_PROGRESS_MIN_SECONDS", "0")
    _progress.set_quiet(True)
    with _progress.Phase("writing", 2_000_000_000, stream=stream) as phase:
        phase.advance(2_000_000_000)
    _progress.set_quiet(False)
    monkeypatch.setenv("EMBER_QUIET", "1")
    with _progress.Phase("writing", 2_000_000_000, stream=stream) as phase:
        phase.advance(2_000_000_000)
    assert stream.getvalue() == ""
    monkeypatch.setenv("EMBER_QUIET", "0")
    assert not _progress.is_quiet()
    with pytest.raises(ValueError, match="unit must be 'bytes' or 'items', not 'rows'"):
        _progress.Phase("x", 1, "rows")
    for bad in ("soon", "-1", "nan", "inf"):
        monkeypatch.setenv("EMBER_PROGRESS_MIN_SECONDS", bad)
        assert _progress.min_seconds() == 1.0, bad


def export_in_process(tmp_path, monkeypatch, capsys, *flags):
    """python -m ember export in this process (a subprocess would import torch again);
    stderr is pytest's capture, not a terminal. (exit status, stdout, stderr)."""
    from ember.__main__ import main
    (tmp_path / "progress_factory.py").write_text(FACTORY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    capsys.readouterr()
    try:
        status = main(["export", "progress_factory:make", "small.onnx", *flags])
    except SystemExit as e:  # argparse's usage errors
        status = e.code
    finally:
        _progress.set_quiet(False)
    out, err = capsys.readouterr()
    return status, out, err


def test_export_prints_one_line_per_step(tmp_path, monkeypatch, capsys):
    # External data: the data file's bytes count in the writing step too.
    monkeypatch.setenv("EMBER_PROGRESS_MIN_SECONDS", "0")
    status, out, err = export_in_process(tmp_path, monkeypatch, capsys, "--external-data",
                                         "always", "--external-data-threshold", "100")
    assert status == 0, err
    lines = err.splitlines()
    assert len(lines) == len(LINES), err
    for pattern, line in zip(LINES, lines):
        assert re.fullmatch(pattern, line), (pattern, line)
    written = re.search(r"writing small\.onnx: ([0-9.]+) kB", err)
    assert written and float(written.group(1)) >= 12, err  # the 12 kB table
    assert (tmp_path / "small.onnx.data").exists()


def test_export_quick_steps_and_quiet_are_silent(tmp_path, monkeypatch, capsys):
    # The default threshold (1 s): only a step that took that long has a line (tracing
    # can, on a cold torch 2.x; converting and writing this model never do).
    status, out, err = export_in_process(tmp_path, monkeypatch, capsys)
    assert status == 0, err
    for line in err.splitlines():
        took = re.fullmatch(r"ember export: tracing Small: done in ([0-9.]+) s", line)
        assert took and float(took.group(1)) >= 0.95, err
    # --quiet (EMBER_QUIET=1 is the same switch: test_quiet_and_bad_input).
    monkeypatch.setenv("EMBER_PROGRESS_MIN_SECONDS", "0")
    status, out, err = export_in_process(tmp_path, monkeypatch, capsys, "--quiet")
    assert status == 0, err
    assert err == "", err
    assert out == "wrote small.onnx\n"
    status, out, err = export_in_process(tmp_path, monkeypatch, capsys, "--quiet=yes")
    assert status == 2 and "--quiet: ignored explicit argument 'yes'" in err, err


def test_export_on_a_terminal(tmp_path):
    env = environment(tmp_path, EMBER_PROGRESS_MIN_SECONDS="0")
    status, out = on_terminal(export_command(), env, tmp_path)
    assert status == 0, out
    try:
        import tqdm  # noqa: F401
        have_tqdm = True
    except ImportError:
        have_tqdm = False
    if have_tqdm:
        # tqdm's bars: description, percentage, count, elapsed<remaining, rate.
        assert re.search(r"\rember export: converting: +100%\|.*\| [0-9]+/[0-9]+ "
                         r"\[[0-9:]+<[0-9:]+, +[0-9.]+it/s\]", out), out
        assert re.search(r"\rember export: writing small\.onnx: +100%\|.*\| "
                         r"[0-9.]+k/[0-9.]+k \[[0-9:]+<[0-9:]+, +[0-9.]+[kM]?B/s\]", out), out
    # Without tqdm (a module of that name that does not import): lines on the terminal.
    (tmp_path / "hide").mkdir()
    (tmp_path / "hide" / "tqdm.py").write_text("raise ImportError('hidden by the test')\n")
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "hide"), env["PYTHONPATH"]])
    status, out = on_terminal(export_command(), env, tmp_path)
    assert status == 0, out
    lines = [l for l in out.replace("\r\n", "\n").split("\n") if l.startswith("ember export:")]
    assert len(lines) == len(LINES), out
    for pattern, line in zip(LINES, lines):
        assert re.fullmatch(pattern, line), (pattern, line)
    assert "%|" not in out
