"""The sharding report as one HTML page, end to end (docs/sharding.md, "Report").

usage: html_report_test.py CASE EMBER_COMPILE EMBER_OPT WORKDIR

Cases:
  numbers   For several plans of model.mlir (4 ranks on 2 nodes, 16 ranks,
            row_wise forced with a note, 1 rank whose big tables go to host
            memory, backward and adam through ember-opt) and, when
            /usr/bin/python3 has torch, the examples/dlrm ONNX model:
            --emit sharding-report writes text and HTML; both are parsed and
            every figure (header, topology, tables, ranks, notes, placement)
            must be equal, and the bars' lengths must match the figures.
  escaping  A table named <script>&"' : the HTML holds it escaped wherever
            it appears (tables, placement, matrix, note), no <script> tag and
            nothing loaded from elsewhere; parsed back, the name is the text
            report's.
  errors    --report-format text to .html, html to .txt, an unknown format,
            --report-format with another --emit, a missing directory, a plan
            that does not fit: exit 1 with a message naming the problem, no
            output file (an existing one untouched); .HTM and `-o -` work.
  render    Headless Chromium renders two reports to PNG screenshots (kept
            in WORKDIR): they are not blank and show the bars' colours
            (cost parts, device memory, host memory). Skipped (status 77)
            when neither chromium-headless-shell nor chromium is installed
            (scripts/setup.sh installs chromium-headless-shell).
"""
import html.parser
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "model.mlir")
TOPOLOGY = os.path.join(HERE, "topology.json")          # 2 ranks a node, 8 GB
SMALL_DEVICE = os.path.join(HERE, "small_device.json")  # 2.5 GB: UVM tables
STATS = os.path.join(HERE, "stats.json")
DLRM_EXPORT = os.path.join(HERE, "..", "..", "..", "examples", "dlrm",
                           "export.py")
ESCAPED_NAME = "<script>&\"'"


def run(cmd, timeout=120, **kwargs):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, **kwargs)


def fail(msg, proc=None):
    print("FAIL:", msg)
    if proc is not None:
        print("stdout:", proc.stdout[-4000:])
        print("stderr:", proc.stderr[-4000:])
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


# ---------------------------------------------------------------- the text


TEXT_HEADER = [
    (r"Sharding plan: (\d+) rank\(s\), (\d+) per node, batch (\d+) per rank$",
     ["world_size", "ranks_per_node", "batch"]),
    (r"Score \(max per-rank cost\): ([\d.]+) us per batch; collective step "
     r"([\d.]+) us; sum over ranks ([\d.]+) us$",
     ["max_cost", "collective_step", "total_cost"]),
    (r"Imbalance \(max/mean\): cost ([\d.]+) \(mean ([\d.]+) us\), device "
     r"memory ([\d.]+)$", ["imbalance", "mean_cost", "device_imbalance"]),
    (r"Memory per rank: ([\d.]+) GiB of device memory for embeddings \(of "
     r"([\d.]+) GiB\), ([\d.]+) GiB of host memory$",
     ["usable_device_gib", "device_gib", "host_gib"]),
    (r"Objective: (.*)$", ["objective"]),
    (r"Topology: device ([\d.]+) GB \(([\d.]+)% reserved[^)]*\), host ([\d.]+) GB, "
     r"device bandwidth ([\d.]+) GB/s \(([\d.]+)% for lookups\), intra-node "
     r"([\d.]+) GB/s, inter-node ([\d.]+) GB/s, host to device ([\d.]+) GB/s; "
     r"optimizer (\w+), pipeline depth (\d+)$",
     ["topo_device_gb", "topo_reserved_percent", "topo_host_gb",
      "topo_device_bw", "topo_lookup_percent", "topo_intra_bw",
      "topo_inter_bw", "topo_h2d_bw", "optimizer", "pipeline_depth"]),
]


