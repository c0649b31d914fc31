#!/usr/bin/env python3
"""logicalcheck.py: the logical view's snapshot checked against its meta and the known delay.

  logicalcheck.py traced META PNG PROBE DELAYED_RANK DELAY_MS METRIC
      a recording of a real ring job where DELAYED_RANK slept DELAY_MS once: the marker of the
      largest differential lateness is on that rank's row, at least half the delay, and drawn
      (a white frame around a cell of the top colour of the scale); the cells are in their
      colour of the scale (hot where the event is late, the on-time colour where it is not);
      message lines are drawn (light pixels along each line); a collective line is drawn.
  logicalcheck.py untraced META PNG PROBE
      a recording without traces: no event, no cell of the scale's hot colours in the plot.
  logicalcheck.py strip META PNG PROBE DELAYED_RANK
      the upper plot shows differential lateness over time per rank: the scale's top colour
      over a long span of the delayed rank's row, and in no other rank's row.
  logicalcheck.py linked META PNG PROBE PICK_OUT RANK STEP
      a click on the marker picked that event (its rank and step) and the per-rank timeline
      frames the picked rank (the selection's yellow in its plot).

The colours are the viewer's (model_logical.c mw_lview_color, view_logical.c); a pixel is read
with mw-pngprobe. Exit status 0 when every check holds, 1 with the failures listed.
"""
import json
import subprocess
import sys

ON_TIME = (0.30, 0.36, 0.46)
RAMP = [ON_TIME, (0.98, 0.84, 0.30), (0.98, 0.52, 0.16), (0.90, 0.13, 0.16)]
WHITE = (255, 255, 255)
VIOLET = (0xB4, 0x8C, 0xFF)
YELLOW = (0xFF, 0xD8, 0x4A)


def ramp(t):
    t = min(max(t, 0.0), 1.0)
    x = t * 3
    i = min(int(x), 2)
    f = x - i
    return tuple(round(255 * (RAMP[i][k] + (RAMP[i + 1][k] - RAMP[i][k]) * f)) for k in range(3))


def probe(png, *args):
    out = subprocess.run([PROBE, png, *map(str, args)], check=True, capture_output=True,
                         text=True).stdout.split()
    return [int(v) for v in out]


def pixel(png, x, y):
    return tuple(probe(png, "pixel", int(x), int(y)))


def near(a, b, tol):
    return all(abs(p - q) <= tol for p, q in zip(a, b))


def count(png, rgb, tol, rect):
    x0, y0, x1, y1 = rect
    return probe(png, "count", *rgb, tol, x0, y0, x1, y1)[0]


def plot_rect(r):
    return (r["x"], r["y"], r["x"] + r["w"] - 1, r["y"] + r["h"] - 1)


def check_traced(meta, png, rank, delay_ms, metric, errors):
    lv = meta["trace"]["logical_view"]
    plot = lv["plot"]
    delay = delay_ms * 1e6
    print(f"logical view: {lv['events']} events, {lv['steps']} steps, {lv['ranks']} ranks, "
          f"{lv['messages']} messages ({lv['messages_drawn']} drawn), {lv['collectives']} "
          f"collectives, metric {lv['metric']}, scale 0..{lv['scale_max_ns'] / 1e6:.1f} ms")
    if lv["metric"] != metric:
        errors.append(f"metric {lv['metric']}, asked for {metric}")
    if lv["events"] == 0 or lv["steps"] < 4 or lv["failed"]:
        errors.append(f"no analysis: {lv['events']} events, {lv['steps']} steps")
        return
    m = lv.get("marker")
    if not m:
        errors.append("no marker of the largest differential lateness")
        return
    print(f"marker: rank {m['rank']} step {m['step']} diff {m['diff_ns'] / 1e6:.1f} ms "
          f"({m['fn']}, {m['class']}) at ({m['x']:.0f}, {m['y']:.0f})")
    if m["rank"] != rank:
        errors.append(f"the marker is on rank {m['rank']}, the delayed rank is {rank}")
    if m["diff_ns"] < delay / 2:
        errors.append(f"the marker's differential lateness {m['diff_ns']} ns is under half the "
                      f"delay ({delay_ms} ms)")
    # On the delayed rank's row: rows are [r h / R, (r + 1) h / R) from the plot's top.
    R, h = lv["ranks"], plot["h"]
    y0 = plot["y"] + (rank * h) // R
    y1 = plot["y"] + ((rank + 1) * h) // R
    if not y0 <= m["y"] < y1:
        errors.append(f"the marker's y {m['y']} is not in rank {rank}'s rows [{y0}, {y1})")
    # The marked cell: in diff mode the top of the scale; a white frame around it.
    # (A message line starts at the cell's centre: any pixel of the 3 x 3 around it.)
    top = [pixel(png, m["x"] + dx, m["y"] + dy) for dx in (-4, 0, 4) for dy in (-4, 0, 4)]
    if metric == "diff" and not any(near(c, ramp(1.0), 12) for c in top):
        errors.append(f"the marked cell is {top}, not the top of the scale {ramp(1.0)}")
    box = (int(m["x"]) - 40, int(m["y"]) - 40, int(m["x"]) + 40, int(m["y"]) + 40)
    white = count(png, WHITE, 6, box)
    if white < 20:
        errors.append(f"{white} white pixels around the marker: the frame is not drawn")
    # Cells: each event's pixel in its colour of the scale (skipping cells a line or frame
    # crosses: any of the 3 x 3 around the centre may be the cell's own colour).
    scale = lv["scale_max_ns"]
    hot = wrong = checked = 0
    for e in lv["cells"]:
        v = max(0, e["diff_ns"] if metric == "diff" else e["lateness_ns"])
        want = ramp(v / scale if scale else 0)
        ok = any(near(pixel(png, e["x"] + dx, e["y"] + dy), want, 14)
                 for dx in (-3, 0, 3) for dy in (-3, 0, 3))
        checked += 1
        if not ok:
            wrong += 1
            if wrong <= 5:
                errors.append(f"cell rank {e['rank']} step {e['step']} at ({e['x']:.0f}, "
                              f"{e['y']:.0f}): {pixel(png, e['x'], e['y'])}, want {want}")
        hot += v >= delay / 2
    print(f"cells: {checked} checked, {wrong} not in their colour, {hot} at least half the delay")
    if metric == "lateness" and hot < 2:
        errors.append(f"{hot} late cells: the delay does not propagate on the view")
    if metric == "diff" and hot != 1:
        errors.append(f"{hot} cells with differential lateness over half the delay, want 1")
    # Message lines: light pixels (each channel >= 170) near the middle of each drawn line;
    # no cell, band or background is that light in every channel.
    missing = 0
    for ln in lv["lines"][:40]:
        mx, my = (ln["x0"] + ln["x1"]) / 2, (ln["y0"] + ln["y1"]) / 2
        if not any(min(pixel(png, mx + dx, my + dy)) >= 170 for dx in (-1, 0, 1)
                   for dy in (-1, 0, 1)):
            missing += 1
    if not lv["lines"] or missing:
        errors.append(f"message lines: {len(lv['lines'])} in the meta, {missing} not drawn")
    if lv["collectives"] < 1 or count(png, VIOLET, 30, plot_rect(plot)) < 10:
        errors.append("no collective instance drawn (the run's barriers)")


