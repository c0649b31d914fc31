#!/usr/bin/env python3
"""follow_feed.py ENDPOINT OUT.json READY [CURVE_SERVER CURVE_KEY]: mpiwatch.follow on a
collector's feed until the job ends (or 60 s of silence); writes what it received to OUT.json:
every window's per-function calls, time and bytes by grid index, its job-relative number, the
job (name, size) and the event kinds, the follower's counters. Touches READY once subscribed.
"""

import json
import sys

import mpiwatch


def main():
    ep, out, ready = sys.argv[1:4]
    keys = {}
    if len(sys.argv) > 5:
        keys = {"curve_server": sys.argv[4], "curve_key": sys.argv[5]}
    timeout = float(sys.argv[6]) if len(sys.argv) > 6 else 60.0
    res = {"windows": {}, "relative": {}, "events": [], "job": None, "ranks_rows": 0}
    with mpiwatch.follow(ep, until_job_end=True, timeout_s=timeout, **keys) as f:
        open(ready, "w").close()
        for topic, item in f:
            if topic == "window":
                res["windows"][str(item.index)] = {
                    fn: [int(c), int(t), int(b)] for fn, c, t, b in zip(
                        item.functions["function"], item.functions["calls"],
                        item.functions["time_ns"], item.functions["bytes"])}
                res["relative"][str(item.index)] = [item.window, item.t_s]
                res["ranks_rows"] += len(item.ranks)
            elif topic == "job":
                res["job"] = {"name": item.name, "size": item.size}
            elif topic == "event":
                res["events"].append(item["kind"])
        res["bad"], res["gaps"], res["received"] = f.bad, f.gaps, f.received
        tot = f.totals()
        res["totals"] = {fn: [int(c), int(t), int(b)] for fn, c, t, b in zip(
            tot["function"], tot["calls"], tot["time_ns"], tot["bytes"])}
    json.dump(res, open(out, "w"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
