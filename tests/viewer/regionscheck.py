#!/usr/bin/env python3
"""regionscheck.py: the checks of snapshot_regions.sh (code regions, call sites, per-function
links in the viewer), comparing a snapshot's --meta and PNG with what mw-regions-synth printed.

  regionscheck.py timeline EXPECTED META PROBE PNG
  regionscheck.py legend-row META I                 -> "X Y" of legend row I's middle
  regionscheck.py picked EXPECTED META PROBE PNG
  regionscheck.py topology EXPECTED META PROBE PNG MODE FN
  regionscheck.py links EXPECTED META FN|all
  regionscheck.py matrix EXPECTED META PROBE PNG

Exit status 0 when every check holds, 1 with the failures on stderr.
"""
import json
import subprocess
import sys

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)


def pixel(probe, png, x, y):
    out = subprocess.run([probe, png, "pixel", str(int(x)), str(int(y))], check=True,
                         capture_output=True, text=True).stdout.split()
    return [int(v) for v in out]


def close(a, b, tol):
    return all(abs(p - q) <= tol for p, q in zip(a, b))


def timeline(exp, meta, probe, png):
    rg = meta["regions"]
    check(rg["timeline"] is True, "the timeline is not in region mode")
    # Each window's shares of rank-time, per region (slots 0..2 = regions 1..3).
    wins = rg["windows"]
    check(len(wins) == exp["windows"], f"{len(wins)} windows, expected {exp['windows']}")
    for w in wins:
        k = w["run_window"]
        for g in range(3):
            check(abs(w["shares"][g] - exp["shares"][k][g]) < 1e-9,
                  f"window {k} region {g + 1}: share {w['shares'][g]}, "
                  f"expected {exp['shares'][k][g]}")
    # The stacked tops of a column in the middle of each window, and the colours drawn there.
    lay = meta["layout"]["timeline"]
    t0, t1 = meta["timeline"]["t0"], meta["timeline"]["t1"]
    cols = {c["x"]: c for c in meta["timeline"]["columns"]}
    wns = exp["window_ns"] / 1e9
    layer_rgb = rg["layer_rgb"]
    clamped_seen = 0
    for k in range(exp["windows"]):
        x = int(lay["x"] + ((k + 0.5) * wns - t0) / (t1 - t0) * lay["w"])
        col = cols.get(x)
        check(col is not None and col["data"], f"no column with data at x {x} (window {k})")
        if not col:
            continue
        cum, prev = 0.0, 0.0
        for g in range(3):
            cum += exp["shares"][k][g]
            want = min(cum, 1.0)
            check(abs(col["tops"][g] - want) < 1e-5,
                  f"window {k} layer {g}: top {col['tops'][g]}, expected {want}")
            if want - prev > 0.02:  # tall enough to probe its middle
                y = lay["y"] + lay["h"] * (1 - (want + prev) / 2)
                got = pixel(probe, png, x, y)
                check(close(got, layer_rgb[g], 12),
                      f"window {k} region {g + 1} at ({x},{int(y)}): {got}, "
                      f"expected {layer_rgb[g]}")
            prev = want
        if cum > 1:
            clamped_seen += 1
            check(abs(col["tops"][10] - 1.0) < 1e-6, f"window {k}: not clamped at 1")
    check(clamped_seen == 1, f"{clamped_seen} clamped windows, expected 1 (window 5)")
    check(rg["clamped_columns"] > 0, "no clamped column counted (the note)")
    # The legend: solve, exchange, io by exclusive time, each swatch in its colour.
    names = [e["name"] for e in rg["legend"]]
    check(names == ["solve", "exchange", "io"], f"legend {names}")
    tot = [sum(exp["shares"][k][g] for k in range(exp["windows"])) for g in range(3)]
    for i, e in enumerate(rg["legend"]):
        check(abs(e["share"] - tot[i] / sum(tot)) < 1e-9, f"legend {e['name']} share {e['share']}")
        lg = meta["layout"]["legend"]
        rh = meta["layout"]["legend_row_h"]
        sx = lg["x"] + 6 * meta["scale"] + rh * 0.55 / 2
        got = pixel(probe, png, sx, e["row_y"] + rh / 2)
        check(close(got, e["rgb"], 12), f"legend swatch {e['name']}: {got}, expected {e['rgb']}")
    # The details of MPI_Allreduce: its sites by time, exact, and its spread.
    d = rg.get("details") or {}
    check(d.get("fn") == "MPI_Allreduce", f"details of {d.get('fn')}")
    sites = d.get("sites", [])
    check(len(sites) == len(exp["sites"]), f"{len(sites)} sites")
    for got, want in zip(sites, exp["sites"]):
        for key in ("site", "file", "line", "top_rank"):
            check(got[key] == want[key], f"site {want['site']}: {key} {got[key]} != {want[key]}")
        check(abs(got["share"] - want["share"]) < 1e-9, f"site {want['site']} share")
    check(all(sites[i]["ns"] >= sites[i + 1]["ns"] for i in range(len(sites) - 1)),
          "sites not sorted by time")
    sp = d.get("spread", {})
    n = exp["windows"]
    check(sp.get("windows") == n, "spread: windows")
    check(abs(sp.get("sd_ns", -1) - sum(1000 * k + 500 for k in range(n)) / n) < 1e-6,
          f"spread: sd {sp.get('sd_ns')}")
    check(sp.get("max_rank") == n - 1 and sp.get("max_ns") == 5000000 + (n - 1) * 1000,
          f"spread: max rank {sp.get('max_rank')} {sp.get('max_ns')}")


