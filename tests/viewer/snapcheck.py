"""snapcheck.py: the pixel checks of the viewer's snapshot tests (tests/viewer/snapshot_*.sh).

Usage: python3 snapcheck.py CHECK ARGS... (CHECK: stack, outlier, pick-target, pick, views;
the arguments are those of the function of that name: PROBE is mw-pngprobe's path). The
expected numbers come from mw-synth's JSON description of the recording, the geometry from the
viewer's --meta JSON, the pixels from mw-pngprobe. Prints what it measured; exits 1 with every
failed check listed. Standard library only.

DESIGN: the meta JSON is read through small accessors that accept the few spellings a key may
have (for instance a rect under "layout" or at the top level), so that a renamed key shows up
as one clear "meta has no ..." failure rather than a traceback.
"""
import json
import math
import subprocess
import sys

errors = []


def fail(msg):
    errors.append(msg)


def done():
    if errors:
        for e in errors:
            print("FAIL: " + e, file=sys.stderr)
        sys.exit(1)
    sys.exit(0)


def load(path):
    with open(path) as f:
        return json.load(f)


class Png:
    """Questions to mw-pngprobe about one PNG."""

    def __init__(self, probe, path):
        self.probe, self.path = probe, path

    def ask(self, *args):
        out = subprocess.run([self.probe, self.path] + [str(a) for a in args], check=True,
                             capture_output=True, text=True).stdout
        return out.split("\n")

    def size(self):
        return tuple(int(v) for v in self.ask("size")[0].split())

    def pixel(self, x, y):
        return tuple(int(v) for v in self.ask("pixel", x, y)[0].split())

    def column(self, x, y0, y1, tol=8):
        runs = []
        for line in self.ask("column", x, y0, y1, tol):
            if line.strip():
                a, b, r, g, bl = (int(v) for v in line.split())
                runs.append((a, b, (r, g, bl)))
        return runs

    def count(self, rgb, tol, rect=None):
        args = ["count", rgb[0], rgb[1], rgb[2], tol]
        if rect:
            args += [rect["x"], rect["y"], rect["x"] + rect["w"] - 1, rect["y"] + rect["h"] - 1]
        return int(self.ask(*args)[0])


# ---- the meta JSON ---------------------------------------------------------------------------

def find(meta, *paths):
    """The first of the key paths ("a.b" or "a") present in meta, or None."""
    for p in paths:
        cur = meta
        for k in p.split("."):
            if isinstance(cur, dict) and k in cur:
                cur = cur[k]
            else:
                cur = None
                break
        if cur is not None:
            return cur
    return None


def rect(meta, name):
    r = find(meta, "layout." + name, "rects." + name, name)
    if isinstance(r, dict) and all(k in r for k in "xywh"):
        return r
    if isinstance(r, (list, tuple)) and len(r) == 4:
        return dict(zip("xywh", r))
    fail(f"meta has no rect '{name}' (looked in layout.{name}, rects.{name}, {name})")
    return None


def pair(meta, what, keys, *paths):
    """Two numbers: under one of the paths, as a dict with one of the key pairs or a list."""
    for p in paths:
        v = find(meta, p)
        if isinstance(v, dict):
            for a, b in keys:
                if a in v and b in v:
                    return float(v[a]), float(v[b])
        if isinstance(v, (list, tuple)) and len(v) == 2:
            return float(v[0]), float(v[1])
    fail(f"meta has no {what} (looked for {keys} in {', '.join(paths)})")
    return None


def focus_range(meta):
    return pair(meta, "call view time range", (("t0", "t1"), ("f0", "f1")), "density",
                "density_range", "focus")


def timeline_range(meta):
    return pair(meta, "timeline time range", (("t0", "t1"),), "timeline", "timeline_range")


def duration_range(meta):
    return pair(meta, "duration range", (("d0_ns", "d1_ns"), ("d0", "d1")), "density",
                "duration_range")


def legend(meta):
    entries = find(meta, "legend.entries", "legend_entries", "legend")
    if not isinstance(entries, list):
        fail("meta has no legend entries")
        return []
    out = []
    for e in entries:
        name = e.get("name") or e.get("fn_name") or e.get("fn")
        col = e.get("color") or e.get("rgb")
        if col and max(col) <= 1.0 and any(isinstance(c, float) for c in col):
            col = [round(255 * c) for c in col]
        out.append({"name": name, "slot": e.get("slot"), "share": e.get("share"),
                    "row": e.get("row", len(out)),
                    "color": tuple(int(c) for c in col) if col else None})
    return out


