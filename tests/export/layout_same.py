#!/usr/bin/env python3
"""layout_same.py DUMP.json VTKDIR [--nodes N] [--ranks N] [--hardware yes|no]
   layout_same.py --pick-plan DUMP.json META.json [N]

The VTK export and the viewer's layout place the same ranks at the same positions.

DUMP.json is mw-layout-dump's output for a recording (the viewer's layout, world y up);
VTKDIR holds mpiwatch-export --format vtk of the same recording. In every .vtp file, point r
(rank r) must be the viewer's position of rank r turned into the files' frame, (x, -z, y),
exactly (both print floats with %.9g), with the same node; every poly must be the top of the
viewer's box of the same index (the same kind, the four corners exact). Before comparing, a
copy of the dump with one rank moved must be found different (the comparison can fail).

--pick-plan ties the dump to the viewer itself: from a topology snapshot's meta (camera yaw,
pitch and distance, the view's region; the target is the fitted one, the layout's centre; the
field of view 40 degrees, as viewer/camera.c) it projects the marker centre of each rank of the
dump as the viewer's camera does and prints "RANK X Y" (window pixels) for up to N ranks (8)
spread over the job whose projections are at least 16 pixels from any other rank's: clicking
there (--pick X,Y) must pick that rank, which holds only if the viewer placed it where the
dump says.
"""
import math
import glob
import json
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    print("layout_same: " + msg, file=sys.stderr)
    sys.exit(1)


def arrays(parent):
    out = {}
    if parent is None:
        return out
    for a in parent.findall("DataArray"):
        conv = float if a.get("type", "").startswith("Float") else int
        out[a.get("Name")] = [conv(x) for x in (a.text or "").split()]
    return out


def read_vtp(fn):
    piece = ET.parse(fn).getroot().find("PolyData/Piece")
    nv = int(piece.get("NumberOfVerts"))
    nl = int(piece.get("NumberOfLines"))
    xyz = arrays(piece.find("Points"))["Points"]
    pts = [tuple(xyz[i:i + 3]) for i in range(0, len(xyz), 3)]
    pd = arrays(piece.find("PointData"))
    cd = arrays(piece.find("CellData"))
    polys = arrays(piece.find("Polys"))
    conn, offs = polys["connectivity"], polys["offsets"]
    cells, prev = [], 0
    for o in offs:
        cells.append(conn[prev:o])
        prev = o
    return {
        "ranks": pts[:nv],
        "rank_node": pd["node"][:nv],
        "box_kind": cd["kind"][nv + nl:],
        "boxes": [[pts[p] for p in c] for c in cells],
    }


def expected(dump):
    ranks = [(x, -z, y) for x, y, z, _ in dump["ranks"]]
    boxes = []
    for t, _, lx, _, lz, hx, hy, hz in dump["boxes"]:
        boxes.append((t + 1, [(lx, -hz, hy), (hx, -hz, hy), (hx, -lz, hy), (lx, -lz, hy)]))
    return ranks, [n for *_, n in dump["ranks"]], boxes


def differences(dump, v):
    """The first difference between the viewer's layout and one VTK file, or None."""
    ranks, nodes, boxes = expected(dump)
    if len(v["ranks"]) != len(ranks):
        return f"{len(v['ranks'])} rank points, the viewer places {len(ranks)} ranks"
    for r, (want, got) in enumerate(zip(ranks, v["ranks"])):
        if want != got:
            return f"rank {r} at {got}, the viewer has it at {want} (turned to z up)"
        if nodes[r] != v["rank_node"][r]:
            return f"rank {r} on node {v['rank_node'][r]}, the viewer's node {nodes[r]}"
    if len(v["boxes"]) != len(boxes):
        return f"{len(v['boxes'])} rectangles, the viewer draws {len(boxes)} boxes"
    for i, ((kind, corners), got_kind, got) in enumerate(zip(boxes, v["box_kind"], v["boxes"])):
        if kind != got_kind or corners != got:
            return f"rectangle {i}: kind {got_kind} {got}, the viewer's box: kind {kind} {corners}"
    return None


MARKER_H = 0.9  # viewer/topo_layout.h
FOV = 40.0      # viewer/camera.c, mw_camera_fit


