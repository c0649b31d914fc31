#!/usr/bin/python3
"""check_vtk.py DIR PREFIX EXPECT [--by window|step] [--frames N,N,...] [--pu-boxes N]
[--planes N] [--job NAME] [--hardware auto|yes|no] [--pu-used-if-hardware N]
[--pu-bound N] [--all-pus-bound-if-hardware]

Checks what mpiwatch-export --format vtk wrote into DIR:
  - DIR/PREFIX.pvd is XML, lists every DIR/PREFIX_*.vtp (and nothing else) with strictly
    increasing timesteps, and each file's TimeValue is its timestep;
  - every .vtp parses; NumberOfPoints/Verts/Lines/Strips/Polys agree with the point and cell
    arrays; connectivity and offsets are consistent (offsets increasing, the last one is the
    length of the connectivity, every point id below NumberOfPoints); verts have 1 point,
    lines 2 or 3, polys 4;
  - the cells' `kind` says ranks for the verts, links for the lines, hardware for the polys;
    one vertex per rank, point r is rank r, each rank inside the rectangle of its node;
  - the lines carry exactly the pairs of the frame's window or step (EXPECT: a jsonl export
    of the same recording, its summary JSON for steps, or a fixture's .expect.json), the
    per-rank point arrays are their sums;
  - with hardware, the ranks counted on each PU rectangle are the ranks whose points lie on
    it;
  - optionally the number of frames, planes, PU rectangles (all, those with ranks, those in a
    rank's binding) and the job's name.
Every file is also read with VTK's own XML reader (the vtk Python module: Debian's
python3-paraview, which tools/setup.sh installs with paraview, or python3-vtk9, which it
replaces): its absence is a failure, not a skip, so that a file only this script accepts cannot
pass. Exits 1 with a message at the first problem.
"""
import argparse
import glob
import json
import os
import sys
import xml.etree.ElementTree as ET

KIND_RANK, KIND_NODE, KIND_PU, KIND_LINK = 0, 1, 5, 6
KIND_NUMA, KIND_SWITCH, KIND_WIRE = 7, 8, 9  # NUMA rectangles; --network: switches, wires


def fail(msg):
    sys.exit(f"check_vtk: {msg}")


def numbers(elem, conv=int):
    return [conv(x) for x in (elem.text or "").split()]


def arrays(parent):
    """name -> (type, components, values) of the DataArray/Array children of an element."""
    out = {}
    if parent is None:
        return out
    for a in parent:
        if a.tag not in ("DataArray", "Array"):
            continue
        conv = float if a.get("type", "").startswith("Float") else int
        out[a.get("Name")] = (a.get("type"), int(a.get("NumberOfComponents", "1")),
                              numbers(a, conv), a)
    return out


def strings(arr):
    """A VTK string array in ASCII: byte values, each string ended by 0."""
    out, cur = [], bytearray()
    for b in arr[2]:
        if b == 0:
            out.append(cur.decode("utf-8"))
            cur = bytearray()
        else:
            cur.append(b)
    if cur:
        fail("string array not ended by 0")
    return out


def load_expect(path, by):
    """frame key (window index or step number, as int) -> sorted list of (src,dst,msg,bytes)."""
    exp = {}
    if path.endswith(".jsonl"):
        if by != "window":
            fail("a jsonl export gives windows only")
        with open(path) as f:
            for line in f:
                w = json.loads(line)
                exp[int(w["index"])] = sorted(
                    (p["src"], p["dst"], p["messages"], p["bytes"]) for p in w.get("pairs", []))
        return exp, None
    with open(path) as f:
        e = json.load(f)
    table = e["windows" if by == "window" else "steps"]
    if isinstance(table, list):  # a collector summary: "steps": [{step, pairs: [...]}, ...]
        for st in table:
            exp[int(st["step"])] = sorted(
                (p["src"], p["dst"], p["messages"], p["bytes"]) for p in st.get("pairs", []))
        return exp, e
    for k, v in table.items():
        exp[int(k)] = sorted(tuple(p) for p in v)
    return exp, e


