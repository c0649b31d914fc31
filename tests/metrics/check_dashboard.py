#!/usr/bin/env python3
"""check_dashboard.py DASHBOARD.json [--metrics PAGE.txt] [--prometheus URL --job NAME]

Checks the Grafana dashboard of share/grafana (docs/metrics.md) against what the collector
really exports:
  - the JSON model: loads with json, has schemaVersion, a datasource variable DS_PROMETHEUS
    and a query variable `job` in templating, unique panel ids, a gridPos for each panel, and
    every panel and target on the datasource "${DS_PROMETHEUS}";
  - every target's PromQL names only metrics that the page --metrics (a live scrape of
    /metrics) declares with a TYPE line, selects on the `job` label, and every label it
    selects, groups by or puts in a legend is on that metric in the page;
  - with --prometheus: each expression, with $job set to the job's name (regex-escaped, as
    Grafana does for a multi-value variable) and $__rate_interval to 1m, returns data from
    that Prometheus server's /api/v1/query.
Exit status 0 when all holds; each problem is printed."""
import argparse
import json
import re
import sys
import time
import urllib.parse
import urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("dashboard")
ap.add_argument("--metrics")
ap.add_argument("--prometheus")
ap.add_argument("--job")
a = ap.parse_args()
errors = []
d = json.load(open(a.dashboard))

if not isinstance(d.get("schemaVersion"), int):
    errors.append("no integer schemaVersion")
if not d.get("uid") or not d.get("title"):
    errors.append("no uid or title")
variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
ds = variables.get("DS_PROMETHEUS")
if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
    errors.append("no datasource variable DS_PROMETHEUS of type prometheus")
job = variables.get("job")
if not job or job.get("type") != "query" or "label_values(" not in json.dumps(job.get("query")):
    errors.append("no query variable `job` (label_values)")
DS_REF = "${DS_PROMETHEUS}"

panels = d.get("panels", [])
if len(panels) < 6:
    errors.append(f"only {len(panels)} panels")
ids = [p.get("id") for p in panels]
if len(set(ids)) != len(ids) or None in ids:
    errors.append(f"panel ids not unique: {ids}")
targets = []
for p in panels:
    where = f"panel {p.get('id')} {p.get('title')!r}"
    if not all(k in p.get("gridPos", {}) for k in "xywh"):
        errors.append(f"{where}: no gridPos")
    if p.get("datasource", {}).get("uid") != DS_REF:
        errors.append(f"{where}: datasource is not {DS_REF}")
    if not p.get("targets"):
        errors.append(f"{where}: no targets")
    for t in p.get("targets", []):
        if t.get("datasource", {}).get("uid") != DS_REF:
            errors.append(f"{where} {t.get('refId')}: datasource is not {DS_REF}")
        if not t.get("expr") or not t.get("refId"):
            errors.append(f"{where}: a target without expr or refId")
            continue
        targets.append((where, t))

# What the page exports: metric names (TYPE lines) and the labels seen on each.
exported, labels = {}, {}
if a.metrics:
    for line in open(a.metrics):
        m = re.match(r"# TYPE (\S+) (\S+)", line)
        if m:
            exported[m.group(1)] = m.group(2)
            labels.setdefault(m.group(1), set())
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}", line)
        if m:
            labels.setdefault(m.group(1), set()).update(
                re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(2)))
    if not exported:
        errors.append(f"{a.metrics}: no TYPE lines")

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
            "and", "or", "unless"}
checked = set()
for where, t in targets:
    expr = t["expr"]
    stripped = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # string literals out
    stripped = re.sub(r"\[[^\]]*\]", "", stripped)  # range selectors out
    grouping = set()
    for g in re.findall(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)", stripped):
        grouping.update(x.strip() for x in g.split(",") if x.strip())
    stripped = re.sub(r"\b(?:by|without|on|ignoring)\s*\([^)]*\)", "", stripped)
    metrics = set()
    for m in re.finditer(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", re.sub(r"\{[^}]*\}", "", stripped)):
        name, call = m.group(1), m.group(2)
        if call or name in KEYWORDS or re.fullmatch(r"\d.*", name):
            continue
        metrics.add(name)
    if not metrics:
        errors.append(f"{where}: no metric in {expr!r}")
    for name in sorted(metrics):
        checked.add(name)
        if not name.startswith("mpiwatch_"):
            errors.append(f"{where}: {name!r} is not an mpiwatch series")
        elif a.metrics and name not in exported:
            errors.append(f"{where}: {name} is not exported by the collector")
    selectors = re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}", expr)
    for name, sel in selectors:
        used = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)', sel))
        if "job" not in used:
            errors.append(f"{where}: {name} is not selected by job")
        if a.metrics and name in labels and not used <= labels[name]:
            errors.append(f"{where}: {name} has no label {sorted(used - labels[name])}")
    legend = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", t.get("legendFormat", "")))
    for lab in grouping | legend:
        if a.metrics and not any(lab in labels.get(n, set()) for n in metrics):
            errors.append(f"{where}: label {lab!r} is on none of {sorted(metrics)}")

if a.prometheus:
    if a.job is None:
        errors.append("--prometheus needs --job")
    else:
        # Grafana's regex escaping of a variable value, then PromQL's string escaping.
        rx = re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", a.job)
        value = rx.replace("\\", "\\\\").replace('"', '\\"')
        # A rate() needs two scrapes of a series in its range: a query without data is asked
        # again, once a second, for up to 15 s.
        pending, deadline = list(targets), time.time() + 15
        while pending:
            failed = []
            for where, t in pending:
                q = t["expr"].replace("$__rate_interval", "1m").replace("$job", value)
                url = a.prometheus + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
                try:
                    with urllib.request.urlopen(url, timeout=10) as r:
                        body = json.load(r)
                except Exception as e:  # an HTTP 400 is a query Prometheus cannot parse
                    errors.append(f"{where}: {q!r}: {e}")
                    continue
                if body.get("status") != "success" or not body["data"]["result"]:
                    failed.append((where, t, f"{where}: {q!r} returned no data: {body}"))
            if not failed or time.time() > deadline:
                errors.extend(f[2] for f in failed)
                break
            pending = [(w, t) for w, t, _ in failed]
            time.sleep(1)

for e in errors:
    print("  " + e, file=sys.stderr)
print(f"check_dashboard: {len(panels)} panels, {len(targets)} queries, {len(checked)} metrics"
      f"{' against the page' if a.metrics else ''}"
      f"{' and Prometheus' if a.prometheus else ''}: {'FAILED' if errors else 'ok'}",
      file=sys.stderr)
sys.exit(1 if errors else 0)