def parse_text(text):
    """{"summary": {key: value}, "tables": [[8 cells]], "ranks": [[13]],
    "notes": [str]} of a text report."""
    lines = text.splitlines()
    summary = {}
    for (pattern, keys), line in zip(TEXT_HEADER, lines):
        m = re.match(pattern, line)
        check(m, "text report: %r does not match %r" % (line, pattern))
        summary.update(zip(keys, m.groups()))
    check(len(summary) == sum(len(k) for _, k in TEXT_HEADER),
          "text report: header incomplete:\n" + text)
    report = {"summary": summary, "tables": [], "ranks": [], "notes": []}
    section = None
    for line in lines[len(TEXT_HEADER):]:
        if not line.strip():
            section = None
            continue
        if line == "Tables:":
            section = "tables-header"
        elif line.startswith("Per rank"):
            section = "ranks-header"
        elif line == "Notes:":
            section = "notes"
        elif section == "tables-header":
            section = "tables"  # the column names
        elif section == "ranks-header":
            section = "ranks"
        elif section == "tables":
            cells = line.split()
            # Names in these models have no spaces; the ranks may.
            report["tables"].append(cells[:7] + [" ".join(cells[7:])])
        elif section == "ranks":
            report["ranks"].append([c for c in line.split() if c != "|"])
        elif section == "notes":
            report["notes"].append(line.strip())
        else:
            fail("text report: unexpected line %r" % line)
    return report


# ---------------------------------------------------------------- the HTML


