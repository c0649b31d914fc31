#!/usr/bin/env python3
"""Generate the MPI function table (proto/mpi_functions.def) from an MPI's mpi.h.

CMake runs it at configure time with the build's MPI compiler wrappers (`--mpicc`,
`--mpifort`, `--out` into the build tree: proto/function-table.cmake). The checked-in
proto/mpi_functions.def is its output for Debian 12's Open MPI 4.1, kept for review, as the
fallback when generation fails, and as the legacy table of the wire; the default command
rewrites it. It handles Open MPI (4.1) and MPICH (4.0) and their derivatives:
  - MPI-4.0 large-count functions (MPI_Send_c, ...) are rows of their own, classified and
    traced like their base function (base_of); only scalar MW_BYTES rules carry over.
  - MPIX_ extensions are not rows: they are not MPI, and their wrappers would need a
    different prefix (counted in the summary line as "MPIX_ left out").
  - Parameter names differ between MPIs (old_comm / comm_old): a trace rule may name
    alternatives.
  - Fortran: the mpif.h binding library is the one the Fortran wrapper links (Open MPI's
    libmpi_mpifh, MPICH's libmpichfort, Intel MPI's libmpifort); see point 3.

How it works:

1. C prototypes. `mpi.h` is run through the MPI C compiler twice. A full `-E` pass gives the
   authoritative set of functions that are really declared (macros such as MPI_Aint_add are
   not declarations) and their expanded parameter lists. A `-fdirectives-only` pass resolves
   the `#if`s but leaves macros unexpanded, which gives the parameter text exactly as written
   in mpi.h (`MPI_Fint`, not `int`). Both are parsed; they must agree on names and arity.
   Open MPI hides the functions removed in MPI-3.0 (MPI_Address, MPI_Type_struct, ...) from
   C11 code; `-DOMPI_OMIT_MPI1_COMPAT_DECLS=0` brings their declarations back, and libmpi
   still exports them, so old binaries that call them are monitored too. Every consumer of
   the table must compile with that definition (see the comment at the top of the .def).
2. KIND, BYTES and PEER come from the rules below (name sets and patterns), then from the
   override tables, which are the only sanctioned way to hand-edit the table.
3. Fortran. A row gets MW_FORTRAN when libmpi_mpifh defines both `mpi_<lower>_` and
   `pmpi_<lower>_`. The ABI arity is read from the gfortran module `mpi.mod` (a gzip'd
   S-expression listing every procedure's formal arguments and their types): one pointer
   per formal argument (ierror included), plus one hidden length per CHARACTER argument.
   MPICH's mpi.mod has no interface for the routines with a choice buffer (MPI_Send, ...):
   their arity is the C parameter count + 1 (IERROR), for int-returning functions without
   char or variadic parameters only (fortran_rule_arity; `--verify-abi` checks it).
   The script refuses to guess: a procedure whose interface is missing, or has OPTIONAL /
   VALUE / descriptor-passed arguments, gets MW_NOFORTRAN unless FORTRAN_ARITY_OVERRIDES
   gives its arity. `--verify-abi` additionally disassembles libmpi_mpifh and checks that no
   implementation reads an argument (register or stack) beyond the arity in the table.
4. The generated rows are compiled against mpi.h (every row's params must match both the
   MPI_ and the PMPI_ prototype) before the file is written.

Usage:
    proto/gen-function-table.py                 # rewrite proto/mpi_functions.def
    proto/gen-function-table.py --mpicc mpicc.mpich --mpifort mpif90.mpich --out FILE
    proto/gen-function-table.py --check         # exit 1 if the checked-in file is stale
    proto/gen-function-table.py --verify-abi    # also cross-check arities with objdump
    proto/gen-function-table.py --names         # print the C names the table must hold
Only the Python standard library is used.
"""

import argparse
import glob
import gzip
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, OrderedDict

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "proto", "mpi_functions.def")

# Functions declared by mpi.h that the table leaves out on purpose: they are called in tight
# loops to measure time, and timing them would only measure ourselves.
EXCLUDED = {"Wtime", "Wtick"}

# Defines passed to the preprocessor. See point 1 of the module docstring.
CPP_DEFINES = ["-DOMPI_OMIT_MPI1_COMPAT_DECLS=0"]

KINDS = ["SEND", "RECV", "COLL", "WAIT", "RMA", "IO", "QUERY", "SPECIAL", "OTHER"]

# ---------------------------------------------------------------------------------------------
# KIND rules. A name is looked up in this order: KIND_OVERRIDES, SPECIAL, the explicit sets,
# the patterns, then OTHER.
# ---------------------------------------------------------------------------------------------

SPECIAL = {"Init", "Init_thread", "Finalize", "Pcontrol", "Comm_free", "Comm_disconnect"}

SEND = {"Send", "Bsend", "Ssend", "Rsend", "Isend", "Ibsend", "Issend", "Irsend",
        "Sendrecv", "Sendrecv_replace"}

RECV = {"Recv", "Irecv", "Mrecv", "Imrecv", "Probe", "Iprobe", "Mprobe", "Improbe"}

_COLL_BASE = ["Barrier", "Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather",
              "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw", "Reduce", "Allreduce",
              "Reduce_scatter", "Reduce_scatter_block", "Scan", "Exscan",
              "Neighbor_allgather", "Neighbor_allgatherv", "Neighbor_alltoall",
              "Neighbor_alltoallv", "Neighbor_alltoallw"]
COLL = set(_COLL_BASE) | {"I" + n[0].lower() + n[1:] for n in _COLL_BASE}

# Wait/Test complete requests (hand-written in the shim: they attribute the bytes and peer
# noted when the request was posted). Test_cancelled only looks at a status: QUERY.
WAIT = {"Wait", "Waitall", "Waitany", "Waitsome", "Test", "Testall", "Testany", "Testsome",
        "Request_get_status"}

RMA = {"Put", "Get", "Accumulate", "Get_accumulate", "Fetch_and_op", "Compare_and_swap",
       "Rput", "Rget", "Raccumulate", "Rget_accumulate",
       "Win_fence", "Win_lock", "Win_unlock", "Win_lock_all", "Win_unlock_all", "Win_flush",
       "Win_flush_all", "Win_flush_local", "Win_flush_local_all", "Win_post", "Win_start",
       "Win_complete", "Win_wait", "Win_test", "Win_sync"}

# Cheap, purely local queries: counted, not timed.
QUERY = {
    "Comm_rank", "Comm_size", "Comm_test_inter", "Comm_remote_size", "Comm_compare",
    "Comm_get_attr", "Comm_get_name", "Comm_get_parent", "Comm_get_errhandler",
    "Attr_get", "Errhandler_get",
    "Group_size", "Group_rank", "Group_compare",
    "Type_size", "Type_size_x", "Type_get_extent", "Type_get_extent_x",
    "Type_get_true_extent", "Type_get_true_extent_x", "Type_get_name", "Type_get_attr",
    "Type_get_envelope", "Type_get_contents", "Type_extent", "Type_lb", "Type_ub",
    "Type_match_size", "Pack_size", "Pack_external_size",
    "Get_count", "Get_elements", "Get_elements_x", "Test_cancelled",
    "Initialized", "Finalized", "Query_thread", "Is_thread_main", "Get_version",
    "Get_library_version", "Get_processor_name",
    "Win_get_name", "Win_get_attr", "Win_get_errhandler",
    "Error_class", "Error_string", "Op_commutative",
    "Info_get", "Info_get_nkeys", "Info_get_nthkey", "Info_get_valuelen",
    # Aint_add/diff are macros in Open MPI 4.1 (so not rows); listed for MPIs that declare them
    "Aint_add", "Aint_diff", "Address", "Get_address",
    "Topo_test", "Cartdim_get", "Cart_get", "Cart_rank", "Cart_coords", "Cart_shift",
    "Graphdims_get", "Graph_get", "Graph_neighbors", "Graph_neighbors_count",
    "Dist_graph_neighbors", "Dist_graph_neighbors_count",
    "T_cvar_get_num", "T_cvar_get_info", "T_cvar_get_index", "T_pvar_get_num",
    "T_pvar_get_info", "T_pvar_get_index", "T_enum_get_info", "T_enum_get_item",
    "T_category_get_num", "T_category_get_info", "T_category_get_index",
    "T_category_get_cvars", "T_category_get_pvars", "T_category_get_categories",
    "T_category_changed",
}
QUERY_PATTERNS = [re.compile(r"_(c2f|f2c)$")]  # handle conversions, Status_c2f/f2c included

