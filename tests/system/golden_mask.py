#!/usr/bin/env python3
"""Masks what varies between runs and hosts in an rdmabench report (stdin), for the golden test.

Usage: GOLDEN_RB=/path/to/rdmabench golden_mask.py FORMAT [sort] <report >masked
  sort: the rows come in a measured order (ring: fastest link first): they are sorted.

What stays (and must match the golden file): every header and column name and their order,
member names and their order, units, row counts, sizes, iteration counts, ranks, algorithms,
test parameters, row flags that do not depend on timing ("capped").
What is masked:
  - every number with a decimal point (1.25, 3e-05): "#.#" in text, "<num>" in JSON;
  - host name, dates and times, ports, pids, the binary's path, the version and git describe;
  - facts of the machine: the clock and placement lines / members, device properties (text:
    only their names are kept; JSON: the members are kept, their values masked);
  - what depends on timing: the "short" and "desched" row flags, WARNING lines and "warning"
    members, pairs' and ring's outlier verdicts, IMB's Msg/sec; a row's "descheduled" and
    "stalled" members (null or the counts) are kept with their values masked, run.extra's list
    is dropped; the "stall" row mark;
Formats: json (parsed, printed one member per line, plus the line count of the original),
csv (by column name), the others as text.
"""
import csv
import io
import json
import os
import re
import socket
import sys

HOST = socket.gethostname()
RB = os.environ.get("GOLDEN_RB", "")

# JSON members whose whole value is a fact of the machine, the clock or the moment.
VOLATILE = {
    "host", "hostname", "hosts", "pid", "pids", "port", "date", "time", "timestamp",
    "command_line", "version", "server_version", "git", "git_describe", "run_id", "wireup_s",
    "src_host", "dst_host", "local_host", "remote_host", "outlier", "lat_outlier",
    "bw_outlier", "outliers", "lat_flag", "bw_flag", "device_id", "local_address", "peer",
    "peer_address", "verdict", "descheduled_measurements",
}
# JSON members whose members are facts of the device or the machine: names kept, values masked.
FACTS = {"local", "remote", "connection", "clock", "placement", "caps", "device"}
# Members of "clock" present only on some machines (tsc_ghz when the TSC is used, note when it
# is not): dropped, so the goldens hold on a host without an invariant TSC too.
CLOCK_OPTIONAL = {"tsc_ghz", "note"}
# JSON members that appear or not depending on timing or the machine: dropped.
DROPPED = {"warning", "warnings", "descheduled", "progress_note"}
TIMING_FLAGS = {"short", "desched", "stall", "peer_late"}
# CSV columns masked whatever they hold.
CSV_MASKED = {"clock", "clock_read_ns", "clocksource", "cpus", "src_host", "dst_host",
              "lat_outlier", "bw_outlier", "outlier"}

# A decimal number that is not part of a dotted version or address (0.2.0, 127.0.0.1).
FLOAT = re.compile(r"(?<![\w.])[-+]?\d+\.\d+(?:[eE][-+]?\d+)?(?![\w.]*\d)|(?<![\w.])\d+[eE][-+]?\d+")
TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?|"
                  r"\b\d{1,2}:\d{2}:\d{2}\b|"
                  r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|"
                  r"Oct|Nov|Dec) +\d+ [\d:]+ \d{4}\b")
ADDR = re.compile(r"((?:\d{1,3}\.){3}\d{1,3}|\[[0-9a-fA-F:]+\]|localhost):\d+")
VERSION = re.compile(r"(rdmabench[ /]v?)\d+\.\d+\.\d+\S*")
GIT = re.compile(r"\(git [^)]*\)")


def mask_string(s):
    if RB:
        s = s.replace(RB, "rdmabench")
    s = TIME.sub("<TIME>", s)
    s = ADDR.sub(r"\1:<PORT>", s)
    s = re.sub(r"(-p|--port) \d+", r"\1 PORT", s)
    s = re.sub(r"\bpid \d+", "pid <PID>", s)
    s = VERSION.sub(r"\1<VERSION>", s)
    s = GIT.sub("(git <GIT>)", s)
    if HOST:
        s = re.sub(r"(?<![\w.-])" + re.escape(HOST) + r"(?![\w-])", "<HOST>", s)
    return s


def mask_leaves(v):
    if isinstance(v, dict):
        return {k: mask_leaves(x) for k, x in v.items() if k not in DROPPED}
    if isinstance(v, list):
        return [mask_leaves(x) for x in v]
    return "<fact>"


def mask_json(v, key=None):
    if key in VOLATILE:
        return "<masked>"
    if key in FACTS and isinstance(v, dict):
        if key == "clock":
            v = {k: x for k, x in v.items() if k not in CLOCK_OPTIONAL}
        return mask_leaves(v)
    if key == "flags" and isinstance(v, list):
        return [x for x in v if x not in TIMING_FLAGS]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k == "descheduled" and not isinstance(x, list):
                out[k] = "<desched>"  # a row's member: always there, null or the counts
            elif k == "stalled":
                out[k] = "<stall>"  # a row's member: always there, null or the gap figures
            elif k not in DROPPED:
                out[k] = mask_json(x, k)
        if out.get("flags") == [] and v.get("flags"):  # only timing flags: as if none
            del out["flags"]
        if "peer_late" in (v.get("flags") or []) and v.get("peer_mb_per_s") is None:
            out["peer_mb_per_s"] = "<num>"  # bw: not shown because of the load
        return out
    if isinstance(v, list):
        return [mask_json(x) for x in v]
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        return "<num>"
    if isinstance(v, str):
        return FLOAT.sub("#.#", mask_string(v))
    return v


