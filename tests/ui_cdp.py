#!/usr/bin/python3
"""tests/ui_cdp.py — drive headless chromium over the DevTools protocol for
tests/cases/gateway_ui.t (Debian's chromium and python3-websocket).

    ui_cdp.py URL OUTDIR ROLE=STATE... -- ROLE=STATE...

Opens URL in one page and keeps it open. Phase 1: waits until the page
shows every ROLE=STATE before "--" (rows #role-NAME, data-state), saves
OUTDIR/ui-1.png and writes OUTDIR/phase1 (the test then changes the fleet).
Phase 2: waits until the same page, never reloaded, shows every ROLE=STATE
after "--", saves OUTDIR/ui-2.png. Console errors, uncaught exceptions and
failed loads are collected throughout. Prints one JSON object (phases
reached, the rows seen last, the errors) and exits 0; exits 1 when a phase
timed out (its bound: CDP_WAIT seconds, default 120), 2 when chromium did
not start. Every wait is bounded; chromium is stopped by its pid.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

WAIT = float(os.environ.get("CDP_WAIT", "120"))


def main():
    url, out = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    cut = args.index("--") if "--" in args else len(args)
    phases = [dict(a.split("=", 1) for a in args[:cut]), dict(a.split("=", 1) for a in args[cut + 1:])]
    prof = tempfile.mkdtemp(prefix="lobes-ui-")
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    proc = subprocess.Popen([exe, "--headless=new", "--no-sandbox", "--disable-gpu",
                             "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions",
                             "--disable-background-networking", "--remote-debugging-address=127.0.0.1",
                             "--remote-debugging-port=0", "--user-data-dir=" + prof,
                             "--window-size=1200,900", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(out, "chromium.log"), "w"))
    result = {"phases": 0, "errors": [], "rows": {}}
    try:
        port = None
        end = time.time() + WAIT
        while time.time() < end and port is None and proc.poll() is None:
            try:
                with open(os.path.join(prof, "DevToolsActivePort")) as f:
                    port = int(f.readline())
            except (OSError, ValueError):
                time.sleep(0.1)
        if port is None:
            print(json.dumps({"error": "chromium did not start"}))
            return 2
        pages = []
        while time.time() < end and not pages:
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=5) as r:
                pages = [p for p in json.load(r) if p.get("type") == "page"]
        ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=5,
                                         suppress_origin=True)
        seq = [0]

        def handle(msg):
            m = msg.get("method")
            p = msg.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                result["errors"].append("console: " + " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                result["errors"].append("exception: " + d.get("text", "") + " " +
                                        d.get("exception", {}).get("description", ""))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                e = p["entry"]
                result["errors"].append("log: " + e.get("text", "") + " " + e.get("url", ""))

        def call(method, **params):
            seq[0] += 1
            ws.send(json.dumps({"id": seq[0], "method": method, "params": params}))
            stop = time.time() + 30
            while time.time() < stop:
                msg = json.loads(ws.recv())
                if msg.get("id") == seq[0]:
                    if "error" in msg:
                        raise RuntimeError(method + ": " + json.dumps(msg["error"]))
                    return msg.get("result", {})
                handle(msg)
            raise RuntimeError(method + ": no answer")

        def rows():
            r = call("Runtime.evaluate", returnByValue=True, expression=
                     "JSON.stringify({rows: Array.from(document.querySelectorAll('#roles tbody tr'))"
                     ".map(t => [t.id.replace('role-', ''), t.dataset.state,"
                     " t.querySelector('.state').textContent]),"
                     " updates: Number(document.body.dataset.updates || 0),"
                     " err: document.getElementById('err').textContent})")
            v = r.get("result", {}).get("value")  # none while the page is still loading
            return json.loads(v) if v else {"rows": [], "updates": 0, "err": ""}

        def shot(name):
            r = call("Page.captureScreenshot", format="png")
            with open(os.path.join(out, name), "wb") as f:
                f.write(base64.b64decode(r["data"]))

        for d in ("Runtime.enable", "Log.enable", "Page.enable"):
            call(d)
        call("Page.navigate", url=url)
        for i, want in enumerate(phases):
            end = time.time() + WAIT
            ok = False
            while time.time() < end:
                seen = rows()
                result["rows"] = {n: s for n, s, _ in seen["rows"]}
                result["shown"] = {n: t for n, _, t in seen["rows"]}
                result["updates"] = seen["updates"]
                result["page_error"] = seen["err"]
                if seen["updates"] > 0 and all(result["rows"].get(k) == v for k, v in want.items()):
                    ok = True
                    break
                # let events in between polls (bounded)
                ws.settimeout(0.3)
                try:
                    while True:
                        handle(json.loads(ws.recv()))
                except websocket.WebSocketTimeoutException:
                    pass
                ws.settimeout(5)
            if not ok:
                shot("ui-timeout-%d.png" % (i + 1))
                break
            shot("ui-%d.png" % (i + 1))
            result["phases"] = i + 1
            if i == 0:
                open(os.path.join(out, "phase1"), "w").close()
        ws.close()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(prof, ignore_errors=True)
    print(json.dumps(result))
    return 0 if result["phases"] == len(phases) else 1


if __name__ == "__main__":
    sys.exit(main())