# Every other MPI_File_* call is I/O (open, close, set_view, seek, get_size, ...), except the
# handle conversions, which are QUERY like every *_c2f / *_f2c.
IO_PATTERNS = [re.compile(r"^File_")]

KIND_OVERRIDES = {
    # name: KIND   (hand edits go here, with a comment saying why)
}

# ---------------------------------------------------------------------------------------------
# BYTES: the size of the data this rank hands to MPI as its outgoing payload.
# ---------------------------------------------------------------------------------------------

BYTES_RULES = {}


def _b(names, expr):
    for n in names:
        BYTES_RULES[n] = expr


# Point-to-point sends.
_b(["Send", "Bsend", "Ssend", "Rsend", "Isend", "Ibsend", "Issend", "Irsend",
    "Sendrecv_replace"], "MW_BYTES(count, datatype)")
_b(["Sendrecv"], "MW_BYTES(sendcount, sendtype)")
# Rooted/reduction collectives with one count: the buffer each rank contributes.
_b(["Bcast", "Ibcast"], "MW_BYTES(count, datatype)")
_b(["Reduce", "Ireduce", "Allreduce", "Iallreduce", "Scan", "Iscan", "Exscan", "Iexscan"],
   "MW_BYTES(count, datatype)")
# Reduce_scatter_block: every rank contributes recvcount elements per member of the group.
_b(["Reduce_scatter_block", "Ireduce_scatter_block"], "MW_BYTES_N(recvcount, datatype, comm)")
_b(["Reduce_scatter", "Ireduce_scatter"], "MW_BYTES_V(recvcounts, datatype, comm)")
# Gathers: the send pair, or the recv pair when the send buffer is MPI_IN_PLACE.
_b(["Gather", "Igather", "Allgather", "Iallgather"],
   "MW_BYTES_IP(sendbuf, sendcount, sendtype, recvcount, recvtype)")
# Gatherv in place: the root's own block is not counted (its count is recvcounts[root],
# only valid at the root); 0 is documented.
_b(["Gatherv", "Igatherv", "Allgatherv", "Iallgatherv"],
   "MW_BYTES_IP(sendbuf, sendcount, sendtype, 0, recvtype)")
# Scatters: what this rank ends up with (valid at every rank). At the root with
# recvbuf == MPI_IN_PLACE the recv pair is ignored by MPI; Scatter then counts the root's own
# block (sendcount x sendtype), Scatterv counts 0.
_b(["Scatter", "Iscatter"], "MW_BYTES_IP(recvbuf, recvcount, recvtype, sendcount, sendtype)")
_b(["Scatterv", "Iscatterv"], "MW_BYTES_IP(recvbuf, recvcount, recvtype, 0, sendtype)")
# All-to-all. With sendbuf == MPI_IN_PLACE MPI ignores the send count(s) and type(s), which
# may then be garbage; the data sent is described by the recv side.
_b(["Alltoall", "Ialltoall"],
   "(sendbuf == MPI_IN_PLACE ? MW_BYTES_N(recvcount, recvtype, comm) : "
   "MW_BYTES_N(sendcount, sendtype, comm))")
_b(["Alltoallv", "Ialltoallv"],
   "(sendbuf == MPI_IN_PLACE ? MW_BYTES_V(recvcounts, recvtype, comm) : "
   "MW_BYTES_V(sendcounts, sendtype, comm))")
_b(["Alltoallw", "Ialltoallw"],
   "(sendbuf == MPI_IN_PLACE ? MW_BYTES_W(recvcounts, recvtypes, comm) : "
   "MW_BYTES_W(sendcounts, sendtypes, comm))")
# Neighbourhood collectives: one block of sendcount x sendtype. The v/w variants whose send
# counts are arrays get no bytes: the arrays are as long as the neighbour count, not the
# communicator size, and MW_BYTES_V/W would read past them.
_b(["Neighbor_allgather", "Ineighbor_allgather", "Neighbor_allgatherv",
    "Ineighbor_allgatherv", "Neighbor_alltoall", "Ineighbor_alltoall"],
   "MW_BYTES(sendcount, sendtype)")
# One-sided: the origin buffer.
_b(["Put", "Rput", "Get", "Rget", "Accumulate", "Raccumulate", "Get_accumulate",
    "Rget_accumulate"], "MW_BYTES(origin_count, origin_datatype)")
_b(["Fetch_and_op", "Compare_and_swap"], "MW_BYTES(1, datatype)")

BYTES_OVERRIDES = {
    # name: "C expression"
}

# The data-moving I/O calls: read/write, explicit offset (_at), collective (_all), shared
# and ordered file pointers, nonblocking (i) and split collective (_begin). Their bytes are
# count x datatype; the _end halves of split collectives carry no count and get none.
IO_DATA = re.compile(r"^File_i?(read|write)(_at)?(_all|_shared|_ordered)?(_begin)?$")

PEER_OVERRIDES = {
    # name: "MW_PEER(x, comm)" or "MW_NOPEER"
}

# ---------------------------------------------------------------------------------------------
# Fortran.
# ---------------------------------------------------------------------------------------------

# name: ABI argument count, for procedures whose interface mpi.mod does not describe.
# Open MPI's `mpi` module leaves out the MPI-1 functions deprecated in MPI-2 and removed in
# MPI-3, but libmpi_mpifh still exports them for mpif.h programs (implicit interface). Their
# Fortran bindings (MPI-2.2 standard, chapter 15 / annex A.3) mirror the C parameters plus
# IERROR and have no CHARACTER argument. `--verify-abi` checks each against the machine code.
FORTRAN_ARITY_OVERRIDES = {
    "Address": 3,            # (LOCATION, ADDRESS, IERROR)
    "Attr_delete": 3,        # (COMM, KEYVAL, IERROR)
    "Attr_get": 5,           # (COMM, KEYVAL, ATTRIBUTE_VAL, FLAG, IERROR)
    "Attr_put": 4,           # (COMM, KEYVAL, ATTRIBUTE_VAL, IERROR)
    "Errhandler_create": 3,  # (FUNCTION, ERRHANDLER, IERROR)
    "Errhandler_get": 3,     # (COMM, ERRHANDLER, IERROR)
    "Errhandler_set": 3,     # (COMM, ERRHANDLER, IERROR)
    "Keyval_create": 5,      # (COPY_FN, DELETE_FN, KEYVAL, EXTRA_STATE, IERROR)
    "Keyval_free": 2,        # (KEYVAL, IERROR)
    "Type_extent": 3,        # (DATATYPE, EXTENT, IERROR)
    "Type_hindexed": 6,      # (COUNT, BLOCKLENS, DISPLS, OLDTYPE, NEWTYPE, IERROR)
    "Type_hvector": 6,       # (COUNT, BLOCKLEN, STRIDE, OLDTYPE, NEWTYPE, IERROR)
    "Type_lb": 3,            # (DATATYPE, DISPLACEMENT, IERROR)
    "Type_struct": 6,        # (COUNT, BLOCKLENS, DISPLS, TYPES, NEWTYPE, IERROR)
    "Type_ub": 3,            # (DATATYPE, DISPLACEMENT, IERROR)
}

# name: reason. Rows listed here get MW_NOFORTRAN even if the symbols exist.
FORTRAN_DISABLE = {
}


