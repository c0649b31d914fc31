"""topocheck.py: the checks of the topology and matrix snapshot tests (snapshot_topology.sh,
snapshot_matrix.sh).

Usage: python3 topocheck.py CHECK PROBE SYNTH.json META.json PNG [ARGS...]
  lines   W     the topology meta shows window W's pairs exactly (counts intra/inter, totals,
                scale min and max as topo-synth states them) and the sampled intra- and
                inter-node lines have pixels of their colors where the meta says they are
  bundles W     node bundles drawn: their count and sums equal the window's
  legend        the color bar of the legend is drawn, from the ramp's min color to its max
  matrix  W     the matrix' bins, node boundaries and sums; the known pair's cell has the color
                of the scale's maximum (it is the largest pair) and so has the bar's right end
  mxpick  W OUT the --pick output of the known pair's cell names it with its figures
  target        prints the pixel of the known pair's cell (for --pick)
  orbit   META180 PNG180 META90 PNG90
                where rank 0 is drawn, from first principles rather than the viewer's meta:
                three snapshots at pitch 89 (nearly top-down) and yaw 0, 180 and 90. Rank 0
                sends the most bytes (topo-synth's known pair), so its marker is the only one
                in the ramp's max color (read from the PNG's own rank bar). It must be one
                compact marker; at yaw 0 above and to the left of the drawing region's centre
                (the orbit camera looks at the scene's centre; nodes are laid out in node order
                row by row and rank 0 is on node 0's first PU, so it is the top-left corner);
                at yaw 180 at its reflection through the centre and at yaw 90 at its rotation
                by 90 degrees about it (within 4 px): a camera or a placement that moved ranks
                fails either the corner or the symmetry.
The expected numbers come from topo-synth's JSON, the geometry from the viewer's --meta (except
for orbit), the pixels from mw-pngprobe. Exits 1 with every failed check listed. Standard
library only.
"""
import json
import subprocess
import sys

errors = []


def fail(msg):
    errors.append(msg)


def expect(what, got, want):
    if got != want:
        fail("%s: %r, want %r" % (what, got, want))


def load(path):
    with open(path) as f:
        return json.load(f)


def probe(png, *args):
    out = subprocess.run([PROBE, png] + [str(a) for a in args], capture_output=True, text=True)
    if out.returncode != 0:
        fail("mw-pngprobe %s: %s" % (" ".join(map(str, args)), out.stderr.strip()))
        return ""
    return out.stdout.strip()


def near(png, x, y, rgb, tol, r=2):
    """Pixels within tol of rgb in the (2r+1)^2 square around (x, y)."""
    x, y = int(round(x)), int(round(y))
    w, h = map(int, probe(png, "size").split())
    x0, y0, x1, y1 = max(x - r, 0), max(y - r, 0), min(x + r, w - 1), min(y + r, h - 1)
    if x0 > x1 or y0 > y1:
        return 0
    out = probe(png, "count", rgb[0], rgb[1], rgb[2], tol, x0, y0, x1, y1)
    return int(out) if out else 0


def window(synth, w):
    return synth["windows"][w]


def check_lines(synth, meta, png, w):
    t = meta["topology"]
    win = window(synth, w)
    expect("window shown", t.get("window"), w)
    expect("have_data", t["have_data"], True)
    ln = t["lines"]
    expect("pairs", ln["pairs"], win["pairs"])
    expect("intra-node pairs", ln["intra"], win["intra"])
    expect("inter-node pairs", ln["inter"], win["inter"])
    expect("messages", ln["messages"], win["messages"])
    expect("bytes", ln["bytes"], win["bytes"])
    expect("dropped", ln["dropped"], 0)
    if t["color"] == "messages":
        expect("scale min", t["scale"]["min"], win["min_messages"])
        expect("scale max", t["scale"]["max"], win["max_messages"])
    hits = {True: 0, False: 0}
    tried = {True: 0, False: 0}
    for s in t["samples"]:
        tried[s["inter"]] += 1
        if near(png, s["x"], s["y"], s["rgb"], 40) > 0:
            hits[s["inter"]] += 1
    for inter in (False, True):
        name = "inter-node" if inter else "intra-node"
        print("%s lines: %d of %d samples found in the image" % (name, hits[inter], tried[inter]))
        if tried[inter] < 4:
            fail("only %d %s samples in the meta" % (tried[inter], name))
        elif hits[inter] * 2 < tried[inter]:
            fail("%s lines: only %d of %d samples have their color" % (name, hits[inter],
                                                                        tried[inter]))


