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


def expect_ack(s):
    mtype, body = recv(s)
    if mtype != 2:
        print("error: " + body.decode(errors="replace") if mtype == 3 else "type %s" % mtype)
        sys.exit(1)


if CASE == "idle-flood":
    # ARG = "N SECONDS": holds N idle connections (no byte sent) for SECONDS, opening a new one
    # whenever the server closes one; prints how many the server closed. Runs before any
    # connection of its own below.
    n, secs = ARG.split()
    n, secs = int(n), float(secs)
    import selectors
    sel = selectors.DefaultSelector()
    closed = opened = 0

    def open_one():
        global opened
        c = socket.socket()
        c.settimeout(5)
        try:
            c.connect(("127.0.0.1", PORT))
        except OSError:
            c.close()
            return
        opened += 1
        c.setblocking(False)
        sel.register(c, selectors.EVENT_READ)

    for _ in range(n):
        open_one()
    print("flood: %d connections open" % opened, flush=True)
    end = time.time() + secs
    while time.time() < end:
        for key, _ in sel.select(timeout=0.2):
            c = key.fileobj
            try:
                data = c.recv(4096)
            except OSError:
                data = b""
            if not data:  # closed by the server: replace it
                sel.unregister(c)
                c.close()
                closed += 1
                open_one()
    print("flood: opened %d, the server closed %d" % (opened, closed))
    sys.exit(0)

if CASE == "dribble-flood":
    # ARG = "N SECONDS [TOKEN]": holds N connections that each send a hello one byte every 1.5 s
    # (staggered), re-opening one whenever the server closes it, for SECONDS; prints how many
    # were opened and how many the server closed. Raises RLIMIT_NOFILE for its N sockets.
    import heapq
    import random
    import resource
    import selectors
    args = ARG.split()
    n, secs = int(args[0]), float(args[1])
    token = args[2].encode() if len(args) > 2 else b""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 256 if hard == resource.RLIM_INFINITY else min(hard, n + 256)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    frame = struct.pack("<IHH", len(hello(token)), 1, 0) + hello(token)
    sel = selectors.DefaultSelector()
    sent = {}  # socket -> bytes of the hello sent so far
    due = []  # (time, sequence, socket): when its next byte goes
    seq = 0
    opened = closed = 0

    def open_one(now):
        global opened, seq
        c = socket.socket()
        c.settimeout(2)
        try:
            c.connect(("127.0.0.1", PORT))
        except OSError:
            c.close()
            return
        c.setblocking(False)
        opened += 1
        sent[c] = 0
        sel.register(c, selectors.EVENT_READ)
        try:  # the first byte at once, then one every 1.5 s
            c.send(frame[:1])
            sent[c] = 1
        except OSError:
            pass
        seq += 1
        heapq.heappush(due, (now + random.uniform(0, 1.5), seq, c))

    def close_one(c):
        global closed
        sel.unregister(c)
        del sent[c]
        c.close()
        closed += 1

    for _ in range(n):
        open_one(time.time())
    print("flood: %d connections open" % len(sent), flush=True)
    end = time.time() + secs
    while time.time() < end:
        now = time.time()
        wait = max(0.0, min(0.2, due[0][0] - now)) if due else 0.2
        for key, _ in sel.select(timeout=wait):
            c = key.fileobj
            try:
                data = c.recv(4096)
            except OSError:
                data = b""
            if not data and c in sent:  # closed by the server: replace it
                close_one(c)
                open_one(time.time())
        now = time.time()
        while due and due[0][0] <= now:
            _, _, c = heapq.heappop(due)
            if c not in sent:
                continue
            try:
                c.send(frame[sent[c]:sent[c] + 1])
                sent[c] += 1
            except OSError:
                close_one(c)
                open_one(now)
                continue
            if sent[c] < len(frame):
                seq += 1
                heapq.heappush(due, (now + 1.5, seq, c))
    print("flood: opened %d, the server closed %d" % (opened, closed))
    sys.exit(0)

