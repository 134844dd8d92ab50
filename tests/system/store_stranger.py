#!/usr/bin/env python3
"""A stranger on the rendezvous store's port (tests/system/test_store_hostile.sh): joins a run of
its own, then stores COUNT values of SIZE bytes until the store refuses one, and stays connected
for HOLD seconds (so the store must serve others while it holds what it stored).

Usage: store_stranger.py PORT COUNT SIZE HOLD [RUN_ID]
Prints "stored N" and then "error: <text>" for the first refusal (or "no refusal").

Usage: store_stranger.py bye PORT RUN_ID RANK WORLD_SIZE
Joins run RUN_ID as RANK (tests/system/test_store_escape.sh) with a host name holding a terminal
escape sequence and a line break, then leaves with a failure whose reason holds the same: the
store tells every rank of the run, which must print it escaped. Prints "bye sent"."""
import json
import socket
import struct
import sys
import time

HELLO, HELLO_ACK, ERROR, JOIN, JOIN_ACK, SET, OK, GET, VALUE, BYE = 1, 2, 3, 40, 41, 42, 43, 44, 45, 48
# What a stranger would like a terminal to show: colours, a window title, a fake success line.
EVIL_HOST = "\x1b[31mevil\nrdmabench: run OK"
EVIL_REASON = "\x1b]0;pwned\x07\x1b[2J\nrdmabench: run OK\r"


def send(s, mtype, payload):
    s.sendall(struct.pack("<IHH", len(payload), mtype, 0) + payload)


def recv(s):
    def exact(n):
        buf = b""
        while len(buf) < n:
            chunk = s.recv(n - len(buf))
            if not chunk:
                raise SystemExit("closed")
            buf += chunk
        return buf
    length, mtype, _ = struct.unpack("<IHH", exact(8))
    return mtype, exact(length)


def join(port, run, rank, world, host):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    send(s, HELLO, b"RDMB" + struct.pack("<HH", 2, 0) + b"stranger")
    assert recv(s)[0] == HELLO_ACK
    send(s, JOIN, json.dumps({"run_id": run, "rank": rank, "world_size": world,
                              "host": host}).encode())
    mtype, payload = recv(s)
    if mtype != JOIN_ACK:
        raise SystemExit("join refused: " + payload.decode(errors="replace"))
    return s


if sys.argv[1] == "bye":
    PORT, RUN, RANK, WORLD = int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    s = join(PORT, RUN, RANK, WORLD, EVIL_HOST)
    # Leave only once the others have joined (each publishes host/<rank> after its join): a run
    # whose only member left is over, and the others would start a fresh one.
    for r in range(WORLD):
        if r == RANK:
            continue
        key = b"host/%d" % r
        send(s, GET, struct.pack("<II", 30000, len(key)) + key)
        mtype, payload = recv(s)
        if mtype != VALUE:
            raise SystemExit("rank %d never published its host: type %d %r" % (r, mtype, payload))
    send(s, BYE, json.dumps({"ok": False, "reason": EVIL_REASON}).encode())
    print("bye sent", flush=True)
    time.sleep(0.5)
    sys.exit(0)

PORT, COUNT, SIZE, HOLD = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
RUN = sys.argv[5] if len(sys.argv) > 5 else "stranger"
s = join(PORT, RUN, 0, 2, "x")
stored, refusal = 0, "no refusal"
for i in range(COUNT):
    key = b"junk/%d" % i
    send(s, SET, struct.pack("<I", len(key)) + key + b"j" * SIZE)
    mtype, payload = recv(s)
    if mtype != OK:
        refusal = "error: " + payload.decode(errors="replace")
        break
    stored += 1
print("stored", stored)
print(refusal, flush=True)
time.sleep(HOLD)
