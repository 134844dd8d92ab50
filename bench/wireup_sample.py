#!/usr/bin/env python3
"""Runs `rdmabench ... --np N` and samples its processes from /proc (bench/wireup_scale.sh).

Usage: wireup_sample.py OUT.json INTERVAL_S -- COMMAND...
INTERVAL_S 0 = no sampling (wall time only: sampling 1024 processes costs CPU the ranks need).

The launcher is COMMAND's process (it serves the store); its children are the ranks, forked in
rank order (rank 0 = the earliest started, lowest pid on ties). Per sample: socket descriptors
of the launcher, and of every rank and of rank 0 not counting sockets the launcher holds too
(a rank just forked still holds copies of the launcher's store connections until it closes
them: a transient of fork(), not the rank's connections); every 5th sample also VmRSS (/proc/PID/status) and
Pss (/proc/PID/smaps_rollup) of every rank. Writes JSON: wall_s, exit status, ranks_seen and the
peaks (max_rank_sockets, rank0_sockets, server_sockets; rss/pss per rank at the sample with the
largest summed Pss). Exits with COMMAND's status.
"""
import json
import os
import subprocess
import sys
import time


def sockets(pid):
    """The socket inodes `pid` holds (a set of 'socket:[N]' names), None when it is gone."""
    out = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:"):
                    out.add(link)
            except OSError:
                pass
    except OSError:
        return None
    return out


def children(pid):
    out = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(x) for x in f.read().split()]
    except OSError:
        return out
    for k in kids:
        try:
            with open(f"/proc/{k}/stat") as f:
                start = int(f.read().rsplit(")", 1)[1].split()[19])
            out.append((start, k))
        except (OSError, ValueError, IndexError):
            pass
    return [k for _, k in sorted(out)]


def memory(pid):
    rss = pss = None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def main():
    out_path, interval = sys.argv[1], float(sys.argv[2])
    cmd = sys.argv[sys.argv.index("--") + 1:]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd)
    seen, rank0 = set(), None
    peak = {"max_rank_sockets": 0, "rank0_sockets": 0, "server_sockets": 0,
            "rss_per_rank_mib": 0.0, "pss_per_rank_mib": 0.0}
    best_pss, k = 0, 0
    while proc.poll() is None:
        if interval > 0:
            kids = children(proc.pid)
            if kids and rank0 is None:
                rank0 = kids[0]
            seen.update(kids)
            launcher = sockets(proc.pid) or set()
            peak["server_sockets"] = max(peak["server_sockets"], len(launcher))
            for p in kids:
                s = sockets(p)
                if s is None:
                    continue
                # A rank's own sockets: a child caught between fork() and closing what it
                # inherited still holds copies of the launcher's store connections (the same
                # inodes); those are the launcher's, not the rank's.
                n = len(s - launcher)
                peak["max_rank_sockets"] = max(peak["max_rank_sockets"], n)
                if p == rank0:
                    peak["rank0_sockets"] = max(peak["rank0_sockets"], n)
            if k % 5 == 0 and kids:
                mem = [m for m in (memory(p) for p in kids) if m[0] and m[1]]
                total_pss = sum(m[1] for m in mem)
                if mem and total_pss > best_pss:
                    best_pss = total_pss
                    peak["rss_per_rank_mib"] = sum(m[0] for m in mem) / len(mem) / 1024
                    peak["pss_per_rank_mib"] = total_pss / len(mem) / 1024
            k += 1
        time.sleep(interval if interval > 0 else 0.01)
    wall = time.monotonic() - t0
    res = {"wall_s": wall, "status": proc.returncode, "ranks_seen": len(seen),
           "interval_s": interval, **peak}
    with open(out_path, "w") as f:
        json.dump(res, f)
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
