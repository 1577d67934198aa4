#!/usr/bin/python3
"""Ember's CPU embedding lookups against PyTorch 2.x and FBGEMM, same inputs.

Peers (all from PyPI, in the venv of scripts/setup-torchrec-venv.sh):
  torch      torch.nn.functional.embedding_bag (FBGEMM's JIT EmbeddingSpMDM)
  tbe        fbgemm_gpu SplitTableBatchedEmbeddingBagsCodegen on the host
  torch_q8   torch.ops.quantized.embedding_bag_byte_rowwise_offsets (int8)

    python3 bench/embedding_vs_peers.py [--quick] [--build build/release]
        [--venv build/torchrec-venv] [--make-venv] [--rounds 7] [--iters 3]
        [--only fp32,int8,grouped] [--threads 1,2] [--hugepages] [--ember-process]
        [--no-ceiling] [--int8-sums fast|fbgemm|both] [--baseline-driver OLD_DRIVER]
        [--json FILE]

Run with any python3: unless the running interpreter has torch 2.x and
fbgemm_gpu, the script re-runs itself with --venv's python (default
build/torchrec-venv, which `--make-venv` creates or refreshes with
scripts/setup-torchrec-venv.sh; about 3 GB from PyPI).

For every configuration it makes the table(s), ids and offsets (fixed seed).
Ember's single-table lookups run in this process, through ctypes
(libember_bench_lookup.so, bench/embedding_lookup_inprocess.cpp), on the very
numpy buffers torch and FBGEMM read: on a VM the same lookup on the same data
differs by up to 1.6x between processes for a process's lifetime (the guest
pages behind each copy of the table), as much as the differences measured,
so every side reads the same memory. --ember-process instead writes the inputs
to a temporary directory and runs bench/embedding_driver.cpp's
ember_embedding_driver in --serve mode on those files (a process with its own
copy of the table), as the 26-table collection and --baseline-driver always
do. Then it runs interleaved rounds: in each round every side (Ember and each peer,
in an order that rotates from round to round) runs --iters lookups, each
after reading a --flush-mib buffer (64 MiB) so that no rows come from the
previous run's caches, and the round keeps each side's median. Per round the script forms
the ratio peer time / Ember time (> 1: Ember faster); the table shows the
median over rounds and the interquartile range (IQR) of these ratios, which
is what to trust on a shared, noisy machine. It checks that every side
produced the same pooled output (fp32 within 1e-4, int8 within 1e-5, of
each element and of the output's largest magnitude; int8 against torch's
quantized op in Ember's default order of quantized sums, and
bit-identical to it, FBGEMM's arithmetic, with --int8-sums fbgemm, which sets
EMBER_QUANTIZED_SUMS for every Ember side), measures the streaming-read bandwidth with
bench_stream_read in the same run (after each configuration's rounds, its
array in the tables' page policy) and prints the 1-minute load average
before and after each configuration.

The loads-only ceiling (single-table configurations with 1 thread; --no-ceiling
skips it):
Ember's library (or driver) also times, as one more side in the same rounds,
a loop that reads exactly the rows the lookup reads, in its order, one load
per 64-byte line and nothing else (bench/row_read_ceiling.h), at the
prefetch distance that is fastest for it. A pooling kernel does those loads
and its arithmetic besides, so it is rarely faster; each row says at what
fraction of that speed Ember and the best peer run, and how far a kernel
running at it would lead the best peer (best peer time / ceiling time): where
that is under 1.1x, no kernel that reads the rows this way leads by 1.1x on
this machine.

Page policy: by default every side's tables are in 4 KiB pages (private
anonymous memory, not madvised; this machine's THP mode is usually
`madvise`); --hugepages madvises every side's tables for transparent huge
pages. After each configuration the script reads how many of each side's
table bytes huge pages really back (AnonHugePages in /proc/PID/smaps: the
driver's answer to `pages`, and this process's for the peers' buffers),
prints it, and warns when the sides differ by more than 10 points (the
comparison would not be like for like).

Configurations (the full set, issue 18):
  fp32 sum   tables of 1M and 10M rows, D 64 and 128, batch 2,048 and
             16,384, pooling factor 20 and 80, with 1 and 2 threads
  int8       row-wise int8 (FBGEMM layout: D codes, float32 scale, bias),
             1M rows, D 64 and 128, batch 2,048, L 20 and 80
  grouped    26 tables of the Criteo Kaggle sizes capped at 1M rows, D 64,
             batch 4,096, 4 features with L 20 and 22 with L 1, one
             grouped_embedding_bag against FBGEMM's fused TBE
--quick runs one small configuration of each kind (1 thread, 3 rounds) in a
few seconds: the ctest test bench.embedding_vs_peers.quick.

Exit status: 0 on success; 1 when a tool fails or outputs differ; 2 on bad
arguments; 77 when the peers' venv is missing (and --make-venv not given).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
FLUSH_MIB = 64  # default of --flush-mib

# Criteo Kaggle (DLRM) table sizes; the benchmark caps them at 1M rows.
CRITEO_ROWS = [1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683,
               8351593, 3194, 27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15,
               286181, 105, 142572]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(REPO, "build", "release"),
                   help="Ember build directory (needs ember_embedding_driver, bench_stream_read)")
    p.add_argument("--venv", default=os.path.join(REPO, "build", "torchrec-venv"),
                   help="venv with torch 2.x and fbgemm-gpu-cpu")
    p.add_argument("--make-venv", action="store_true",
                   help="create/refresh --venv with scripts/setup-torchrec-venv.sh first")
    p.add_argument("--quick", action="store_true", help="small smoke subset")
    p.add_argument("--only", default="fp32,int8,grouped",
                   help="comma-separated kinds among fp32, int8, grouped")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rows", default="1000000,10000000", help="fp32 table rows")
    p.add_argument("--dims", default="64,128")
    p.add_argument("--batches", default="2048,16384", help="fp32 batch sizes")
    p.add_argument("--poolings", default="20,80", help="fp32 pooling factors")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--iters", type=int, default=3, help="lookups per side per round")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--hugepages", action="store_true",
                   help="every side's tables in transparent huge pages (madvise)")
    p.add_argument("--flush-mib", type=int, default=FLUSH_MIB,
                   help="MiB read before every timed lookup on every side (not timed), so "
                        "rows of the previous lookup are not in the caches; make it larger "
                        "than the L3 (default 64)")
    p.add_argument("--ember-process", action="store_true",
                   help="run Ember's single-table lookups in ember_embedding_driver, a "
                        "process of its own with its own copy of the table, instead of in "
                        "this process on the peers' buffers (libember_bench_lookup.so)")
    p.add_argument("--no-ceiling", dest="ceiling", action="store_false",
                   help="skip the loads-only ceiling (bench/row_read_ceiling.h), which "
                        "otherwise runs as one more side in every single-table configuration")
    p.add_argument("--int8-sums", choices=("fast", "fbgemm", "both"), default="fast",
                   help="Ember's order of quantized sums (EMBER_QUANTIZED_SUMS): 'fast' (the "
                        "default: biases summed once per bag), 'fbgemm' (FBGEMM's order, "
                        "bit-identical to torch's quantized op, which is then required) or "
                        "'both' (fast, and FBGEMM's order as one more side, 'ember_fbgemm', "
                        "in the same process and rounds: bit-identical to torch's op)")
    p.add_argument("--json", help="also write the results to this file")
    p.add_argument("--baseline-driver",
                   help="another ember_embedding_driver (e.g. a copy built before a change): "
                        "run as one more side, 'ember_base', in the same rounds; its ratio "
                        "base time / Ember time is the change's speed-up")
    args = p.parse_args(argv)
    try:
        args.thread_list = [int(t) for t in args.threads.split(",")]
        args.row_list = [int(r) for r in args.rows.split(",")]
        args.dim_list = [int(d) for d in args.dims.split(",")]
        args.batch_list = [int(b) for b in args.batches.split(",")]
        args.pooling_list = [int(v) for v in args.poolings.split(",")]
    except ValueError as e:
        p.error(f"expected comma-separated integers: {e}")
    for name in ("thread_list", "row_list", "dim_list", "batch_list", "pooling_list"):
        if not getattr(args, name) or min(getattr(args, name)) <= 0:
            p.error(f"--{name.split('_')[0]}s values must be positive")
    args.kinds = args.only.split(",")
    bad = [k for k in args.kinds if k not in ("fp32", "int8", "grouped")]
    if bad:
        p.error(f"--only: unknown kind(s) {bad} (expected fp32, int8, grouped)")
    if args.flush_mib < 0:
        p.error("--flush-mib must be >= 0")
    if args.rounds < 1 or args.iters < 1:
        p.error("--rounds and --iters must be positive")
    # Read once by Ember's library and drivers (this process and its children).
    os.environ["EMBER_QUANTIZED_SUMS"] = "fbgemm" if args.int8_sums == "fbgemm" else "fast"
    if args.quick:
        args.thread_list = [1]
        args.rounds = 3
        args.iters = 2
    return args


def peers_available():
    try:
        import torch  # noqa: F401
        import fbgemm_gpu  # noqa: F401
    except ImportError:
        return False
    return int(torch.__version__.split(".")[0]) >= 2


def ensure_peer_python(args, argv):
    """Re-runs this script with the venv's python unless this one has the peers."""
    if args.make_venv:
        r = subprocess.run(["bash", os.path.join(REPO, "scripts", "setup-torchrec-venv.sh")])
        if r.returncode != 0:
            sys.exit(f"embedding_vs_peers: scripts/setup-torchrec-venv.sh failed ({r.returncode})")
    if os.environ.get("EMBER_PEERS_REEXEC") != "1" and not args.make_venv and peers_available():
        return
    venv_python = os.path.join(args.venv, "bin", "python")
    if os.environ.get("EMBER_PEERS_REEXEC") == "1":
        if peers_available():
            return
        sys.exit(f"embedding_vs_peers: {sys.executable} has no torch 2.x with fbgemm_gpu")
    if not os.access(venv_python, os.X_OK):
        print(f"embedding_vs_peers: no peer venv at {args.venv} (torch 2.x + fbgemm-gpu-cpu): "
              "run with --make-venv or bash scripts/setup-torchrec-venv.sh", file=sys.stderr)
        sys.exit(77)
    env = dict(os.environ, EMBER_PEERS_REEXEC="1")
    os.execve(venv_python, [venv_python, os.path.abspath(__file__)] + argv, env)


