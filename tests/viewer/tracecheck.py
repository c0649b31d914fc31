"""tracecheck.py: pixel checks of traced windows for snapshot_trace.sh.

  tracecheck.py calls SYNTH.json META.json PROBE PNG log|linear   (prints "x y" per call)
  tracecheck.py ranks SYNTH.json META.json PROBE PNG

Positions are computed here from the calls mw-trace-synth wrote and the range the test asked
for (0 to 0.6 s); only the plot's rectangle and the duration axis' ends come from the meta.
"""
import json
import math
import subprocess
import sys

RANGE = (0.0, 0.6)
BG_PLOT = (0x1B, 0x1E, 0x25)
MSG = (0xF2, 0xF2, 0xF2)


def pixel(probe, png, x, y):
    out = subprocess.run([probe, png, "pixel", str(x), str(y)], capture_output=True, text=True,
                         check=True).stdout.split()
    return tuple(int(v) for v in out)


def color_of(meta, fn):
    for e in meta["legend"]:
        if e["fn"] == fn:
            return tuple(e["color"])
    raise SystemExit(f"{fn} not in the legend")


def opacity(px, col, bg):
    """The opacity with which col was blended over bg to give px (from the channel that differs
    most), or -1 when px is not on the line between them."""
    k = max(range(3), key=lambda i: abs(col[i] - bg[i]))
    a = (px[k] - bg[k]) / (col[k] - bg[k])
    for i in range(3):
        if abs(bg[i] + a * (col[i] - bg[i]) - px[i]) > 12:
            return -1
    return a


def calls(syn, meta, probe, png, axis):
    r = meta["layout"]["density"]
    dn = meta["density"]
    assert dn["duration_axis"] == axis, dn
    origin = syn["origin_ns"]
    ok = True
    for c in syn["calls"]:
        t = (c["start_ns"] - origin) / 1e9
        col = int(math.floor((t - RANGE[0]) / (RANGE[1] - RANGE[0]) * r["w"]))
        d = c["dur_ns"]
        if axis == "log":
            row = math.floor((math.log2(d) - math.log2(dn["d0_ns"])) * r["h"] /
                             (math.log2(dn["d1_ns"]) - math.log2(dn["d0_ns"])))
        else:
            row = math.floor(d / dn["d1_ns"] * r["h"])
        x, y = r["x"] + col, r["y"] + r["h"] - 1 - row
        px = pixel(probe, png, x, y)
        want = color_of(meta, c["fn"])
        a = opacity(px, want, BG_PLOT)
        print(x, y)
        if a < 0.25:
            print(f"{c['fn']} at ({x},{y}): {px}, want {want} at opacity >= 0.25 (got {a:.2f})",
                  file=sys.stderr)
            ok = False
    # No call: 0.47 s (a traced window, between the MPI_Wait calls) at 2 ms (log) / a fifth of
    # the axis (linear) is the plot's background.
    x = r["x"] + int(0.473 / 0.6 * r["w"])
    y = r["y"] + r["h"] // 2 if axis == "log" else r["y"] + r["h"] * 4 // 5
    px = pixel(probe, png, x, y)
    if max(abs(px[i] - BG_PLOT[i]) for i in range(3)) > 3:
        print(f"no call at ({x},{y}) but {px}", file=sys.stderr)
        ok = False
    # How each window is drawn (the summary marks follow it).
    cov = {w["index"] - meta["trace"]["windows"][0]["index"]: w["drawn"]
           for w in meta["trace"]["windows"]}
    # Window 4 is partly exact by rank 0's reach-back trace, recorded after the window.
    if (cov.get(0) != "summary" or cov.get(4) != "partial" or cov.get(3) != "partial" or
            cov.get(2) != "exact" or meta["trace"]["late_kept"] != 1):
        print(f"coverage {cov}", file=sys.stderr)
        ok = False
    return ok


def ranks(syn, meta, probe, png):
    r = meta["layout"]["density"]
    rv = meta["trace"]["ranks_view"]
    n = syn["ranks"]
    origin = syn["origin_ns"]
    ok = True

    def xpix(ns):
        return ((ns - origin) / 1e9 - RANGE[0]) / (RANGE[1] - RANGE[0]) * r["w"]

    def ymid(rank):
        return (math.floor(rank * r["h"] / n) + math.floor((rank + 1) * r["h"] / n)) / 2

    m = syn["message"]
    lines = [ln for ln in rv["lines"] if ln["src"] == m["src"] and ln["dst"] == m["dst"]]
    if rv["messages"] != 1 or len(lines) != 1:
        print(f"messages {rv}", file=sys.stderr)
        return False
    ln = lines[0]
    want = (xpix(m["send_ns"]), ymid(m["src"]), xpix(m["recv_end_ns"]), ymid(m["dst"]))
    got = (ln["x0"], ln["y0"], ln["x1"], ln["y1"])
    if any(abs(a - b) > 0.01 for a, b in zip(want, got)):
        print(f"message line {got}, want {want}", file=sys.stderr)
        ok = False
    # The line's middle (between the rows of ranks 1 and 2, no span there) is the message colour.
    mx, my = r["x"] + (want[0] + want[2]) / 2, r["y"] + (want[1] + want[3]) / 2
    px = pixel(probe, png, int(mx), int(my))
    if min(px) < 150:
        print(f"message line middle ({mx:.0f},{my:.0f}) is {px}", file=sys.stderr)
        ok = False
    # The Barrier (rank 2, 30 ms from 0.25 s) fills its row in its colour, opacity 1.
    b = [c for c in syn["calls"] if c["fn"] == "MPI_Barrier"][0]
    x = r["x"] + int(xpix(b["start_ns"] + b["dur_ns"] // 2))
    y = r["y"] + int(ymid(b["rank"]))
    px, col = pixel(probe, png, x, y), color_of(meta, "MPI_Barrier")
    if max(abs(px[i] - col[i]) for i in range(3)) > 6:
        print(f"MPI_Barrier span at ({x},{y}) is {px}, want {col}", file=sys.stderr)
        ok = False
    # Rank 0's row there has no call: background.
    y0 = r["y"] + int(ymid(0))
    px = pixel(probe, png, x, y0)
    if max(abs(px[i] - BG_PLOT[i]) for i in range(3)) > 3:
        print(f"rank 0 at ({x},{y0}) is {px}, want the background", file=sys.stderr)
        ok = False
    return ok


def main():
    what, syn, meta, probe, png = sys.argv[1:6]
    syn = json.load(open(syn))
    meta = json.load(open(meta))
    ok = calls(syn, meta, probe, png, sys.argv[6]) if what == "calls" else ranks(
        syn, meta, probe, png)
    sys.exit(0 if ok else 1)


main()
