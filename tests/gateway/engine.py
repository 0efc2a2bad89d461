#!/usr/bin/env python3
"""tests/gateway/engine.py — a tiny scripted engine for the gateway's tests
(a test double, loopback only): it answers GET /health and GET /v1/models
with 200, and any POST with what its options script.

    engine.py [--port N] [--big BYTES] [--head-delay S] [--body-delay S]
              [--models NAME,...] [--tls CERT KEY]

--big BYTES   the POST answer is an SSE stream of BYTES bytes (1 KiB frames
              `data: NNNNNNNN xxx…\\n\\n`, numbered from 0), written as fast
              as the socket takes it (so a slow reader makes the relay hold
              or push back); slowread.py checks it.
--head-delay  seconds before the answer's head (a long prefill)
--body-delay  seconds between the head and the body (a stall)
--models      GET /v1/models lists these ids (a peer gateway's roles)
--tls         serve https with this certificate and key (PEM)
--echo NAME   the POST answer says what came: {"engine": NAME, "path",
              "content_type", "len", "sha256", "model" (of a JSON body),
              "bearer" (an Authorization header came), "hop" (X-Lobes-Hop)}
--status N    the POST answer's status is N (a 5xx before the first byte)
--break-after K  with --big: a chunked stream cut after K frames, before
              its last chunk (an engine failing mid-stream)
Otherwise the POST answer is a small chat completion.
It prints `port N` once listening (port 0: any free one) and runs until
killed.
"""
import argparse
import hashlib
import http.server
import json
import ssl
import socketserver
import sys
import time

FRAME = 1024


def frame(i):
    head = b"data: %08d " % i
    return head + b"x" * (FRAME - len(head) - 2) + b"\n\n"


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def small(self, code, body):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        models = [{"id": m, "object": "model", "root": "x/" + m} for m in A.models.split(",") if m]
        self.small(200, json.dumps({"object": "list", "data": models}).encode()
                   if self.path == "/v1/models" else b"{}")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = b""
        while n > 0:
            got = self.rfile.read(min(n, 65536))
            if not got:
                return
            n -= len(got)
            body += got
        time.sleep(A.head_delay)
        if A.echo:
            try:
                model = json.loads(body).get("model")
            except (ValueError, AttributeError):
                model = None
            self.small(A.status, json.dumps({
                "engine": A.echo, "path": self.path, "len": len(body),
                "content_type": self.headers.get("Content-Type"),
                "sha256": hashlib.sha256(body).hexdigest(), "model": model,
                "bearer": self.headers.get("Authorization") is not None,
                "hop": self.headers.get("X-Lobes-Hop")}).encode())
            return
        if not A.big:
            self.small(A.status, b'{"id":"e","object":"chat.completion","choices":[{"index":0,'
                       b'"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}')
            return
        frames = A.big // FRAME
        if A.break_after:  # chunked, cut before its last chunk: a broken stream
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for k in range(A.break_after):
                f = frame(k)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(f), f))
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(frames * FRAME))
        self.end_headers()
        self.wfile.flush()
        time.sleep(A.body_delay)
        batch = 64
        for i in range(0, frames, batch):
            self.wfile.write(b"".join(frame(k) for k in range(i, min(i + batch, frames))))


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


p = argparse.ArgumentParser()
p.add_argument("--port", type=int, default=0)
p.add_argument("--big", type=int, default=0)
p.add_argument("--head-delay", type=float, default=0)
p.add_argument("--body-delay", type=float, default=0)
p.add_argument("--models", default="")
p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
p.add_argument("--echo", default="")
p.add_argument("--status", type=int, default=200)
p.add_argument("--break-after", type=int, default=0)
A = p.parse_args()
srv = S(("127.0.0.1", A.port), H)
if A.tls:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(A.tls[0], A.tls[1])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("port %d" % srv.server_address[1], flush=True)
try:
    srv.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