def legend_color(meta, fn):
    for e in legend(meta):
        if e["name"] == fn:
            return e["color"]
    for e in legend(meta):
        if e["name"] in ("other", "Other", None, "") or e["slot"] == 10:
            return e["color"]
    return None


def near(a, b, tol):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def x_of_time(r, t0, t1, t):
    return r["x"] + (t - t0) / (t1 - t0) * r["w"]


def y_of_duration(r, d0, d1, d):
    f = (math.log(d) - math.log(d0)) / (math.log(d1) - math.log(d0))
    return r["y"] + r["h"] - f * r["h"]


# ---- checks ----------------------------------------------------------------------------------

def check_stack(probe, synth_json, meta_json, png_path):
    """(1) The stacked layers of the timeline have the known fractions (within 1 pixel) at
    three times, and the legend shows each function's swatch in its color."""
    synth, meta, png = load(synth_json), load(meta_json), Png(probe, png_path)
    r = rect(meta, "timeline")
    rng = timeline_range(meta)
    leg = legend(meta)
    if not r or not rng or not leg:
        return
    frac = {f["name"]: f["fraction"] for f in synth["functions"]}
    colors = {e["name"]: e["color"] for e in leg if e["name"] in frac}
    for name in frac:
        if name not in colors:
            fail(f"{name} is not in the legend: {[e['name'] for e in leg]}")
    dur = synth["duration_s"]
    for at in (0.25, 0.5, 0.75):
        t = at * dur
        x = int(x_of_time(r, rng[0], rng[1], t))
        if not r["x"] <= x < r["x"] + r["w"]:
            fail(f"t = {t} s is outside the timeline ({rng})")
            continue
        runs = png.column(x, r["y"], r["y"] + r["h"] - 1, 10)
        print(f"column x={x} (t={t:.3f} s): " +
              ", ".join(f"{a}-{b} {c}" for a, b, c in runs))
        top_of_stack = None
        for name, f in frac.items():
            if name not in colors:
                continue
            h = sum(b - a + 1 for a, b, c in runs if near(c, colors[name], 12))
            want = f * r["h"]
            print(f"  {name}: {h} px, want {want:.2f} ({f:.2f} of {r['h']})")
            if abs(h - want) > 1.0 + 1e-9:
                fail(f"t={t:.3f} s: {name} is {h} px high, want {want:.2f} +- 1")
            ys = [a for a, b, c in runs if near(c, colors[name], 12)]
            if ys:
                top_of_stack = min(ys) if top_of_stack is None else min(top_of_stack, min(ys))
        total = sum(frac.values())
        want_top = r["y"] + r["h"] - total * r["h"]
        if top_of_stack is None or abs(top_of_stack - want_top) > 1.0 + 1e-9:
            fail(f"t={t:.3f} s: the stack's top is at y={top_of_stack}, want {want_top:.2f}")
    # The legend: each function's row holds a swatch of its color, rows from
    # layout.legend_first_row_y (under the legend's heading), legend_row_h apart.
    lr = rect(meta, "legend")
    row_h = find(meta, "layout.legend_row_h", "legend_row_h")
    first_y = find(meta, "layout.legend_first_row_y")
    if lr and row_h and first_y is not None:
        row_h = int(row_h)
        best = []
        for e in leg:
            i = e["row"]
            row = {"x": lr["x"], "y": int(first_y) + i * row_h, "w": lr["w"], "h": row_h}
            best.append((e["name"], e["color"], i, png.count(e["color"], 6, row)))
        for name, color, i, n in best:
            print(f"legend row {i} ({name}): {n} pixels of {color}")
            if name in frac and n < 16:
                fail(f"legend row {i}: {name}'s swatch ({color}) has {n} pixels")
        total = sum(frac.values())
        for e in leg:
            share = e["share"]
            if e["name"] in frac and share is not None and \
                    abs(share - frac[e["name"]] / total) > 0.01:
                fail(f"legend share of {e['name']} is {share}, want {frac[e['name']] / total:.3f}")
    else:
        fail("meta has no legend_row_h or legend_first_row_y")


