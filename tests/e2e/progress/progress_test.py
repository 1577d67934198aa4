#!/usr/bin/env python3
"""Progress of ember-compile and ember-run on stderr (docs/runtime.md,
"Progress"), as a user sees it.

  tty     under a pseudo-terminal, with EMBER_PROGRESS_MIN_SECONDS=0 (the
          knob that shows fast phases): ember-compile draws bars redrawn in
          place with percentage, counts, rate and ETA, then one summary line
          per phase; ember-run the same for verifying the weights and loading
  lines   stderr not a terminal: one line per phase and no bar; without the
          knob (phases under 1 s) nothing at all, so stderr is as before
  quiet   --quiet and EMBER_QUIET=1 print nothing, also on a terminal
  errors  bad input: --quiet=yes for ember-run (usage, exit 2), an invalid
          EMBER_PROGRESS_MIN_SECONDS (the default 1 s holds), an error while
          a bar is shown starts on a clean line

usage: progress_test.py CASE EMBER_COMPILE EMBER_RUN WORKDIR
"""
import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "compile", "Inputs", "table_ref.mlir")

# The phases ember-compile reports for a one-rank plan and for two ranks.
COMPILE_PHASES = ["importing", "running passes", "emitting"]
SHARDED_PHASES = COMPILE_PHASES + ["planning sharding"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def environment(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("EMBER_QUIET", "EMBER_PROGRESS_MIN_SECONDS")}
    env.update(extra)
    return env


def run_on_terminal(cmd, env, columns=200):
    """Runs cmd with stdin/stdout/stderr on a pseudo-terminal; returns
    (exit status, everything it wrote)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave,
                            env=env, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    status = proc.wait(timeout=120)
    # The terminal turns "\n" into "\r\n"; keep the program's own "\r".
    return status, b"".join(chunks).decode().replace("\r\n", "\n")


def run_piped(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def write_npy(path, values):
    """An int64 vector as .npy (format 1.0), without numpy."""
    header = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode())
        f.write(struct.pack("<%dq" % len(values), *values))


def run_args(work):
    inputs = {"user_ids": [0, 4, 1], "user_offsets": [0, 2],
              "item_ids": [2, 1], "item_offsets": [0, 1]}
    args = []
    for name, values in inputs.items():
        path = os.path.join(work, name + ".npy")
        write_npy(path, values)
        args += ["--input", "%s=%s" % (name, path)]
    return args


def summary_lines(text, program):
    return [l for l in text.split("\n") if l.startswith(program + ": ")]


def check_summaries(text, program, phases, where):
    """One summary line per phase, each once, in the documented form."""
    lines = [l.split("\r")[-1] for l in text.split("\n")]
    lines = [re.sub(r"\x1b\[K", "", l) for l in lines if l]
    for phase in phases:
        found = [l for l in lines if l.startswith("%s: %s" % (program, phase))]
        if len(found) != 1:
            fail("%s: expected one summary line of '%s', got %r in %r"
                 % (where, phase, found, text))
        line = found[0]
        if not re.search(r": (done in [0-9.]+ s|[0-9.]+ (items?|[kMG]?B) in "
                         r"[0-9.]+ s \([0-9.]+ ?[kMG]?B?/s\))$", line):
            fail("%s: summary line %r is not in the documented form" % (where, line))


def case_tty(compiler, runner, work):
    plan = os.path.join(work, "model.plan")
    env = environment(EMBER_PROGRESS_MIN_SECONDS="0")
    status, out = run_on_terminal([compiler, MODEL, "-o", plan], env)
    if status != 0:
        fail("ember-compile on a terminal: exit %d: %r" % (status, out))
    # A bar: drawn in place (\r ... erase to end of line), with percentage,
    # done/total, a rate and an ETA.
    bar = re.compile(r"\rember-compile: running passes \[[#.]{20}\] +[0-9]+% "
                     r"[0-9]+/[0-9]+ [0-9.]+/s elapsed [0-9.]+ s ETA [0-9.]+ s"
                     r"\x1b\[K")
    if not bar.search(out):
        fail("no progress bar with rate and ETA on the terminal: %r" % out)
    check_summaries(out, "ember-compile", COMPILE_PHASES, "ember-compile (tty)")
    if not os.path.exists(plan):
        fail("no plan written")
    # Two ranks: the planner's phase too.
    status, out = run_on_terminal(
        [compiler, MODEL, "-o", os.path.join(work, "sharded.plan"),
         "--world-size", "2"], env)
    if status != 0:
        fail("ember-compile --world-size 2: exit %d: %r" % (status, out))
    check_summaries(out, "ember-compile", SHARDED_PHASES, "ember-compile -w 2 (tty)")
    # A narrow terminal: bars are cut to its width (no wrapped lines).
    status, out = run_on_terminal([compiler, MODEL, "-o", plan], env, columns=40)
    drawn = [b.split("\x1b[K")[0] for b in out.split("\r")[1:]]
    bars = [b for b in drawn if b.startswith("ember-compile: running passes [")]
    if not bars or any(len(b) > 39 for b in bars):
        fail("bars on a 40-column terminal: %r" % bars)
    # ember-run: verifying the weights (bytes) and loading the plan.
    status, out = run_on_terminal([runner, plan] + run_args(work), env)
    if status != 0:
        fail("ember-run on a terminal: exit %d: %r" % (status, out))
    if not re.search(r"\rember-run: verifying weights \[[#.]{20}\] +[0-9]+% "
                     r"[0-9.]+ k?B/[0-9.]+ k?B ", out):
        fail("no verifying-weights bar from ember-run: %r" % out)
    check_summaries(out, "ember-run", ["verifying weights", "loading"], "ember-run (tty)")
    if "output out: " not in out:
        fail("ember-run did not run the plan: %r" % out)
    print("ok: bars with rate and ETA and one summary per phase on a terminal")


def case_lines(compiler, runner, work):
    plan = os.path.join(work, "model.plan")
    status, _, err = run_piped([compiler, MODEL, "-o", plan, "--world-size", "2"],
                               environment(EMBER_PROGRESS_MIN_SECONDS="0"))
    if status != 0:
        fail("ember-compile: exit %d: %s" % (status, err))
    if "\r" in err or "\x1b" in err:
        fail("a bar when stderr is not a terminal: %r" % err)
    lines = summary_lines(err, "ember-compile")
    if len(lines) != len(err.strip().split("\n")):
        fail("stderr holds more than progress lines: %r" % err)
    check_summaries(err, "ember-compile", SHARDED_PHASES, "ember-compile (pipe)")
    # The default threshold (1 s): these fast phases print nothing, so the
    # tools' stderr is what it was before progress existed.
    status, out, err = run_piped([compiler, MODEL, "-o", plan], environment())
    if status != 0 or err != "":
        fail("fast phases not silent when not a terminal: exit %d, %r" % (status, err))
    status, out, err = run_piped([runner, plan] + run_args(work), environment())
    if status != 0 or err != "":
        fail("ember-run not silent for a fast load: exit %d, %r" % (status, err))
    status, out, err = run_piped([runner, plan] + run_args(work),
                                 environment(EMBER_PROGRESS_MIN_SECONDS="0"))
    check_summaries(err, "ember-run", ["verifying weights", "loading"], "ember-run (pipe)")
    print("ok: one line per phase when not a terminal, none for fast phases")


def case_quiet(compiler, runner, work):
    plan = os.path.join(work, "model.plan")
    forced = environment(EMBER_PROGRESS_MIN_SECONDS="0")
    for what, cmd, env in [
            ("ember-compile --quiet", [compiler, MODEL, "-o", plan, "--quiet"], forced),
            ("EMBER_QUIET=1 ember-compile", [compiler, MODEL, "-o", plan],
             environment(EMBER_PROGRESS_MIN_SECONDS="0", EMBER_QUIET="1")),
            ("ember-run --quiet", [runner, plan, "--quiet"] + run_args(work), forced),
            ("EMBER_QUIET=1 ember-run", [runner, plan] + run_args(work),
             environment(EMBER_PROGRESS_MIN_SECONDS="0", EMBER_QUIET="1"))]:
        status, out = run_on_terminal(cmd, env)
        if status != 0:
            fail("%s: exit %d: %r" % (what, status, out))
        if "ember-compile:" in out or "ember-run:" in out or "\r" in out:
            fail("%s printed progress: %r" % (what, out))
    print("ok: --quiet and EMBER_QUIET=1 print nothing")


def case_errors(compiler, runner, work):
    plan = os.path.join(work, "model.plan")
    status, _, err = run_piped([compiler, MODEL, "-o", plan], environment())
    if status != 0:
        fail("ember-compile: exit %d: %s" % (status, err))
    status, _, err = run_piped([runner, plan, "--quiet=yes"], environment())
    if status != 2 or "--quiet takes no value" not in err:
        fail("ember-run --quiet=yes: exit %d, %r" % (status, err))
    # Not a number: the default threshold (1 s) holds, fast phases are silent.
    for bad in ["soon", "-1", "nan", "1s"]:
        status, _, err = run_piped(
            [compiler, MODEL, "-o", plan], environment(EMBER_PROGRESS_MIN_SECONDS=bad))
        if status != 0 or err != "":
            fail("EMBER_PROGRESS_MIN_SECONDS=%s: exit %d, %r" % (bad, status, err))
    # An error while bars are drawn: the message is on a line of its own.
    bad_model = os.path.join(HERE, "..", "compile", "Inputs", "bad_reshape.mlir")
    status, out = run_on_terminal([compiler, bad_model, "-o", plan + ".bad"],
                                  environment(EMBER_PROGRESS_MIN_SECONDS="0"))
    if status != 1:
        fail("bad model: exit %d: %r" % (status, out))
    errors = [l for l in out.split("\n") if ": error: " in l]
    if not errors:
        fail("bad model: no error message: %r" % out)
    for l in errors:
        # What the terminal shows of the line: after the last \r, without
        # the erase code.
        shown = l.split("\r")[-1].replace("\x1b[K", "")
        if not shown.startswith(bad_model + ":"):
            fail("error message not on a clean line: %r" % l)
    if os.path.exists(plan + ".bad"):
        fail("a plan was written for a bad model")
    print("ok: bad input is refused or ignored as documented")


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    case, compiler, runner, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    {"tty": case_tty, "lines": case_lines, "quiet": case_quiet,
     "errors": case_errors}[case](compiler, runner, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
