"""Progress of ember.export's long steps on stderr, as ember-compile and ember-run show theirs
(docs/runtime.md, "Progress").

On a terminal a tqdm bar (percentage, amount, rate, ETA) once a step has run
EMBER_PROGRESS_MIN_SECONDS (default 1 s); without tqdm (``pip install tqdm``, Debian's
python3-tqdm) and whenever stderr is not a terminal, one line per step when it ends:

    ember export: writing model.onnx: 8.60 GB in 7.9 s (1.09 GB/s)

but only for steps that took at least that long or wrote at least 1 GB, so quick exports
print nothing. ``set_quiet(True)`` (``python -m ember export --quiet``) or EMBER_QUIET=1
silences everything.
"""

import math
import os
import sys
import time
from typing import Optional, TextIO

PROGRAM = "ember export"
#: When not a terminal, a step of at least this many bytes prints its line however fast.
MIN_BYTES = 1000 ** 3

_quiet = False


def set_quiet(quiet: bool) -> None:
    """Process-wide: no progress output (also EMBER_QUIET=1)."""
    global _quiet
    _quiet = bool(quiet)


def is_quiet() -> bool:
    return _quiet or os.environ.get("EMBER_QUIET", "") not in ("", "0")


def min_seconds() -> float:
    """EMBER_PROGRESS_MIN_SECONDS when it is a number >= 0, else 1."""
    try:
        value = float(os.environ.get("EMBER_PROGRESS_MIN_SECONDS", ""))
    except ValueError:
        return 1.0
    return value if value >= 0 and math.isfinite(value) else 1.0


def _three_digits(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def format_bytes(value: float) -> str:
    """'812 B', '1.20 kB', '8.60 GB' (powers of 1000, 3 significant digits)."""
    if value < 1000:
        return f"{value:.0f} B"
    units = ["B", "kB", "MB", "GB", "TB", "PB"]
    u = 0
    while u + 1 < len(units) and value >= 999.5:
        value /= 1000
        u += 1
    return f"{_three_digits(value)} {units[u]}"


def format_duration(seconds: float) -> str:
    """'7.9 s', '2 min 05 s', '1 h 02 min'."""
    if seconds < 59.95:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole // 60 % 60:02d} min"


def format_summary(name: str, done: int, total: int, unit: str, seconds: float,
                   program: str = PROGRAM) -> str:
    """The line of a finished step, as the C++ tools write it."""
    line = f"{program}: {name}: "
    if unit == "items" and total == 1:
        return line + ("done in " if done >= 1 else "stopped after ") + format_duration(seconds)
    amount = format_bytes if unit == "bytes" else str
    line += amount(done)
    if unit == "items":
        line += " item" if done == 1 else " items"
    if done < total:
        line += f" of {amount(total)}"
    line += f" in {format_duration(seconds)}"
    if seconds > 0:
        rate = done / seconds
        if unit == "bytes":
            line += f" ({format_bytes(rate)}/s)"
        else:
            line += f" ({_three_digits(rate) if rate < 1000 else f'{rate:.0f}'}/s)"
    if done < total:
        line += ", incomplete"
    return line


def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class Phase:
    """One step with a known total (``unit``: "bytes" or "items"); a context manager::

        with Phase("writing model.onnx", nbytes) as phase:
            for chunk in chunks:
                f.write(chunk)
                phase.advance(len(chunk))
    """

    def __init__(self, name: str, total: int, unit: str = "bytes",
                 stream: Optional[TextIO] = None):
        if unit not in ("bytes", "items"):
            raise ValueError(f"unit must be 'bytes' or 'items', not {unit!r}")
        self.name, self.total, self.unit = name, int(total), unit
        self.done = 0
        self.start = time.monotonic()
        self.stream = sys.stderr if stream is None else stream
        self.active = not is_quiet()
        self.min_seconds = min_seconds()
        self.bar = None
        isatty = getattr(self.stream, "isatty", None)
        self.terminal = bool(isatty and isatty())
        tqdm = _tqdm() if self.active and self.terminal else None
        if tqdm is not None:
            self.bar = tqdm(total=self.total, desc=f"{PROGRAM}: {name}",
                            unit="B" if unit == "bytes" else "it",
                            unit_scale=unit == "bytes", unit_divisor=1000,
                            delay=self.min_seconds, mininterval=0.1, file=self.stream,
                            leave=True, dynamic_ncols=True)

    def advance(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if not self.active:
            return
        self.active = False
        if self.bar is not None:
            self.bar.close()  # its last state stays on the terminal when it was shown
            return
        seconds = time.monotonic() - self.start
        due = seconds >= self.min_seconds or (
            not self.terminal and self.unit == "bytes" and self.total >= MIN_BYTES)
        if due and not is_quiet():
            print(format_summary(self.name, self.done, self.total, self.unit, seconds),
                  file=self.stream, flush=True)

    def __enter__(self) -> "Phase":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