def check_cells(fn, piece, kind, n_points, expect_sizes):
    sect = piece.find(kind)
    count = int(piece.get("NumberOf" + kind))
    if sect is None:
        if count:
            fail(f"{fn}: {kind} missing")
        return [], []
    arr = arrays(sect)
    conn, offs = arr["connectivity"][2], arr["offsets"][2]
    if len(offs) != count:
        fail(f"{fn}: {kind}: {len(offs)} offsets for {count} cells")
    prev = 0
    cells = []
    for o in offs:
        if o <= prev:
            fail(f"{fn}: {kind}: offsets not increasing ({prev} then {o})")
        if expect_sizes and (o - prev) not in expect_sizes:
            fail(f"{fn}: {kind}: a cell of {o - prev} points")
        cells.append(conn[prev:o])
        prev = o
    if prev != len(conn):
        fail(f"{fn}: {kind}: last offset {prev}, connectivity has {len(conn)}")
    if any(c < 0 or c >= n_points for c in conn):
        fail(f"{fn}: {kind}: a point id outside 0..{n_points - 1}")
    return cells, conn


def vtk_version():
    import vtk
    return vtk.vtkVersion.GetVTKVersion()


def check_with_vtk(fn, counts):
    try:
        import vtk  # noqa: F401 (Debian's python3-paraview or python3-vtk9)
    except ImportError:
        fail("the vtk Python module is missing (Debian: paraview's python3-paraview, or "
             "python3-vtk9; tools/setup.sh installs paraview): VTK's own reader must read "
             "every file")
    r = vtk.vtkXMLPolyDataReader()
    r.SetFileName(fn)
    r.Update()
    if r.GetErrorCode():
        fail(f"{fn}: VTK's reader reports error {r.GetErrorCode()}")
    pd = r.GetOutput()
    got = (pd.GetNumberOfPoints(), pd.GetNumberOfVerts(), pd.GetNumberOfLines(),
           pd.GetNumberOfPolys())
    if got != counts:
        fail(f"{fn}: VTK reads {got}, the file says {counts}")
    if pd.GetCellData().GetArray("bytes") is None or pd.GetPointData().GetArray("rank") is None:
        fail(f"{fn}: VTK does not see the arrays")
    return True


