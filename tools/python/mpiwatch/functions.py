"""MPI function names and kinds by function id.

A recording names its job's function ids in ``JobInfo.function_names`` (entry i names id i + 1,
docs/function-table.md).  Recordings older than that field use the ids of the function table
the collector was built with: ``function_table.txt`` next to this file (one ``NAME KIND`` line
per id from 1, written by CMake from the build's ``mpi_functions.def``), or, used from the
source tree, the checked-in ``proto/mpi_functions.def`` itself.
"""

import os
import re

_HERE = os.path.dirname(os.path.abspath(__file__))

#: mw_kind_t, in its order (proto/mw_proto.h)
KIND_NAMES = ("send", "recv", "collective", "wait", "rma", "io", "query", "other", "special")
_DEF_KINDS = {"SEND": 0, "RECV": 1, "COLL": 2, "WAIT": 3, "RMA": 4, "IO": 5, "QUERY": 6,
              "OTHER": 7, "SPECIAL": 8}
_ROW = re.compile(r"^MW_FN\((\w+),\s*[^,]+,\s*(\w+),")
_table = None


def _read_def(path):
    names, kinds = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _ROW.match(line)
            if m:
                names.append("MPI_" + m.group(1))
                kinds.append(_DEF_KINDS.get(m.group(2), 7))
    return names, kinds


def _read_txt(path):
    names, kinds = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                names.append(parts[0])
                kinds.append(_DEF_KINDS.get(parts[1], 7))
    return names, kinds


def build_table():
    """(names, kinds) of this build's table: entry i is id i + 1."""
    global _table
    if _table is None:
        txt = os.path.join(_HERE, "function_table.txt")
        src = os.path.join(_HERE, "..", "..", "..", "proto", "mpi_functions.def")
        if os.path.isfile(txt):
            _table = _read_txt(txt)
        elif os.path.isfile(src):
            _table = _read_def(src)
        else:
            _table = ([], [])
    return _table


def name_of(names, fn):
    """The name of id ``fn`` in ``names`` (entry i = id i + 1), or ``fn#ID`` when unknown."""
    if 0 < fn <= len(names) and names[fn - 1]:
        return names[fn - 1]
    return "fn#%d" % fn