class HtmlReport(html.parser.HTMLParser):
    """What the test reads from the page: data-key figures, the tables by
    id (rows of cell texts), the chart bars, the legend and every tag."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.summary = {}
        self.tables = {}
        self.notes = []
        self.legend = {}
        self.bars = {}  # (chart, rank) -> [(part, width, fill)]
        self.tracks = {}  # (chart, rank) -> width
        self.tags = set()
        self.attributes = []
        self._key = None
        self._table = None
        self._row = None
        self._cell = None
        self._chart = None
        self._group = None
        self._note = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        self.attributes.extend(attrs)
        if tag == "span" and "data-key" in a:
            self._key = a["data-key"]
            self.summary[self._key] = ""
        elif tag == "table":
            self._table = a.get("id")
            self.tables[self._table] = []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "li" and self._cell is not None:
            if self._cell:
                self._cell.append("\n")
        elif tag == "li" and self._cell is None:
            self._note = []
        elif tag == "svg" and "id" in a:
            self._chart = a["id"]
        elif tag == "g" and self._chart:
            self._group = (self._chart, int(a["data-rank"]))
            self.bars[self._group] = []
        elif tag == "rect" and "data-legend" in a:
            self.legend[a["data-legend"]] = a["fill"]
        elif tag == "rect" and self._group:
            cls = a.get("class", "").split()
            if "track" in cls:
                self.tracks[self._group] = float(a["width"])
                self.legend["track"] = a["fill"]
            else:
                check(cls[0] == "bar", "a rect that is no bar: %r" % attrs)
                self.bars[self._group].append(
                    (cls[1], float(a["width"]), a["fill"]))

    def handle_endtag(self, tag):
        if tag == "span" and self._key:
            self._key = None
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "li" and self._note is not None:
            self.notes.append("".join(self._note).strip())
            self._note = None
        elif tag == "g":
            self._group = None
        elif tag == "svg" and self._group is None:
            self._chart = None

    def handle_data(self, data):
        if self._key:
            self.summary[self._key] += data
        if self._cell is not None and not self._chart:
            self._cell.append(data)
        if self._note is not None:
            self._note.append(data)


def parse_html(text):
    page = HtmlReport()
    page.feed(text)
    page.close()
    return page


def compare(text, page_text, what):
    """Every figure of the text report equals the HTML report's."""
    ref = parse_text(text)
    page = parse_html(page_text)
    for key, value in ref["summary"].items():
        check(page.summary.get(key) == value,
              "%s: %s is %r in the text, %r in the HTML"
              % (what, key, value, page.summary.get(key)))
    tables = page.tables.get("tables", [])
    check(tables and tables[0][0] == "table", "%s: no tables table" % what)
    check(tables[1:] == ref["tables"],
          "%s: tables differ:\ntext %r\nhtml %r" % (what, ref["tables"],
                                                   tables[1:]))
    ranks = page.tables.get("ranks", [])
    check(ranks and ranks[0][:2] == ["rank", "cost"], "%s: no rank table" % what)
    check(ranks[1:] == ref["ranks"],
          "%s: ranks differ:\ntext %r\nhtml %r" % (what, ref["ranks"],
                                                  ranks[1:]))
    check(page.notes == ref["notes"],
          "%s: notes differ: %r vs %r" % (what, ref["notes"], page.notes))
    world = int(ref["summary"]["world_size"])
    check(len(ref["ranks"]) == world, "%s: %d rank lines" % (what, world))

    # Placement: a row per table, its kind and kernel, its shards' ranks.
    placement = page.tables.get("placement", [])[1:]
    check([row[:3] for row in placement] ==
          [[t[0], t[5], t[6]] for t in ref["tables"]],
          "%s: placement rows %r" % (what, placement))
    for row, table in zip(placement, ref["tables"]):
        if table[5] == "data_parallel":
            check("a whole replica (%s) on " % table[1] in row[3] and
                  table[7] in row[3],
                  "%s: replicas of %s: %r" % (what, table[0], row[3]))
            continue
        shard_ranks = [int(r) for r in re.findall(r"rank (\d+):", row[3])]
        rows, dim = (int(x) for x in table[1].split("x"))
        sizes = re.findall(r"\((\d+)x(\d+)\)", row[3])
        check(sum(int(r) * int(c) for r, c in sizes) == rows * dim,
              "%s: the shards of %s do not tile it: %r"
              % (what, table[0], row[3]))
        if len(shard_ranks) <= 8:
            check(table[7] == "[%s]" % ", ".join(map(str, shard_ranks)),
                  "%s: ranks of %s: %r vs %r"
                  % (what, table[0], table[7], shard_ranks))
    if world <= 32:
        matrix = page.tables.get("placement-matrix", [])
        check(len(matrix) == len(ref["tables"]) + 1 and
              len(matrix[0]) == world + 1,
              "%s: placement matrix %r" % (what, matrix))

    # Bars: lengths in proportion to the figures (rounded in the text).
    max_cost = float(ref["summary"]["max_cost"])
    bar = next(iter(page.tracks.values()))
    parts = ["lookup", "in_dist", "out_dist", "bwd"]
    for row in ref["ranks"]:
        rank = int(row[0])
        cost = page.bars.get(("cost-chart", rank))
        check(cost is not None, "%s: no cost bar for rank %d" % (what, rank))
        widths = {p: w for p, w, _ in cost}
        for i, part in enumerate(parts):
            want = float(row[2 + i]) / max_cost if max_cost > 0 else 0
            got = widths.get(part, 0) / bar
            check(abs(got - want) <= 0.01 + 0.006 / max(max_cost, 1e-9),
                  "%s: rank %d's %s bar is %.4f of the scale, the text says "
                  "%.4f" % (what, rank, part, got, want))
        device = page.bars.get(("device-chart", rank))
        got = sum(w for _, w, _ in device) / page.tracks[("device-chart", rank)]
        want = min(float(row[11]) / 100, 1.0)
        check(abs(got - want) <= 0.002,
              "%s: rank %d's device bar is %.4f of the limit, use%% %s"
              % (what, rank, got, row[11]))
        if float(row[12]) > 0:
            host = page.bars.get(("host-chart", rank))
            check(host, "%s: rank %d uses host memory but has no host bar"
                  % (what, rank))
    for (chart, _), rects in page.bars.items():
        for part, _, fill in rects:
            if part in page.legend:
                check(fill == page.legend[part],
                      "%s: %s bar colour %s, legend %s"
                      % (what, part, fill, page.legend[part]))
    return ref, page


def compile_report(compiler, out, args):
    proc = run([compiler, MODEL, "-o", out, "--emit", "sharding-report"]
               + args)
    if proc.returncode != 0:
        fail("ember-compile --emit sharding-report -o %s failed" % out, proc)
    with open(out, encoding="utf-8") as f:
        return f.read()


