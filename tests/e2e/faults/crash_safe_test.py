"""Crash-safe outputs of ember-compile and ember-run (docs/reliability.md).

Each case writes a new version of files that already exist (an old version
from other inputs) and kills the writer at the write points of
runtime/src/io/atomic_file.cpp (EMBER_TEST_PAUSE=write|staged|renaming makes
it stop there and say so) and at random times. After every kill each file
must be the old version, missing, or the whole new version; nothing else may
be left but, after a kill between the renames of a commit, complete hidden
temporaries, which the next write removes. SIGINT/SIGTERM/SIGHUP must stop
the tools cleanly: exit 128 + signal, a message, no temporary, no output,
no rank left running.

usage: crash_safe_test.py CASE EMBER_COMPILE EMBER_RUN MAKE_SHARDED WORKDIR
CASE: compile_kill compile_kill_named compile_signals run_kill nproc_kill
      run_signals nproc_signals
(EMBER_COMPILE may be '-' in a build without the compiler: the compile
cases then skip with status 77.)
"""
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time

SKIP = 77


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def snapshot(d):
    """{name: bytes} of the files in d (hidden ones too)."""
    out = {}
    if os.path.isdir(d):
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if os.path.isfile(p):
                with open(p, "rb") as f:
                    out[name] = f.read()
    return out


def temporary_target(name):
    """'.m.plan.tmp-123-4' -> 'm.plan' (None for other names)."""
    if name.startswith(".") and ".tmp-" in name:
        return name[1:name.rindex(".tmp-")]
    return None


def check_files(d, old, new, what, allow_temporaries=False):
    """Every file old, missing or whole new; complete temporaries only if allowed."""
    now = snapshot(d)
    for name, data in now.items():
        target = temporary_target(name)
        if target is not None:
            if not allow_temporaries:
                fail("%s: temporary %s left behind" % (what, name))
            if data != new.get(target):
                fail("%s: temporary %s is not the complete new %s" % (what, name, target))
            continue
        if name not in old and name not in new:
            fail("%s: unexpected file %s" % (what, name))
        if data != old.get(name) and data != new.get(name):
            fail("%s: %s is neither the old nor the new version (%d bytes; old %s, new %s)"
                 % (what, name, len(data), len(old.get(name, b"")) if name in old else "-",
                    len(new.get(name, b"")) if name in new else "-"))
    return now


def restore(d, files):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


class Proc:
    """A process whose stderr is read as it comes (to see its pause line)."""

    def __init__(self, cmd, env=None, new_session=False):
        e = dict(os.environ)
        e.update(env or {})
        self.p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  start_new_session=new_session)
        self.err = b""
        self.out = b""
        self.cmd = cmd

    def _pump(self, timeout):
        fds = [f for f in (self.p.stdout, self.p.stderr) if f and not f.closed]
        if not fds:
            time.sleep(timeout)
            return
        ready, _, _ = select.select(fds, [], [], timeout)
        for f in ready:
            chunk = os.read(f.fileno(), 65536)
            if not chunk:
                f.close()
            elif f is self.p.stderr:
                self.err += chunk
            else:
                self.out += chunk

    def wait_for(self, text, timeout=30):
        deadline = time.time() + timeout
        while text.encode() not in self.err:
            if time.time() > deadline:
                self.kill()
                fail("no '%s' from %s within %ds; stderr: %s" % (text, self.cmd[0], timeout, self.err.decode()))
            if self.p.poll() is not None and self.p.stderr.closed:
                fail("%s exited (%s) before '%s'; stderr: %s"
                     % (self.cmd[0], self.p.returncode, text, self.err.decode()))
            self._pump(0.05)

    def finish(self, timeout=60):
        deadline = time.time() + timeout
        while self.p.poll() is None or not (self.p.stderr.closed and self.p.stdout.closed):
            if time.time() > deadline:
                self.kill()
                fail("%s did not exit within %ds" % (self.cmd[0], timeout))
            self._pump(0.05)
        return self.p.returncode

    def kill(self, sig=signal.SIGKILL):
        try:
            self.p.send_signal(sig)
        except ProcessLookupError:
            pass