def tool(build, name):
    path = os.path.join(build, "bin", name)
    if not os.access(path, os.X_OK):
        sys.exit(f"embedding_vs_peers: {path} not found: build the target {name} first")
    return path


def lookup_library(build):
    path = os.path.join(build, "lib", "libember_bench_lookup.so")
    if not os.access(path, os.R_OK):
        sys.exit(f"embedding_vs_peers: {path} not found: build the target ember_bench_lookup "
                 "first (or pass --ember-process)")
    return path


def stream_read(build, threads, hugepages):
    """Streaming-read bandwidth (GB/s) with exactly `threads` threads."""
    r = subprocess.run([tool(build, "bench_stream_read"), "--mib", "1024", "--threads",
                        str(threads), "--passes", "3", "--hugepages", "1" if hugepages else "0"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"embedding_vs_peers: bench_stream_read failed:\n{r.stderr}")
    found = dict(re.findall(r"threads=(\d+) mib=\d+ best_gbps=([0-9.]+)", r.stdout))
    if str(threads) not in found:
        sys.exit(f"embedding_vs_peers: unexpected bench_stream_read output: {r.stdout}")
    return float(found[str(threads)])


def quartiles(values):
    v = sorted(values)
    if len(v) < 2:
        return v[0], v[0], v[0]
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], statistics.median(v), q[2]


