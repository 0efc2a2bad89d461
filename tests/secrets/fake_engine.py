#!/usr/bin/env python3
# fake_engine.py SOCKET DIR — a Docker Engine API double for tests: answers
# GET requests on a unix socket from the files of DIR:
#   /_ping                      OK
#   /containers/json?...        DIR/list.json
#   /containers/ID/json         DIR/inspect-ID.json
#   /containers/ID/logs?...     DIR/log-ID.txt, each line framed as Docker's
#                               multiplexed stream (odd lines stdout, even
#                               lines stderr, as an engine interleaves them);
#                               since=SEC.NSEC drops the lines stamped before
#                               it (RFC 3339 stamps with 9 digits compare as
#                               text), as the engine does with timestamps
#   /images/REF/json            DIR/image.json
# Anything else is 404. Test-only; stops on SIGTERM.
import io, os, socketserver, struct, sys, time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs

SOCK, DIR = sys.argv[1], sys.argv[2]

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Api-Version", "1.50")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a client that read what it wanted and left

    def stream_log(self, text, since):
        # written as it is framed, a batch at a time, the body ending at
        # the close (as a real engine streams a log it reads): a client
        # under its own time bound gets what came so far, and a large log
        # does not wait on the whole framing before its first byte
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.docker.multiplexed-stream")
        self.send_header("Api-Version", "1.50")
        self.send_header("Connection", "close")
        self.end_headers()
        out, i = [], 0
        try:
            for line in io.BytesIO(text):
                if since is not None and line[:1].isdigit() and line[:30] < since:
                    continue
                out.append(struct.pack(">BxxxI", 1 if i % 2 == 0 else 2, len(line)) + line)
                i += 1
                if len(out) == 4096:
                    self.wfile.write(b"".join(out))
                    out = []
            self.wfile.write(b"".join(out))
        except (BrokenPipeError, ConnectionResetError):
            pass  # a client that read what it wanted, or its bound, and left
        self.close_connection = True

    def file(self, name):
        p = os.path.join(DIR, name)
        return open(p, "rb").read() if os.path.isfile(p) else None

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        parts = path.strip("/").split("/")
        body = None
        if path == "/_ping":
            return self.send(200, b"OK", "text/plain")
        if path == "/containers/json":
            body = self.file("list.json")
        elif len(parts) == 3 and parts[0] == "containers" and parts[2] == "json":
            body = self.file("inspect-%s.json" % parts[1])
        elif len(parts) == 3 and parts[0] == "containers" and parts[2] == "logs":
            text = self.file("log-%s.txt" % parts[1])
            if text is not None:
                q = parse_qs(self.path.split("?", 1)[1] if "?" in self.path else "")
                sec, _, nsec = q.get("since", ["0"])[0].partition(".")
                since = None
                if int(sec) > 0:
                    since = (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(sec))) +
                             ".%09dZ" % int(nsec or 0)).encode()
                return self.stream_log(text, since)
        elif parts[0] == "images" and parts[-1] == "json":
            body = self.file("image.json")
        if body is None:
            return self.send(404, b'{"message":"page not found"}')
        self.send(200, body)

class S(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        conn, _ = self.socket.accept()
        return conn, ("local", 0)

if os.path.exists(SOCK):
    os.unlink(SOCK)
S(SOCK, H).serve_forever()