CONFIGS = {
    "two_nodes": ["--world-size", "4", "--topology", TOPOLOGY,
                  "--sharding-stats", STATS],
    "sixteen": ["--world-size", "16", "--topology", TOPOLOGY,
                "--sharding-stats", STATS, "--table-sharding",
                "t_hist=row_wise", "--table-sharding", "t_cat=data_parallel"],
    "row_wise_note": ["--world-size", "2", "--sharding", "row_wise"],
    "host_memory": ["--world-size", "1", "--topology", SMALL_DEVICE,
                    "--sharding-stats", STATS],
}


def case_numbers(compiler, opt, work):
    for name, args in CONFIGS.items():
        text = compile_report(compiler, os.path.join(work, name + ".txt"), args)
        page = compile_report(compiler, os.path.join(work, name + ".html"),
                              args)
        ref, parsed = compare(text, page, name)
        print("%s: %d tables, %d ranks, score %s us, imbalance %s: text and "
              "HTML agree" % (name, len(ref["tables"]), len(ref["ranks"]),
                              ref["summary"]["max_cost"],
                              ref["summary"]["imbalance"]))
        if name == "row_wise_note":
            check(ref["notes"], "row_wise_note: no note")
        if name == "host_memory":
            check(any(float(r[12]) > 0 for r in ref["ranks"]),
                  "host_memory: no rank uses host memory")
            check(("host-chart", 0) in parsed.bars, "host_memory: no host bar")
        if name == "sixteen":
            check(sum("16 ranks (0..15)" == t[7] for t in ref["tables"]
                      if t[0] in ("t_hist", "t_cat"))
                  == 2, "sixteen: t_hist and t_cat are not on every rank")

    # Backward estimate and optimizer state: ember-plan-sharding's options.
    outs = {}
    for ext in ("txt", "html"):
        outs[ext] = os.path.join(work, "training." + ext)
        pipeline = ("--ember-plan-sharding=world-size=4 ranks-per-node=2 "
                    "include-backward=true optimizer=adam pipeline-depth=3 "
                    "stats-file=%s report-file=%s" % (STATS, outs[ext]))
        proc = run([opt, MODEL, "-o", os.devnull, pipeline])
        if proc.returncode != 0:
            fail("ember-opt --ember-plan-sharding failed", proc)
    with open(outs["txt"]) as t, open(outs["html"]) as h:
        ref, parsed = compare(t.read(), h.read(), "training")
    check(ref["summary"]["optimizer"] == "adam" and
          ref["summary"]["pipeline_depth"] == "3", "training: options")
    check(any(float(r[5]) > 0 for r in ref["ranks"]) and
          any(float(r[7]) > 0 for r in ref["ranks"]),
          "training: no backward cost or optimizer state")
    check("bwd" in parsed.legend, "training: no backward in the legend")
    print("training (ember-opt, backward, adam): text and HTML agree")

    # A model from ONNX: the examples/dlrm DLRM.
    proc = run(["/usr/bin/python3", "-c", "import torch, numpy"])
    if proc.returncode != 0:
        print("SKIP (part): /usr/bin/python3 has no torch: the examples/dlrm "
              "ONNX model is not checked")
        return
    dlrm = os.path.join(work, "dlrm")
    os.makedirs(dlrm, exist_ok=True)
    proc = run(["/usr/bin/python3", DLRM_EXPORT, dlrm, "--batch", "4"],
               timeout=300)
    if proc.returncode != 0:
        fail("examples/dlrm/export.py failed", proc)
    reports = {}
    for ext in ("txt", "html"):
        out = os.path.join(dlrm, "report." + ext)
        proc = run([compiler, os.path.join(dlrm, "model.onnx"), "-o", out,
                    "--emit", "sharding-report", "--world-size", "4"])
        if proc.returncode != 0:
            fail("ember-compile of the DLRM failed", proc)
        with open(out) as f:
            reports[ext] = f.read()
    ref, _ = compare(reports["txt"], reports["html"], "dlrm")
    print("dlrm (ONNX, 4 ranks): %d tables: text and HTML agree"
          % len(ref["tables"]))