class EmberDriver:
    """ember_embedding_driver --serve 1: loads once, times on request."""

    def __init__(self, cmd):
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            self.fail(f"expected 'ready', got '{line}'")

    def fail(self, what):
        self.proc.kill()
        err = self.proc.stderr.read()
        sys.exit(f"embedding_vs_peers: {' '.join(self.cmd)}: {what}\n{err}")

    def ask(self, command, prefix):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().strip()
        if not line.startswith(prefix):
            self.fail(f"'{command}' answered '{line}'")
        return line

    def times(self, iters):
        return [float(t) for t in self.ask(f"run {iters}", "times").split()[1:]]

    def ceiling(self, iters):
        """Times of the loads-only loop (row_read_ceiling.h) and its prefetch distance."""
        words = self.ask(f"ceiling {iters}", "times").split()
        return [float(t) for t in words[1:-2]], int(words[-1])

    def output(self, path):
        self.ask(f"out {path}", "written")

    def output_array(self, np, path, shape):
        self.output(path)
        return np.fromfile(path, dtype=np.float32).reshape(shape)

    def pages(self):
        """(bytes of the tables in huge pages or -1, the tables' bytes)."""
        huge, total = self.ask("pages", "pages").split()[1:]
        return int(huge), int(total)

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=60)


class EmberInProcess:
    """Ember's embedding_bag in this process (libember_bench_lookup.so, ctypes).

    It reads the very buffers the peers read (table, ids, offsets), so every
    side's rows are in the same memory: across processes the same lookup
    differs by up to 1.6x on a VM with the guest pages behind each table.
    Same interface as EmberDriver.
    """

    def __init__(self, lib_path, np, table, rows, dim, fmt, ids, offsets, threads, flush,
                 flush_mib, quantized_sums=None):
        import ctypes
        # The library trusts these buffers: check what it will read.
        row_bytes = dim + 8 if fmt == "int8_rowwise" else dim * table.itemsize
        for name, a, dtype in (("ids", ids, np.int64), ("offsets", offsets, np.int64)):
            if a.dtype != dtype or a.ndim != 1 or not a.flags.c_contiguous:
                sys.exit(f"embedding_vs_peers: {name} must be a contiguous 1-D int64 array")
        if (not table.flags.c_contiguous or rows <= 0 or dim <= 0 or offsets.size < 1
                or table.nbytes != rows * row_bytes):
            sys.exit(f"embedding_vs_peers: the table must be a contiguous {rows} x {row_bytes}-byte "
                     f"array for {fmt}, got {table.shape} {table.dtype}")
        self.flush = flush
        self.lib = ctypes.CDLL(lib_path)
        c = ctypes
        self.lib.ember_bench_lookup_open.restype = c.c_void_p
        self.lib.ember_bench_lookup_open.argtypes = [
            c.c_void_p, c.c_int64, c.c_int64, c.c_char_p, c.c_void_p, c.c_int64, c.c_void_p,
            c.c_int64, c.c_int, c.c_int, c.c_char_p, c.c_size_t]
        self.lib.ember_bench_lookup_run.argtypes = [c.c_void_p, c.c_char_p, c.c_size_t]
        self.lib.ember_bench_lookup_output.argtypes = [c.c_void_p, c.c_void_p]
        self.lib.ember_bench_lookup_ceiling.restype = c.c_double
        self.lib.ember_bench_lookup_ceiling.argtypes = [c.c_void_p, c.c_int64]
        self.lib.ember_bench_lookup_ceiling_distance.restype = c.c_int64
        self.lib.ember_bench_lookup_ceiling_distance.argtypes = [c.c_void_p]
        self.lib.ember_bench_lookup_close.argtypes = [c.c_void_p]
        self.lib.ember_bench_lookup_set_quantized_sums.argtypes = [c.c_void_p, c.c_char_p]
        # Keep the buffers alive as long as the handle.
        self.table, self.ids, self.offsets = table, ids, offsets
        self.err = ctypes.create_string_buffer(4096)
        self.handle = self.lib.ember_bench_lookup_open(
            table.ctypes.data, rows, dim, fmt.encode(), ids.ctypes.data, ids.size,
            offsets.ctypes.data, offsets.size - 1, threads, flush_mib, self.err, len(self.err))
        if not self.handle:
            sys.exit(f"embedding_vs_peers: {lib_path}: {self.err.value.decode()}")
        if quantized_sums and self.lib.ember_bench_lookup_set_quantized_sums(
                self.handle, quantized_sums.encode()) != 0:
            sys.exit(f"embedding_vs_peers: {lib_path}: unknown order of quantized sums "
                     f"'{quantized_sums}'")
        self.distance = None

    def times(self, iters):
        out = []
        for _ in range(iters):
            self.flush.sum()
            start = time.perf_counter()
            rc = self.lib.ember_bench_lookup_run(self.handle, self.err, len(self.err))
            out.append(time.perf_counter() - start)
            if rc != 0:
                sys.exit(f"embedding_vs_peers: Ember's lookup failed: {self.err.value.decode()}")
        return out

    def ceiling(self, iters):
        if self.distance is None:  # chosen as ember_embedding_driver's `ceiling` does
            self.distance = self.lib.ember_bench_lookup_ceiling_distance(self.handle)
        out = []
        for _ in range(iters):
            self.flush.sum()
            out.append(self.lib.ember_bench_lookup_ceiling(self.handle, self.distance))
        if self.distance < 0 or min(out) < 0:
            sys.exit("embedding_vs_peers: the loads-only ceiling needs 1 thread and rows of "
                     "at least 4 bytes")
        return out, self.distance

    def output_array(self, np, path, shape):
        out = np.empty(shape, dtype=np.float32)
        if self.lib.ember_bench_lookup_output(self.handle, out.ctypes.data) != 0:
            sys.exit("embedding_vs_peers: Ember's lookup has no float32 output")
        return out

    def pages(self):
        return huge_bytes_in(self.table.ctypes.data, self.table.nbytes), self.table.nbytes

    def close(self):
        if self.handle:
            self.lib.ember_bench_lookup_close(self.handle)
            self.handle = None