# Text lines dropped: present or not depending on timing or the machine.
DROP_LINE = re.compile(r"^\s*#?\s*WARNING\b|^# note: \[short\]|^# outliers: (\d+|none)\s*$|"
                       r"^#\s+\d+\. (link|node|latency|bandwidth)\b|^# verdict: ")
# "label: value" lines whose value is a fact of the machine.
FACT_LINE = re.compile(r"^([#\s]*(?:clock|placement)\s*:).*$", re.IGNORECASE)
# Device and connection property lines (the connection line is indented under "# local"): only
# the property names are kept (so_sndbuf and the like are kernel facts: TCP autotuning).
PROPS_LINE = re.compile(r"^(#\s+(?:local|remote|connection|rank \d+)\s*:)(.*)$")


def mask_text_line(line, fmt, state):
    if DROP_LINE.search(line):
        return None
    m = FACT_LINE.match(line)
    if m:
        return re.sub(r"\s+", " ", m.group(1)) + " <fact>"
    line = mask_string(line)
    m = PROPS_LINE.match(line)
    if m and "=" in m.group(2):
        keys = re.findall(r"(?:^|\s)([a-z_]+)=", m.group(2))
        first = m.group(2).split()[0] if "=" not in m.group(2).split()[0] else ""
        return re.sub(r"\s+", " ", m.group(1)) + " " + first + " keys: " + " ".join(keys)
    # bw's peer_late (the server's interval was not a measurement): its peer_BW cell is "-"
    # where it would be a figure; both depend on the load.
    if re.search(r"\[[^\]]*peer_late", line):
        line = re.sub(r"\s-(?=\s+\[[^\]]*peer_late)", " 0.0", line)
        line = re.sub(r"\[([^\]]*)\]", lambda m: "[" + ",".join(
            f for f in m.group(1).split(",") if f != "peer_late") + "]", line).replace(" []", "")
    line = re.sub(r"\s+(desched|stall|\[short\])(?=\s|$)", "", line)
    if re.search(r"\bextra:", line):
        line = re.sub(r"progress_note=.*?(?= [a-z_]+=|$)", "", line)
    line = FLOAT.sub("#.#", line).rstrip()
    if re.search(r"\boutlier$", line):  # ring: the verdict column follows
        state["verdict"] = True
    elif state.get("verdict") and re.match(r"^\s*\d", line):
        line = re.sub(r"\S+$", "<flag>", line)
    if fmt == "imb" and re.match(r"^\s+\d+\s+\d+\s", line):  # data rows: sizes and counts kept
        cells = line.split()
        line = " " + " ".join(cells[:2] + ["#" for _ in cells[2:]])
    # pairs: the last two cells of a row are outlier verdicts (-, link, node, cut, bound).
    line = re.sub(r"\s+(?:-|link|node|cut|bound)\s+(?:-|link|node|cut|bound)$", " <flag> <flag>", line)
    return re.sub(r"[ \t]+", " ", line).rstrip()


# CSV columns whose number is a measurement even when it prints without a decimal point.
CSV_MEASURED = re.compile(r"(_us|_ns|_per_s|_gb_per_s|seconds)$")


def mask_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    if not rows:
        return ""
    header = rows[0]
    w.writerow(header)
    for r in rows[1:]:
        cells = []
        late = "peer_late" in dict(zip(header, r)).get("flags", "").split(";")
        for name, cell in zip(header, r):
            if late and name == "peer_mb_per_s" and cell == "":
                cell = "0.0"  # bw: not shown because of the load (a figure otherwise)
            if name in CSV_MASKED:
                cell = "<fact>"
            elif CSV_MEASURED.search(name) and re.fullmatch(r"[-+0-9.eE]+", cell):
                cell = "#.#"
            elif name == "flags":
                cell = ";".join(f for f in re.split(r"[;| ]", cell) if f and f not in TIMING_FLAGS)
            else:
                cell = FLOAT.sub("#.#", mask_string(cell))
            cells.append(cell)
        cells += r[len(header):]
        w.writerow(cells)
    return out.getvalue()


def sort_rows(lines, is_row):
    """Sorts every run of consecutive data rows (is_row) in place."""
    out, run = [], []
    for line in lines + [None]:
        if line is not None and is_row(line):
            run.append(line)
            continue
        out += sorted(run)
        run = []
        if line is not None:
            out.append(line)
    return out


def main():
    fmt = sys.argv[1]
    sort = len(sys.argv) > 2 and sys.argv[2] == "sort"
    text = sys.stdin.read()
    if fmt == "json":
        doc = json.loads(text)
        masked = mask_json(doc)
        if sort and isinstance(masked, dict) and isinstance(masked.get("rows"), list):
            masked["rows"].sort(key=lambda r: json.dumps(r))
        if isinstance(doc, dict) and "rows" in doc:  # streamed: one line per row
            print("lines: %d" % text.count("\n"))
        print(json.dumps(masked, indent=1))
        return
    if fmt == "csv":
        lines = mask_csv(text).splitlines()
        if sort:
            lines = lines[:1] + sorted(lines[1:])
    else:
        state = {}
        lines = [m for m in (mask_text_line(l, fmt, state) for l in text.splitlines())
                 if m is not None]
        if sort:
            lines = sort_rows(lines, lambda l: bool(re.match(r"^\s*\d", l)))
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