def pick_plan(dump, meta, want):
    t = meta["topology"]
    cam, reg = t["camera"], t["region"]
    lo, hi = dump["lo"], dump["hi"]
    target = ((lo[0] + hi[0]) / 2, 0.0, (lo[2] + hi[2]) / 2)
    p, y, d = math.radians(cam["pitch"]), math.radians(cam["yaw"]), cam["distance"]
    eye = (target[0] + d * math.cos(p) * math.sin(y), target[1] + d * math.sin(p),
           target[2] + d * math.cos(p) * math.cos(y))
    f = [target[i] - eye[i] for i in range(3)]
    fl = math.sqrt(sum(c * c for c in f))
    f = [c / fl for c in f]
    sx, sz = -f[2], f[0]
    sl = math.hypot(sx, sz)
    s = (sx / sl, 0.0, sz / sl)
    u = (s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2], s[0] * f[1] - s[1] * f[0])
    tn = 1 / math.tan(math.radians(FOV / 2))
    aspect = reg["w"] / reg["h"]
    pts = []
    for x, yy, z, _ in dump["ranks"]:
        q = (x - eye[0], yy + MARKER_H / 2 - eye[1], z - eye[2])
        w = sum(f[i] * q[i] for i in range(3))
        nx = tn / aspect * sum(s[i] * q[i] for i in range(3)) / w
        ny = tn * sum(u[i] * q[i] for i in range(3)) / w
        pts.append((reg["x"] + (nx * 0.5 + 0.5) * reg["w"],
                    reg["y"] + (1 - (ny * 0.5 + 0.5)) * reg["h"]))
    ok = []
    for r, (x, yy) in enumerate(pts):
        inside = (reg["x"] + 2 < x < reg["x"] + reg["w"] - 2 and
                  reg["y"] + 2 < yy < reg["y"] + reg["h"] - 2)
        alone = all(math.hypot(x - a, yy - b) >= 16 for q, (a, b) in enumerate(pts) if q != r)
        if inside and alone:
            ok.append(r)
    if not ok:
        fail("no rank stands alone on the screen: nothing to pick")
    step = max(1, len(ok) // want)
    chosen = ok[::step][:want - 1] + [ok[-1]]
    for r in sorted(set(chosen)):
        print(r, round(pts[r][0]), round(pts[r][1]))


def main():
    args = sys.argv[1:]
    if args and args[0] == "--pick-plan":
        pick_plan(json.load(open(args[1])), json.load(open(args[2])),
                  int(args[3]) if len(args) > 3 else 8)
        return
    if len(args) < 2:
        fail(__doc__)
    dump = json.load(open(args[0]))
    files = sorted(glob.glob(args[1] + "/*.vtp"))
    opts = dict(zip(args[2::2], args[3::2]))
    if not files:
        fail(f"no .vtp file in {args[1]}")
    if "--nodes" in opts and dump["nodes"] != int(opts["--nodes"]):
        fail(f"the viewer's layout has {dump['nodes']} nodes, want {opts['--nodes']}")
    if "--ranks" in opts and len(dump["ranks"]) != int(opts["--ranks"]):
        fail(f"the viewer's layout has {len(dump['ranks'])} ranks, want {opts['--ranks']}")
    if "--hardware" in opts and bool(dump["fallback"]) != (opts["--hardware"] == "no"):
        fail(f"the viewer's layout: fallback {dump['fallback']}, hardware {opts['--hardware']}")
    first = read_vtp(files[0])
    # The comparison must be able to fail: one rank moved by a unit, one box's kind changed.
    moved = json.loads(json.dumps(dump))
    moved["ranks"][-1][0] += 1
    if differences(moved, first) is None:
        fail("a moved rank went unnoticed: the comparison cannot fail")
    if dump["boxes"]:
        moved = json.loads(json.dumps(dump))
        moved["boxes"][-1][0] ^= 1
        if differences(moved, first) is None:
            fail("a changed box went unnoticed: the comparison cannot fail")
    for fn in files:
        d = differences(dump, first if fn == files[0] else read_vtp(fn))
        if d:
            fail(f"{fn}: {d}")
    print(f"layout_same: {len(files)} files, {len(dump['ranks'])} ranks on {dump['nodes']} nodes, "
          f"{len(dump['boxes'])} boxes: the same places as the viewer's layout")


main()