def case_escaping(compiler, opt, work):
    args = CONFIGS["row_wise_note"]
    out = os.path.join(work, "escaped.html")
    page_text = compile_report(compiler, out, args)
    text = compile_report(compiler, os.path.join(work, "escaped.txt"), args)
    escaped = "&lt;script&gt;&amp;&quot;&#39;"
    # Tables, placement, matrix, the note.
    check(page_text.count(escaped) >= 4,
          "the name appears escaped %d times" % page_text.count(escaped))
    lower = page_text.lower()
    check("<script" not in lower, "a <script in the page")
    for outside in ("http:", "https:", "src=", "href=", "<link", "<img",
                    "@import", "url(", "<iframe", "<object", "<embed",
                    "javascript:"):
        check(outside not in lower, "the page holds %r" % outside)
    page = parse_html(page_text)
    check("script" not in page.tags, "a script element")
    check(not any(name.startswith("on") for name, _ in page.attributes),
          "an event handler attribute")
    names = [row[0] for row in page.tables["tables"][1:]]
    check(ESCAPED_NAME in names, "the parsed names %r" % names)
    check(ESCAPED_NAME in [r[0] for r in page.tables["placement"][1:]],
          "the placement's names")
    check(ESCAPED_NAME in [r[0] for r in page.tables["placement-matrix"][1:]],
          "the matrix's names")
    check(any("'%s'" % ESCAPED_NAME in note for note in page.notes),
          "the note %r" % page.notes)
    ref = parse_text(text)
    check(ESCAPED_NAME in [t[0] for t in ref["tables"]],
          "the text report's names")
    compare(text, page_text, "escaping")
    print("the table %s is escaped in the HTML and equal once parsed"
          % ESCAPED_NAME)


def case_errors(compiler, opt, work):
    def refused(out, extra, message, emit="sharding-report"):
        proc = run([compiler, MODEL, "-o", out, "--emit", emit] + extra)
        check(proc.returncode == 1, "%s %s: exit %d" % (out, extra,
                                                       proc.returncode))
        check(message in proc.stderr,
              "%s %s: %r not in %r" % (out, extra, message, proc.stderr))
        print("refused:", proc.stderr.strip().splitlines()[-1])
        return proc

    html_out = os.path.join(work, "r.html")
    refused(html_out, ["--report-format", "text"],
            "the report format text contradicts the file name '%s'"
            % html_out)
    check(not os.path.exists(html_out), "r.html written")
    txt_out = os.path.join(work, "r.txt")
    refused(txt_out, ["--report-format", "html"],
            "the report format html contradicts the file name")
    refused(os.path.join(work, "r.out"), ["--report-format", "svg"],
            "unknown report format 'svg' (expected text or html)")
    refused(os.path.join(work, "r.json"), ["--report-format", "html"],
            "--report-format applies to --emit sharding-report only",
            emit="sharding-plan")
    refused(os.path.join(work, "no", "such", "dir", "r.html"),
            ["--world-size", "2"], "cannot write the report")
    tiny = os.path.join(work, "tiny.json")
    with open(tiny, "w") as f:
        f.write('{"device_memory_gb": 0.5, "host_memory_gb": 1}')
    refused(html_out, ["--world-size", "2", "--topology", tiny], "fit")
    for name in ("r.html", "r.txt", "r.out", "r.json"):
        check(not os.path.exists(os.path.join(work, name)),
              "%s written on error" % name)
    # An existing report stays as it was.
    with open(html_out, "w") as f:
        f.write("earlier report")
    refused(html_out, ["--report-format", "text"], "contradicts")
    refused(html_out, ["--world-size", "2", "--topology", tiny], "fit")
    with open(html_out) as f:
        check(f.read() == "earlier report", "the earlier report changed")
    check(sorted(os.listdir(work)) == ["r.html", "tiny.json"],
          "files left behind: %r" % os.listdir(work))

    # Upper-case extension; standard output with --report-format html.
    upper = os.path.join(work, "R.HTM")
    page = compile_report(compiler, upper, ["--world-size", "2"])
    check(page.startswith("<!DOCTYPE html>"), ".HTM did not get HTML")
    proc = run([compiler, MODEL, "-o", "-", "--emit", "sharding-report",
                "--world-size", "2", "--report-format", "html"])
    check(proc.returncode == 0 and proc.stdout.startswith("<!DOCTYPE html>"),
          "-o - --report-format html: %r" % proc.stdout[:100])
    proc = run([compiler, MODEL, "-o", "-", "--emit", "sharding-report",
                "--world-size", "2"])
    check(proc.returncode == 0 and proc.stdout.startswith("Sharding plan:"),
          "-o - is text by default")