def check_bundles(synth, meta, png, w):
    t = meta["topology"]
    win = window(synth, w)
    expect("bundled", t["bundled"], True)
    b = t["bundles"]
    n = synth["nodes"]
    expect("bundle messages", b["messages"], win["messages"])
    expect("bundle bytes", b["bytes"], win["bytes"])
    expect("bundles intra", b["intra"], n)
    expect("curves", t["curves"], b["count"])
    hit = sum(1 for s in t["samples"] if near(png, s["x"], s["y"], s["rgb"], 40) > 0)
    print("bundles: %d of %d samples found" % (hit, len(t["samples"])))
    if hit * 2 < len(t["samples"]) or not t["samples"]:
        fail("bundles: only %d of %d samples have their color" % (hit, len(t["samples"])))


def check_legend(meta, png):
    t = meta["topology"]
    bar = t["legend_bar"]
    sc = t["scale"]
    y = bar["y"] + bar["h"] // 2
    for x, rgb, end in ((bar["x"] + 1, sc["min_rgb"], "min"),
                        (bar["x"] + bar["w"] - 2, sc["max_rgb"], "max")):
        if near(png, x, y, rgb, 12, 1) == 0:
            fail("legend bar: no %s color %r at its %s end (%d, %d): %s" %
                 (end, rgb, end, x, y, probe(png, "pixel", x, y)))
    bg = probe(png, "pixel", bar["x"] + bar["w"] // 2, y)
    if bg == "19 21 26":
        fail("legend bar: its middle is background")


def cell_xy(meta, src, dst):
    m = meta["matrix"]
    p = m["plot"]
    cw = p["w"] / m["bins"]
    return p["x"] + (dst + 0.5) * cw, p["y"] + (src + 0.5) * cw


def check_matrix(synth, meta, png, w):
    m = meta["matrix"]
    win = window(synth, w)
    expect("bins", m["bins"], synth["ranks"])
    expect("matrix messages", m["messages"], win["messages"])
    expect("matrix bytes", m["bytes"], win["bytes"])
    expect("cells used", m["cells_used"], win["pairs"])
    rpn = synth["ranks_per_node"]
    expect("node boundaries", m["node_edges"], [rpn * k for k in range(1, synth["nodes"])])
    expect("scale max", m["scale"]["max"], win["max_messages"])
    s, d = synth["known_pair"]
    x, y = cell_xy(meta, s, d)
    if near(png, x, y, m["scale"]["max_rgb"], 12, 1) == 0:
        fail("the known pair's cell at (%d, %d) is %s, want the max color %r" %
             (x, y, probe(png, "pixel", int(x), int(y)), m["scale"]["max_rgb"]))
    bar = meta["topology"]["legend_bar"]
    bx, by = bar["x"] + bar["w"] - 2, bar["y"] + bar["h"] // 2
    if near(png, bx, by, m["scale"]["max_rgb"], 12, 1) == 0:
        fail("the legend bar's right end is not the max color")
    # An empty cell has the plot's background.
    ex, ey = cell_xy(meta, 0, synth["ranks"] // 2 + 3)
    if near(png, ex, ey, [27, 30, 37], 6, 1) == 0:
        fail("an empty cell is not background: %s" % probe(png, "pixel", int(ex), int(ey)))


def check_mxpick(synth, w, out):
    win = window(synth, w)
    p = json.loads(open(out).read().strip().splitlines()[-1])
    s, d = synth["known_pair"]
    expect("pick kind", p.get("kind"), "matrix")
    expect("pick sender", (p.get("src0"), p.get("src1")), (s, s))
    expect("pick receiver", (p.get("dst0"), p.get("dst1")), (d, d))
    expect("pick messages", p.get("messages"), win["known_messages"])
    expect("pick bytes", p.get("bytes"), win["known_bytes"])


def rank0_marker(meta, png):
    """(centroid x, y) of the pixels of the rank bar's max color in the scene above the legend
    panel, or None, with the reasons added to the errors."""
    t = meta["topology"]
    bar, region, legend_bar = t["rank_bar"], t["region"], t["legend_bar"]
    top = probe(png, "pixel", bar["x"] + bar["w"] - 2, bar["y"] + bar["h"] // 2).split()
    if len(top) != 3:
        return None
    r, g, b = (int(v) for v in top)
    out = probe(png, "find", r, g, b, 6, region["x"], region["y"],
                region["x"] + region["w"] - 1, legend_bar["y"] - 40).split()
    if not out or out[0] == "0":
        fail("%s: no pixel of the rank scale's max color %s %s %s in the scene" % (png, r, g, b))
        return None
    n, cx, cy = int(out[0]), float(out[1]), float(out[2])
    x0, y0, x1, y1 = (int(v) for v in out[3:7])
    print("%s: rank 0 marker: %d pixels of (%d, %d, %d) around (%.1f, %.1f), box %d..%d x %d..%d" %
          (png, n, r, g, b, cx, cy, x0, x1, y0, y1))
    if n < 12 or x1 - x0 > 24 or y1 - y0 > 24:
        fail("%s: the max color is not one compact marker (%d pixels in %dx%d)" %
             (png, n, x1 - x0 + 1, y1 - y0 + 1))
        return None
    return cx, cy


def check_orbit(meta0, png0, meta180, png180, meta90, png90):
    reg = meta0["topology"]["region"]
    cx, cy = reg["x"] + reg["w"] / 2.0, reg["y"] + reg["h"] / 2.0
    p0, p180, p90 = (rank0_marker(m, p) for m, p in ((meta0, png0), (meta180, png180),
                                                      (meta90, png90)))
    if not p0:
        return
    vx, vy = p0[0] - cx, p0[1] - cy
    if not (vx < -20 and vy < -20):
        fail("yaw 0: rank 0 at (%.1f, %.1f) is not above and left of the centre (%.1f, %.1f)" %
             (p0[0], p0[1], cx, cy))
    for name, p, want in (("yaw 180", p180, (cx - vx, cy - vy)),
                          ("yaw 90", p90, (cx - vy, cy + vx))):
        if p and (abs(p[0] - want[0]) > 4 or abs(p[1] - want[1]) > 4):
            fail("%s: rank 0 at (%.1f, %.1f), want (%.1f, %.1f)" % (name, p[0], p[1], want[0],
                                                                     want[1]))


if __name__ == "__main__":
    check, PROBE, synth_p, meta_p, png = sys.argv[1:6]
    rest = sys.argv[6:]
    synth, meta = load(synth_p), load(meta_p)
    if check == "lines":
        check_lines(synth, meta, png, int(rest[0]))
    elif check == "bundles":
        check_bundles(synth, meta, png, int(rest[0]))
    elif check == "legend":
        check_legend(meta, png)
    elif check == "matrix":
        check_matrix(synth, meta, png, int(rest[0]))
    elif check == "mxpick":
        check_mxpick(synth, int(rest[0]), rest[1])
    elif check == "orbit":
        check_orbit(meta, png, load(rest[0]), rest[1], load(rest[2]), rest[3])
    elif check == "target":
        x, y = cell_xy(meta, *synth["known_pair"])
        print("%d,%d" % (x, y))
    else:
        fail("unknown check " + check)
    for e in errors:
        print("FAIL: " + e, file=sys.stderr)
    sys.exit(1 if errors else 0)
