#!/usr/bin/env python3
"""tests/gateway/stall.py — N uploads that each send all but the last byte
of their body and stall (a test double for stalled clients, loopback only).

    stall.py PORT N BYTES SOURCE_ADDR MAX_SECONDS

Each connection (from SOURCE_ADDR) POSTs /v1/chat/completions with
Content-Length BYTES, sends BYTES-1 bytes (as far as the server reads
them), then waits for the server's answer or close. Prints one JSON line:
a count per outcome ("408", "503", … the status line's code, "closed"
without an answer, "open" at MAX_SECONDS).
"""
import json
import socket
import sys
import threading
import time

port, n, size, src, limit = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4],
                             float(sys.argv[5]))
out, lock = {}, threading.Lock()
end = time.monotonic() + limit


def one():
    s = socket.socket()
    s.bind((src, 0))
    what = "closed"
    try:
        s.connect(("127.0.0.1", port))
        s.settimeout(max(1, end - time.monotonic()))
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % size)
        left = size - 1
        chunk = b"x" * 65536
        try:
            while left > 0:
                k = s.send(chunk[:min(left, 65536)])
                left -= k
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered early: the answer may be waiting to be read
        got = b""
        while b"\r\n" not in got:
            b = s.recv(4096)
            if not b:
                break
            got += b
        if got.startswith(b"HTTP/1."):
            what = got.split(b" ")[1].decode()
    except socket.timeout:
        what = "open"
    except OSError:
        pass
    s.close()
    with lock:
        out[what] = out.get(what, 0) + 1


ts = [threading.Thread(target=one) for _ in range(n)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(json.dumps(out, sort_keys=True))
