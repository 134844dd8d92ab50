#!/usr/bin/env python3
"""A stranger on the rendezvous store's port (tests/system/test_store_hostile.sh): joins a run of
its own, then stores COUNT values of SIZE bytes until the store refuses one, and stays connected
for HOLD seconds (so the store must serve others while it holds what it stored).

Usage: store_stranger.py PORT COUNT SIZE HOLD [RUN_ID]
Prints "stored N" and then "error: <text>" for the first refusal (or "no refusal")."""
import json
import socket
import struct
import sys
import time

PORT, COUNT, SIZE, HOLD = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
RUN = sys.argv[5] if len(sys.argv) > 5 else "stranger"
HELLO, HELLO_ACK, ERROR, JOIN, JOIN_ACK, SET, OK = 1, 2, 3, 40, 41, 42, 43


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


s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
send(s, HELLO, b"RDMB" + struct.pack("<HH", 2, 0) + b"stranger")
assert recv(s)[0] == HELLO_ACK
send(s, JOIN, json.dumps({"run_id": RUN, "rank": 0, "world_size": 2, "host": "x"}).encode())
assert recv(s)[0] == JOIN_ACK
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
