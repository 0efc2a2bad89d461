#!/usr/bin/env python3
"""tests/gateway/raw.py — send raw bytes to 127.0.0.1:PORT and print what
comes back until the server closes or WAIT seconds pass (a test double for
clients that break HTTP's rules).

    printf 'GET / HTTP/1.1\\r\\n...' | raw.py PORT [WAIT]

The last line printed is `closed` when the server closed the connection
within WAIT, `open` when it was still open.
"""
import socket
import sys
import time

port = int(sys.argv[1])
wait = float(sys.argv[2]) if len(sys.argv) > 2 else 10
s = socket.create_connection(("127.0.0.1", port), timeout=wait)
s.sendall(sys.stdin.buffer.read())
got = bytearray()
end = time.monotonic() + wait
state = "open"
while time.monotonic() < end:
    s.settimeout(max(0.05, end - time.monotonic()))
    try:
        b = s.recv(65536)
    except socket.timeout:
        break
    except ConnectionResetError:
        state = "closed"
        break
    if not b:
        state = "closed"
        break
    got += b
sys.stdout.write(got.decode("latin-1").replace("\r", ""))
print("\n" + state)