def huge_bytes_in(address, nbytes, smaps="/proc/self/smaps"):
    """Bytes of [address, address + nbytes) backed by transparent huge pages.

    For each mapping of `smaps` that overlaps the range: its AnonHugePages,
    capped at the overlap (bench_table_memory.h's hugePageBytesIn, the same
    rule). -1 when the file cannot be read or no mapping overlaps the range.
    """
    lo, hi = address, address + nbytes
    huge, overlap, found = 0, 0, False
    try:
        with open(smaps) as f:
            for line in f:
                m = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
                if m:
                    start, end = int(m.group(1), 16), int(m.group(2), 16)
                    overlap = max(0, min(end, hi) - max(start, lo))
                    found = found or overlap > 0
                elif overlap and line.startswith("AnonHugePages:"):
                    huge += min(int(line.split()[1]) * 1024, overlap)
    except OSError:
        return -1
    return huge if found else -1


def huge_pct(huge, total):
    return None if huge < 0 or total <= 0 else 100.0 * huge / total


def table_buffer(np, nbytes, hugepages):
    """A writable uint8 numpy buffer of private anonymous memory (madvised when asked).

    Private: Python's default anonymous mmap is MAP_SHARED (shmem), which
    transparent huge pages leave alone unless shmem_enabled says otherwise.
    """
    import mmap
    m = mmap.mmap(-1, max(nbytes, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hugepages and hasattr(m, "madvise") and hasattr(mmap, "MADV_HUGEPAGE"):
        m.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(m, dtype=np.uint8, count=nbytes)


def run_config(args, cfg, np, torch, peers):
    """Interleaved rounds for one configuration; returns its result row.

    cfg["peer_tables"]: the numpy arrays the peers read their tables from
    (for the page-policy check).
    """
    tmp = cfg["tmp"]
    flush = np.ones(args.flush_mib << 17, dtype=np.uint64)
    if "in_process" in cfg and not args.ember_process:
        ip = cfg["in_process"]
        driver = EmberInProcess(lookup_library(args.build), np, ip["table"], ip["rows"],
                                ip["dim"], ip["format"], ip["ids"], ip["offsets"],
                                cfg["threads"], flush, args.flush_mib)
    else:
        driver = EmberDriver(cfg["driver_cmd"])
    base = (EmberDriver([args.baseline_driver] + cfg["driver_cmd"][1:])
            if args.baseline_driver else None)
    # --int8-sums both: Ember in FBGEMM's order too, on the same buffers.
    fbgemm_order = None
    if args.int8_sums == "both" and cfg["kind"] == "int8" and isinstance(driver, EmberInProcess):
        ip = cfg["in_process"]
        fbgemm_order = EmberInProcess(lookup_library(args.build), np, ip["table"], ip["rows"],
                                      ip["dim"], ip["format"], ip["ids"], ip["offsets"],
                                      cfg["threads"], flush, args.flush_mib, "fbgemm")
    torch.set_num_threads(cfg["threads"])
    load_before = os.getloadavg()[0]
    # With 1 thread only: a second thread's loads-only loop (thread start,
    # placement, the other vCPU's load) measured from 0.6x to 1.6x of the
    # kernels' time on the 2-vCPU VM, no bound at all.
    ceiling = args.ceiling and cfg["kind"] in ("fp32", "int8") and cfg["threads"] == 1
    sides = (["ember"] + list(peers) + (["ember_base"] if base else []) +
             (["ember_fbgemm"] if fbgemm_order else []) + (["ceiling"] if ceiling else []))
    ceiling_distance = None
    outs = {}
    # One untimed call per peer (warm-up, and the output to compare).
    for name, fn in peers.items():
        with torch.no_grad():
            outs[name] = fn().numpy().copy()
    per_round = {s: [] for s in sides}
    for r in range(args.rounds):
        order = sides[r % len(sides):] + sides[:r % len(sides)]
        for side in order:
            if side in ("ember", "ember_base", "ember_fbgemm"):
                d = {"ember": driver, "ember_base": base, "ember_fbgemm": fbgemm_order}[side]
                per_round[side].append(statistics.median(d.times(args.iters)))
                continue
            if side == "ceiling":
                times, ceiling_distance = driver.ceiling(args.iters)
                per_round[side].append(statistics.median(times))
                continue
            times = []
            for _ in range(args.iters):
                flush.sum()
                with torch.no_grad():
                    start = time.perf_counter()
                    peers[side]()
                    times.append(time.perf_counter() - start)
            per_round[side].append(statistics.median(times))
    out_path = os.path.join(tmp, "ember_out.bin")
    ember_out = driver.output_array(np, out_path, cfg["out_shape"])
    ember_huge, ember_bytes = driver.pages()
    driver.close()
    peer_huge = [huge_bytes_in(a.ctypes.data, a.nbytes) for a in cfg["peer_tables"]]
    pages = {"ember": huge_pct(ember_huge, ember_bytes),
             "peers": huge_pct(-1 if min(peer_huge) < 0 else sum(peer_huge),
                               sum(a.nbytes for a in cfg["peer_tables"]))}
    warnings = []
    if None in pages.values():
        warnings.append("page policy unknown (cannot read /proc/PID/smaps)")
    elif abs(pages["ember"] - pages["peers"]) > 10:
        warnings.append(f"page policy differs: Ember's tables {pages['ember']:.0f}% in huge "
                        f"pages, the peers' {pages['peers']:.0f}%")
    mismatches = []
    if base:
        base.output(out_path + ".base")
        base.close()
        base_out = np.fromfile(out_path + ".base", dtype=np.float32).reshape(cfg["out_shape"])
        if not np.array_equal(base_out, ember_out):
            mismatches.append("ember_base: not bit-identical to ember")
    if fbgemm_order:
        # In FBGEMM's order Ember's int8 sums are FBGEMM's: bit-identical.
        fbgemm_out = fbgemm_order.output_array(np, out_path + ".fbgemm", cfg["out_shape"])
        fbgemm_order.close()
        for name, ref in outs.items():
            if ref.shape != fbgemm_out.shape or not np.array_equal(fbgemm_out, ref):
                mismatches.append(f"ember_fbgemm: not bit-identical to {name}")
    exact = {}
    for name, ref in outs.items():
        if ref.shape == ember_out.shape:
            exact[name] = int(np.count_nonzero(ember_out != ref))
        if cfg["kind"] == "int8" and args.int8_sums == "fbgemm" and exact.get(name, 1) != 0:
            # In FBGEMM's order Ember's int8 sums are FBGEMM's: bit-identical.
            mismatches.append(f"{name}: {exact.get(name, 'all')} elements not bit-identical")
        tol = 1e-5 if cfg["kind"] == "int8" else 1e-4
        # Sums in another order differ by roundings of the partial sums, whose
        # size is the output's scale, not each element's (a sum can cancel).
        atol = tol * max(1.0, float(np.max(np.abs(ref)))) if ref.size else tol
        if ref.shape != ember_out.shape or not np.allclose(ember_out, ref, rtol=tol, atol=atol):
            worst = (np.max(np.abs(ember_out - ref)) if ref.shape == ember_out.shape
                     else f"shape {ref.shape} vs {ember_out.shape}")
            mismatches.append(f"{name}: max abs difference {worst}")
    bw = stream_read(args.build, cfg["threads"], args.hugepages)
    load_after = os.getloadavg()[0]
    ratios = {}
    for name in peers:
        ratios[name] = quartiles([p / e for p, e in zip(per_round[name], per_round["ember"])])
    best_peer = [min(per_round[n][i] for n in peers) for i in range(args.rounds)]
    ratios["best"] = quartiles([p / e for p, e in zip(best_peer, per_round["ember"])])
    for other in ("ember_base", "ember_fbgemm"):
        if other in per_round:
            ratios[other] = quartiles(
                [b / e for b, e in zip(per_round[other], per_round["ember"])])
    if ceiling:
        # Speed as a fraction of the loads-only loop's (<= 1 up to noise), and
        # the most any kernel could lead the best peer by: best peer / ceiling.
        ratios["ember_of_ceiling"] = quartiles(
            [c / e for c, e in zip(per_round["ceiling"], per_round["ember"])])
        ratios["best_peer_of_ceiling"] = quartiles(
            [c / p for c, p in zip(per_round["ceiling"], best_peer)])
        ratios["best_peer_over_ceiling"] = quartiles(
            [p / c for c, p in zip(per_round["ceiling"], best_peer)])
    ember_s = statistics.median(per_round["ember"])
    gbps = cfg["useful_bytes"] / ember_s / 1e9
    return {
        "name": cfg["name"], "kind": cfg["kind"], "threads": cfg["threads"],
        "ember_in_process": isinstance(driver, EmberInProcess),
        "ms": {s: 1e3 * statistics.median(per_round[s]) for s in sides},
        "ratios": ratios, "ember_gbps": gbps, "stream_gbps": bw,
        "pct_stream": 100 * gbps / bw, "load": (load_before, load_after),
        "ceiling_distance": ceiling_distance,
        "mismatches": mismatches, "elements_differing": exact,
        "int8_sums": args.int8_sums,
        "huge_page_pct": pages, "warnings": warnings,
    }


def print_header(kinds):
    print(f"{'configuration':<34} {'thr':>3} {'ember ms':>9} {'peer ms':>22} "
          f"{'x vs best peer (IQR)':>22} {'GB/s':>6} {'%strm':>6} {'load':>9}")


def print_row(row):
    peers = [p for p in row["ms"] if p not in ("ember", "ember_base", "ember_fbgemm", "ceiling")]
    peer_ms = " ".join(f"{p}={row['ms'][p]:.2f}" for p in peers)
    q1, med, q3 = row["ratios"]["best"]
    print(f"{row['name']:<34} {row['threads']:>3} {row['ms']['ember']:>9.2f} {peer_ms:>22} "
          f"{med:>8.2f}x ({q1:.2f}-{q3:.2f}) {row['ember_gbps']:>6.2f} "
          f"{row['pct_stream']:>5.1f}% {row['load'][0]:>4.1f}/{row['load'][1]:<4.1f}")
    for name in peers:
        q1, med, q3 = row["ratios"][name]
        print(f"{'':<34}     vs {name}: {med:.2f}x (IQR {q1:.2f}-{q3:.2f})")
    if "ember_base" in row["ratios"]:
        q1, med, q3 = row["ratios"]["ember_base"]
        print(f"{'':<34}     vs ember_base (before the change, "
              f"{row['ms']['ember_base']:.2f} ms): {med:.2f}x (IQR {q1:.2f}-{q3:.2f})")
    if "ember_fbgemm" in row["ratios"]:
        q1, med, q3 = row["ratios"]["ember_fbgemm"]
        print(f"{'':<34}     Ember in FBGEMM's order ({row['ms']['ember_fbgemm']:.2f} ms) / "
              f"in the fast order: {med:.2f}x (IQR {q1:.2f}-{q3:.2f})")
    if "ember_of_ceiling" in row["ratios"]:
        e, p, h = (row["ratios"][k] for k in
                   ("ember_of_ceiling", "best_peer_of_ceiling", "best_peer_over_ceiling"))
        print(f"{'':<34}     loads-only ceiling {row['ms']['ceiling']:.2f} ms (prefetch "
              f"{row['ceiling_distance']} ids ahead): Ember at {e[1]:.2f} of its speed "
              f"(IQR {e[0]:.2f}-{e[2]:.2f}), best peer at {p[1]:.2f} ({p[0]:.2f}-{p[2]:.2f}); "
              f"a kernel at the ceiling would lead the best peer {h[1]:.2f}x "
              f"({h[0]:.2f}-{h[2]:.2f})")
    if row["kind"] == "int8":
        for name, n in row["elements_differing"].items():
            if n == 0:
                print(f"{'':<34}     vs {name}: bit-identical")
    pages = row["huge_page_pct"]
    if None not in pages.values():
        print(f"{'':<34}     tables in huge pages: Ember {pages['ember']:.0f}%, "
              f"peers {pages['peers']:.0f}%")
    for w in row["warnings"]:
        print(f"{'':<34}     WARNING {w}")
    for m in row["mismatches"]:
        print(f"{'':<34}     MISMATCH {m}")
    sys.stdout.flush()


def quantize_rowwise(np, table):
    """FBGEMM/torch byte row-wise: codes, then float32 scale and bias per row."""
    lo = table.min(axis=1, keepdims=True)
    hi = table.max(axis=1, keepdims=True)
    scale = np.where(hi > lo, (hi - lo) / 255.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint((table - lo) / scale), 0, 255).astype(np.uint8)
    rows, dim = table.shape
    packed = np.empty((rows, dim + 8), dtype=np.uint8)
    packed[:, :dim] = codes
    packed[:, dim:dim + 4] = scale.view(np.uint8).reshape(rows, 4)
    packed[:, dim + 4:] = lo.astype(np.float32).view(np.uint8).reshape(rows, 4)
    return packed


def make_tbe(torch, specs, hugepages, np):
    """FBGEMM's TBE on the host over tables of (rows, dim), weights in a fresh buffer."""
    from fbgemm_gpu.split_table_batched_embeddings_ops_training import (
        ComputeDevice, SplitTableBatchedEmbeddingBagsCodegen)
    from fbgemm_gpu.split_table_batched_embeddings_ops_common import (
        EmbeddingLocation, PoolingMode)
    from fbgemm_gpu.split_embedding_configs import EmbOptimType, SparseType
    tbe = SplitTableBatchedEmbeddingBagsCodegen(
        [(r, d, EmbeddingLocation.HOST, ComputeDevice.CPU) for r, d in specs],
        pooling_mode=PoolingMode.SUM, weights_precision=SparseType.FP32,
        optimizer=EmbOptimType.EXACT_SGD)
    numel = sum(r * d for r, d in specs)
    flat = table_buffer(np, numel * 4, hugepages).view(np.float32)
    tbe.weights_host.data = torch.from_numpy(flat)
    return tbe, flat


def fp32_configs(args):
    if args.quick:
        return [(100_000, 64, 2048, 20)]
    return [(r, d, b, l) for r in args.row_list for d in args.dim_list
            for b in args.batch_list for l in args.pooling_list]


def table_args(table_path, rows, dim, fmt, tmp):
    """ember_embedding_driver's arguments for one table and the ids/offsets files in tmp."""
    return ["--table", table_path, "--rows", str(rows), "--dim", str(dim), "--format", fmt,
            "--indices", os.path.join(tmp, "ids.bin"),
            "--offsets", os.path.join(tmp, "offsets.bin"), "--pooling", "sum"]


def needs_files(args):
    """Whether single-table configurations need their inputs in files (for a driver process)."""
    return args.ember_process or bool(args.baseline_driver)


def serve_args(args, threads):
    """The driver's arguments shared by every configuration."""
    return ["--threads", str(threads), "--hugepages", "1" if args.hugepages else "0",
            "--flush-mib", str(args.flush_mib), "--serve", "1"]


def bench_fp32(args, np, torch, F, driver, rng, tmp, results):
    by_table = {}
    for rows, dim, batch, pooling in fp32_configs(args):
        by_table.setdefault((rows, dim), []).append((batch, pooling))
    for (rows, dim), shapes in by_table.items():
        tbe, flat = make_tbe(torch, [(rows, dim)], args.hugepages, np)
        weight = flat.reshape(rows, dim)
        for start in range(0, rows, 1 << 20):  # in chunks: no second full-size copy
            end = min(rows, start + (1 << 20))
            weight[start:end] = rng.random((end - start, dim), dtype=np.float32) * 2 - 1
        table_path = os.path.join(tmp, "table.bin")
        if needs_files(args):
            weight.tofile(table_path)
        tweight = torch.from_numpy(weight)
        for batch, pooling in shapes:
            n = batch * pooling
            ids = rng.integers(0, rows, size=n, dtype=np.int64)
            offsets = np.arange(0, n + 1, pooling, dtype=np.int64)
            ids.tofile(os.path.join(tmp, "ids.bin"))
            offsets.tofile(os.path.join(tmp, "offsets.bin"))
            tids, toffs = torch.from_numpy(ids), torch.from_numpy(offsets)
            peers = {
                "torch": lambda: F.embedding_bag(tids, tweight, toffs, mode="sum",
                                                 include_last_offset=True),
                "tbe": lambda: tbe(tids, toffs),
            }
            for threads in args.thread_list:
                cfg = {
                    "kind": "fp32", "threads": threads, "tmp": tmp,
                    "name": f"fp32 R={rows // 1000}k D={dim} B={batch} L={pooling}",
                    "out_shape": (batch, dim),
                    "useful_bytes": n * dim * 4 + batch * dim * 4,
                    "peer_tables": [flat],
                    "driver_cmd": [driver, *table_args(table_path, rows, dim, "float32", tmp),
                                   *serve_args(args, threads)],
                    "in_process": {"table": weight, "rows": rows, "dim": dim,
                                   "format": "float32", "ids": ids, "offsets": offsets},
                }
                results.append(run_config(args, cfg, np, torch, peers))
                print_row(results[-1])
        del tbe, flat, weight, tweight
        if needs_files(args):
            os.remove(table_path)


def bench_int8(args, np, torch, driver, rng, tmp, results):
    shapes = ([(100_000, 64, 2048, 20)] if args.quick else
              [(1_000_000, d, 2048, l) for d in args.dim_list for l in args.pooling_list])
    for rows, dim, batch, pooling in shapes:
        packed_np = quantize_rowwise(np, rng.random((rows, dim), dtype=np.float32) * 2 - 1)
        packed = table_buffer(np, packed_np.nbytes, args.hugepages).reshape(rows, dim + 8)
        packed[:] = packed_np
        del packed_np
        table_path = os.path.join(tmp, "table_q8.bin")
        if needs_files(args):
            packed.tofile(table_path)
        n = batch * pooling
        ids = rng.integers(0, rows, size=n, dtype=np.int64)
        offsets = np.arange(0, n + 1, pooling, dtype=np.int64)
        ids.tofile(os.path.join(tmp, "ids.bin"))
        offsets.tofile(os.path.join(tmp, "offsets.bin"))
        tq, tids, toffs = (torch.from_numpy(packed), torch.from_numpy(ids),
                           torch.from_numpy(offsets))
        op = torch.ops.quantized.embedding_bag_byte_rowwise_offsets
        peers = {"torch_q8": lambda: op(tq, tids, toffs, False, 0, False, None, None, True)}
        for threads in args.thread_list:
            cfg = {
                "kind": "int8", "threads": threads, "tmp": tmp,
                "name": f"int8 R={rows // 1000}k D={dim} B={batch} L={pooling}",
                "out_shape": (batch, dim),
                "useful_bytes": n * (dim + 8) + batch * dim * 4,
                "peer_tables": [packed],
                "driver_cmd": [driver, *table_args(table_path, rows, dim, "int8_rowwise", tmp),
                               *serve_args(args, threads)],
                "in_process": {"table": packed, "rows": rows, "dim": dim,
                               "format": "int8_rowwise", "ids": ids, "offsets": offsets},
            }
            results.append(run_config(args, cfg, np, torch, peers))
            print_row(results[-1])
        if needs_files(args):
            os.remove(table_path)


def bench_grouped(args, np, torch, driver, rng, tmp, results):
    dim, batch = 64, 4096
    if args.quick:
        rows = [50_000, 20_000, 1000, 100]
        lengths_per_feature = [20, 20, 1, 1]
    else:
        rows = [min(r, 1_000_000) for r in CRITEO_ROWS]
        # The 4 largest tables get L 20, the other 22 L 1.
        largest = sorted(range(len(rows)), key=lambda t: -rows[t])[:4]
        lengths_per_feature = [20 if t in largest else 1 for t in range(len(rows))]
    T = len(rows)
    tbe, flat = make_tbe(torch, [(r, dim) for r in rows], args.hugepages, np)
    paths, start = [], 0
    for t, r in enumerate(rows):
        part = flat[start:start + r * dim].reshape(r, dim)
        part[:] = rng.random((r, dim), dtype=np.float32) * 2 - 1
        paths.append(os.path.join(tmp, f"table{t}.bin"))
        part.tofile(paths[-1])
        start += r * dim
    values, lengths = [], []
    for t in range(T):  # feature-major, as TBE and the KJT both take them
        L = lengths_per_feature[t]
        values.append(rng.integers(0, rows[t], size=batch * L, dtype=np.int64))
        lengths.append(np.full(batch, L, dtype=np.int64))
    values, lengths = np.concatenate(values), np.concatenate(lengths)
    values.tofile(os.path.join(tmp, "values.bin"))
    lengths.tofile(os.path.join(tmp, "lengths.bin"))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    tvals, toffs = torch.from_numpy(values), torch.from_numpy(offsets)
    peers = {"tbe": lambda: tbe(tvals, toffs)}
    n = int(values.size)
    for threads in args.thread_list:
        cfg = {
            "kind": "grouped", "threads": threads, "tmp": tmp,
            "name": f"grouped {T} tables D={dim} B={batch}",
            "out_shape": (batch, T * dim),
            "useful_bytes": n * dim * 4 + batch * T * dim * 4,
            "peer_tables": [flat],
            "driver_cmd": [driver, "--kernel", "grouped_embedding_bag",
                           "--tables", ",".join(paths),
                           "--table-rows", ",".join(map(str, rows)), "--dim", str(dim),
                           "--feature-tables", ",".join(map(str, range(T))),
                           "--values", os.path.join(tmp, "values.bin"),
                           "--lengths", os.path.join(tmp, "lengths.bin"),
                           *serve_args(args, threads)],
        }
        results.append(run_config(args, cfg, np, torch, peers))
        print_row(results[-1])


def main(argv):
    args = parse_args(argv)
    ensure_peer_python(args, argv)
    import numpy as np
    import torch
    import torch.nn.functional as F
    import fbgemm_gpu
    driver = tool(args.build, "ember_embedding_driver")
    tool(args.build, "bench_stream_read")
    rng = np.random.default_rng(args.seed)
    sums_order = ("Ember's quantized sums in the fast order, and in FBGEMM's as ember_fbgemm"
                  if args.int8_sums == "both" else
                  f"Ember's quantized sums in the {args.int8_sums} order")
    print(f"embedding_vs_peers: torch {torch.__version__}, fbgemm_gpu "
          f"{getattr(fbgemm_gpu, '__version__', '?')}, {os.cpu_count()} CPUs, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"tables in {'transparent huge pages' if args.hugepages else '4 KiB pages'}; "
          f"{args.rounds} rounds x {args.iters} lookups per side; {sums_order}")
    print("ratios: peer time / Ember time per round (> 1: Ember faster), median and IQR; "
          "GB/s: Ember's useful bytes (rows read + output written) per second; "
          "%strm: of bench_stream_read with as many threads; load: 1-min load before/after")
    print_header(args.kinds)
    results = []
    with tempfile.TemporaryDirectory(prefix="ember_peers_") as tmp:
        if "fp32" in args.kinds:
            bench_fp32(args, np, torch, F, driver, rng, tmp, results)
        if "int8" in args.kinds:
            bench_int8(args, np, torch, driver, rng, tmp, results)
        if "grouped" in args.kinds:
            bench_grouped(args, np, torch, driver, rng, tmp, results)
    if args.json:
        with open(args.json + ".partial", "w") as f:
            json.dump(results, f, indent=1)
        os.replace(args.json + ".partial", args.json)
    bad = [r for r in results if r["mismatches"]]
    if bad:
        print(f"embedding_vs_peers: outputs differ in {len(bad)} configuration(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