def die(msg):
    sys.stderr.write("gen-function-table: " + msg + "\n")
    sys.exit(1)


def run(cmd, **kw):
    try:
        return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, **kw).stdout
    except FileNotFoundError:
        die("cannot run %s" % cmd[0])
    except subprocess.CalledProcessError as e:
        die("%s failed:\n%s" % (" ".join(cmd), e.stderr))


# ------------------------------------------------------------------------------- C parsing --

BUILTIN_TYPES = {"unsigned", "signed", "int", "char", "short", "long", "float", "double",
                 "void", "_Bool"}
QUALIFIERS = {"const", "volatile", "restrict", "__restrict", "__restrict__"}
TOKEN_RE = re.compile(r"\.\.\.|[A-Za-z_]\w*|\d\w*|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|\S")


class Tok(str):
    """A C token that remembers whether white space preceded it in the header."""
    sp = False


def tokenize_c(text):
    out = []
    for m in TOKEN_RE.finditer(text):
        t = Tok(m.group(0))
        t.sp = m.start() > 0 and text[m.start() - 1].isspace()
        out.append(t)
    return out


def strip_comments(text):
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def statements(text):
    """Split preprocessed text into top-level statements (lists of tokens)."""
    lines = [l for l in text.split("\n") if not l.lstrip().startswith("#")]
    toks = tokenize_c(strip_comments("\n".join(lines)))
    cur, depth = [], 0
    for t in toks:
        if t in "({[":
            depth += 1
        elif t in ")}]":
            depth -= 1
        if t == ";" and depth == 0:
            yield cur
            cur = []
        else:
            cur.append(t)


def matching(toks, i):
    """Index of the parenthesis closing the one at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j] == "(":
            depth += 1
        elif toks[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return -1


def drop_attributes(toks):
    """Remove __attribute__((...)), __asm__(...) and __extension__ from a token list."""
    out, i = [], 0
    while i < len(toks):
        t = toks[i]
        if t in ("__attribute__", "__asm__", "__asm", "__declspec") and i + 1 < len(toks) \
                and toks[i + 1] == "(":
            i = matching(toks, i + 1) + 1
            continue
        if t in ("__extension__", "extern", "__inline", "inline"):
            i += 1
            continue
        out.append(t)
        i += 1
    return out


def join_tokens(toks):
    """Join tokens back into C text, keeping the header's spacing (collapsed to one blank)."""
    s = ""
    for t in toks:
        if s and getattr(t, "sp", True) and not s.endswith("("):
            s += " "
        s += t
    return s


def split_params(toks):
    params, cur, depth = [], [], 0
    for t in toks:
        if t in "([":
            depth += 1
        elif t in ")]":
            depth -= 1
        if t == "," and depth == 0:
            params.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        params.append(cur)
    return params


def param_name(ptoks):
    """Return (index of the name token or None, index at which to insert a missing name).

    A parameter is: qualifiers, one type (builtin keywords, struct X, or a typedef name),
    then '*'s and qualifiers, then an optional name, then an optional [..] suffix.
    """
    end = ptoks.index("[") if "[" in ptoks else len(ptoks)
    if "(" in ptoks[:end]:
        die("function-pointer parameter syntax not supported: %s" % " ".join(ptoks))
    i, seen_type = 0, False
    while i < end:
        t = ptoks[i]
        if t in QUALIFIERS or t == "*":
            i += 1
        elif t in ("struct", "union", "enum"):
            i += 2
            seen_type = True
        elif t in BUILTIN_TYPES:
            i += 1
            seen_type = True
        elif re.match(r"[A-Za-z_]\w*$", t) and not seen_type:
            i += 1  # a typedef name (or a macro standing for a type, like MPI_Fint)
            seen_type = True
        elif re.match(r"[A-Za-z_]\w*$", t):
            # the first identifier after the type is the name; nothing but '*' and
            # qualifiers may follow it before the array suffix
            if any(x not in QUALIFIERS and x != "*" for x in ptoks[i + 1:end]):
                die("cannot parse parameter: %s" % " ".join(ptoks))
            return i, None
        else:
            die("cannot parse parameter: %s" % " ".join(ptoks))
    return None, end


def parse_prototypes(text):
    """Map name -> (ret, [param token lists]) for every P?MPI_ function declaration."""
    protos = {}
    for st in statements(text):
        if not st or st[0] == "typedef":
            continue
        st = drop_attributes(st)
        for i, t in enumerate(st):
            if re.match(r"P?MPIX?_\w+$", t) and i + 1 < len(st) and st[i + 1] == "(":
                close = matching(st, i + 1)
                ret = [x for x in st[:i] if not re.match(r"[A-Z][A-Z0-9_]*DECLSPEC$", x)]
                if not ret or close < 0:
                    break
                # anything after the parameter list must be attribute-like macro calls
                protos[t] = (ret, split_params(st[i + 2:close]))
                break
            if t == "(":
                break
    return protos


def extract_c(cc, cflags):
    src = "#include <mpi.h>\n"
    base = shlex.split(cc) + cflags + CPP_DEFINES
    full = run(base + ["-E", "-P", "-x", "c", "-"], input=src)
    raw = run(base + ["-E", "-fdirectives-only", "-x", "c", "-"], input=src)
    pfull = parse_prototypes(full)
    praw = parse_prototypes(raw)
    names = sorted(n[4:] for n in pfull if n.startswith("MPI_") and "P" + n in pfull)
    extract_c.mpix = sorted(n for n in pfull if n.startswith("MPIX_") and "P" + n in pfull)
    funcs = OrderedDict()
    for n in names:
        if n in EXCLUDED:
            continue
        for pre in ("MPI_", "PMPI_"):
            if pre + n not in praw:
                die("%s%s is declared but not found in the unexpanded header" % (pre, n))
            if len(praw[pre + n][1]) != len(pfull[pre + n][1]):
                die("%s%s: parameter count differs between passes" % (pre, n))
        ret, params = praw["MPI_" + n]
        funcs[n] = (join_tokens(ret), params)
    return funcs


def c_signature(name, ret, params):
    """Return (params text, args text) for a row."""
    if len(params) == 1 and params[0] == ["void"]:
        return "(void)", "()"
    ptexts, args = [], []
    for k, p in enumerate(params):
        if p == ["..."]:
            ptexts.append("...")
            continue
        idx, ins = param_name(p)
        if idx is None:
            nm = Tok("p%d" % k)
            nm.sp = True
            rest = [Tok(x) for x in p[ins:]]  # "char []" becomes "char p2[]"
            for x, orig in zip(rest, p[ins:]):
                x.sp = getattr(orig, "sp", True) and x != "["
            p = p[:ins] + [nm] + rest
        else:
            nm = p[idx]
        ptexts.append(join_tokens(p))
        args.append(nm)
    return "(" + ", ".join(ptexts) + ")", "(" + ", ".join(args) + ")"


# ------------------------------------------------------------------------- classification --

# MPI-4.0 large-count variants (MPI_Send_c, ...: MPICH 4.0 declares them, Open MPI 4.1 does
# not) take MPI_Count counts and count arrays. They are classified and traced like their base
# function; their bytes are counted only where the base rule is MW_BYTES(count, type) (a
# scalar MPI_Count fits its MPI_Aint parameter), the others (in-place pairs, count arrays of
# the v/w collectives, whose element type differs) get MW_NOBYTES. A base that is
# hand-written for tracing (Recv, Sendrecv, ...) makes the _c variant a plain CALL: the
# hand-written code names the base function only.
def base_of(name):
    return name[:-2] if name.endswith("_c") else name


def kind_of(name):
    if name.endswith("_c") and base_of(name) not in KIND_OVERRIDES:
        k = kind_of(base_of(name))
        return "OTHER" if k == "SPECIAL" else k
    if name in KIND_OVERRIDES:
        return KIND_OVERRIDES[name]
    if name in SPECIAL:
        return "SPECIAL"
    for s, k in ((SEND, "SEND"), (RECV, "RECV"), (COLL, "COLL"), (WAIT, "WAIT"), (RMA, "RMA")):
        if name in s:
            return k
    if name in QUERY or any(p.search(name) for p in QUERY_PATTERNS):
        return "QUERY"
    if any(p.search(name) for p in IO_PATTERNS):
        return "IO"
    return "OTHER"


