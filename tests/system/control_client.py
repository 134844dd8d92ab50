#!/usr/bin/env python3
"""Raw client of rdmabench's control protocol (docs/wire-protocol.md) for the hostile-client
system tests: it speaks exactly as much of the protocol as a case needs, then misbehaves.

Usage: control_client.py PORT CASE [ARG]
Prints the server's answer as one line: "error: <text>", "type <n>" or "closed", and exits 0
when the server answered as the case expects (checked by the calling script)."""
import json
import socket
import struct
import sys
import time

PORT = int(sys.argv[1])
CASE = sys.argv[2]
ARG = sys.argv[3] if len(sys.argv) > 3 else ""
VERSION = 2


def send(s, mtype, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    s.sendall(struct.pack("<IHH", len(payload), mtype, 0) + payload)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def recv(s):
    h = recv_exact(s, 8)
    if h is None:
        return None, None
    length, mtype, _ = struct.unpack("<IHH", h)
    body = recv_exact(s, length)
    return mtype, body


def hello(token=b""):
    return b"RDMB" + struct.pack("<HH", VERSION, len(token)) + token + b"hostile-test"


def spec(**over):
    d = {"test": "lat", "transport": "socket", "op": "send", "sizes": [64], "iterations": 100,
         "warmup": 0, "timeout_ms": 10000}
    d.update(over)
    return json.dumps(d)


def answer(s, timeout=15):
    """Reads frames until an Error frame or EOF; prints what the server said."""
    s.settimeout(timeout)
    start = time.time()
    while True:
        try:
            mtype, body = recv(s)
        except socket.timeout:
            print("silent after %.1f s" % (time.time() - start))
            return
        if mtype is None:
            print("closed after %.1f s" % (time.time() - start))
            return
        if mtype == 3:
            print("error: " + body.decode(errors="replace"))
            return


s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
if CASE == "deep-addresses":
    # Valid hello + request, then an Addresses frame nested ~80,000 deep (~160 KB).
    send(s, 1, hello())
    assert recv(s)[0] == 2
    send(s, 10, spec())
    depth = 80000
    send(s, 12, "[" * depth + "]" * depth)
    answer(s)
elif CASE == "request":
    # Valid hello, then the test description given as JSON in ARG.
    send(s, 1, hello())
    assert recv(s)[0] == 2
    send(s, 10, ARG)
    answer(s)
elif CASE == "deep-request":
    send(s, 1, hello())
    assert recv(s)[0] == 2
    send(s, 10, "{\"a\":" * 80000 + "1" + "}" * 80000)
    answer(s)
elif CASE == "hello-token":
    send(s, 1, hello(ARG.encode()))
    mtype, body = recv(s)
    print("error: " + body.decode(errors="replace") if mtype == 3 else "type %s" % mtype)
elif CASE == "silent-after-request":
    # Asks for a one-hour timeout, then stays silent where the server waits for the client's
    # addresses; prints how long the server waited.
    send(s, 1, hello())
    assert recv(s)[0] == 2
    send(s, 10, spec(timeout_ms=3600000))
    answer(s, timeout=120)
elif CASE == "idle":
    # Connects and says nothing; holds the connection for ARG seconds.
    time.sleep(float(ARG))
else:
    sys.exit("unknown case " + CASE)
