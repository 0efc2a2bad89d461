#!/usr/bin/env python3
"""tests/gateway/slowloris.py — N connections that send a request head one
byte a second and never finish it (a test double for a slowloris attack,
loopback only).

    slowloris.py PORT N SOURCE_ADDR MAX_SECONDS

Opens N connections from SOURCE_ADDR (a 127.x address) to 127.0.0.1:PORT,
then drips a header byte on each every second until the server has closed
every one or MAX_SECONDS pass. Prints one JSON line: opened (connect
succeeded), closed (by the server), open (still open at the end), answers
(connections on which any byte came back).
"""
import json
import select
import socket
import sys
import time

port, n, src, limit = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
socks, opened = [], 0
for i in range(n):
    s = socket.socket()
    s.bind((src, 0))
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-A: ")
        opened += 1
        s.setblocking(False)
        socks.append(s)
    except OSError:
        s.close()
live, closed, answers = set(socks), 0, 0
end = time.monotonic() + limit
next_drip = time.monotonic()
while live and time.monotonic() < end:
    r, _, _ = select.select(list(live)[:1000], [], [], 0.2)
    for s in r:
        try:
            b = s.recv(4096)
        except OSError:
            b = b""
        if b:
            answers += 1
        live.discard(s)
        closed += 1
        s.close()
    if time.monotonic() >= next_drip:
        for s in list(live):
            try:
                s.send(b"a")
            except OSError:
                live.discard(s)
                closed += 1
                s.close()
        next_drip = time.monotonic() + 1
print(json.dumps({"opened": opened, "closed": closed, "open": len(live), "answers": answers}))
