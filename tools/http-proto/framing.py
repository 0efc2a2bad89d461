#!/usr/bin/env python3
"""framing.py PORT — send the HTTP framing cases the gateway must answer
itself (issue 21 item 6, issue 22 item 8) to a server on 127.0.0.1:PORT and
print, per case, what came back: the status line(s), Content-Type, the
start of the body, and how many status lines (an answer sent twice shows
two). Used by docs/benchmarks/http-servers.md against libmicrohttpd (the
gateway), libevent's evhttp and libh2o (tools/http-proto/*.c)."""
import json, socket, sys

BODY = b'{"model":"cortex","messages":[]}'
CASES = [
    ("cl-abc", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n" + BODY),
    ("cl-neg", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n" + BODY),
    ("cl-2^64", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551616\r\n\r\n" + BODY),
    ("cl-twice", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 32\r\nContent-Length: 5\r\n\r\n" + BODY),
    ("te-identity", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n" + BODY),
    ("te-gzip-chunked", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
    ("cl+te", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 32\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("head-20k", b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n"),
    ("line-garbage", b"GARBAGE\r\n\r\n"),
    ("line-extra", b"GET /health HTTP/1.1 extra\r\nHost: x\r\n\r\n"),
    ("version-2.0", b"GET /health HTTP/2.0\r\nHost: x\r\n\r\n"),
    ("no-host-1.1", b"GET /health HTTP/1.1\r\n\r\n"),
]


def send(port, raw):
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    s.sendall(raw)
    got = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
    except socket.timeout:
        got += b"<<timeout 3 s>>"
    except ConnectionResetError:
        got += b"<<reset>>"
    s.close()
    return got


def main():
    port = int(sys.argv[1])
    for name, raw in CASES:
        got = send(port, raw)
        head, _, body = got.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        ctype = next((l.split(b":", 1)[1].strip().decode() for l in lines
                      if l.lower().startswith(b"content-type:")), "")
        js = False
        try:
            js = "error" in json.loads(body.split(b"HTTP/1.")[0] or b"null")
        except Exception:
            pass
        print(json.dumps({"case": name, "status": lines[0].decode(errors="replace") if got else "(nothing)",
                          "status_lines": got.count(b"HTTP/1."), "content_type": ctype,
                          "openai_json": js, "body": body[:70].decode(errors="replace")}))


main()