# ---------------------------------------------------------------- rendering


def read_png(path):
    """(width, height, [rows of (r, g, b)]) of an 8-bit RGB/RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "%s is not a PNG" % path)
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    check(depth == 8 and colour in (2, 6) and interlace == 0,
          "unexpected PNG format %r" % (header,))
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return width, height, rows


def find_chromium():
    for name in ("chromium-headless-shell", "chromium"):
        path = shutil.which(name)
        if path:
            return name, path
    return None, None


def render(chromium, html_path, png_path, work, size=(1000, 1400)):
    name, exe = chromium
    profile = os.path.join(work, "profile")
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    cmd = [exe] + (["--headless"] if name == "chromium" else []) + [
        "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        "--user-data-dir=" + profile, "--window-size=%d,%d" % size,
        "--screenshot=" + png_path, "file://" + os.path.abspath(html_path)]
    env = dict(os.environ, HOME=home)
    proc = run(cmd, timeout=120, env=env)
    if proc.returncode != 0 or not os.path.exists(png_path):
        fail("%s did not write the screenshot" % name, proc)
    width, height, rows = read_png(png_path)
    check((width, height) == size, "screenshot size %dx%d" % (width, height))
    counts = {}
    for row in rows:
        for pixel in row:
            counts[pixel] = counts.get(pixel, 0) + 1
    return counts, width * height


def colour_pixels(counts, colour, tolerance=2):
    want = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return sum(n for pixel, n in counts.items()
               if all(abs(p - w) <= tolerance for p, w in zip(pixel, want)))


def case_render(compiler, opt, work):
    chromium = find_chromium()
    if not chromium[0]:
        print("SKIP: neither chromium-headless-shell nor chromium is on PATH "
              "(scripts/setup.sh installs chromium-headless-shell); the HTML "
              "report is not rendered")
        sys.exit(77)
    print("renderer:", chromium[1])
    shots = {"two_nodes": ["lookup", "in_dist", "out_dist", "weights",
                           "track"],
             "host_memory": ["lookup", "weights", "host", "track"]}
    for name, colours in shots.items():
        html_path = os.path.join(work, name + ".html")
        page_text = compile_report(compiler, html_path, CONFIGS[name])
        page = parse_html(page_text)
        png = os.path.join(work, name + ".png")
        counts, total = render(chromium, html_path, png, work)
        white = counts.get((255, 255, 255), 0)
        check(len(counts) > 50, "%s: %d colours: a blank page?"
              % (name, len(counts)))
        check(white < 0.97 * total,
              "%s: %.1f%% of the screenshot is white" % (name,
                                                         100.0 * white / total))
        fills = page.legend
        for part in colours:
            check(part in fills, "%s: no %s colour in the page" % (name, part))
            n = colour_pixels(counts, fills[part])
            check(n >= 100, "%s: the %s colour %s covers %d pixels"
                  % (name, part, fills[part], n))
            print("%s: %s %s: %d pixels" % (name, part, fills[part], n))
        print("%s: %s, %d colours, %.1f%% white" % (name, png, len(counts),
                                                   100.0 * white / total))


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        sys.exit(2)
    case, compiler, opt, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cases = {"numbers": case_numbers, "escaping": case_escaping,
             "errors": case_errors, "render": case_render}
    if case not in cases:
        print("unknown case", case)
        sys.exit(2)
    cases[case](compiler, opt, work)
    print("PASS", case)


if __name__ == "__main__":
    main()
