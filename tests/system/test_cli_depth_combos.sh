# Issue 36 item 9: usage errors name only what the user typed. The issue's fuzzer found errors
# naming --cq-mod for a command line that had only -l (7 of 350 cases). This test enumerates
# ~370 command lines of `bw` and `lat`: every pair of --post-list and --cq-mod values around
# their limit (absent, 0, 1, the limit, the limit + 1, 2^32) for window mode (the limit: -w,
# absent = 64) and stream mode (--tx-depth, absent = 128), with --op, --rx-depth, --inline and the
# transport cycling through their values, and lat with the same options (lat has no -l or
# --cq-mod). Options are checked before any connection, so each case runs against a closed
# port (127.0.0.1:1) and ends at once. Asserted for every case:
#  - an error line names --cq-mod only when --cq-mod was typed, --post-list/-l only when one of
#    them was typed;
#  - exit 2 (a usage error) prints exactly one line on stderr, `rdmabench: error: ...`;
#  - any other exit is 1 with the connection refused (the options were accepted);
#  - for bw, the options are refused exactly when -l or --cq-mod is outside 1..the limit (or
#    2^32, -w/--tx-depth 0 and the like): an oracle, so a refusal of a valid line fails too.
# Two cases at a time; ~10 s on an idle 2-core host, ~25 s beside two busy loops.
source "$(dirname "$0")/lib.sh"
python3 - "$RB" <<'PY' || fail "see the cases above"
import concurrent.futures, itertools, re, subprocess, sys

RB = sys.argv[1]
HUGE = 4294967296
BASE = ["127.0.0.1", "-p", "1", "--connect-timeout", "2", "-s", "8", "-n", "10"]

def values(limit):  # absent, 0, 1, the limit, one above, huge
    return [None, 0, 1, limit, limit + 1, HUGE]

def bw_cases():
    ops = ["send", "write", "read"]
    extras = [[], ["--rx-depth", "1"], ["--inline", "0"], ["--rx-depth", "1048577"],
              ["--inline", "64"], ["--tx-depth", "64"], ["--rx-depth", "0"]]
    transports = ["socket", "ofi"]
    k = 0
    for mode in (None, "window", "stream"):
        for depth in (None, 1, 16):
            limit = depth or (128 if mode == "stream" else 64)
            for pl, cq in itertools.product(values(limit), values(limit)):
                args = ["bw"] + BASE + ["-t", transports[k % 2], "--op", ops[k % 3]]
                if mode: args += ["--mode", mode]
                if depth: args += ["--tx-depth" if mode == "stream" else "-w", str(depth)]
                extra = extras[k % len(extras)]
                if mode == "stream" and "--tx-depth" in extra: extra = []
                args += extra
                if pl is not None: args += ["-l", str(pl)]
                if cq is not None: args += ["--cq-mod", str(cq)]
                ok = all(v is None or 1 <= v <= limit for v in (pl, cq))
                if extra and extra[0] == "--rx-depth" and extra[1] in ("0", "1048577"): ok = False
                yield args, ok
                k += 1

def lat_cases():
    for op, t, opt, v in itertools.product(["send", "write"], ["socket", "ofi"],
                                           ["--tx-depth", "--rx-depth", "--inline", "-l",
                                            "--cq-mod"], [0, 1, HUGE]):
        yield ["lat"] + BASE + ["-t", t, "--op", op, opt, str(v)], None

NAMES = {"--cq-mod": (r"--cq-mod\b", {"--cq-mod"}),
         "--post-list": (r"--post-list\b|(?<![\w-])-l\b", {"-l", "--post-list"})}

def check(case):
    args, ok = case
    try:
        p = subprocess.run([RB] + args, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return [f"{' '.join(args)}: did not end within 30 s"]
    bad, err = [], p.stderr.strip()
    for name, (pattern, typed) in NAMES.items():
        if re.search(pattern, err) and not typed & set(args):
            bad.append(f"names {name}, not typed")
    if p.returncode == 2:
        lines = err.splitlines()
        if len(lines) != 1 or not lines[0].startswith("rdmabench: error: "):
            bad.append(f"usage error of {len(lines)} lines")
    elif p.returncode != 1 or "connect to 127.0.0.1:1" not in err:
        bad.append(f"exit {p.returncode}, not a usage error nor the refused connection")
    if ok is not None and ok != (p.returncode != 2):
        bad.append("refused a valid line" if ok else "accepted an invalid line")
    return [f"{' '.join(args)}: {', '.join(bad)}: exit {p.returncode}: {err}"] if bad else []

cases = list(bw_cases()) + list(lat_cases())
with concurrent.futures.ThreadPoolExecutor(2) as pool:
    failures = [f for r in pool.map(check, cases) for f in r]
for f in failures[:40]:
    print(f)
print(f"{len(cases)} cases, {len(failures)} failed")
sys.exit(1 if failures else 0)
PY
pass "bw/lat: -l, --cq-mod, --tx-depth, --rx-depth, --inline, --mode, --op combinations name only typed options, one line, exit 2"
