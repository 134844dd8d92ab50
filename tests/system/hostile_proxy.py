#!/usr/bin/env python3
"""A hostile `rdmabench server` for the client-side tests: a proxy in front of a real server that
forwards the control connection both ways and rewrites the server's TestAccept frame (type 11,
docs/wire-protocol.md) so its "host" carries C1 controls and bidirectional overrides. The data
path goes to the real server directly (its addresses travel unchanged).

Usage: hostile_proxy.py LISTEN_PORT SERVER_PORT
Prints "listening" once the port is open; serves one client, then exits."""
import json
import socket
import struct
import sys
import threading

LISTEN = int(sys.argv[1])
SERVER = int(sys.argv[2])
TEST_ACCEPT = 11
# U+009B (CSI on some terminals), U+0085 (NEL), U+202E (right-to-left override), U+2066 (LRI).
HOSTILE = "evil\u009b31m\u0085host\u202e\u2066gpj.exe"


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def client_to_server(c, s):
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            s.sendall(b)
    except OSError:
        pass
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def server_to_client(s, c):
    try:
        while True:
            h = recv_exact(s, 8)
            if h is None:
                break
            length, mtype, flags = struct.unpack("<IHH", h)
            body = recv_exact(s, length) if length else b""
            if body is None:
                break
            if mtype == TEST_ACCEPT:
                doc = json.loads(body)
                doc["host"] = HOSTILE
                body = json.dumps(doc, ensure_ascii=False).encode()
            c.sendall(struct.pack("<IHH", len(body), mtype, flags) + body)
    except OSError:
        pass
    try:
        c.shutdown(socket.SHUT_WR)
    except OSError:
        pass


lst = socket.socket()
lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lst.bind(("127.0.0.1", LISTEN))
lst.listen(1)
print("listening", flush=True)
lst.settimeout(60)
c, _ = lst.accept()
s = socket.create_connection(("127.0.0.1", SERVER))
t = threading.Thread(target=client_to_server, args=(c, s), daemon=True)
t.start()
server_to_client(s, c)
t.join(5)
