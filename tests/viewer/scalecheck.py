"""scalecheck.py: the checks of the 100,000-rank snapshot test (snapshot_scale.sh).

Usage: python3 scalecheck.py CHECK ARGS...
  rss OUT -- CMD...     runs CMD, writes its peak resident set (kB, getrusage) to OUT
  topo PROBE SYNTH.json META.json PNG RSS_KB MAX_MB
                        the topology view of window 0 at 100,000 ranks: the node bundles are
                        computed here from topo-synth's stated pattern (docs in topo-synth.c),
                        independently of the viewer; the view must draw the 2,000 heaviest
                        (by messages) and leave out the rest, the lightest drawn and the
                        heaviest left out must be the 2,000th and 2,001st weights computed
                        here; drawn sample curves must have their colour in the PNG; the rank
                        markers must be aggregated (at most 16 per node, at least one per node)
                        and rank 0's (the largest sender) must show the rank scale's maximum
                        colour in the scene; the viewer's peak RSS must be under MAX_MB
  matrix PROBE SYNTH.json META.json PNG
                        the matrix of window 0 binned here as the viewer's rule says (rank r in
                        bin r * bins / ranks, bins = the plot's width in pixels when the ranks
                        are more): bins, cells used, message and byte sums and the largest cell
                        equal the computation; that cell has the scale's maximum colour; node
                        boundaries are thinned to at least 6 px apart
  cache META.json SYNTH.json MB
                        with --cache-mb MB smaller than two windows: the model keeps one window,
                        and counts for it at least its pairs' arrays (24 bytes a pair, computed
                        from topo-synth's count) and at most MB
Exits 1 with every failed check listed. Standard library only.
"""
import json
import resource
import subprocess
import sys

errors = []

BUNDLE_DRAW_MAX = 2000  # viewer/view_topology.c
AGG_GRID = 4


def fail(msg):
    errors.append(msg)


def expect(what, got, want):
    if got != want:
        fail("%s: got %r, want %r" % (what, got, want))


def probe(png, *args):
    return subprocess.run([PROBE, png] + [str(a) for a in args], capture_output=True,
                          text=True).stdout.strip()


def near(png, x, y, rgb, tol, r=2):
    x, y = int(round(x)), int(round(y))
    return int(probe(png, "count", rgb[0], rgb[1], rgb[2], tol, x - r, y - r, x + r + 1,
                     y + r + 1) or 0)


def pairs(synth, w):
    """topo-synth's pairs of window w: {(src, dst): [messages, bytes]}."""
    n, k = synth["ranks"], synth["nodes"]
    rpn = n // k
    offs = [1, -1, rpn, -rpn, 2 * rpn, -2 * rpn]
    p = {}
    for r in range(n):
        for o, off in enumerate(offs):
            d = (r + off) % n
            m = 1 + (r + d + w) % 5
            e = p.setdefault((r, d), [0, 0])
            e[0] += m
            e[1] += m * 1024 * (1 + o)
    s, d = synth["known_pair"]
    e = p.setdefault((s, d), [0, 0])
    e[0] += 1000
    e[1] += 1000000
    return p


