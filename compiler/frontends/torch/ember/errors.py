"""Errors raised by the Ember tracer."""

import os
import traceback
from typing import Dict, Optional

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class TraceError(RuntimeError):
    """Tracing failed. ``failures`` maps module paths to the reason, when known."""

    def __init__(self, message: str, failures: Optional[Dict[str, str]] = None):
        super().__init__(message)
        self.failures: Dict[str, str] = dict(failures or {})


class DataDependentControlFlowError(TraceError):
    """Python control flow (bool/int/float/index) on a value that depends on tensor data."""


class ExampleEvaluationError(TraceError):
    """Running an operation on the example inputs failed: the inputs do not fit the model."""


def _is_internal(filename: str) -> bool:
    path = os.path.abspath(filename)
    if path.startswith(_PACKAGE_DIR + os.sep):
        return True
    parts = path.replace("\\", "/").split("/")
    return "torch" in parts or "contextlib.py" == parts[-1]


def user_source_line(exc: BaseException) -> Optional[str]:
    """'file:line: code' of the innermost frame of ``exc`` outside torch and ember."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    for frame in reversed(frames):
        if not _is_internal(frame.filename):
            code = (frame.line or "").strip()
            return f"{frame.filename}:{frame.lineno}: {code}"
    return None


def user_stack_line() -> Optional[str]:
    """'file:line: code' of the innermost frame on the current stack outside torch and ember."""
    for frame in reversed(traceback.extract_stack()):
        if not _is_internal(frame.filename):
            return f"{frame.filename}:{frame.lineno}: {(frame.line or '').strip()}"
    return None