def bytes_of(name, kind, argnames):
    if name.endswith("_c") and name not in BYTES_OVERRIDES:
        e = bytes_of(base_of(name), kind, argnames)
        return e if e.startswith("MW_BYTES(") else "MW_NOBYTES"
    if name in BYTES_OVERRIDES:
        e = BYTES_OVERRIDES[name]
    elif name in BYTES_RULES:
        e = BYTES_RULES[name]
    elif kind == "IO" and IO_DATA.match(name):
        e = "MW_BYTES(count, datatype)"  # checked below: must be parameters
    else:
        e = "MW_NOBYTES"
    for ident in re.findall(r"\b[a-z_]\w*\b", e):
        if ident not in argnames:
            die("%s: bytes expression %r uses %r, not a parameter" % (name, e, ident))
    return e


def peer_of(name, kind, argnames):
    if name in PEER_OVERRIDES:
        return PEER_OVERRIDES[name]
    if kind == "SEND":
        if "dest" not in argnames or "comm" not in argnames:
            die("%s: SEND without dest/comm parameters" % name)
        return "MW_PEER(dest, comm)"
    return "MW_NOPEER"


# --------------------------------------------------------------------------------- TRACE --
# How a call is traced (docs/trace.md "Records and communicators"): MW_TR(TK, comm, peer, tag,
# handle), expressions over the parameters. TK selects the wrapper's trace code:
#   CALL    a call without a message (a MW_TK_CALL record, like today's path)
#   SEND    blocking send to `peer` (dest) with `tag` on `comm`
#   ISEND   non-blocking send; handle = the request (its completion is traced by Wait/Test)
#   PSEND   persistent send (Send_init, ...): nothing is sent; MPI_Start posts it
#   IRECV   non-blocking receive from `peer` (source) with `tag`; handle = the request
#   PRECV   persistent receive (Recv_init)
#   COLL    collective on `comm`, peer = root (MW_NOROOT without one); its instance number on
#           comm is taken when the call starts, in every state of the library
#   ICOLL   non-blocking collective; handle = the request
#   CCOLL   collective over `comm` without a message (File_open, Win_create, ...): counted as
#           an instance so that every member's counter agrees
#   CREATE  creates the communicator *handle, collectively over `comm` (dup, split, ...)
#   ICREATE Comm_idup: as CREATE, plus the request
#   GCREATE creates *handle over a group (Comm_create_group): id from the group, tag, occurrence
#   XCREATE Intercomm_create: id from both groups and the tag; counted on `comm` (local_comm)
#   EXTERN  a communicator with processes outside the job (connect, accept, spawn, join)
#   HAND    hand-written in pmpi-shim/trace_calls.c (receives with a status, completions,
#           persistent starts, matched probes)
# A row's TK also says whether its call is collective over a communicator (COLL, ICOLL, CCOLL,
# CREATE, ICREATE, XCREATE, EXTERN with a communicator) and whether it creates one (the
# *CREATE kinds and EXTERN).

TRACE_HAND = {"Recv", "Sendrecv", "Sendrecv_replace", "Mrecv", "Imrecv", "Mprobe", "Improbe",
              "Wait", "Waitall", "Waitany", "Waitsome", "Test", "Testall", "Testany",
              "Testsome", "Start", "Startall", "Request_free", "Cancel"}
TRACE_KINDS = ["CALL", "SEND", "ISEND", "PSEND", "IRECV", "PRECV", "COLL", "ICOLL", "CCOLL",
               "CREATE", "ICREATE", "GCREATE", "XCREATE", "EXTERN", "HAND"]

TRACE_RULES = {
    # creating calls: (TK, parent comm, tag, new communicator)
    "Comm_dup": ("CREATE", "comm", "0", "newcomm"),
    "Comm_dup_with_info": ("CREATE", "comm", "0", "newcomm"),
    "Comm_split": ("CREATE", "comm", "0", "newcomm"),
    "Comm_split_type": ("CREATE", "comm", "0", "newcomm"),
    "Comm_create": ("CREATE", "comm", "0", "newcomm"),
    "Cart_create": ("CREATE", ("old_comm", "comm_old"), "0", "comm_cart"),
    "Cart_sub": ("CREATE", "comm", "0", ("new_comm", "newcomm")),
    "Graph_create": ("CREATE", "comm_old", "0", "comm_graph"),
    "Dist_graph_create": ("CREATE", "comm_old", "0", ("newcomm", "comm_dist_graph")),
    "Dist_graph_create_adjacent": ("CREATE", "comm_old", "0", "comm_dist_graph"),
    "Intercomm_merge": ("CREATE", "intercomm", "0", ("newintercomm", "newintracomm")),
    "Comm_idup": ("ICREATE", "comm", "0", "newcomm"),
    "Comm_create_group": ("GCREATE", "comm", "tag", "newcomm"),
    "Intercomm_create": ("XCREATE", "local_comm", "tag", "newintercomm"),
    "Comm_accept": ("EXTERN", "comm", "0", "newcomm"),
    "Comm_connect": ("EXTERN", "comm", "0", "newcomm"),
    "Comm_spawn": ("EXTERN", "comm", "0", "intercomm"),
    "Comm_spawn_multiple": ("EXTERN", "comm", "0", "intercomm"),
    "Comm_join": ("EXTERN", "MPI_COMM_NULL", "0", "intercomm"),
    # collective over a communicator without a message
    "File_open": ("CCOLL", "comm", "0", "0"),
    "Win_create": ("CCOLL", "comm", "0", "0"),
    "Win_create_dynamic": ("CCOLL", "comm", "0", "0"),
    "Win_allocate": ("CCOLL", "comm", "0", "0"),
    "Win_allocate_shared": ("CCOLL", "comm", "0", "0"),
}


def trace_of(name, kind, argnames):
    def need(*ids):
        for i in ids:
            if i not in argnames and not re.match(r"^(0|MPI_\w+|MW_\w+)$", i):
                die("%s: trace column uses %r, not a parameter" % (name, i))

    rule = TRACE_RULES.get(name) or TRACE_RULES.get(base_of(name))
    if kind in ("QUERY", "SPECIAL") or (name.endswith("_c") and base_of(name) in TRACE_HAND):
        tr = ("CALL", "0", "0", "0", "0")
    elif name in TRACE_HAND:
        tr = ("HAND", "0", "0", "0", "0")
    elif rule:
        # a rule's parameter may name alternatives: MPIs spell some parameters differently
        # (Open MPI's old_comm is MPICH's comm_old)
        tk, comm, tag, h = (next((a for a in x if a in argnames), x[0])
                            if isinstance(x, tuple) else x for x in rule)
        need(comm, tag, h)
        if tk == "ICREATE":
            need("request")
        if tk == "GCREATE":
            need("group")
        tr = (tk, comm, "0", tag, h)
    elif base_of(name).endswith("send_init") or base_of(name) == "Send_init":
        need("comm", "dest", "tag", "request", "count", "datatype")
        tr = ("PSEND", "comm", "dest", "tag", "request")
    elif base_of(name) == "Recv_init":
        need("comm", "source", "tag", "request")
        tr = ("PRECV", "comm", "source", "tag", "request")
    elif kind == "SEND":
        need("comm", "dest", "tag")
        tr = ("ISEND", "comm", "dest", "tag", "request") if "request" in argnames \
            else ("SEND", "comm", "dest", "tag", "0")
    elif base_of(name) == "Irecv":
        need("comm", "source", "tag", "request")
        tr = ("IRECV", "comm", "source", "tag", "request")
    elif kind == "COLL":
        need("comm")
        root = "root" if "root" in argnames else "MW_NOROOT"
        tr = ("ICOLL", "comm", root, "0", "request") if "request" in argnames \
            else ("COLL", "comm", root, "0", "0")
    else:
        tr = ("CALL", "0", "0", "0", "0")
    if tr[0] not in TRACE_KINDS:
        die("%s: bad trace kind %s" % (name, tr[0]))
    return "MW_TR(%s)" % ", ".join(tr)