if CASE == "hello-burst":
    # ARG = "N [TOKEN]": N connections one after another, each sending its whole hello at once;
    # prints how many got a HelloAck within 10 s ("served") and the first other answer.
    args = ARG.split()
    n = int(args[0])
    token = args[1].encode() if len(args) > 1 else b""
    served, first = 0, ""
    for _ in range(n):
        try:
            c = socket.create_connection(("127.0.0.1", PORT), timeout=10)
            send(c, 1, hello(token))
            mtype, body = recv(c)
            c.close()
        except OSError as e:
            mtype, body = None, str(e).encode()
        if mtype == 2:
            served += 1
        elif not first:
            first = "type %s: %s" % (mtype, (body or b"").decode(errors="replace"))
    print("burst: %d of %d served%s" % (served, n, "; first refusal: " + first if first else ""))
    sys.exit(0)

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
elif CASE == "provider-env":
    # An 8 B bw over ofi tcp;ofi_rxm whose provider_env (JSON in ARG) sizes libfabric's pools.
    send(s, 1, hello())
    expect_ack(s)
    req = json.loads(spec(test="bw", transport="ofi", sizes=[8], iterations=10))
    req["server_device"] = {"provider": "tcp;ofi_rxm", "device": "lo"}
    req["provider_env"] = json.loads(ARG)
    send(s, 10, json.dumps(req))
    mtype, body = recv(s)
    if mtype == 3:
        print("error: " + body.decode(errors="replace"))
    else:
        # Accepted (the old server): hold the session a while so its memory can be sampled.
        print("type %s" % mtype, flush=True)
        answer(s, timeout=8)
elif CASE == "hostile-address":
    # A socket lat test whose Addresses name ARG = "HOST PORT" with device id 0, the smallest:
    # a server that decides the connect role by the ids would connect there.
    host, port = ARG.split()
    send(s, 1, hello())
    expect_ack(s)
    send(s, 10, spec())
    mtype, body = recv(s)
    if mtype != 11:
        print("error: " + body.decode(errors="replace") if mtype == 3 else "type %s" % mtype)
        sys.exit(1)
    mtype, body = recv(s)
    if mtype != 12:
        print("error: " + body.decode(errors="replace") if mtype == 3 else "type %s" % mtype)
        sys.exit(1)
    theirs = json.loads(body)
    addr = bytes([1, 4]) + bytes(8) + struct.pack(">H", int(port)) + socket.inet_aton(host)
    addr += bytes(12) + struct.pack("<Q", 0x1234567890ABCDEF)
    assert len(addr) == 36
    # The server's own region descriptor has the size the server checks for.
    send(s, 12, json.dumps({"connectors": [addr.hex()], "regions": theirs["regions"]}))
    answer(s, timeout=20)
elif CASE == "bad-hello":
    # A first frame the server refuses (ARG: type = message type 999, magic = wrong magic,
    # version = protocol version 99, token = wrong token); prints every Error frame up to EOF,
    # one "error: " line each, so the caller can count them.
    if ARG == "type":
        send(s, 999, hello())
    elif ARG == "magic":
        send(s, 1, b"XXXX" + hello()[4:])
    elif ARG == "version":
        send(s, 1, b"RDMB" + struct.pack("<HH", 99, 0) + b"hostile-test")
    else:
        send(s, 1, hello(b"wrong-token"))
    s.settimeout(15)
    while True:
        mtype, body = recv(s)
        if mtype is None:
            break
        print("error: " + body.decode(errors="replace") if mtype == 3 else "type %s" % mtype)
elif CASE == "hello-hangup":
    # A valid hello (the server's answer read), then a hang-up before any test description.
    send(s, 1, hello())
    mtype, body = recv(s)
    print("error: " + body.decode(errors="replace") if mtype == 3 else "type %s" % mtype)
elif CASE == "idle":
    # Connects and says nothing; holds the connection for ARG seconds.
    time.sleep(float(ARG))
else:
    sys.exit("unknown case " + CASE)
