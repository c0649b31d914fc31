"""vtk_network.py paraview|vtk DIR PREFIX PAIRS.jsonl EXPECT.json: the network layer of a VTK export
(mpiwatch-export --format vtk --network FILE), read the way ParaView reads it.

Run by pvpython (ParaView's own Python: the collection DIR/PREFIX.pvd opened with
OpenDataFile, the reader ParaView picks for it, every time step fetched) and by the system
python3 with its vtk module (each .vtp read by vtkXMLPolyDataReader). EXPECT gives,
independently of the export, each node's switch by name ("node_switch": the file's hostlists written out), each
rank's node ("rank_node") and the switches drawn ("switches", with "parents"). Per frame:
  - the field data names the expected switches with their parents;
  - every node rectangle (kind 1) carries its node's switch (cell array `switch`), every rank
    point its node's switch (point array `switch`);
  - one switch rectangle (kind 8) per switch, one wire (kind 9) per node under a switch and per
    switch under another;
  - every link (kind 6) has the class computed here from its two ranks (0 same node, 1 two
    nodes under one switch of the file, 2 otherwise), the links are exactly the window's pairs
    of PAIRS (a jsonl export of the same recording), and the field data's counts per class
    agree. Prints the counts per class summed over the frames. Exits 1 at the first problem.
"""
import glob
import json
import os
import sys

KIND_NODE, KIND_LINK, KIND_SWITCH, KIND_WIRE = 1, 6, 8, 9


def fail(msg):
    print(f"vtk_network: {msg}")
    sys.exit(1)


def frames_paraview(pvd):
    from paraview.simple import OpenDataFile, servermanager
    src = OpenDataFile(pvd)
    if src is None:
        fail(f"ParaView has no reader for {pvd}")
    reader = type(src).__name__
    times = list(src.TimestepValues) if src.TimestepValues else [0.0]
    out = []
    for t in times:
        src.UpdatePipeline(time=t)
        out.append(servermanager.Fetch(src))
    return reader, out


def frames_vtk(directory, prefix):
    import vtk
    out = []
    for fn in sorted(glob.glob(os.path.join(directory, prefix + "_*.vtp"))):
        r = vtk.vtkXMLPolyDataReader()
        r.SetFileName(fn)
        r.Update()
        d = vtk.vtkPolyData()
        d.DeepCopy(r.GetOutput())
        out.append(d)
    return "vtkXMLPolyDataReader", out


def arr(data, name):
    a = data.GetArray(name) if hasattr(data, "GetArray") else None
    if a is None:
        a = data.GetAbstractArray(name)
    if a is None:
        fail(f"no array {name}")
    if a.IsA("vtkStringArray"):
        return [a.GetValue(i) for i in range(a.GetNumberOfValues())]
    return [a.GetValue(i) for i in range(a.GetNumberOfTuples() * a.GetNumberOfComponents())]


def main():
    how, directory, prefix, pairs_path, expect_path = sys.argv[1:6]
    exp = json.load(open(expect_path))
    node_sw, rank_node = exp["node_switch"], exp["rank_node"]
    pairs = {}
    for line in open(pairs_path):
        w = json.loads(line)
        pairs[int(w["index"])] = sorted((p["src"], p["dst"]) for p in w.get("pairs", []))
    # No fallback: the reader asked for must be there (a missing module fails the test).
    if how == "paraview":
        reader, frames = frames_paraview(os.path.join(directory, prefix + ".pvd"))
    else:
        reader, frames = frames_vtk(directory, prefix)
    if not frames:
        fail("no frames")
    totals = [0, 0, 0]
    for n, d in enumerate(frames):
        fd, cd, pd = d.GetFieldData(), d.GetCellData(), d.GetPointData()
        names = arr(fd, "switch_name")
        parents = arr(fd, "switch_parent")
        if sorted(names) != sorted(exp["switches"]):
            fail(f"frame {n}: switches {names}, want {exp['switches']}")
        for s, p in zip(names, parents):
            want = exp["parents"].get(s, "")
            if (names[p] if p >= 0 else "") != want:
                fail(f"frame {n}: switch {s} under {names[p] if p >= 0 else 'none'}, want "
                     f"{want or 'none'}")
        node_names = arr(fd, "node_name")
        kind, cnode, csw = arr(cd, "kind"), arr(cd, "node"), arr(cd, "switch")
        klass, src, dst = arr(cd, "link_class"), arr(cd, "src"), arr(cd, "dst")
        psw = arr(pd, "switch")
        seen = set()
        for i, k in enumerate(kind):
            if k == KIND_NODE:
                name = node_names[cnode[i]]
                got = names[csw[i]] if csw[i] >= 0 else None
                if got != node_sw.get(name, "unknown switch"):
                    fail(f"frame {n}: node {name} under {got}, want {node_sw.get(name)}")
                seen.add(name)
        if seen != set(rank_node):
            fail(f"frame {n}: nodes {sorted(seen)}, want {sorted(set(rank_node))}")
        for r, node in enumerate(rank_node):
            if names[psw[r]] != node_sw.get(node, "unknown switch"):
                fail(f"frame {n}: rank {r}'s point under {names[psw[r]]}")
        n_sw = sum(1 for k in kind if k == KIND_SWITCH)
        n_wire = sum(1 for k in kind if k == KIND_WIRE)
        want_wires = len(set(rank_node)) + sum(1 for s in names if exp["parents"].get(s))
        if n_sw != len(names) or n_wire != want_wires:
            fail(f"frame {n}: {n_sw} switches and {n_wire} wires, want {len(names)} and "
                 f"{want_wires}")
        links = []
        counts = [0, 0, 0]
        for i, k in enumerate(kind):
            if k != KIND_LINK:
                continue
            a, b = rank_node[src[i]], rank_node[dst[i]]
            sa, sb = node_sw.get(a), node_sw.get(b)
            want = 0 if a == b else 1 if sa is not None and sa == sb else 2
            if klass[i] != want:
                fail(f"frame {n}: link {src[i]} -> {dst[i]} of class {klass[i]}, want {want}")
            counts[want] += 1
            links.append((src[i], dst[i]))
        number = arr(fd, "window")[0]
        if sorted(links) != pairs.get(number):
            fail(f"frame {n}: the links are not the pairs of window {number}")
        fcounts = [arr(fd, "links_intra_node")[0], arr(fd, "links_intra_switch")[0],
                   arr(fd, "links_inter_switch")[0]]
        if fcounts != counts:
            fail(f"frame {n}: field counts {fcounts}, links {counts}")
        totals = [x + y for x, y in zip(totals, counts)]
    print(f"vtk_network: {len(frames)} frames read by {reader}: {len(names)} switches, links "
          f"intra-node {totals[0]}, intra-switch {totals[1]}, inter-switch {totals[2]}")
    json.dump({"frames": len(frames), "reader": reader, "classes": totals},
              open(os.path.join(directory, f"network-check-{how}.json"), "w"))


main()