def check_untraced(meta, png, errors):
    lv = meta["trace"]["logical_view"]
    if lv["events"] != 0 or lv["traced_windows"] != 0 or "marker" in lv:
        errors.append(f"events in a recording without traces: {lv['events']}")
    for t in (0.5, 1.0):
        n = count(png, ramp(t), 20, plot_rect(lv["plot"]))
        if n:
            errors.append(f"{n} pixels of the scale's colour at {t} in an empty plot")


def check_strip(meta, png, rank, errors):
    lv = meta["trace"]["logical_view"]
    r = lv["ranks_plot"]
    if not lv["strip"] or lv["metric"] != "diff":
        errors.append(f"strip {lv['strip']}, metric {lv['metric']}: asked for diff,strip")
    R = lv["ranks"]
    for k in range(R):
        y0 = r["y"] + (k * r["h"]) // R
        y1 = r["y"] + ((k + 1) * r["h"]) // R - 1
        n = count(png, ramp(1.0), 14, (r["x"], y0, r["x"] + r["w"] - 1, y1))
        print(f"strip: rank {k}: {n} pixels of the scale's top colour")
        if k == rank and n < 20 * (y1 - y0):
            errors.append(f"the delayed rank {k}'s row has {n} pixels of the top colour")
        if k != rank and n:
            errors.append(f"rank {k}'s row has {n} pixels of the top colour")


def check_linked(meta, png, pick_out, rank, step, errors):
    p = json.loads(open(pick_out).read())
    if p.get("kind") != "call" or p.get("rank") != rank or p.get("step") != step:
        errors.append(f"the click on the marker picked {p}, want rank {rank} step {step}")
    lv = meta["trace"]["logical_view"]
    sel = lv.get("selected")
    if not sel or sel["rank"] != rank or sel["step"] != step:
        errors.append(f"the picked event is not selected in the logical view: {sel}")
    n = count(png, YELLOW, 10, plot_rect(lv["ranks_plot"]))
    if n < 40:
        errors.append(f"{n} yellow pixels in the per-rank timeline: the pick is not linked")
    if meta.get("highlight_rank") != rank:
        errors.append(f"highlighted rank {meta.get('highlight_rank')}, want {rank}")


def main():
    global PROBE
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    mode, meta_path, png, PROBE = sys.argv[1:5]
    meta = json.load(open(meta_path))
    errors = []
    if mode == "traced":
        check_traced(meta, png, int(sys.argv[5]), float(sys.argv[6]), sys.argv[7], errors)
    elif mode == "untraced":
        check_untraced(meta, png, errors)
    elif mode == "strip":
        check_strip(meta, png, int(sys.argv[5]), errors)
    elif mode == "linked":
        check_linked(meta, png, sys.argv[5], int(sys.argv[6]), int(sys.argv[7]), errors)
    else:
        sys.exit(__doc__)
    for e in errors:
        print("FAIL:", e)
    sys.exit(1 if errors else 0)


PROBE = ""
if __name__ == "__main__":
    main()