def check_vtp(fn, by, expect, opt):
    root = ET.parse(fn).getroot()
    if root.tag != "VTKFile" or root.get("type") != "PolyData":
        fail(f"{fn}: not a VTK PolyData file")
    poly = root.find("PolyData")
    fields = arrays(poly.find("FieldData"))
    piece = poly.find("Piece")
    n_points = int(piece.get("NumberOfPoints"))
    nv, nl, ns, npoly = (int(piece.get("NumberOf" + k)) for k in ("Verts", "Lines", "Strips",
                                                                  "Polys"))
    n_cells = nv + nl + ns + npoly
    pts = arrays(piece.find("Points"))
    if len(pts) != 1:
        fail(f"{fn}: Points must hold one array")
    _, comps, xyz, _ = next(iter(pts.values()))
    if comps != 3 or len(xyz) != 3 * n_points:
        fail(f"{fn}: {len(xyz)} coordinates for {n_points} points")
    pd, cd = arrays(piece.find("PointData")), arrays(piece.find("CellData"))
    for name, (_, c, vals, _) in pd.items():
        if len(vals) != c * n_points:
            fail(f"{fn}: point array {name} has {len(vals)} values for {n_points} points")
    for name, (_, c, vals, _) in cd.items():
        if len(vals) != c * n_cells:
            fail(f"{fn}: cell array {name} has {len(vals)} values for {n_cells} cells")
    for name, (_, c, vals, elem) in fields.items():
        if elem.get("type") != "String" and len(vals) != c * int(elem.get("NumberOfTuples")):
            fail(f"{fn}: field array {name}: NumberOfTuples")
    for need in ("rank", "node", "bytes_sent", "bytes_received", "messages_sent"):
        if need not in pd:
            fail(f"{fn}: no point array {need}")
    for need in ("kind", "node", "messages", "bytes", "src", "dst", "intra", "ranks", "bound"):
        if need not in cd:
            fail(f"{fn}: no cell array {need}")
    verts, _ = check_cells(fn, piece, "Verts", n_points, {1})
    lines, _ = check_cells(fn, piece, "Lines", n_points, {2, 3})
    check_cells(fn, piece, "Strips", n_points, None)
    polys, _ = check_cells(fn, piece, "Polys", n_points, {4})
    used_vtk = check_with_vtk(fn, (n_points, nv, nl, npoly))

    kind = cd["kind"][2]
    # With --network the lines end with the wires and the polys with the switches.
    nwire = sum(1 for k in kind[nv:nv + nl] if k == KIND_WIRE)
    nlink = nl - nwire
    if (kind[:nv] != [KIND_RANK] * nv or kind[nv:nv + nlink] != [KIND_LINK] * nlink
            or kind[nv + nlink:nv + nl] != [KIND_WIRE] * nwire):
        fail(f"{fn}: kind of the verts and lines")
    box_kind = kind[nv + nl:]
    nsw = sum(1 for k in box_kind if k == KIND_SWITCH)
    if box_kind[len(box_kind) - nsw:] != [KIND_SWITCH] * nsw:
        fail(f"{fn}: the switches are not the last polys")
    box_kind = box_kind[:len(box_kind) - nsw]
    polys = polys[:len(box_kind)]
    if any(not (KIND_NODE <= k <= KIND_PU or k == KIND_NUMA) for k in box_kind):
        fail(f"{fn}: a poly whose kind is not hardware")
    rank_pt = pd["rank"][2]
    for r, v in enumerate(verts):
        if v != [r] or rank_pt[r] != r:
            fail(f"{fn}: vertex {r} is not rank {r}")
    if any(x != -1 for x in rank_pt[nv:]):
        fail(f"{fn}: a point after the ranks has a rank")

    # Every rank lies inside the rectangle of its node.
    pnode, cnode = pd["node"][2], cd["node"][2]
    node_rect = {}
    for i, (k, cell) in enumerate(zip(box_kind, polys)):
        if k == KIND_NODE:
            xs = [xyz[3 * p] for p in cell]
            ys = [xyz[3 * p + 1] for p in cell]
            node_rect[cnode[nv + nl + i]] = (min(xs), min(ys), max(xs), max(ys))
    names = strings(fields["node_name"]) if "node_name" in fields else []
    if len(node_rect) != len(names):
        fail(f"{fn}: {len(node_rect)} node rectangles, {len(names)} node names")
    for r in range(nv):
        x, y = xyz[3 * r], xyz[3 * r + 1]
        x0, y0, x1, y1 = node_rect[pnode[r]]
        if not (x0 <= x <= x1 and y0 <= y <= y1):
            fail(f"{fn}: rank {r} at ({x}, {y}) outside its node {pnode[r]}")
    # With hardware, a rank that is not loose lies in a hardware rectangle of its node.
    hw_rects = {}
    for i, (k, cell) in enumerate(zip(box_kind, polys)):
        if k != KIND_NODE:
            xs = [xyz[3 * p] for p in cell]
            ys = [xyz[3 * p + 1] for p in cell]
            hw_rects.setdefault(cnode[nv + nl + i], []).append(
                (min(xs), min(ys), max(xs), max(ys), k))
    pu_of_rank = {}
    for r in range(nv):
        x, y = xyz[3 * r], xyz[3 * r + 1]
        inside = [h for h in hw_rects.get(pnode[r], [])
                  if h[0] <= x <= h[2] and h[1] <= y <= h[3]]
        pus = [h for h in inside if h[4] == KIND_PU]
        if pus:
            pu_of_rank[r] = pus[0]
    ranks_cell = cd["ranks"][2]
    if sum(ranks_cell[nv + nl + i] for i, k in enumerate(box_kind) if k == KIND_NODE) != nv:
        fail(f"{fn}: the node rectangles do not count every rank")

    # The links are the frame's pairs, and the point arrays their sums.
    number = fields[by][2][0]
    if number not in expect:
        fail(f"{fn}: {by} {number} is not in the expectation")
    src, dst = cd["src"][2][nv:nv + nlink], cd["dst"][2][nv:nv + nlink]
    msg, byt = cd["messages"][2][nv:nv + nlink], cd["bytes"][2][nv:nv + nlink]
    got = sorted(zip(src, dst, msg, byt))
    if got != expect[number]:
        fail(f"{fn}: the lines are not the pairs of {by} {number}: "
             f"{len(got)} lines, {len(expect[number])} pairs, bytes {sum(byt)} vs "
             f"{sum(p[3] for p in expect[number])}")
    for i, cell in enumerate(lines[:nlink]):
        if cell[0] != src[i] or cell[-1] != dst[i]:
            fail(f"{fn}: line {i} does not join its ranks")
        intra = cd["intra"][2][nv + i]
        if intra != (pnode[src[i]] == pnode[dst[i]]) or (len(cell) == 2) != bool(intra):
            fail(f"{fn}: line {i}: intra {intra} with {len(cell)} points")
    sent = [0] * nv
    recv = [0] * nv
    for s, d, _, b in got:
        sent[s] += b
        recv[d] += b
    if pd["bytes_sent"][2][:nv] != sent or pd["bytes_received"][2][:nv] != recv:
        fail(f"{fn}: bytes_sent/bytes_received are not the sums of the lines")

    pu_boxes = sum(1 for k in box_kind if k == KIND_PU)
    pu_used = sum(1 for i, k in enumerate(box_kind) if k == KIND_PU and ranks_cell[nv + nl + i])
    if len(set(pu_of_rank.values())) != pu_used or sum(
            ranks_cell[nv + nl + i] for i, k in enumerate(box_kind) if k == KIND_PU) != len(
                pu_of_rank):
        fail(f"{fn}: the PU rectangles' rank counts do not match the ranks on them")
    return {
        "time": fields["TimeValue"][2][0], "number": number, "planes": len(names),
        "names": names, "job": strings(fields["job"])[0], "pu_boxes": pu_boxes,
        "pu_used": pu_used, "ranks": nv, "vtk": used_vtk,
        "hw_boxes": sum(1 for k in box_kind if k != KIND_NODE),
        "pu_bound": sum(1 for i, k in enumerate(box_kind)
                        if k == KIND_PU and cd["bound"][2][nv + nl + i]),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("prefix")
    ap.add_argument("expect")
    ap.add_argument("--by", default="window")
    ap.add_argument("--frames")
    ap.add_argument("--pu-boxes", type=int)
    ap.add_argument("--planes", type=int)
    ap.add_argument("--job")
    ap.add_argument("--hardware", default="auto")
    ap.add_argument("--pu-used-if-hardware", type=int)
    ap.add_argument("--pu-bound", type=int)
    ap.add_argument("--all-pus-bound-if-hardware", action="store_true")
    a = ap.parse_args()
    expect, _ = load_expect(a.expect, a.by)

    pvd = os.path.join(a.dir, a.prefix + ".pvd")
    root = ET.parse(pvd).getroot()
    if root.tag != "VTKFile" or root.get("type") != "Collection":
        fail(f"{pvd}: not a VTK collection")
    sets = root.find("Collection").findall("DataSet")
    listed = [d.get("file") for d in sets]
    on_disk = sorted(os.path.basename(p) for p in glob.glob(os.path.join(a.dir, a.prefix + "_*")))
    if sorted(listed) != on_disk:
        fail(f"{pvd} lists {listed}, the directory holds {on_disk}")
    times = [float(d.get("timestep")) for d in sets]
    if any(t1 <= t0 for t0, t1 in zip(times, times[1:])):
        fail(f"{pvd}: timesteps not increasing: {times}")
    frames = []
    for d, t in zip(sets, times):
        info = check_vtp(os.path.join(a.dir, d.get("file")), a.by, expect, a)
        if abs(info["time"] - t) > 1e-6 * max(1.0, abs(t)):
            fail(f"{d.get('file')}: TimeValue {info['time']}, timestep {t}")
        frames.append(info)
    if not frames:
        fail("no frame")
    if a.frames is not None:
        want = [int(x) for x in a.frames.split(",")]
        got = [int(f.split("_")[-1].split(".")[0]) for f in listed]
        if got != want:
            fail(f"frames {got}, want {want}")
    f0 = frames[0]
    if a.pu_boxes is not None and f0["pu_boxes"] != a.pu_boxes:
        fail(f"{f0['pu_boxes']} PU rectangles, want {a.pu_boxes}")
    if a.planes is not None and f0["planes"] != a.planes:
        fail(f"{f0['planes']} planes, want {a.planes}")
    if a.job is not None and f0["job"] != a.job:
        fail(f"job {f0['job']!r}, want {a.job!r}")
    if a.hardware == "yes" and f0["pu_boxes"] == 0:
        fail("no hardware rectangles")
    if a.pu_used_if_hardware is not None and f0["pu_boxes"] and \
            f0["pu_used"] != a.pu_used_if_hardware:
        fail(f"{f0['pu_used']} PU rectangles with ranks, want {a.pu_used_if_hardware}")
    if a.pu_bound is not None and f0["pu_bound"] != a.pu_bound:
        fail(f"{f0['pu_bound']} PU rectangles in a binding, want {a.pu_bound}")
    if a.all_pus_bound_if_hardware and f0["pu_bound"] != f0["pu_boxes"]:
        fail(f"{f0['pu_boxes']} PU rectangles, {f0['pu_bound']} of them in a rank's binding")
    if a.hardware == "no" and f0["hw_boxes"] != 0:
        fail("hardware rectangles where the job describes none")
    print(f"check_vtk: {len(frames)} frames ok: {f0['ranks']} ranks, {f0['planes']} planes, "
          f"{f0['pu_boxes']} PU rectangles ({f0['pu_used']} with ranks, {f0['pu_bound']} bound)"
          f", read by VTK {vtk_version()} too")


if __name__ == "__main__":
    main()
