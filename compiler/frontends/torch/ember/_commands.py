"""The ember-compile and ember-run commands of the wheel (its entry points, and
``python -m ember compile|run``): each runs the binary installed in the
package's bin/ directory with the same arguments, replacing this process.

From a source tree (no bin/ next to this file), EMBER_COMPILE / EMBER_RUN name
the binaries, as in the tests.
"""

import os
import sys
from typing import List, Optional

_ENV = {"ember-compile": "EMBER_COMPILE", "ember-run": "EMBER_RUN"}


def binary(name: str) -> str:
    """The path of the command ``name`` (ember-compile or ember-run)."""
    installed = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", name)
    if os.access(installed, os.X_OK):
        return installed
    from_env = os.environ.get(_ENV[name])
    if from_env and os.access(from_env, os.X_OK):
        return from_env
    raise FileNotFoundError(
        f"{name} is not installed with this ember package ({installed} is missing) and "
        f"{_ENV[name]} does not name it: install the wheel (pip install . from a clone) "
        f"or set {_ENV[name]}=<build>/bin/{name}")


def run(name: str, argv: Optional[List[str]] = None) -> int:
    """Replaces this process by the command (returns only on error)."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        path = binary(name)
    except FileNotFoundError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [name] + args)
    return 127  # pragma: no cover - execv does not return


def ember_compile() -> int:
    return run("ember-compile")


def ember_run() -> int:
    return run("ember-run")