# ------------------------------------------------------------------------------- Fortran --

def _mod_tokens(s):
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c.isspace():
            i += 1
        elif c in "()":
            yield c
            i += 1
        elif c == "'":
            j, buf = i + 1, []
            while True:
                if s[j] == "'":
                    if j + 1 < n and s[j + 1] == "'":
                        buf.append("'")
                        j += 2
                        continue
                    break
                buf.append(s[j])
                j += 1
            yield ("S", "".join(buf))
            i = j + 1
        else:
            j = i
            while j < n and not s[j].isspace() and s[j] not in "()'":
                j += 1
            yield s[i:j]
            i = j


def parse_mod(path):
    """Return {procedure name: (formal args [(name, type, attrs, arrayspec)])} from mpi.mod.

    gfortran writes modules as gzip'd S-expressions. The symbol table is a flat list of
    6-tuples (id 'name' 'module' 'binding-label' parent-ns (body)); a procedure's body holds
    its attributes, type, formal namespace and the list of its formal argument ids.
    """
    with gzip.open(path, "rt") as f:
        header = f.readline()
        if not header.startswith("GFORTRAN module version"):
            raise ValueError("not a gfortran module: " + path)
        text = f.read()
    stack = [[]]
    for t in _mod_tokens(text):
        if t == "(":
            stack.append([])
        elif t == ")":
            lst = stack.pop()
            stack[-1].append(lst)
        else:
            stack[-1].append(t)
    top = stack[0]
    symtab = max((x for x in top if isinstance(x, list)), key=len)
    if len(symtab) % 6:
        raise ValueError("unexpected module layout in " + path)
    syms = {}
    for k in range(0, len(symtab), 6):
        sid, name, _mod, label, _ns, body = symtab[k:k + 6]
        syms[int(sid)] = (name[1], label[1], body)
    procs = {}
    for sid, (name, label, body) in syms.items():
        attrs = body[0]
        if not attrs or attrs[0] != "PROCEDURE" or not (
                "SUBROUTINE" in attrs or "FUNCTION" in attrs):
            continue
        formals = []
        for fid in body[5]:
            fname, _l, fb = syms[int(fid)]
            ftype = fb[2][0] if fb[2] else "UNKNOWN"
            aspec = fb[6][2] if len(fb) > 6 and isinstance(fb[6], list) and fb[6] else None
            formals.append((fname, ftype, fb[0], aspec))
        procs[label or name] = ("FUNCTION" if "FUNCTION" in attrs else "SUBROUTINE", formals)
    return procs


def fortran_arity(formals):
    """ABI arity of an external Fortran procedure, or None if not safely known."""
    n = 0
    for fname, ftype, attrs, aspec in formals:
        if "OPTIONAL" in attrs or "VALUE" in attrs or "POINTER" in attrs \
                or "ALLOCATABLE" in attrs:
            return None
        if aspec in ("ASSUMED_SHAPE", "ASSUMED_RANK", "DEFERRED"):
            return None
        n += 1
        if ftype == "CHARACTER":
            n += 1  # gfortran's hidden length, appended at the end
    return n


# The libraries that hold the mpif.h / `use mpi` bindings (mpi_x_ and pmpi_x_), by MPI:
# Open MPI's libmpi_mpifh, MPICH's libmpichfort (Debian 12), libmpifort (Intel MPI, MPICH
# builds of other distributions); and Open MPI's mpi_f08 library (mpi_x_f08_). MPICH's
# mpi_f08 bindings (mpi_x_f08ts_ in libmpichfort) call the C MPI_X functions, so the C
# wrappers see them: they need no column of their own.
FORTRAN_FH_LIBS = ["mpi_mpifh", "mpichfort", "mpifort"]
FORTRAN_F08_LIBS = ["mpi_usempif08"]


def wrapper_flags(w):
    """(-I dirs, -L dirs, -l names) of an MPI compiler wrapper: Open MPI's --showme:*, else
    MPICH's -show (Intel MPI and MVAPICH are MPICH derivatives and answer -show too)."""
    inc, libd, libs = [], [], []
    def out(flag):
        try:
            r = subprocess.run(shlex.split(w) + [flag], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, universal_newlines=True, timeout=30)
            return r.stdout if r.returncode == 0 else ""
        except (OSError, subprocess.TimeoutExpired):
            return ""
    o = out("--showme:incdirs")
    if o:
        inc += o.split()
        libd += out("--showme:libdirs").split()
        libs += out("--showme:libs").split()
        return inc, libd, libs
    for word in shlex.split(out("-show")):
        if word.startswith("-I"):
            inc.append(word[2:])
        elif word.startswith("-L"):
            libd.append(word[2:])
        elif word.startswith("-l"):
            libs.append(word[2:])
    return inc, libd, libs


def find_fortran(args):
    """Locate mpi.mod, the mpif.h binding library and Open MPI's mpi_f08 library, from the
    Fortran wrapper first (so that an MPICH build never picks Open MPI's files), then from
    Open MPI's usual Debian places."""
    moddirs, libdirs, libnames = [], [], []
    if args.fortran_mod_dir:
        moddirs.append(args.fortran_mod_dir)
    if args.fortran_lib_dir:
        libdirs.append(args.fortran_lib_dir)
    for w in (args.fc, args.cc):
        inc, libd, libs = wrapper_flags(w)
        moddirs += inc
        libdirs += libd
        libnames += libs
    fh_names = [n for n in libnames if n in FORTRAN_FH_LIBS] or FORTRAN_FH_LIBS
    f08_names = [n for n in libnames if n in FORTRAN_F08_LIBS]
    if not libnames or "mpi_mpifh" in libnames:
        f08_names = f08_names or FORTRAN_F08_LIBS
        moddirs += glob.glob("/usr/lib/*/fortran/*/openmpi") + \
            glob.glob("/usr/lib*/openmpi/lib")
        libdirs += glob.glob("/usr/lib/*/openmpi/lib") + glob.glob("/usr/lib*/openmpi/lib")
    libdirs += glob.glob("/usr/lib/*-linux-gnu") + ["/usr/lib64", "/usr/lib"]

    def first(dirs, pats):
        for pat in pats:
            for d in dirs:
                hits = sorted(glob.glob(os.path.join(d, pat)))
                if hits:
                    return hits[0]
        return None
    return (first(moddirs, ["mpi.mod"]),
            first(libdirs, ["lib%s.so*" % n for n in fh_names]),
            first(libdirs, ["lib%s.so*" % n for n in f08_names]) if f08_names else None)


def c_library_symbols(cc):
    """The dynamic symbols of the C MPI libraries the wrapper links (libmpi, libmpich, ...),
    or None when they cannot be found. MPICH's mpi.h declares MPI_Status_c2f08 and friends,
    which libmpichfort defines, not libmpich: a C program cannot call them, and a wrapper of
    them would not link."""
    _inc, libdirs, libs = wrapper_flags(cc)
    libdirs = libdirs + glob.glob("/usr/lib/*-linux-gnu") + ["/usr/lib64", "/usr/lib"]
    syms, found = set(), False
    for name in libs:
        if not name.startswith("mpi"):
            continue
        for d in libdirs:
            hits = sorted(glob.glob(os.path.join(d, "lib%s.so*" % name)))
            if hits:
                syms |= dyn_symbols(hits[0])
                found = True
                break
    return syms if found else None


def dyn_symbols(lib):
    if not lib:
        return set()
    out = run(["nm", "-D", "--defined-only", lib])
    return {l.split()[-1] for l in out.splitlines() if l.strip()}