def check_outlier(probe, synth_json, meta_json, png_path, o_min):
    """(2) The outlier's pixel is drawn in its function's color at opacity >= o_min, over a
    density maximum that dwarfs it."""
    synth, meta, png = load(synth_json), load(meta_json), Png(probe, png_path)
    o_min = float(o_min)
    r, f, d = rect(meta, "density"), focus_range(meta), duration_range(meta)
    dmax = find(meta, "dmax", "Dmax", "density.dmax", "density.Dmax")
    if dmax is None:
        fail("meta has no Dmax")
    elif float(dmax) < 100:
        fail(f"Dmax {dmax}: the cluster should pile up far more than 100 calls in a pixel")
    if not r or not f or not d:
        return
    out = synth["outlier"]
    color = legend_color(meta, out["fn"])
    if color is None:
        fail(f"no legend color for {out['fn']}")
        return
    x = x_of_time(r, f[0], f[1], out["start_s"])
    y = y_of_duration(r, d[0], d[1], out["duration_ns"])
    if not (r["x"] <= x < r["x"] + r["w"] and r["y"] <= y <= r["y"] + r["h"]):
        fail(f"the outlier at ({x:.1f}, {y:.1f}) is outside the call view {r}")
        return
    # The background: the call view's pixel at the outlier's height on the far side.
    bx = r["x"] + 3 if x > r["x"] + r["w"] / 2 else r["x"] + r["w"] - 4
    bg = png.pixel(bx, int(y))
    c_bg = [c - b for c, b in zip(color, bg)]
    norm = sum(v * v for v in c_bg)
    if norm < 30 * 30:
        fail(f"the outlier's color {color} is too close to the background {bg} to measure")
        return
    best = None
    for dy in range(-4, 5):
        for dx in range(-4, 5):
            px, py = int(round(x)) + dx, int(round(y)) + dy
            if not (r["x"] <= px < r["x"] + r["w"] and r["y"] <= py < r["y"] + r["h"]):
                continue
            p = png.pixel(px, py)
            o = sum((a - b) * v for a, b, v in zip(p, bg, c_bg)) / norm
            resid = max(abs(a - (b + o * v)) for a, b, v in zip(p, bg, c_bg))
            if resid <= 16 and (best is None or o > best[0]):
                best = (o, px, py, p)
    print(f"outlier {out['fn']} at ({x:.1f}, {y:.1f}); color {color}, background {bg}; "
          f"best pixel {best}; Dmax {dmax}")
    if best is None or best[0] < o_min - 0.04:
        fail(f"the outlier is not visible: best opacity {best[0] if best else None:} "
             f"< o_min {o_min}")


def log2_bin(ns):
    return int(ns).bit_length() - 1


def expected_duration_range(durations):
    """The call view's duration axis as docs/viewer.md states it, from the calls' durations
    alone: half a log2 bin below the shortest call's bin and above the longest's, widened
    around its geometric middle to at least two decades."""
    lo, hi = log2_bin(min(durations)), log2_bin(max(durations))
    d0, d1 = 2.0 ** (lo - 0.5), 2.0 ** (hi + 1.5)
    if d1 / d0 < 100.0:
        g = math.sqrt(d0 * d1)
        d0, d1 = g / 10.0, g * 10.0
        if d0 < 1.0:
            d0, d1 = 1.0, d1 / d0
    return d0, d1


def visible_opacity(png, r, color, x, y, radius=4):
    """The highest opacity of `color` over the plot's background among the pixels around
    (x, y): the pixel is read as background + opacity x (color - background)."""
    bx = r["x"] + 3 if x > r["x"] + r["w"] / 2 else r["x"] + r["w"] - 4
    bg = png.pixel(bx, int(y))
    c_bg = [c - b for c, b in zip(color, bg)]
    norm = sum(v * v for v in c_bg)
    if norm < 30 * 30:
        return None, bg
    best = None
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            px, py = int(round(x)) + dx, int(round(y)) + dy
            if not (r["x"] <= px < r["x"] + r["w"] and r["y"] <= py < r["y"] + r["h"]):
                continue
            p = png.pixel(px, py)
            o = sum((a - b) * v for a, b, v in zip(p, bg, c_bg)) / norm
            resid = max(abs(a - (b + o * v)) for a, b, v in zip(p, bg, c_bg))
            if resid <= 16 and (best is None or o > best[0]):
                best = (o, px, py, p)
    return best, bg