def legend_row(meta, i):
    m = meta["layout"]
    print(m["legend"]["x"] + m["legend"]["w"] // 2,
          meta["regions"]["legend"][i]["row_y"] + m["legend_row_h"] // 2)


def picked(exp, meta, probe, png):
    rg = meta["regions"]
    check(rg["highlight"] == 2, f"highlight {rg['highlight']}, expected 2 (exchange)")
    # The highlighted layer keeps its colour, the others are dimmed.
    lay = meta["layout"]["timeline"]
    t0, t1 = meta["timeline"]["t0"], meta["timeline"]["t1"]
    x = int(lay["x"] + (0.05 - t0) / (t1 - t0) * lay["w"])
    s = exp["shares"][0]
    y_ex = lay["y"] + lay["h"] * (1 - (s[0] + s[1] / 2))
    y_so = lay["y"] + lay["h"] * (1 - s[0] / 2)
    check(close(pixel(probe, png, x, y_ex), rg["layer_rgb"][1], 12), "exchange not in its colour")
    check(not close(pixel(probe, png, x, y_so), rg["layer_rgb"][0], 40), "solve not dimmed")


def topology(exp, meta, probe, png, mode, fn):
    t = meta["regions"].get("topology", {})
    check(t.get("ranks") == mode, f"ranks coloured by {t.get('ranks')}, expected {mode}")
    check(t.get("region_name") == "solve", f"region {t.get('region_name')}")
    want = exp["solve_excl_w0" if mode == "excl" else "solve_incl_w0"]
    vals = t.get("rank_values", [])
    check([v["ns"] for v in vals] == want, f"rank values {[v['ns'] for v in vals]} != {want}")
    check(t.get("scale_max") == max(want), "scale max")
    for v in vals:
        if "x" not in v:
            FAILS.append(f"rank {v['rank']}: no screen position")
            continue
        # Beside the rank's label, on its marker's top face.
        got = pixel(probe, png, v["x"] + 8, v["y"] + 8)
        check(close(got, v["rgb"], 24), f"rank {v['rank']} marker {got}, expected {v['rgb']}")
    # The largest time in the ramp's top (red), the smallest toward blue.
    check(vals and vals[-1]["rgb"][0] > 200 and vals[0]["rgb"][2] > vals[0]["rgb"][0],
          "ramp ends")
    links(exp, meta, fn)


def links(exp, meta, fn):
    t = meta["regions"].get("topology", {})
    if fn == "all":
        check(t.get("link_fn") is None, f"links of {t.get('link_fn')}")
        lines = exp["isend"]["lines"] + exp["send"]["lines"]
        msgs = exp["isend"]["messages"] + exp["send"]["messages"]
    else:
        check(t.get("link_fn") == fn, f"links of {t.get('link_fn')}, expected {fn}")
        key = "isend" if fn == "MPI_Isend" else "send"
        lines, msgs = exp[key]["lines"], exp[key]["messages"]
    check(t.get("lines") == lines, f"{t.get('lines')} lines, expected {lines}")
    check(t.get("messages") == msgs, f"{t.get('messages')} messages, expected {msgs}")


def matrix(exp, meta, probe, png):
    links(exp, meta, "MPI_Send")
    mx = meta["matrix"]
    check(mx["messages"] == exp["send"]["messages"], f"matrix messages {mx['messages']}")
    check(mx["cells_used"] == exp["send"]["lines"], f"matrix cells {mx['cells_used']}")
    p, b = mx["plot"], mx["bins"]
    cw = p["w"] / b

    def cell(src, dst):
        return pixel(probe, png, p["x"] + (dst + 0.5) * cw, p["y"] + (src + 0.5) * cw)
    # MPI_Send goes to r - 1: cell (1, 0) is drawn, (0, 1) (MPI_Isend only) is empty.
    check(close(cell(1, 0), mx["scale"]["max_rgb"], 12), f"cell 1->0 {cell(1, 0)}")
    check(not close(cell(0, 1), mx["scale"]["max_rgb"], 60), f"cell 0->1 {cell(0, 1)}")


def main():
    what = sys.argv[1]
    if what == "legend-row":
        legend_row(json.load(open(sys.argv[2])), int(sys.argv[3]))
        return 0
    exp = json.load(open(sys.argv[2]))
    meta = json.load(open(sys.argv[3]))
    if what == "timeline":
        timeline(exp, meta, sys.argv[4], sys.argv[5])
    elif what == "picked":
        picked(exp, meta, sys.argv[4], sys.argv[5])
    elif what == "topology":
        topology(exp, meta, sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7])
    elif what == "links":
        links(exp, meta, sys.argv[4])
    elif what == "matrix":
        matrix(exp, meta, sys.argv[4], sys.argv[5])
    else:
        print(f"unknown check {what}", file=sys.stderr)
        return 2
    for f in FAILS:
        print(f"regionscheck {what}: {f}", file=sys.stderr)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
