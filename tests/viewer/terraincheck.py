#!/usr/bin/env python3
"""terraincheck.py: the checks of snapshot_terrain.sh (the terrain view, docs/viewer.md).

  terraincheck.py meta SYNTH.json META.json functions|regions
      the meta's terrain equals what mw-synth states for the whole run: ranks, the columns by
      total (names, "other" when more than 20), the five largest cells (rank, column, value);
      the rows aggregate ceil(ranks / rows) ranks each (rows: the heat map's pixel height, or the
      3D field's rank axis in pixels) and say so; the cell shown at a
      top cell's row is its value (the row's maximum)
  terraincheck.py pixels PNGPROBE META.json PNG
      the largest cell is drawn in the scale's top colour (in 3D: its front face, shaded as
      the meta says) where the meta puts it, the plot is
      not empty (many cells in the scale's low colours) and the colour bar shows both ends
  terraincheck.py pick PICK.out META.json SYNTH.json functions|regions
      --pick at the largest cell printed that cell: kind terrain, its rank, column and value,
      and the rank is highlighted in the meta
"""
import json
import math
import subprocess
import sys


def fail(msg):
    print("terraincheck: " + msg)
    sys.exit(1)


def near(a, b, tol):
    return all(abs(int(x) - int(y)) <= tol for x, y in zip(a, b))


def probe(pp, png, *args):
    out = subprocess.run([pp, png] + [str(a) for a in args], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"mw-pngprobe {args}: {out.stderr.strip()}")
    return out.stdout.split()


def check_meta(synth, meta, what):
    s = json.load(open(synth))
    t = json.load(open(meta)).get("terrain")
    if not t:
        fail("no terrain object in the meta")
    exp = s[what]
    if t["what"] != what or t["metric"] != exp["metric"]:
        fail(f"shows {t['what']} / {t['metric']}, expected {what} / {exp['metric']}")
    R = s["ranks"]
    if t["ranks"] != R:
        fail(f"ranks {t['ranks']} != {R}")
    if t["windows"] != s["windows"] or t["detailed_windows"] != s["windows"] or t["bad"]:
        fail(f"windows {t['windows']}/{t['detailed_windows']} bad {t['bad']}, expected "
             f"{s['windows']}")
    names = [c["name"] for c in t["cols"]]
    if t["ncols"] != exp["ncols"] or names[:len(exp["cols"])] != exp["cols"]:
        fail(f"columns {names} != {exp['cols']} ({t['ncols']} vs {exp['ncols']})")
    if t["other"] != (exp["ncols"] > len(exp["cols"])):
        fail(f"other {t['other']}")
    if t["other"] and not names[-1].startswith("other ("):
        fail(f"last column {names[-1]}")
    if len(t["top"]) != len(exp["top"]):
        fail(f"{len(t['top'])} top cells, expected {len(exp['top'])}")
    for got, want in zip(t["top"], exp["top"]):
        if (got["rank"], got["name"]) != (want["rank"], want["name"]) or \
                abs(got["value"] - want["value"]) > 1e-6 * want["value"]:
            fail(f"top cell {got} != {want}")
        if abs(got["shown"] - got["value"]) > 1e-6 * got["value"] and got is t["top"][0]:
            fail(f"the largest cell's row shows {got['shown']}, not its value {got['value']}")
    h = t["max_rows"]
    if t["mode"] == "heatmap" and h != t["plot"][3]:
        fail(f"the heat map aggregates to {h} rows, not its {t['plot'][3]} pixels")
    if not 16 <= h <= 4096:
        fail(f"max_rows {h}")
    per = math.ceil(R / h) if R > h else 1
    if t["ranks_per_row"] != per or t["rows"] != math.ceil(R / per):
        fail(f"rows {t['rows']} of {t['ranks_per_row']} ranks, expected {per} per row "
             f"(at most {h} rows)")
    want = f"{R} ranks: {per} ranks per row, max" if per > 1 else f"{R} ranks: one row each"
    if t["aggregation_text"] != want or t["aggregation"] != "max":
        fail(f"aggregation said as '{t['aggregation_text']}', expected '{want}'")
    top = t["top"][0]
    if top["row"] != top["rank"] // per or abs(t["vmax"] - top["value"]) > 1e-6 * top["value"]:
        fail(f"largest cell in row {top['row']}, vmax {t['vmax']}")
    print(f"terraincheck meta: {what}, {R} ranks in {t['rows']} rows of {per}, "
          f"{t['ncols']} columns, top {top['rank']} {top['name']} {top['value']:.0f} ok")


def check_pixels(pp, meta, png):
    t = json.load(open(meta))["terrain"]
    top = t["top"][0]
    if not near(top["color"], t["color_max"], 2):
        fail(f"the largest cell's colour {top['color']} is not the top one {t['color_max']}")
    # In 3D the face the meta names is shaded (its probe colour); the heat map's cell is not.
    x, y = (int(round(v)) for v in top["probe_px"])
    c = probe(pp, png, "pixel", x, y)
    if not near(c, top["probe_color"], 12):
        fail(f"the largest cell at {x},{y} is {c}, expected {top['probe_color']}")
    px, py, pw, ph = t["plot"]
    n = int(probe(pp, png, "count", *t["color_min"], 40, px, py, px + pw - 1, py + ph - 1)[0])
    if n < 2000:
        fail(f"only {n} pixels of the scale's low colours in the plot: empty drawing?")
    bx, by, bw, bh = t["bar"]
    lo_hi = [probe(pp, png, "count", *t[k], 30, bx, by, bx + bw - 1, by + bh - 1)[0]
             for k in ("color_min", "color_max")]
    if min(int(v) for v in lo_hi) < 1:
        fail(f"the colour bar lacks an end colour ({lo_hi})")
    print(f"terraincheck pixels: {t['mode']}: largest cell {c} at {x},{y}, {n} low cells, "
          f"bar ok")


def check_pick(out, meta, synth, what):
    line = [l for l in open(out) if l.startswith("{")]
    if not line:
        fail("--pick printed nothing")
    p = json.loads(line[-1])
    m = json.load(open(meta))
    want = json.load(open(synth))[what]["top"][0]
    key = "region" if what == "regions" else "function"
    if p.get("kind") != "terrain" or p.get("rank") != want["rank"] or \
            p.get(key) != want["name"] or abs(p["value"] - want["value"]) > 1e-6 * want["value"]:
        fail(f"picked {p}, expected rank {want['rank']} {want['name']} {want['value']}")
    if m.get("highlight_rank") != want["rank"]:
        fail(f"highlighted rank {m.get('highlight_rank')}, expected {want['rank']}")
    if m["terrain"].get("pick", {}).get("rank") != want["rank"]:
        fail(f"the terrain's pick {m['terrain'].get('pick')}")
    print(f"terraincheck pick: rank {p['rank']} {p[key]} {p['value']:.0f}, highlighted")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "meta":
        check_meta(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "pixels":
        check_pixels(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "pick":
        check_pick(*sys.argv[2:])
    else:
        print(__doc__)
        sys.exit(2)