def check_pick_target(synth_json, meta_json, probe, png_path, t0, t1):
    """Prints 'X Y' per long call: the pixel of its start at its duration (repr start),
    computed independently of the viewer's own axes: x from the time range the test asked for
    (--range T0:T1), y from the duration axis docs/viewer.md defines over the calls mw-synth
    wrote. Only the plot's rectangle comes from the meta. The viewer's meta must state the same
    ranges, and the PNG must show each call's function color there."""
    synth, meta, png = load(synth_json), load(meta_json), Png(probe, png_path)
    t0, t1 = float(t0), float(t1)
    r, f, d = rect(meta, "density"), focus_range(meta), duration_range(meta)
    if not r or not f or not d:
        return
    durations = [c["duration_ns"] for c in synth["long_calls"]]
    durations.append(synth["background"]["duration_ns"])
    e0, e1 = expected_duration_range(durations)
    if not (near((f[0], f[1]), (t0, t1), 1e-9)):
        fail(f"the call view shows {f}, not the --range {t0}:{t1} asked for")
    if abs(d[0] / e0 - 1) > 1e-6 or abs(d[1] / e1 - 1) > 1e-6:
        fail(f"duration axis {d[0]:.6g}..{d[1]:.6g} ns, want {e0:.6g}..{e1:.6g} "
             f"(half a bin around the calls' bins {log2_bin(min(durations))}.."
             f"{log2_bin(max(durations))})")
    for c in synth["long_calls"]:
        x = x_of_time(r, t0, t1, c["start_s"])
        y = y_of_duration(r, e0, e1, c["duration_ns"])
        color = legend_color(meta, c["fn"])
        best, bg = visible_opacity(png, r, color, x, y, 3) if color else (None, None)
        print(f"{c['fn']} of rank {c['rank']} at ({x:.1f}, {y:.1f}): color {color}, "
              f"background {bg}, best pixel {best}", file=sys.stderr)
        if best is None or best[0] < 0.25:
            fail(f"{c['fn']} of rank {c['rank']}: its color is not drawn at ({x:.1f}, {y:.1f})")
        print(int(round(x)), int(round(y)))


def check_pick(synth_json, index, pick_out):
    """(3) The pick printed for long call `index` is that call."""
    synth = load(synth_json)
    want = synth["long_calls"][int(index)]
    lines = [l for l in open(pick_out).read().splitlines() if l.strip().startswith("{")]
    if not lines:
        fail(f"call {index}: the viewer printed no pick")
        return
    got = json.loads(lines[-1])
    print(f"call {index}: want {want}; got {got}")
    if got.get("kind") not in ("call", "CALL"):
        fail(f"call {index}: picked a {got.get('kind')}, not a call")
        return
    fn = got.get("fn")
    if fn not in (want["fn"], want["fn_id"]):
        fail(f"call {index}: fn {fn}, want {want['fn']}")
    for k in ("rank", "host", "duration_ns", "start_ns", "bytes", "peer"):
        if k in got and got[k] != want[k]:
            fail(f"call {index}: {k} {got[k]!r}, want {want[k]!r}")
        elif k not in got and k in ("rank", "host", "duration_ns"):
            fail(f"call {index}: the pick has no {k}")


def check_views(probe, meta_json, png_path, view, width, height):
    """(4) A snapshot of `view` at WxH: the right size, not blank, the view's rects inside."""
    meta, png = load(meta_json), Png(probe, png_path)
    w, h = png.size()
    if (w, h) != (int(width), int(height)):
        fail(f"{view} {width}x{height}: the PNG is {w}x{h}")
    bg = png.pixel(w // 2, h - 2)
    same = png.count(bg, 2)
    print(f"{view} {w}x{h}: {same} of {w * h} pixels are {bg}")
    if same > 0.995 * w * h:
        fail(f"{view} {width}x{height}: the image is blank")
    shown = {"all": ("timeline", "density"), "timeline": ("timeline",),
             "density": ("density",)}[view]
    for name in shown + ("legend", "status", "title"):
        r = rect(meta, name)
        if r and not (r["w"] > 0 and r["h"] > 0 and r["x"] >= 0 and r["y"] >= 0 and
                      r["x"] + r["w"] <= w and r["y"] + r["h"] <= h):
            fail(f"{view} {width}x{height}: rect {name} {r} is empty or outside the image")
        if r and name in shown:
            inside = png.count(bg, 2, r)
            if inside == r["w"] * r["h"] and name != "status":
                fail(f"{view} {width}x{height}: nothing drawn in {name}")


def main():
    check, args = sys.argv[1], sys.argv[2:]
    if check == "stack":
        check_stack(*args)
    elif check == "outlier":
        check_outlier(*args)
    elif check == "pick-target":
        check_pick_target(*args)
    elif check == "pick":
        check_pick(*args)
    elif check == "views":
        check_views(*args)
    else:
        print(f"snapcheck.py: unknown check {check}", file=sys.stderr)
        sys.exit(2)
    done()


if __name__ == "__main__":
    main()