def fortran_index(formals, cname):
    """0-based position of the Fortran formal argument that mirrors C parameter cname."""
    for k, f in enumerate(formals):
        if f[0] == cname.lower():
            return k
    return None


def cargnames(cparams):
    names = []
    for k, p in enumerate(cparams):
        idx, _ins = param_name(p) if p not in (["..."], ["void"]) else (None, None)
        names.append(p[idx] if idx is not None else "p%d" % k)
    return names


def fortran_rule_arity(ret, cparams):
    """C parameter count + 1 (IERROR) when the mpif.h binding must mirror the C one."""
    if ret != "int" or any(p == ["..."] or "char" in p for p in cparams):
        return None
    if len(cparams) == 1 and cparams[0] == ["void"]:
        return 1
    return len(cparams) + 1


def fortran_column(name, bytes_expr, peer_expr, procs, fh_syms, f08_syms, notes, overrides,
                   ret="int", cparams=(), rule=None):
    rule = [] if rule is None else rule
    lower = name.lower()
    if name in FORTRAN_DISABLE:
        notes.append((name, FORTRAN_DISABLE[name]))
        return "MW_NOFORTRAN"
    if "mpi_%s_" % lower not in fh_syms or "pmpi_%s_" % lower not in fh_syms:
        return None  # no Fortran binding at all: reported separately
    proc = procs.get("mpi_" + lower)
    formals = proc[1] if proc else None
    if name in FORTRAN_ARITY_OVERRIDES:
        nargs = FORTRAN_ARITY_OVERRIDES[name]
        overrides.append(name)
    elif formals is None:
        # MPICH's `mpi` module declares no interface for the routines with a choice buffer
        # (MPI_Send, MPI_Bcast, ...). Their mpif.h binding is the C one, argument for argument,
        # plus IERROR, each passed by reference: the arity is the C parameter count + 1. The
        # rule is applied only where nothing else can be passed: an int-returning C function
        # without CHARACTER (char) or variadic parameters; `--verify-abi` checks it against
        # the library's machine code.
        nargs = fortran_rule_arity(ret, cparams)
        if nargs is None:
            notes.append((name, "no interface in mpi.mod, arity unknown"))
            return "MW_NOFORTRAN"
        rule.append(name)
    else:
        nargs = fortran_arity(formals)
        if nargs is None:
            notes.append((name, "mpi.mod interface has optional/value/descriptor arguments"))
            return "MW_NOFORTRAN"
    f08 = 1 if "mpi_%s_f08_" % lower in f08_syms else 0

    if formals is None:
        # a ruled arity: the Fortran arguments are the C parameters in order
        formals = [(a, "", [], None) for a in cargnames(cparams)]
    fbytes, fpeer = "MW_FNOBYTES", "MW_FNOPEER"
    m = re.match(r"MW_BYTES(_IP)?\((.*)\)$", bytes_expr)
    if m and formals is not None:
        parts = [p.strip() for p in m.group(2).split(",")]
        c, t = (parts[1], parts[2]) if m.group(1) else (parts[0], parts[1])
        if re.match(r"\d+$", c):
            ti = fortran_index(formals, t)
            # a literal count (Fetch_and_op: one element) has no Fortran argument; skip it
            ci = None
        else:
            ci, ti = fortran_index(formals, c), fortran_index(formals, t)
        if ci is not None and ti is not None:
            fbytes = "MW_FBYTES(%d, %d)" % (ci, ti)
    m = re.match(r"MW_PEER\((\w+), (\w+)\)$", peer_expr)
    if m and formals is not None:
        ri, ki = fortran_index(formals, m.group(1)), fortran_index(formals, m.group(2))
        if ri is not None and ki is not None:
            fpeer = "MW_FPEER(%d, %d)" % (ri, ki)
    return "MW_FORTRAN(%s, %s, %d, %d, %s, %s)" % (lower, name.upper(), nargs, f08, fbytes,
                                                   fpeer)


# -------------------------------------------------------------------- objdump verification --

ARG_REGS = {"rdi": 1, "edi": 1, "dil": 1, "rsi": 2, "esi": 2, "sil": 2, "rdx": 3, "edx": 3,
            "dl": 3, "rcx": 4, "ecx": 4, "cl": 4, "r8": 5, "r8d": 5, "r8b": 5, "r9": 6,
            "r9d": 6, "r9b": 6}


def _operands(ops):
    out, cur, depth = [], "", 0
    for c in ops:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    if cur:
        out.append(cur)
    return [o.strip() for o in out]


def _is_padding(ins):
    return ins.startswith(("nop", "cs nop", "xchg   %ax,%ax", "data16"))


