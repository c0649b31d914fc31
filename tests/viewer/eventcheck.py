"""eventcheck.py: the checks of the viewer's job events tests (snapshot_events.sh, steer_live.sh).

Usage:
  python3 eventcheck.py replay PROBE COLLECTOR_LOG META_JSON PNG
      the events of a replayed recording against the collector's log of what fired and what
      it published (its "rule fired: ..." and "steer #N: ..." lines), the markers' pixels;
  python3 eventcheck.py steer META_JSON KIND DETAIL [STATE]
      META_JSON's events list holds an event KIND with DETAIL (and, with STATE, its first
      --steer result has that state).

Standard library only; pixels come from mw-pngprobe (snapcheck.Png). Prints what it measured;
exits 1 with every failed check listed.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snapcheck import Png, done, fail, load  # noqa: E402

RULE_RGB = (255, 61, 242)
STEER_RGB = (47, 230, 255)
TOL = 12


def close(a, b, tol=TOL):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def log_events(path):
    """What the collector says fired and published, in order."""
    fired, steered = [], []
    with open(path, errors="replace") as f:
        for line in f:
            m = re.search(r"rule fired: rule=(\S+) .* window=(\d+) ", line)
            if m:
                fired.append((m.group(1), int(m.group(2))))
            m = re.search(r"steer #\d+: (.*)$", line)
            if m:
                steered.append(m.group(1).strip())
    return fired, steered


def check_replay(probe, log_path, meta_path, png_path):
    meta = load(meta_path)
    ev = meta.get("events")
    if not ev:
        fail("meta has no events")
        return
    fired, steered = log_events(log_path)
    print(f"collector: {len(fired)} firings, {len(steered)} steering messages")
    if len(fired) < 4 or not steered:
        fail(f"the collector fired too little to test: {fired} {steered}")
    lst = ev["list"]
    rules = [(e["rule"], e["window"]) for e in lst if e["kind"] == "rule"]
    steers = [e["detail"] for e in lst if e["kind"] == "steer"]
    if rules != fired:
        fail(f"rule events {rules} != the collector's firings {fired}")
    if steers != steered:
        fail(f"steer events {steers} != the collector's messages {steered}")
    if ev["rules"] != len(fired) or ev["steers"] != len(steered) or ev["dropped"] != 0:
        fail(f"counts: {ev['rules']} rules, {ev['steers']} steers, {ev['dropped']} dropped")
    # Every allreduce firing is followed by its steer action, tied to it.
    by_seq = {e["seq"]: e for e in lst}
    actions = [e for e in lst if e["kind"] == "steer" and e.get("steer_after")]
    tied = [by_seq[a["steer_after"]]["rule"] for a in actions if a["steer_after"] in by_seq]
    n_all = sum(1 for r, _ in fired if r == "allreduce")
    if tied.count("allreduce") != n_all or len(tied) != n_all:
        fail(f"steer actions tied to {tied}, expected {n_all} allreduce firings")
    # The events list: the newest first, a firing and its action on one line.
    origin = int(meta["job"]["origin_ns"]) // int(meta["job"]["window_ns"])
    lines = ev["lines"]
    want = [f"w {w - origin}  rule allreduce " for r, w in fired if r == "allreduce"]
    for wline in want:
        hits = [l for l in lines if l.startswith(wline)]
        if not hits or not hits[0].endswith("→ steer rebalance=1 ranks 0,1"):
            fail(f"events list has no '{wline}... → steer rebalance=1 ranks 0,1': {lines}")
    newest = [l for l in lines if " rule " in l][0]
    if not newest.startswith(f"w {fired[-1][1] - origin}  rule {fired[-1][0]} "):
        fail(f"the list's first rule line {newest!r} is not the last firing {fired[-1]}")
    print(f"events list: {len(lines)} lines, first rule line {newest!r}")

    # Markers: every event in the timeline's range has one, of its color, at its column.
    lay = meta["layout"]["timeline"]
    t0, t1 = meta["timeline"]["t0"], meta["timeline"]["t1"]
    png = Png(probe, png_path)
    dash_on, dash = ev["dash"]
    marked = [e for e in lst if "timeline_marker" in e]
    shown = [e for e in lst if e["kind"] in ("rule", "steer") and e["t"] is not None
             and t0 <= e["t"] <= t1]
    if len(marked) != len(shown) or len(marked) < 4:
        fail(f"{len(marked)} markers for {len(shown)} events in [{t0}, {t1}]")
    checked = 0
    for i, e in enumerate(marked):
        m = e["timeline_marker"]
        px = m["px"]
        want_rgb = RULE_RGB if e["kind"] == "rule" else STEER_RGB
        if tuple(m["rgb"]) != want_rgb:
            fail(f"marker of {e['kind']} {e['detail']!r}: rgb {m['rgb']}")
        if m["dashed"] != (e["kind"] == "steer"):
            fail(f"marker of {e['kind']}: dashed {m['dashed']}")
        x_expect = lay["x"] + (e["t"] - t0) / (t1 - t0) * lay["w"]
        if abs(m["x"] - min(x_expect, lay["x"] + lay["w"] - 1)) > 1.01:
            fail(f"marker of {e['detail']!r} at x {m['x']}, its time says {x_expect:.1f}")
        # A marker drawn later within 2 px may cover this one: a later rule covers a
        # steering message's dashes; a later steering message leaves a rule's line visible
        # between its dashes.
        later = marked[i + 1:]
        if e["kind"] == "steer" and any(
                abs(o["timeline_marker"]["px"] - px) <= 2 and o["kind"] == "rule" for o in later):
            continue
        off = dash_on + (dash - dash_on) // 2 if e["kind"] == "rule" else dash_on // 2
        ys = [lay["y"] + k * dash + off for k in range(lay["h"] // dash)
              if lay["y"] + k * dash + off >= lay["y"] + 0.35 * lay["h"]
              and lay["y"] + k * dash + off < lay["y"] + lay["h"] - 1]
        # One question per column: its runs of equal colors, top to bottom.
        runs = png.column(px, lay["y"], lay["y"] + lay["h"] - 1, 0)

        def at(y):
            return next((c for a, b, c in runs if a <= y <= b), (0, 0, 0))

        good = sum(1 for y in ys if close(at(y), want_rgb))
        if good < 0.9 * len(ys):
            fail(f"marker of {e['kind']} {e['detail']!r} at x {px}: {good} of {len(ys)} pixels "
                 f"have its color {want_rgb}")
        checked += 1
    print(f"timeline markers: {len(marked)}, pixel columns checked: {checked}")
    if checked < 4:
        fail("fewer than 4 marker columns could be checked")
    # The call view marks the events of its range too.
    if meta["layout"].get("show_density"):
        f0, f1 = meta["density"]["t0"], meta["density"]["t1"]
        inside = [e for e in shown if f0 <= e["t"] <= f1]
        dm = [e for e in lst if "density_marker" in e]
        if len(dm) != len(inside):
            fail(f"{len(dm)} call view markers for {len(inside)} events in [{f0}, {f1}]")
    # The events panel shows both colors (its text).
    panel = ev["panel"]
    if panel["h"] > 0:
        nr = png.count(RULE_RGB, 40, panel)
        ns = png.count(STEER_RGB, 40, panel)
        print(f"events panel: {nr} rule-colored and {ns} steer-colored pixels")
        if nr < 50 or ns < 50:
            fail(f"the events panel shows too little text: {nr} rule, {ns} steer pixels")


def check_steer(meta_path, kind, detail, state=None):
    meta = load(meta_path)
    lst = meta.get("events", {}).get("list", [])
    found = [e for e in lst if e["kind"] == kind and e["detail"] == detail]
    print(f"{kind} events with {detail!r}: {len(found)}")
    if len(found) != 1:
        fail(f"expected one {kind} event {detail!r}, found {[e['detail'] for e in lst]}")
    if state is not None:
        st = meta.get("steer", [])
        if not st or st[0]["state"] != state:
            fail(f"the --steer result is {st}, expected state {state}")


def main():
    check, args = sys.argv[1], sys.argv[2:]
    if check == "replay":
        check_replay(*args)
    elif check == "steer":
        check_steer(*args)
    else:
        print(f"eventcheck.py: unknown check {check}", file=sys.stderr)
        sys.exit(2)
    done()


if __name__ == "__main__":
    main()
