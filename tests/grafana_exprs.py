#!/usr/bin/env python3
# tests/grafana_exprs.py DASHBOARD.json SCRAPE.txt RULES_OUT
#
# Reads a Grafana dashboard (python's json), checks its shape (unique panel
# ids and refIds, a grid position, every target on the dashboard's
# Prometheus data source) and that every metric its PromQL names is a
# sample name of SCRAPE.txt (a real scrape of the gateway). Grafana's
# variables are given values Prometheus can parse ($instance: .*,
# $__rate_interval: 1m). Writes the expressions as a Prometheus recording
# rules file to RULES_OUT (for `promtool check rules`) and prints one
# expression a line. Exit 1 with what is wrong.
import json
import re
import sys

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
            "unless", "bool", "offset", "inf", "nan"}


def metric_names(expr):
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings
    e = re.sub(r"\{[^}]*\}", "", e)  # label matchers
    e = re.sub(r"\[[^\]]*\]", "", e)  # ranges
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", e)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        rest = e[m.end():].lstrip()
        if rest.startswith("(") or m.group(0).lower() in KEYWORDS:
            continue  # a function or an aggregation
        names.add(m.group(0))
    return names


def main():
    dash = json.load(open(sys.argv[1]))
    scraped = set()
    for line in open(sys.argv[2]):
        if line.strip() and not line.startswith("#"):
            scraped.add(re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", line).group(0))
    bad = []
    ids = set()
    exprs = []
    for p in dash.get("panels", []):
        if p.get("id") in ids:
            bad.append("panel id %r twice" % p.get("id"))
        ids.add(p.get("id"))
        gp = p.get("gridPos", {})
        if not all(isinstance(gp.get(k), int) for k in "xywh"):
            bad.append("panel %r has no gridPos" % p.get("title"))
        refs = set()
        for t in p.get("targets", []):
            if t.get("refId") in refs:
                bad.append("panel %r: refId %r twice" % (p.get("title"), t.get("refId")))
            refs.add(t.get("refId"))
            if t.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
                bad.append("panel %r: a target not on ${DS_PROMETHEUS}" % p.get("title"))
            e = t["expr"].replace("$__rate_interval", "1m").replace("$instance", ".*")
            if "$" in e:
                bad.append("panel %r: an unknown variable in %s" % (p.get("title"), e))
            names = metric_names(e)
            if not names:
                bad.append("panel %r: no metric in %s" % (p.get("title"), e))
            for n in sorted(names - scraped):
                bad.append("panel %r: %s is not a metric the gateway exposes" % (p.get("title"), n))
            exprs.append(e)
        if not refs:
            bad.append("panel %r has no query" % p.get("title"))
    if not exprs:
        bad.append("no panel")
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": "dashboard:expr_%d" % i, "expr": e} for i, e in enumerate(exprs)]}]}
    with open(sys.argv[3], "w") as f:
        json.dump(rules, f)  # JSON is YAML
    if bad:
        print("\n".join(bad), file=sys.stderr)
        return 1
    print("\n".join(exprs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