def args_read(lib, syms):
    """For each symbol, the highest argument position its machine code reads (a lower bound).

    Register arguments (1..6): an argument register read before it is written, up to the
    first call or jump. Stack arguments (7..): an N(%rsp) / N(%rbp) access above the return
    address, tracking %rsp through push/pop/sub/add. Tail calls and clever code make this
    undercount, never overcount, which is what a safety check on the arity needs.
    """
    out = run(["objdump", "-d", "--no-show-raw-insn", lib])
    addr2name = {}
    for l in run(["nm", "-D", "--defined-only", lib]).splitlines():
        p = l.split()
        if len(p) == 3 and p[2] in syms:
            addr2name.setdefault(int(p[0], 16), []).append(p[2])
    result = {}
    cur = None
    lines = out.splitlines()
    for idx, line in enumerate(lines):
        m = re.match(r"^([0-9a-f]+) <", line)
        if m:
            cur = addr2name.get(int(m.group(1), 16))
            frame, body_frame, rbp_frame, in_prologue = 0, 0, None, True
            written, best, after_exit, first = set(), 0, False, True
            continue
        if not cur or "\t" not in line:
            continue
        ins = line.split("\t")[-1].strip()
        parts = ins.split(None, 1)
        op, ops = parts[0], _operands(parts[1]) if len(parts) > 1 else []
        if first:
            # a whole-function tail call, e.g. MPI_ERRHANDLER_CREATE jumping to
            # ompi_comm_create_errhandler_f: reported so the caller can compare arities
            t = re.match(r"jmp\s+[0-9a-f]+ <ompi_(\w+)_f@plt>", ins)
            if t:
                for sym in cur:
                    result.setdefault("->", {})[sym] = "mpi_%s_" % t.group(1)
            first = False
        if after_exit and _is_padding(ins):
            # alignment padding after a return. If the next real instruction opens a new
            # frame it belongs to a function that a stripped library does not name: stop
            # attributing code to this symbol. Otherwise it is an aligned block (a cold
            # path) of the same function.
            nxt = next((x.split("\t")[-1].strip() for x in lines[idx + 1:]
                        if "\t" in x and not _is_padding(x.split("\t")[-1].strip())), "")
            if nxt.startswith(("push", "endbr64")):
                cur = None
            continue
        after_exit = op.startswith("ret") or op == "jmp"
        # register arguments, until control flow leaves the straight line
        if in_prologue:
            if op.startswith(("call", "jmp", "ret")) or op.startswith("j"):
                in_prologue = False
            else:
                zero = op.startswith("xor") and len(ops) == 2 and ops[0] == ops[1]
                dest = ops[-1] if len(ops) >= 2 and not op.startswith(("cmp", "test")) \
                    else None
                srcs = ops[:-1] if dest is not None else ops
                if dest is not None and not dest.startswith("%"):
                    srcs = srcs + [dest]  # memory destination: its address registers are read
                for o in ([] if zero else srcs):
                    for r in re.findall(r"%(\w+)", o):
                        if r in ARG_REGS and ARG_REGS[r] not in written:
                            best = max(best, ARG_REGS[r])
                if dest is not None and re.match(r"%\w+$", dest):
                    r = dest[1:]
                    if r in ARG_REGS and not op.startswith("cmov"):
                        written.add(ARG_REGS[r])
        # stack arguments
        if op == "push":
            frame += 8
        elif op == "pop":
            frame -= 8
        elif op == "sub" and len(ops) == 2 and ops[1] == "%rsp" and ops[0].startswith("$"):
            frame += int(ops[0][1:], 16)
        elif op == "add" and len(ops) == 2 and ops[1] == "%rsp" and ops[0].startswith("$"):
            frame -= int(ops[0][1:], 16)
        elif op == "mov" and ops == ["%rsp", "%rbp"]:
            rbp_frame = frame
        body_frame = max(body_frame, frame)
        for off, reg in re.findall(r"(-?0x[0-9a-f]+)\(%(rsp|rbp)\)", ins):
            off = int(off, 16)
            if reg == "rsp":
                rel = off - frame - 8
            elif rbp_frame is not None:
                rel = off - rbp_frame - 8
            else:
                continue
            if 0 <= rel < 8 * 32 and rel % 8 == 0:
                best = max(best, 7 + rel // 8)
        if op.startswith("ret") or op == "jmp":
            # code after a return or a tail call runs with the full frame again
            frame = body_frame
        for sym in cur:
            result[sym] = best
    return result


def verify_abi(rows, fh_lib):
    allsyms = {l.split()[-1] for l in run(["nm", "-D", "--defined-only", fh_lib]).splitlines()
               if l.strip()}
    reads = args_read(fh_lib, allsyms)
    tails = reads.pop("->", {})
    for s, target in tails.items():
        reads[s] = max(reads.get(s, 0), reads.get(target, 0))
    bad, exact, total = [], 0, 0
    for r in rows:
        if not r["fortran_lower"]:
            continue
        total += 1
        s = "mpi_%s_" % r["fortran_lower"]
        exact += reads.get(s, 0) == r["fortran_nargs"]
        if reads.get(s, 0) > r["fortran_nargs"]:
            bad.append("%s: table says %d args, code reads argument %d"
                       % (s, r["fortran_nargs"], reads[s]))
        elif reads.get(s, 0) < r["fortran_nargs"]:
            sys.stderr.write("note: %s: table says %d args, code reads up to %d "
                             "(unused trailing args are harmless)\n"
                             % (s, r["fortran_nargs"], reads[s]))
    return bad, exact, total


def verify_f08(rows, f08_lib):
    """Informational: which mpi_<lower>_f08_ entry points read more than nargs arguments.

    The table's nargs describes mpi_<lower>_. With gfortran, Open MPI 4.1's mpi_f08 entry
    points take the same argument list (handles are one-integer derived types passed by
    reference; an absent optional ierror is passed as NULL), except that their CHARACTER
    arguments may be handled differently. Forwarding nargs pointer-sized arguments to them is
    safe as long as none reads more; this reports the ones that would.
    """
    syms = {l.split()[-1] for l in run(["nm", "-D", "--defined-only", f08_lib]).splitlines()
            if l.strip()}
    reads = args_read(f08_lib, syms)
    reads.pop("->", None)
    over = ["mpi_%s_f08_ reads argument %d > %d" % (r["fortran_lower"],
                                                    reads["mpi_%s_f08_" % r["fortran_lower"]],
                                                    r["fortran_nargs"])
            for r in rows if r["f08"]
            and reads.get("mpi_%s_f08_" % r["fortran_lower"], 0) > r["fortran_nargs"]]
    return over


# ------------------------------------------------------------------------------ compiling --

def compile_check(cc, cflags, text):
    """Compile every row against mpi.h, both as MPI_ and as PMPI_ prototypes."""
    src = ("#include <mpi.h>\n"
           "#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n"
           "#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace) \\\n"
           "    ret (*const chk_##name) params = MPI_##name; \\\n"
           "    ret (*const pchk_##name) params = PMPI_##name;\n"
           "#include \"table.def\"\n")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "table.def"), "w") as f:
            f.write(text)
        with open(os.path.join(d, "chk.c"), "w") as f:
            f.write(src)
        run(shlex.split(cc) + cflags + CPP_DEFINES +
            ["-std=c11", "-Werror", "-c", os.path.join(d, "chk.c"), "-o",
             os.path.join(d, "chk.o")])


# --------------------------------------------------------------------------------- output --

HEADER = """\
/*
 * mpi_functions.def: the MPI function table, the single source of truth for mpiwatch.
 *
 * GENERATED by proto/gen-function-table.py from the installed mpi.h
 *   {mpi}
 * and, for the Fortran columns, from the gfortran module mpi.mod and the symbols of
 * {libs}. Do not edit rows by hand: change the rules or the
 * override tables in the script and regenerate (`proto/gen-function-table.py --verify-abi`;
 * `--check` tells whether this file is stale). How to read and maintain it:
 * docs/function-table.md.
 *
 * One row per MPI function declared by mpi.h with both an MPI_ and a PMPI_ name, except
 * MPI_Wtime and MPI_Wtick. Rows are sorted by name; the row index is the function id.
 * {count} rows.
 *
 *   MW_FN(Name, RetType, KIND, (params), (args), BYTES, PEER, FORTRAN, TRACE)
 *
 *   Name     the C name without "MPI_".
 *   RetType  the C return type.
 *   KIND     SEND RECV COLL WAIT RMA IO QUERY SPECIAL OTHER. QUERY = cheap local query,
 *            counted without timing. SPECIAL = hand-written wrapper (Init, Init_thread,
 *            Finalize, Pcontrol, Comm_free, Comm_disconnect).
 *   params   the parameter list as written in mpi.h; names p0, p1, ... where mpi.h has none.
 *   args     the parameter names in order (varargs dropped: Pcontrol forwards only level).
 *   BYTES    a C expression over the parameters, evaluated after a successful call: the
 *            size of the payload this rank hands to MPI. MW_NOBYTES, MW_BYTES(count, type),
 *            MW_BYTES_IP(buf, count1, type1, count2, type2) (pair 2 when buf is MPI_IN_PLACE),
 *            MW_BYTES_V(counts, type, comm), MW_BYTES_W(counts, types, comm),
 *            MW_BYTES_N(count, type, comm), or a ?: over these for MPI_IN_PLACE.
 *            The macros must yield 0 without calling MPI when count is 0 or the type is
 *            MPI_DATATYPE_NULL (MPI ignores some count/type arguments; see the doc).
 *   PEER     MW_NOPEER, or MW_PEER(rank, comm) for SEND rows (the destination).
 *   FORTRAN  MW_NOFORTRAN, or MW_FORTRAN(lower, UPPER, nargs, f08, FBYTES, FPEER):
 *            mpi_<lower>_ / pmpi_<lower>_ exist in libmpi_mpifh; nargs is the ABI argument
 *            count of mpi_<lower>_ (every argument incl. ierror is a pointer, plus one
 *            hidden size_t length per CHARACTER argument, appended last); f08 is 1 when
 *            libmpi_usempif08 defines mpi_<lower>_f08_; FBYTES is MW_FNOBYTES or
 *            MW_FBYTES(i_count, i_type) and FPEER is MW_FNOPEER or MW_FPEER(i_rank, i_comm),
 *            with 0-based Fortran argument indexes.
 *   TRACE    MW_TR(TK, comm, peer, tag, handle): how the call is traced (docs/trace.md):
 *            TK is CALL (no message), SEND, ISEND, PSEND (persistent init), IRECV, PRECV,
 *            COLL, ICOLL (peer = root or MW_NOROOT), CCOLL (collective over comm without a
 *            message), CREATE, ICREATE, GCREATE, XCREATE, EXTERN (creates the communicator
 *            *handle from comm) or HAND (hand-written: pmpi-shim/trace_calls.c); handle is the
 *            request of the non-blocking and persistent kinds. Collective and creating kinds
 *            count the collective instances of comm.
 *
 * Consumers must compile with -DOMPI_OMIT_MPI1_COMPAT_DECLS=0 (or define it before
 * including mpi.h): Open MPI hides the prototypes of the functions removed in MPI-3.0
 * (MPI_Address, MPI_Type_struct, ...) from C11 code, but libmpi still exports them.
 */
"""


