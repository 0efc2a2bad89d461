#!/usr/bin/env python3
"""tests/gateway/slowread.py — a client that reads an answer no faster than
a rate (test double for a slow reader on loopback).

    slowread.py PORT PATH RATE_BYTES_PER_S [--timeout S]

POSTs a chat request to 127.0.0.1:PORT, reads the answer at most
RATE bytes a second, and checks the body is engine.py's numbered frames,
whole and in order. Prints one JSON line: status, bytes, frames, ok, why.
"""
import json
import socket
import sys
import time

port, path, rate = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
timeout = float(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--timeout" else 600
FRAME = 1024
body = b'{"model":"cortex","messages":[{"role":"user","content":"hi"}],"stream":true}'
s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
s.sendall(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
          b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (path.encode(), len(body), body))
head = b""
while b"\r\n\r\n" not in head:
    got = s.recv(4096)
    if not got:
        break
    head += got
head, _, rest = head.partition(b"\r\n\r\n")
status = int(head.split(b" ")[1]) if head else 0
chunked = b"transfer-encoding: chunked" in head.lower()
t0 = time.monotonic()
n = len(rest)
data = bytearray(rest)
frames, ok, why, pos = 0, True, "", 0


def check(buf):
    """Check whole frames at the front of the de-chunked body; keep the rest."""
    global frames, ok, why
    k = 0
    while ok and len(buf) - k >= FRAME:
        want = b"data: %08d " % frames
        f = buf[k:k + FRAME]
        if not f.startswith(want) or not f.endswith(b"x\n\n"):
            ok, why = False, "frame %d is not whole or out of order" % frames
        frames += 1
        k += FRAME
    del buf[:k]


def dechunk(raw):
    """Strip HTTP chunk framing from raw (a bytearray), returning body bytes
    and leaving an incomplete tail in raw."""
    out = bytearray()
    while True:
        i = raw.find(b"\r\n")
        if i < 0:
            return out, False
        size = int(raw[:i].split(b";")[0] or b"0", 16)
        if size == 0:
            return out, True
        if len(raw) < i + 2 + size + 2:
            return out, False
        out += raw[i + 2:i + 2 + size]
        del raw[:i + 2 + size + 2]


body_buf = bytearray()
raw = data if chunked else None
if not chunked:
    body_buf += data
ended = False
while not ended:
    if chunked:
        piece, ended = dechunk(raw)
        body_buf += piece
    check(body_buf)
    if ended:
        break
    # pace: never ahead of RATE
    ahead = n / rate - (time.monotonic() - t0)
    if ahead > 0:
        time.sleep(ahead)
    got = s.recv(65536)
    if not got:
        break
    n += len(got)
    if chunked:
        raw += got
    else:
        body_buf += got
if body_buf and ok:
    ok, why = False, "%d trailing bytes" % len(body_buf)
print(json.dumps({"status": status, "bytes": frames * FRAME, "frames": frames, "ok": ok,
                  "why": why, "seconds": round(time.monotonic() - t0, 1)}))