def processes_mentioning(text):
    """Pids of live processes whose command line contains text."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmdline = f.read()
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text.encode() in cmdline and state != "Z":
            pids.append(int(pid))
    return pids


def expect_no_processes(text, what, grace=3.0):
    deadline = time.time() + grace
    while processes_mentioning(text):
        if time.time() > deadline:
            left = processes_mentioning(text)
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            fail("%s: processes left behind: %s" % (what, left))
        time.sleep(0.05)


# --- models ---------------------------------------------------------------------

MODULE = '''module attributes {{ember.world_size = 2 : i64}} {{{ranks}
}}
'''
RANK = '''
  func.func @main_rank{r}(%x: tensor<?x{n}xf32> {{onnx.dim_params = ["B", ""], onnx.name = "x"}})
      -> (tensor<?x{n}xf32>) attributes {{ember.rank = {r} : i64}} {{
    %w = arith.constant dense<{v}> : tensor<1x{n}xf32>
    %y = tosa.add %x, %w : (tensor<?x{n}xf32>, tensor<1x{n}xf32>) -> tensor<?x{n}xf32>
    %g = ember.all_gather %y group<ranks = [0, 1]> : tensor<?x{n}xf32> -> !ember.awaitable<tensor<?x{n}xf32>>
    %wg = ember.wait %g : !ember.awaitable<tensor<?x{n}xf32>>
    return %wg : tensor<?x{n}xf32>
  }}'''


def two_rank_module(values, n):
    """A 2-rank plan with a 4n-byte weights file per rank."""
    return MODULE.format(ranks="".join(RANK.format(r=r, v=v, n=n) for r, v in enumerate(values)))


SHARDING_MODULE = '''ember.table @t_user : !ember.table<{rows}x16, f32>
ember.table @t_item : !ember.table<500x8, f32>

func.func @collection(%ids: tensor<?xi64>, %lengths: tensor<?xi32>)
    -> !ember.keyed_tensor<["user" : 16, "item" : 8], f32> {{
  %kjt = ember.kjt.create values(%ids : tensor<?xi64>) lengths(%lengths : tensor<?xi32>)
      -> !ember.kjt<["user", "item"], values = i64, lengths = i32>
  %t_user = ember.table.ref @t_user : !ember.table<{rows}x16, f32>
  %t_item = ember.table.ref @t_item : !ember.table<500x8, f32>
  %pooled = ember.embedding_bag_collection %kjt tables(%t_user, %t_item)
      feature_tables = [0, 1] pooling = [sum, max]
      : !ember.kjt<["user", "item"], values = i64, lengths = i32>,
        !ember.table<{rows}x16, f32>, !ember.table<500x8, f32>
      -> !ember.keyed_tensor<["user" : 16, "item" : 8], f32>
  return %pooled : !ember.keyed_tensor<["user" : 16, "item" : 8], f32>
}}
'''


# --- ember-compile ------------------------------------------------------------------

def compile_to(compiler, src, out_plan, extra=(), env=None):
    proc = subprocess.run([compiler, src, "-o", out_plan] + list(extra), capture_output=True,
                          text=True, env=dict(os.environ, **(env or {})))
    if proc.returncode != 0:
        fail("ember-compile %s failed: %s" % (src, proc.stderr))


def compile_setup(compiler, work):
    """Sources A and B of the same plan name; reference outputs of each."""
    src = {}
    for tag, values, n in (("a", ("0.5", "1.5"), 262144), ("b", ("0.25", "2.5"), 196608)):
        src[tag] = os.path.join(work, "m_%s.mlir" % tag)
        with open(src[tag], "w") as f:
            f.write(two_rank_module(values, n))
    ref = {}
    for tag in ("a", "b"):
        d = os.path.join(work, "ref_" + tag)
        os.makedirs(d)
        compile_to(compiler, src[tag], os.path.join(d, "m.plan"))
        ref[tag] = snapshot(d)
        if sorted(ref[tag]) != ["m.plan", "m.rank0.weights", "m.rank1.weights"]:
            fail("unexpected compile outputs: %s" % sorted(ref[tag]))
    return src, ref


def kill_compile_at(compiler, src, out, old, new, pause, what, env=None, allow_temporaries=False):
    restore(out, old)
    p = Proc([compiler, src, "-o", os.path.join(out, "m.plan")],
             env=dict(env or {}, EMBER_TEST_PAUSE=pause))
    p.wait_for("EMBER_TEST_PAUSE")
    p.kill()
    p.finish()
    return check_files(out, old, new, what, allow_temporaries)


def case_compile_kill(compiler, work):
    src, ref = compile_setup(compiler, work)
    out = os.path.join(work, "out")
    points = [("write:rank0.weights", False), ("write:rank1.weights", False),
              ("write:m.plan", False), ("staged", False), ("renaming", True)]
    for pause, temporaries in points:
        left = kill_compile_at(compiler, src["b"], out, ref["a"], ref["b"], pause,
                               "SIGKILL at " + pause, allow_temporaries=temporaries)
        print("SIGKILL at %-20s -> %s" % (pause, ", ".join(
            "%s=%s" % (n, "new" if d == ref["b"].get(n) else "old" if d == ref["a"].get(n) else "tmp")
            for n, d in sorted(left.items()))))
        # The next compile replaces everything and removes stale temporaries.
        compile_to(compiler, src["b"], os.path.join(out, "m.plan"))
        if snapshot(out) != ref["b"]:
            fail("after SIGKILL at %s, a new compile left %s" % (pause, sorted(snapshot(out))))
    # Killed at random times (the compile takes a few tens of milliseconds).
    start = time.time()
    compile_to(compiler, src["b"], os.path.join(work, "timing.plan"))
    took = time.time() - start
    rng = random.Random(16)
    outcomes = {}
    for i in range(30):
        restore(out, ref["a"])
        p = Proc([compiler, src["b"], "-o", os.path.join(out, "m.plan")])
        time.sleep(rng.uniform(0, took * 1.2))
        p.kill()
        p.finish()
        left = check_files(out, ref["a"], ref["b"], "SIGKILL at random (%d)" % i, True)
        state = "new" if left == ref["b"] else "old" if left == ref["a"] else "mixed"
        outcomes[state] = outcomes.get(state, 0) + 1
    print("30 random SIGKILLs (compile takes %.0f ms): %s" % (took * 1000, outcomes))
    # --emit mlir and --emit sharding-plan / sharding-report outputs.
    sharding = {}
    for tag, rows in (("a", 1000), ("b", 3000)):
        sharding[tag] = os.path.join(work, "s_%s.mlir" % tag)
        with open(sharding[tag], "w") as f:
            f.write(SHARDING_MODULE.format(rows=rows))
    for emit, source, extra in (("mlir", src, []),
                                ("sharding-plan", sharding, ["--world-size", "2"]),
                                ("sharding-report", sharding, ["--world-size", "2"])):
        refs = {}
        for tag in ("a", "b"):
            d = os.path.join(work, "ref_%s_%s" % (emit, tag))
            os.makedirs(d)
            compile_to(compiler, source[tag], os.path.join(d, "out.txt"), ["--emit", emit] + extra)
            refs[tag] = snapshot(d)
        restore(out, refs["a"])
        p = Proc([compiler, source["b"], "-o", os.path.join(out, "out.txt"), "--emit", emit] + extra,
                 env={"EMBER_TEST_PAUSE": "write"})
        p.wait_for("EMBER_TEST_PAUSE")
        p.kill()
        p.finish()
        check_files(out, refs["a"], refs["b"], "--emit %s, SIGKILL while writing" % emit)
        if snapshot(out) != refs["a"]:
            fail("--emit %s: the old output changed" % emit)
        print("--emit %-16s SIGKILL while writing -> old file intact" % emit)


def case_compile_kill_named(compiler, work):
    """Without O_TMPFILE (EMBER_ATOMIC_FILE_NAMED=1), a kill while writing leaves
    a partial hidden temporary, never a partial target; the next compile removes it."""
    src, ref = compile_setup(compiler, work)
    out = os.path.join(work, "out")
    env = {"EMBER_ATOMIC_FILE_NAMED": "1"}
    restore(out, ref["a"])
    p = Proc([compiler, src["b"], "-o", os.path.join(out, "m.plan")],
             env=dict(env, EMBER_TEST_PAUSE="write:rank1.weights"))
    p.wait_for("EMBER_TEST_PAUSE")
    p.kill()
    p.finish()
    now = snapshot(out)
    temps = sorted(n for n in now if temporary_target(n))
    # rank 0's weights: complete, waiting for the plan; rank 1's: half written.
    kinds = {}
    for n in temps:
        target, data = temporary_target(n), now[n]
        if data == ref["b"][target]:
            kinds[target] = "complete"
        elif ref["b"][target].startswith(data) and len(data) < len(ref["b"][target]):
            kinds[target] = "partial"
        else:
            fail("temporary %s is neither complete nor a prefix of the new %s" % (n, target))
    if kinds != {"m.rank0.weights": "complete", "m.rank1.weights": "partial"}:
        fail("unexpected temporaries %s" % kinds)
    for name in ("m.plan", "m.rank0.weights", "m.rank1.weights"):
        if now.get(name) != ref["a"][name]:
            fail("%s changed although the compile was killed" % name)
    print("named temporaries: SIGKILL while writing leaves %s (hidden; %s); targets old" % (temps, kinds))
    compile_to(compiler, src["b"], os.path.join(out, "m.plan"), env=env)
    if snapshot(out) != ref["b"]:
        fail("the next compile did not remove the stale temporary: %s" % sorted(snapshot(out)))
    print("the next compile removed it")


def case_compile_signals(compiler, work):
    src, ref = compile_setup(compiler, work)
    out = os.path.join(work, "out")
    for sig, pause in ((signal.SIGINT, "write:rank1.weights"), (signal.SIGTERM, "staged"),
                       (signal.SIGHUP, "write:m.plan")):
        restore(out, ref["a"])
        p = Proc([compiler, src["b"], "-o", os.path.join(out, "m.plan")],
                 env={"EMBER_TEST_PAUSE": pause})
        p.wait_for("EMBER_TEST_PAUSE")
        start = time.time()
        p.kill(sig)
        rc = p.finish()
        took = time.time() - start
        name = signal.Signals(sig).name
        message = "ember-compile: interrupted by %s; stopped, no output file written" % name
        if rc != 128 + sig:
            fail("%s: exit status %s, expected %d" % (name, rc, 128 + sig))
        if message not in p.err.decode():
            fail("%s: stderr lacks '%s': %s" % (name, message, p.err.decode()))
        if snapshot(out) != ref["a"]:
            fail("%s: the old outputs changed or temporaries were left: %s" % (name, sorted(snapshot(out))))
        print("%s at %s: exit %d in %.0f ms, '%s'" % (name, pause, rc, took * 1000, message))


# --- ember-run ------------------------------------------------------------------------

def run_setup(run, make_sharded, work):
    """Batches of 11 (old outputs) and 5 (new) of the sharded test models."""
    for tag, batch in (("a", "11"), ("b", "5")):
        proc = subprocess.run([make_sharded, os.path.join(work, tag), batch], capture_output=True, text=True)
        if proc.returncode != 0:
            fail("ember-make-sharded-plan: " + proc.stderr)
    return os.path.join(work, "a"), os.path.join(work, "b")


def run_refs(run, plan_dir, work, nproc):
    plan = os.path.join(plan_dir["a"], "tw%s.plan" % ("2" if nproc else ""))
    refs = {}
    for tag in ("a", "b"):
        d = os.path.join(work, "ref_run_" + tag)
        cmd = [run, plan, "--inputs", os.path.join(plan_dir[tag], "tw_inputs.npz"), "--output-dir", d,
               "--report-json", os.path.join(d, "report.json")]
        if nproc:
            cmd += ["--nproc", "2"]
        os.makedirs(d)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            fail("ember-run failed: " + proc.stderr)
        refs[tag] = snapshot(d)
        # The report names the output dir's files only by output name: same text.
    return plan, refs


def case_run_kill(run, make_sharded, work, nproc=False):
    a, b = run_setup(run, make_sharded, work)
    plan, refs = run_refs(run, {"a": a, "b": b}, work, nproc)
    if sorted(refs["b"]) != ["dense_relu.npy", "pooled.npy", "report.json"]:
        fail("unexpected outputs %s" % sorted(refs["b"]))
    out = os.path.join(work, "out")
    base = [run, plan, "--inputs", os.path.join(b, "tw_inputs.npz"), "--output-dir", out,
            "--report-json", os.path.join(out, "report.json")] + (["--nproc", "2"] if nproc else [])
    # The report's latencies differ from run to run: compare it as "complete JSON".
    def is_report(n):
        return n == "report.json" or temporary_target(n) == "report.json"

    def normalize(files):
        return {n: (b"<report>" if is_report(n) else d) for n, d in files.items()}

    def check(what, temporaries):
        now = snapshot(out)
        for n, d in now.items():
            if is_report(n):
                text = d.decode(errors="replace")
                if not (text.startswith("{") and text.rstrip().endswith("}") and '"outputs"' in text):
                    fail("%s: %s is not a complete report" % (what, n))
        return check_files_normalized(out, normalize(refs["a"]), normalize(refs["b"]), what, temporaries,
                                      normalize)

    label = "ember-run --nproc 2" if nproc else "ember-run"
    for pause, temporaries in (("write:pooled", False), ("write:report", False), ("staged", False),
                               ("renaming", True)):
        restore(out, refs["a"])
        p = Proc(base, env={"EMBER_TEST_PAUSE": pause})
        p.wait_for("EMBER_TEST_PAUSE")
        p.kill()  # the launcher under --nproc: rank 0 dies with it (PR_SET_PDEATHSIG)
        p.finish()
        expect_no_processes(work, "%s killed at %s" % (label, pause))
        left = check("%s, SIGKILL at %s" % (label, pause), temporaries)
        print("%s: SIGKILL at %-14s -> %s" % (label, pause, sorted(left)))
    rng = random.Random(17)
    start = time.time()
    subprocess.run(base, capture_output=True)
    took = time.time() - start
    outcomes = {}
    for i in range(20):
        restore(out, refs["a"])
        p = Proc(base)
        time.sleep(rng.uniform(0, took * 1.2))
        p.kill()
        p.finish()
        expect_no_processes(work, "%s killed at random" % label)
        left = check("%s, SIGKILL at random (%d)" % (label, i), True)
        state = ("new" if normalize(left) == normalize(refs["b"]) else
                 "old" if normalize(left) == normalize(refs["a"]) else "mixed")
        outcomes[state] = outcomes.get(state, 0) + 1
    print("%s: 20 random SIGKILLs (a run takes %.0f ms): %s" % (label, took * 1000, outcomes))
    if nproc:
        # The next launcher removes the directories of killed ones.
        subprocess.run(base, capture_output=True)
        left = os.listdir(os.environ["TMPDIR"])
        if left:
            fail("rendezvous directories of killed launchers left: %s" % left)
        print("%s: the next run removed the killed launchers' rendezvous directories" % label)


def check_files_normalized(d, old, new, what, temporaries, normalize):
    now = snapshot(d)
    saved = dict(now)
    tmpdir = d + ".normalized"
    restore(tmpdir, normalize(now))
    check_files(tmpdir, old, new, what, temporaries)
    shutil.rmtree(tmpdir)
    return saved


def case_nproc_kill(run, make_sharded, work):
    case_run_kill(run, make_sharded, work, nproc=True)


def case_run_signals(run, make_sharded, work, nproc=False):
    a, _ = run_setup(run, make_sharded, work)
    out = os.path.join(work, "out")
    plan = os.path.join(a, "tw2.plan" if nproc else "tw.plan")
    label = "ember-run --nproc 2" if nproc else "ember-run"
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        shutil.rmtree(out, ignore_errors=True)
        cmd = [run, plan, "--inputs", os.path.join(a, "tw_inputs.npz"), "--output-dir", out,
               "--repeat", "100000000", "--report-json", os.path.join(out, "r.json")]
        if nproc:
            cmd += ["--nproc", "2", "--timeout", "30"]
        # A terminal's ^C goes to the whole process group: do the same for SIGINT.
        p = Proc(cmd, new_session=True)
        time.sleep(1.0)
        if p.p.poll() is not None:
            fail("%s ended early: %s" % (label, p.err.decode()))
        start = time.time()
        if sig == signal.SIGINT:
            os.killpg(p.p.pid, sig)
        else:
            p.kill(sig)
        rc = p.finish(timeout=20)
        took = time.time() - start
        name = signal.Signals(sig).name
        err = p.err.decode()
        if nproc:
            message = "ember-run: interrupted by %s; stopped the 2 ranks, no output file written" % name
        else:
            message = "ember-run: interrupted by %s; stopped, no output file written" % name
        if rc != 128 + sig:
            fail("%s %s: exit status %s, expected %d; stderr: %s" % (label, name, rc, 128 + sig, err))
        if message not in err:
            fail("%s %s: stderr lacks '%s': %s" % (label, name, message, err))
        if snapshot(out):
            fail("%s %s: outputs written: %s" % (label, name, sorted(snapshot(out))))
        expect_no_processes(work, "%s after %s" % (label, name))
        if took > 5:
            fail("%s %s: took %.1f s to stop" % (label, name, took))
        print("%s %s: exit %d in %.0f ms; stderr:\n  %s" % (label, name, rc, took * 1000,
                                                          "\n  ".join(err.strip().splitlines())))


def case_nproc_signals(run, make_sharded, work):
    case_run_signals(run, make_sharded, work, nproc=True)


def main():
    if len(sys.argv) != 6:
        print(__doc__)
        sys.exit(2)
    case, compiler, run, make_sharded, work = sys.argv[1:6]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # The launchers killed here leave their rendezvous directories (never
    # outputs) in TMPDIR: keep them in the work directory.
    os.environ["TMPDIR"] = os.path.join(work, "tmp")
    os.makedirs(os.environ["TMPDIR"])
    if case.startswith("compile"):
        if compiler == "-":
            print("SKIP: built without the compiler")
            sys.exit(SKIP)
        {"compile_kill": case_compile_kill, "compile_kill_named": case_compile_kill_named,
         "compile_signals": case_compile_signals}[case](compiler, work)
    else:
        {"run_kill": case_run_kill, "nproc_kill": case_nproc_kill, "run_signals": case_run_signals,
         "nproc_signals": case_nproc_signals}[case](run, make_sharded, work)
    print("PASS (%s)" % case)


if __name__ == "__main__":
    main()