def check_topo(synth, meta, png, rss_kb, max_mb):
    t = meta["topology"]
    rpn = synth["ranks"] // synth["nodes"]
    bundles = {}
    for (s, d), (m, _) in pairs(synth, 0).items():
        key = (s // rpn, d // rpn)
        bundles[key] = bundles.get(key, 0) + m
    weights = sorted(bundles.values(), reverse=True)
    print("topo: %d node bundles computed, the 2,000th weighs %d, the 2,001st %d" %
          (len(weights), weights[BUNDLE_DRAW_MAX - 1], weights[BUNDLE_DRAW_MAX]))
    expect("bundled", t["bundled"], True)
    expect("bundles", t["bundles"]["count"], len(weights))
    lod = t["lod"]
    expect("bundles drawn", lod["bundles_drawn"], BUNDLE_DRAW_MAX)
    expect("curves", t["curves"], BUNDLE_DRAW_MAX)
    expect("bundles left out", lod["bundles_left_out"], len(weights) - BUNDLE_DRAW_MAX)
    expect("lightest drawn", lod["lightest_drawn"], weights[BUNDLE_DRAW_MAX - 1])
    expect("heaviest left out", lod["heaviest_left_out"], weights[BUNDLE_DRAW_MAX])
    drawn = [s for s in t["samples"] if s["drawn"]]
    for s in t["samples"]:
        want = bundles[(s["a"], s["b"])] >= weights[BUNDLE_DRAW_MAX - 1]
        if s["drawn"] != want and bundles[(s["a"], s["b"])] != weights[BUNDLE_DRAW_MAX - 1]:
            fail("bundle %d->%d (%d messages): drawn %r, want %r" %
                 (s["a"], s["b"], bundles[(s["a"], s["b"])], s["drawn"], want))
    hit = sum(1 for s in drawn if near(png, s["x"], s["y"], s["rgb"], 40) > 0)
    print("topo: %d of %d drawn samples found" % (hit, len(drawn)))
    if not drawn or hit * 2 < len(drawn):
        fail("only %d of %d drawn bundle samples have their colour" % (hit, len(drawn)))
    n_agg = lod["rank_markers_aggregated"]
    expect("aggregated markers drawn", lod["aggregated_drawn"], True)
    if not synth["nodes"] <= n_agg <= synth["nodes"] * AGG_GRID * AGG_GRID:
        fail("aggregated markers: %d, want between %d and %d" %
             (n_agg, synth["nodes"], synth["nodes"] * AGG_GRID * AGG_GRID))
    # Rank 0 sends the most bytes (the known pair): its cell's marker has the rank scale's
    # maximum colour, somewhere in the scene outside the legend.
    reg, bar = t["region"], t["rank_bar"]
    rgb = t["rank_scale"]["max_rgb"]
    n_max = int(probe(png, "count", rgb[0], rgb[1], rgb[2], 10, reg["x"], reg["y"],
                      reg["x"] + reg["w"], bar["y"] - 60) or 0)
    print("topo: %d pixels of the rank scale's max colour %r in the scene" % (n_max, rgb))
    if n_max < 1:
        fail("no marker in the rank scale's max colour (rank 0's cell)")
    print("topo: peak RSS %.0f MB (bound %d MB)" % (rss_kb / 1024, max_mb))
    if rss_kb > max_mb * 1024:
        fail("peak RSS %.0f MB over the bound of %d MB" % (rss_kb / 1024, max_mb))


def check_matrix(synth, meta, png):
    m = meta["matrix"]
    n = synth["ranks"]
    plot = m["plot"]
    bins = min(n, plot["w"])
    expect("bins", m["bins"], bins)
    cells = {}
    tm = tb = 0
    for (s, d), (msg, byt) in pairs(synth, 0).items():
        c = (s * bins // n, d * bins // n)
        e = cells.setdefault(c, [0, 0])
        e[0] += msg
        e[1] += byt
        tm += msg
        tb += byt
    expect("cells used", m["cells_used"], len(cells))
    expect("messages", m["messages"], tm)
    expect("bytes", m["bytes"], tb)
    (bs, bd), (mx, _) = max(cells.items(), key=lambda kv: (kv[1][0], kv[0]))
    expect("scale max", m["scale"]["max"], mx)
    cw = plot["w"] / m["bins"]
    x, y = plot["x"] + (bd + 0.5) * cw, plot["y"] + (bs + 0.5) * cw
    print("matrix: %d x %d bins, %d cells, largest (%d, %d) = %d messages" %
          (bins, bins, len(cells), bs, bd, mx))
    if near(png, x, y, m["scale"]["max_rgb"], 12, 1) == 0:
        fail("the largest cell at (%d, %d) is %s, want the max colour %r" %
             (x, y, probe(png, "pixel", int(x), int(y)), m["scale"]["max_rgb"]))
    k = m["node_edges_every"]
    rpn = n // synth["nodes"]
    edges = sorted({r * bins // n for r in range(rpn, n, rpn)})
    expect("node boundaries", m["node_edges"], edges)
    apart = plot["w"] / (len(edges) + 1)
    if k < 2 or apart * k < 6:
        fail("node boundaries every %d of %.2f px apart: want them at least 6 px apart" %
             (k, apart))


def check_cache(meta, synth, mb):
    st = meta["stats"]
    least = synth["windows"][0]["pairs"] * 24
    print("cache: %d window(s), %.1f MB counted (--cache-mb %d, pairs alone %.1f MB)" %
          (st["cached_windows"], st["cached_bytes"] / 2**20, mb, least / 2**20))
    expect("cached windows", st["cached_windows"], 1)
    if not least <= st["cached_bytes"] <= mb * 2**20:
        fail("cached bytes %d outside [%d, %d]" % (st["cached_bytes"], least, mb * 2**20))


def main():
    global PROBE
    check = sys.argv[1]
    if check == "rss":
        out, cmd = sys.argv[2], sys.argv[4:]
        rc = subprocess.call(cmd)
        open(out, "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        sys.exit(rc)
    if check == "cache":
        check_cache(json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), int(sys.argv[4]))
        for e in errors:
            print("FAIL:", e)
        sys.exit(1 if errors else 0)
    PROBE = sys.argv[2]
    synth = json.load(open(sys.argv[3]))
    meta = json.load(open(sys.argv[4]))
    png = sys.argv[5]
    if check == "topo":
        check_topo(synth, meta, png, int(open(sys.argv[6]).read()), int(sys.argv[7]))
    elif check == "matrix":
        check_matrix(synth, meta, png)
    else:
        fail("unknown check " + check)
    for e in errors:
        print("FAIL:", e)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
