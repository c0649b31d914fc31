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
The expected numbers come from topo-synth's JSON, the geometry from the viewer's --meta, the
pixels from mw-pngprobe. Exits 1 with every failed check listed. Standard library only.
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
    elif check == "target":
        x, y = cell_xy(meta, *synth["known_pair"])
        print("%d,%d" % (x, y))
    else:
        fail("unknown check " + check)
    for e in errors:
        print("FAIL: " + e, file=sys.stderr)
    sys.exit(1 if errors else 0)