def generate(args):
    cflags = shlex.split(args.cflags or "")
    funcs = extract_c(args.cc, cflags)
    csyms = c_library_symbols(args.cc)
    unexported = [n for n in funcs if csyms is not None and "PMPI_" + n not in csyms]
    for n in unexported:
        del funcs[n]
    if args.names:
        print("\n".join(funcs))
        return 0

    modpath, fh_lib, f08_lib = find_fortran(args)
    procs, fh_syms, f08_syms = {}, set(), set()
    if args.no_fortran:
        pass
    elif (not modpath or not fh_lib) and args.fortran_optional:
        sys.stderr.write("gen-function-table: no Fortran interfaces (mpi.mod: %s, binding "
                         "library: %s): every row MW_NOFORTRAN\n" % (modpath, fh_lib))
    elif not modpath or not fh_lib:
        die("Fortran interfaces not found (mpi.mod: %s, libmpi_mpifh: %s); "
            "use --fortran-mod-dir/--fortran-lib-dir or --no-fortran" % (modpath, fh_lib))
    else:
        procs = parse_mod(modpath)
        fh_syms = dyn_symbols(fh_lib)
        f08_syms = dyn_symbols(f08_lib)

    rows, notes, overrides, nofortran, ruled = [], [], [], [], []
    for name, (ret, params) in funcs.items():
        ptext, atext = c_signature(name, ret, params)
        argnames = [a.strip() for a in atext[1:-1].split(",") if a.strip()]
        kind = kind_of(name)
        if kind not in KINDS:
            die("%s: bad kind %s" % (name, kind))
        b = bytes_of(name, kind, argnames)
        p = peer_of(name, kind, argnames)
        tcol = trace_of(name, kind, argnames)
        fcol = fortran_column(name, b, p, procs, fh_syms, f08_syms, notes, overrides, ret,
                              params, ruled)
        if fcol is None:
            nofortran.append(name)
            fcol = "MW_NOFORTRAN"
        m = re.match(r"MW_FORTRAN\((\w+), \w+, (\d+), (\d)", fcol)
        rows.append({"name": name, "kind": kind,
                     "fortran_lower": m.group(1) if m else None,
                     "fortran_nargs": int(m.group(2)) if m else 0,
                     "f08": int(m.group(3)) if m else 0,
                     "trace": tcol.split("(")[1].split(",")[0],
                     "text": "MW_FN(%s, %s, %s, %s, %s, %s, %s, %s, %s)"
                             % (name, ret, kind, ptext, atext, b, p, fcol, tcol)})

    for n in (KIND_OVERRIDES.keys() | BYTES_OVERRIDES.keys() | PEER_OVERRIDES.keys()
              | FORTRAN_ARITY_OVERRIDES.keys() | FORTRAN_DISABLE.keys()) - funcs.keys():
        sys.stderr.write("warning: override for %s, which mpi.h does not declare\n" % n)

    mpi_h = run(shlex.split(args.cc) + cflags + ["-E", "-x", "c", "-"],
                input="#include <mpi.h>\n")
    m = re.search(r'^# \d+ "([^"]*mpi\.h)"', mpi_h, re.M)
    libs = " / ".join(re.sub(r"\.so.*$", "", os.path.basename(x)) for x in (fh_lib, f08_lib)
                      if x) or "libmpi_mpifh / libmpi_usempif08"
    text = HEADER.format(mpi=m.group(1) if m else "mpi.h", count=len(rows), libs=libs) + \
        "\n".join(r["text"] for r in rows) + "\n"

    if not args.no_compile_check:
        compile_check(args.cc, cflags, text)

    if args.verify_abi:
        if not fh_lib:
            die("--verify-abi needs libmpi_mpifh")
        bad, exact, total = verify_abi(rows, fh_lib)
        if bad:
            die("Fortran arity disagrees with the library code:\n  " + "\n  ".join(bad))
        sys.stderr.write("verify-abi: no Fortran implementation reads past its table arity; "
                         "%d of %d read exactly their last argument\n" % (exact, total))
        if f08_lib:
            over = verify_f08(rows, f08_lib)
            sys.stderr.write("verify-abi: f08 entry points reading past nargs: %s\n"
                             % ("; ".join(over) if over else "none"))

    kinds = Counter(r["kind"] for r in rows)
    nf = sum(1 for r in rows if r["fortran_lower"])
    n08 = sum(r["f08"] for r in rows)
    tkinds = Counter(r["trace"] for r in rows)
    summary = ("%d rows; %s; %d with Fortran (%d with f08); no Fortran binding: %d; "
               "Fortran left out: %d; arity overrides: %s; traced as %s"
               % (len(rows), ", ".join("%s %d" % (k, kinds[k]) for k in KINDS), nf, n08,
                  len(nofortran), len(notes),
                  ", ".join(overrides + (["C arity + 1: %d" % len(ruled)] if ruled else []))
                  or "none",
                  ", ".join("%s %d" % (k, tkinds[k]) for k in TRACE_KINDS)))

    if args.check:
        try:
            with open(args.output) as f:
                old = f.read()
        except OSError:
            old = ""
        if old != text:
            sys.stderr.write("%s is stale: run proto/gen-function-table.py\n" % args.output)
            return 1
        sys.stderr.write("%s is up to date (%s)\n" % (args.output, summary))
        return 0

    with open(args.output, "w") as f:
        f.write(text)
    sys.stderr.write("wrote %s: %s\n" % (args.output, summary))
    if unexported:
        sys.stderr.write("declared in mpi.h but not exported by the C MPI library, left out: "
                         "%s\n" % " ".join(unexported))
    if getattr(extract_c, "mpix", None):
        sys.stderr.write("MPIX_ left out: %d (%s)\n" % (len(extract_c.mpix),
                                                      " ".join(extract_c.mpix)))
    if args.verbose:
        sys.stderr.write("no Fortran binding in the mpif.h library: %s\n" % " ".join(nofortran))
        for n, why in notes:
            sys.stderr.write("Fortran left out: %s: %s\n" % (n, why))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cc", "--mpicc", default=os.environ.get("MPICC", "mpicc"),
                    help="MPI C compiler or plain compiler (default: $MPICC or mpicc)")
    ap.add_argument("--cflags", default="", help="extra flags, e.g. -I/path/to/mpi/include")
    ap.add_argument("--fc", "--mpifort", default=os.environ.get("MPIFC"),
                    help="MPI Fortran wrapper, asked where the bindings are (default: $MPIFC, "
                         "else the one beside --cc: mpicc.mpich -> mpif90.mpich)")
    ap.add_argument("--fortran-mod-dir", help="directory holding the gfortran mpi.mod")
    ap.add_argument("--fortran-lib-dir", help="directory holding libmpi_mpifh.so")
    ap.add_argument("--no-fortran", action="store_true", help="emit MW_NOFORTRAN everywhere")
    ap.add_argument("--fortran-optional", action="store_true",
                    help="no Fortran interfaces found: MW_NOFORTRAN everywhere, not an error")
    ap.add_argument("-o", "--output", "--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if the output file differs")
    ap.add_argument("--names", action="store_true",
                    help="print the C names (without MPI_) the table must hold, then exit")
    ap.add_argument("--verify-abi", action="store_true",
                    help="cross-check Fortran arities against objdump of libmpi_mpifh")
    ap.add_argument("--no-compile-check", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if not args.fc:
        # the Fortran wrapper of the same MPI as --cc, never another MPI's default mpif90
        words = shlex.split(args.cc)
        guess = os.path.join(os.path.dirname(words[0]),
                             os.path.basename(words[0]).replace("mpicc", "mpif90"))
        args.fc = guess if guess != words[0] and shutil.which(guess) else args.cc
    return generate(args)


if __name__ == "__main__":
    sys.exit(main())
