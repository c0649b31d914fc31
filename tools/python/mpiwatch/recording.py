"""Reading a recording (``FILE.mpiw``, docs/recording.md) into pandas tables.

The file is read once, front to back, when a :class:`Recording` is made: frames are checked
(tag, length within the format's caps, CRC-32 of the payload) before their payload is decoded,
chunked records are reassembled up to the format's 64 MiB, compressed frames (format version 3)
are decompressed with the ``zstandard`` module (Debian python3-zstandard; the content size a
frame declares must be within the frame cap and be what it decompresses to), runs of samples the
collector dropped (holes listed in the index frames, docs/recording.md "Tiers") are stepped over,
and the records that are outputs of
the collector (merged windows, job descriptions, steps, events) are turned into plain rows.
Received frames (the ranks' messages, most of the file) are checked and skipped without being
decoded.  Tables are built from those rows on first use and cached.

Nothing in the file is trusted: a damaged file raises :class:`RecordingError` naming the offset
and the reason (a torn frame, a CRC mismatch, a length over the cap, a payload that does not
decode), unless ``allow_truncated=True``, which reads everything before the damage (as the C
tools do with the recording of a killed collector) and says why it stopped in
:attr:`Recording.damage`.  A window whose parallel arrays disagree is left out whole and
counted (:attr:`Recording.refused`), as ``mpiwatch-export`` does (docs/export.md, "Malformed
windows").
"""

import json
import mmap
import os
import shutil
import struct
import subprocess
import warnings
import zlib

import numpy as np
import pandas as pd

from ._pb import pb
from .functions import KIND_NAMES, build_table, name_of

MAGIC = b"MPIWATCH"
TAG_RECORD = 0x4652574D  # "MWRF"
TAG_INDEX = 0x5849574D  # "MWIX"
TAG_CHUNK = 0x4352574D  # "MWRC"
TAG_ZRECORD = 0x465A574D  # "MWZF": TAG_RECORD with a zstd-compressed payload (version 3)
TAG_ZCHUNK = 0x435A574D  # "MWZC": TAG_CHUNK with a zstd-compressed payload (version 3)
MAX_MESSAGE = 8 << 20  # MW_MAX_MESSAGE_BYTES
MAX_FRAME = MAX_MESSAGE + (1 << 20)  # MW_REC_MAX_FRAME
MAX_RECORD = 64 << 20  # MW_REC_MAX_RECORD
INDEX_KEY = 16
MAX_SUBSLOTS = 64
MAX_DURATION_BINS = 192
PERMILLE_MISSING = 65535

# Record body field numbers (proto/mpiwatch.proto, message Record).
_F_MESSAGE = 10


class RecordingError(Exception):
    """The file is not a recording, or is damaged; ``offset`` is where (bytes), or None."""

    def __init__(self, path, offset, reason, hint=""):
        where = "" if offset is None else " at offset %d" % offset
        super().__init__("%s: %s%s%s" % (path, reason, where, hint))
        self.path = path
        self.offset = offset
        self.reason = reason


def _varint(buf, pos, end):
    """(value, next position) of the varint at pos, or (None, end) when it is cut or too long."""
    shift = 0
    value = 0
    while pos < end and shift < 64:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
    return None, end


def _body_field(payload):
    """The field number of the Record's body (oneof), without decoding: the writer puts
    mono_ns, real_ns, then the body, but any order is read.  0 when none was found."""
    pos, end = 0, len(payload)
    while pos < end:
        key, pos = _varint(payload, pos, end)
        if key is None:
            return 0
        field, wire = key >> 3, key & 7
        if field >= 10 and field != 20:
            return field
        if wire == 0:
            _, pos = _varint(payload, pos, end)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            n, pos = _varint(payload, pos, end)
            if n is None:
                return 0
            pos += n
        else:
            return 0
    return 0


def _window_refusal(w):
    """Why a merged window is refused whole (mw_window_check's policy), or None."""
    if w.window_ns == 0 or not 1 <= w.subslots <= MAX_SUBSLOTS or \
            not 1 <= w.duration_bins <= MAX_DURATION_BINS:
        return "grid"
    groups = (
        (w.occ_fn, w.occ_sub, w.occ_ns),
        (w.density_fn, w.density_sub, w.density_bin, w.density_end, w.density_count),
        (w.pair_src, w.pair_dst, w.pair_messages, w.pair_bytes),
        (w.fpair_src, w.fpair_dst, w.fpair_fn, w.fpair_messages, w.fpair_bytes),
        (w.rf_rank, w.rf_fn, w.rf_count, w.rf_ns, w.rf_bytes),
        (w.rr_rank, w.rr_region, w.rr_count, w.rr_incl_ns, w.rr_excl_ns, w.rr_mpi_ns),
    )
    for g in groups:
        if len({len(a) for a in g}) != 1:
            return "parallel arrays of different lengths"
    return None


class Job:
    """A job as the recording describes it (the last ``JobInfo`` recorded for it).

    Attributes: ``name``, ``program``, ``mpi_library``, ``size`` (ranks), ``window_ns`` (the
    first window length), ``subslots``, ``duration_bins``, ``hosts``, ``state`` (``running``,
    or how it ended), ``grid`` (list of ``{first, start_ns, window_ns}``),
    ``function_names``/``function_kinds`` (by id - 1: from the recording when it names them,
    else this build's table; ``function_names_source`` says which), ``ranks`` (DataFrame of
    the ranks that said hello, with their host and placement), ``regions`` and ``sites``
    (DataFrames of the job-wide tables), ``info`` (the ``JobInfo`` message itself).
    """

    def __init__(self, info):
        self.info = info
        self.name = info.job
        self.program = info.program
        self.mpi_library = info.mpi_library
        self.size = info.size
        self.window_ns = info.window_ns
        self.subslots = info.subslots
        self.duration_bins = info.duration_bins
        self.hosts = list(info.hosts)
        self.state = info.state
        self.function_table_hash = info.function_table_hash
        self.grid = [{"first": g.first, "start_ns": g.start_ns, "window_ns": g.window_ns}
                     for g in info.grid]
        if len(info.function_names):
            self.function_names = list(info.function_names)
            kinds = list(info.function_kinds)
            self.function_kinds = [KIND_NAMES[k] if k < len(KIND_NAMES) else "other"
                                   for k in kinds] + ["other"] * (len(self.function_names) -
                                                                  len(kinds))
            self.function_names_source = "recording"
        else:
            names, kinds = build_table()
            self.function_names = list(names)
            self.function_kinds = [KIND_NAMES[k] for k in kinds]
            self.function_names_source = "table"
        nodes = [n.node for n in info.nodes]
        rows = []
        for r in info.ranks:
            rows.append((r.rank, self.hosts[r.host] if r.host < len(self.hosts) else "",
                         nodes[r.node] if r.node < len(nodes) else "", r.pid, r.pu, r.core,
                         r.l3, r.package, r.numa, r.bound, list(r.pus), r.clock_error_ns))
        self.ranks = pd.DataFrame(rows, columns=["rank", "host", "node", "pid", "pu", "core",
                                                 "l3", "package", "numa", "bound", "pus",
                                                 "clock_error_ns"])
        self.regions = pd.DataFrame([(g.id, g.name, g.source) for g in info.regions],
                                    columns=["region", "name", "source"])
        self.sites = pd.DataFrame([(s.id, s.module, s.offset, s.function, s.file, s.line,
                                    s.first_rank) for s in info.sites],
                                  columns=["site", "module", "offset", "function", "file", "line",
                                           "first_rank"])

    def function(self, fn):
        """The name of function id ``fn`` (``fn#ID`` when the job does not name it)."""
        return name_of(self.function_names, fn)

    def __repr__(self):
        return "Job(%r, program=%r, ranks=%d, state=%r)" % (self.name, self.program, self.size,
                                                            self.state)


class Tables:
    """The tables of a stream of collector outputs (windows, job descriptions, steps, events),
    shared by :class:`Recording` (a file) and :class:`mpiwatch.feed.Follower` (a live feed).

    Every table has ``job`` (the job's name), and the window tables ``grid_index`` (the window
    index on the global grid, as in the file), ``window`` (job-relative: 0 for the job's first
    window seen) and ``t_s`` (seconds from the start of that first window to this one's).
    """

    def __init__(self):
        self.refused = 0  # windows left out whole (malformed)
        self.jobs = []  # every Job, in order of first description
        self._jobs = {}
        self._job_first = {}  # job name -> (first grid index, its start_ns)
        self._rows = {k: [] for k in ("windows", "functions", "ranks", "rank_mpi", "pairs",
                                      "fpairs", "regions", "sites", "traces", "steps",
                                      "step_functions", "events", "lateness", "rank_sums")}
        self._cache = {}
        self._current = ""  # the name of the job the records are about

    def _refuse(self, w, why):
        self.refused += 1

    def _event(self, e, mono_ns=0):
        self._rows["events"].append((e.job, e.kind, e.detail, e.real_ns, mono_ns))

    def _job(self, info):
        job = Job(info)
        if info.job not in self._jobs:
            self.jobs.append(job)
        else:
            self.jobs[self.jobs.index(self._jobs[info.job])] = job
        self._jobs[info.job] = job
        self._current = info.job

    def _window(self, w, mono_ns=0, real_ns=0):
        why = _window_refusal(w)
        if why is not None:
            self._refuse(w, why)
            return
        job = self._current
        start = w.start_ns or w.index * w.window_ns
        first = self._job_first.setdefault(job, (w.index, start))
        win = w.index - first[0]
        t = (start - first[1]) / 1e9
        key = (job, w.index, win, t)
        rows = self._rows
        reporting = w.ranks_reporting
        denom = w.window_ns * reporting
        rows["windows"].append(key + (
            start, w.window_ns, w.subslots, reporting, w.ranks_missing, w.mpi_time_ns,
            w.mpi_time_ns / denom if denom else np.nan, w.occ_total_ns,
            w.occ_total_ns / denom if denom else np.nan, w.records_dropped, w.samples_dropped,
            w.calls_late, w.overflow, w.closed_real_ns, w.traced_ranks, w.trace_left_out,
            w.rank_detail_left_out, w.regions_dropped, w.sites_dropped, mono_ns, real_ns))
        occ = {}
        for fn, ns in zip(w.occ_fn, w.occ_ns):
            occ[fn] = occ.get(fn, 0) + ns
        seen = set()
        for s in w.functions:
            if s.fn == 0 or s.fn in seen:
                continue  # entries no collector writes: left out (the window policy)
            seen.add(s.fn)
            o = occ.get(s.fn, 0)
            rows["functions"].append(key + (
                s.fn, s.count, s.total_ns, s.min_ns, s.max_ns, s.bytes, o,
                o / denom if denom else np.nan, s.rank_sd_ns, s.rank_max, s.rank_max_ns))
        for fn, o in occ.items():
            if fn not in seen and fn != 0:  # occupancy of a call not ended yet: no calls
                rows["functions"].append(key + (fn, 0, 0, 0, 0, 0, o,
                                                o / denom if denom else np.nan, 0.0, 0, 0))
        # The per-rank and pair tables are large (ranks x functions per window): kept as one
        # block of arrays per window, made into columns at once (_frame).
        u64 = np.int64  # signed: every figure is capped far below 2^63 (collector.md)
        if len(w.rf_rank):
            rows["ranks"].append((key, [np.array(w.rf_rank, np.int64), np.array(w.rf_fn, np.int64),
                                        np.array(w.rf_count, u64), np.array(w.rf_ns, u64),
                                        np.array(w.rf_bytes, u64)]))
        if len(w.rank_mpi_permille):
            p = np.array(w.rank_mpi_permille, np.float64)
            p[p == PERMILLE_MISSING] = np.nan
            rows["rank_mpi"].append((key, [np.arange(len(p), dtype=np.int64), p / 1000.0]))
        if len(w.pair_src):
            rows["pairs"].append((key, [np.array(w.pair_src, np.int64),
                                        np.array(w.pair_dst, np.int64),
                                        np.array(w.pair_messages, u64),
                                        np.array(w.pair_bytes, u64)]))
        if len(w.fpair_src):
            rows["fpairs"].append((key, [np.array(w.fpair_src, np.int64),
                                         np.array(w.fpair_dst, np.int64),
                                         np.array(w.fpair_fn, np.int64),
                                         np.array(w.fpair_messages, u64),
                                         np.array(w.fpair_bytes, u64)]))
        for g in w.regions:
            rows["regions"].append(key + (g.region, g.count, g.incl_ns, g.excl_ns, g.mpi_ns,
                                          g.ranks))
        for s in w.sites:
            rows["sites"].append(key + (s.site, s.fn, s.count, s.ns, s.bytes, s.max_ns, s.ranks,
                                        s.top_rank, s.top_rank_ns))
        for t in w.traces:
            tr = t.trace
            rows["traces"].append(key + (t.rank, tr.state, tr.reason, tr.left_out, tr.count,
                                         tr.encoding, tr.raw_bytes, len(tr.records), tr.threads,
                                         tr.flags, tr.capture, t.frame_offset))

    def _step(self, s):
        job = self._current
        self._rows["steps"].append((job, s.step, s.start_ns, s.end_ns,
                                    (s.end_ns - s.start_ns) if s.end_ns >= s.start_ns else 0,
                                    s.ranks, s.mpi_time_ns, s.folded))
        for f in s.functions:
            self._rows["step_functions"].append((job, s.step, f.fn, f.count, f.total_ns,
                                                 f.bytes))

    def _lateness(self, lat):
        for s in lat.windows:
            self._rows["lateness"].append((lat.job, s.key, s.events, s.lateness_max_ns,
                                           s.diff_max_ns, s.lost_ns, s.lateness_rank,
                                           s.diff_rank, s.traced_ranks, s.lateness_share))

    # ---- tables --------------------------------------------------------------------------

    _KEY = ["job", "grid_index", "window", "t_s"]

    def _windows_columns(self):
        return self._KEY + [
            "start_ns", "window_ns", "subslots", "ranks_reporting", "ranks_missing",
            "mpi_time_ns", "mpi_fraction", "occ_total_ns", "occ_fraction", "records_dropped",
            "samples_dropped", "calls_late", "overflow", "closed_real_ns", "traced_ranks",
            "trace_left_out", "rank_detail_left_out", "regions_dropped", "sites_dropped",
            "mono_ns", "real_ns"]

    def _functions_columns(self):
        return self._KEY + ["fn", "calls", "time_ns", "min_ns", "max_ns", "bytes", "occ_ns",
                            "fraction", "rank_sd_ns", "rank_max", "rank_max_ns"]

    def _names(self, df, col="fn", out="function"):
        """Adds the function name of id column ``col`` as ``out``, by each row's job."""
        names = np.empty(len(df), dtype=object)
        for job in pd.unique(df["job"]):
            j = self._jobs.get(job)
            table = j.function_names if j else build_table()[0]
            fns = df[col].to_numpy(dtype=np.int64)
            rows = (df["job"] == job).to_numpy()
            lookup = np.array([None] + list(table), dtype=object)
            ok = rows & (fns > 0) & (fns <= len(table))
            names[ok] = lookup[fns[ok]]
            for i in np.flatnonzero(rows & ~ok):
                names[i] = name_of(table, int(fns[i]))
        df.insert(df.columns.get_loc(col) + 1, out, names)
        return df

    _BLOCKS = ("ranks", "rank_mpi", "pairs", "fpairs")

    def _frame(self, name, columns, start=0):
        """The rows of table ``name`` from entry ``start`` on as a DataFrame."""
        rows = self._rows[name][start:]
        if name not in self._BLOCKS:
            return pd.DataFrame(rows, columns=columns)
        nkey = len(self._KEY)
        if not rows:
            return pd.DataFrame({c: pd.Series(dtype=object if c == "job" else np.int64)
                                 for c in columns})
        counts = np.array([len(cols[0]) for _, cols in rows])
        data = {}
        for i, c in enumerate(columns[:nkey]):
            data[c] = np.repeat(np.array([k[i] for k, _ in rows],
                                         dtype=object if c == "job" else None), counts)
        for i, c in enumerate(columns[nkey:]):
            data[c] = np.concatenate([cols[i] for _, cols in rows])
        return pd.DataFrame(data, columns=columns)

    def _table(self, name, columns, fn_col=None):
        if name not in self._cache:
            df = self._frame(name, columns)
            if fn_col:
                df = self._names(df, fn_col)
            self._cache[name] = df
        return self._cache[name].copy()

    @property
    def job(self):
        """The recording's (last) :class:`Job`, or None when it describes none."""
        return self.jobs[-1] if self.jobs else None

    def windows(self):
        """One row per merged window: its place (``grid_index``, ``window``, ``t_s``,
        ``start_ns``, ``window_ns``), the ranks that reported and were missing, time in MPI
        (``mpi_time_ns`` of the calls that ended in it, ``mpi_fraction`` over window x
        ranks; ``occ_*`` by occupancy), losses, and when it closed."""
        return self._table("windows", self._windows_columns())

    def functions(self):
        """One row per window and function (windows x functions): ``calls``, ``time_ns``,
        ``min_ns``, ``max_ns``, ``bytes`` of the calls that ended in the window on all ranks,
        ``occ_ns`` and ``fraction`` (time inside it, over window x ranks), and the spread
        across ranks (``rank_sd_ns``, ``rank_max``, ``rank_max_ns``)."""
        return self._table("functions", self._functions_columns(), "fn")

    def totals(self):
        """Per function over the whole recording (the summary JSON's ``functions``):
        ``calls``, ``time_ns``, ``bytes``, sorted by time."""
        f = self.functions()
        if f.empty:
            return pd.DataFrame(columns=["job", "function", "calls", "time_ns", "bytes"])
        t = f.groupby(["job", "function"], as_index=False)[["calls", "time_ns", "bytes"]].sum()
        return t[t["calls"] > 0].sort_values("time_ns", ascending=False, ignore_index=True)

    def ranks(self):
        """Per window, rank and function (``Window.rf_*``, present unless the collector ran
        with ``--rank-detail off`` or left entries out: ``windows().rank_detail_left_out``):
        ``calls``, ``time_ns``, ``bytes``."""
        return self._table("ranks", self._KEY + ["rank", "fn", "calls", "time_ns", "bytes"],
                           "fn")

    def rank_sums(self):
        """The coarse tier (docs/recording.md "Tiers"): per rank and function, ``calls``,
        ``time_ns``, ``bytes`` summed exactly over the windows ``first_window`` to
        ``last_window`` (``windows`` of them), kept for the whole run where ``ranks()`` has
        only the recent span; empty for a recording without the coarse tier."""
        return self._table("rank_sums", ["job", "first_window", "last_window", "windows",
                                         "rank", "fn", "calls", "time_ns", "bytes"], "fn")

    def rank_mpi(self):
        """Per window and rank: ``mpi_fraction``, the rank's time inside MPI by occupancy
        over the window (summed over its threads; NaN for a rank whose sample is not in it)."""
        return self._table("rank_mpi", self._KEY + ["rank", "mpi_fraction"])

    def pairs(self, by_function=False):
        """Point-to-point traffic per window: ``src``, ``dst`` (world ranks), ``messages``,
        ``bytes``; with ``by_function=True`` per sending function too (``Window.fpair_*``)."""
        if by_function:
            return self._table("fpairs", self._KEY + ["src", "dst", "fn", "messages", "bytes"],
                               "fn")
        return self._table("pairs", self._KEY + ["src", "dst", "messages", "bytes"])

    def regions(self):
        """Per window and code region (docs/regions.md): ``count``, ``incl_ns``, ``excl_ns``,
        ``mpi_ns``, ``ranks``, with the region's ``name``."""
        if "regions_named" not in self._cache:
            df = pd.DataFrame(self._rows["regions"], columns=self._KEY + [
                "region", "count", "incl_ns", "excl_ns", "mpi_ns", "ranks"])
            names = []
            for job, reg in zip(df["job"], df["region"]):
                j = self._jobs.get(job)
                info = j.info.regions if j else []
                names.append(info[reg - 1].name if 0 < reg <= len(info) else "")
            df.insert(df.columns.get_loc("region") + 1, "name", names)
            self._cache["regions_named"] = df
        return self._cache["regions_named"].copy()

    def sites(self):
        """Per window and (call site, MPI function) (docs/callsites.md): ``count``, ``ns``,
        ``bytes``, ``max_ns``, ``ranks``, ``top_rank``, ``top_rank_ns``, with the site's
        source ``file``, ``line`` and enclosing ``caller``."""
        if "sites_named" not in self._cache:
            df = self._names(pd.DataFrame(self._rows["sites"], columns=self._KEY + [
                "site", "fn", "count", "ns", "bytes", "max_ns", "ranks", "top_rank",
                "top_rank_ns"]))
            files, lines, callers = [], [], []
            for job, site in zip(df["job"], df["site"]):
                j = self._jobs.get(job)
                info = j.info.sites if j else []
                s = info[site - 1] if 0 < site <= len(info) else None
                files.append(s.file if s else "")
                lines.append(s.line if s else 0)
                callers.append(s.function if s else "")
            df["file"], df["line"], df["caller"] = files, lines, callers
            self._cache["sites_named"] = df
        return self._cache["sites_named"].copy()

    def steps(self):
        """One row per time step of the job (docs/steps.md): ``start_ns``, ``end_ns``,
        ``duration_ns``, ``ranks`` that ended it, ``mpi_time_ns``, ``folded``."""
        return self._table("steps", ["job", "step", "start_ns", "end_ns", "duration_ns", "ranks",
                                     "mpi_time_ns", "folded"])

    def step_functions(self):
        """Per step and function: ``calls``, ``time_ns``, ``bytes``."""
        return self._table("step_functions", ["job", "step", "fn", "calls", "time_ns", "bytes"],
                           "fn")

    def events(self):
        """The job events (``JobEvent``): ``kind`` (job_start, job_end, rank_dead, rules,
        steering, window changes, ...), ``detail``, ``real_ns`` and ``time`` (UTC)."""
        df = self._table("events", ["job", "kind", "detail", "real_ns", "mono_ns"])
        df["time"] = pd.to_datetime(df["real_ns"], unit="ns", utc=True)
        return df

    def lateness(self):
        """The collector's online lateness summaries per window (docs/lateness.md)."""
        return self._table("lateness", ["job", "grid_index", "events", "lateness_max_ns",
                                        "diff_max_ns", "lost_ns", "lateness_rank", "diff_rank",
                                        "traced_ranks", "lateness_share"])

    def traces(self):
        """Per window and rank that said something about per-call tracing (docs/trace.md):
        ``state`` (1 exact, 2 summary only), ``reason``, ``left_out``, ``count`` (records),
        ``encoding``, ``raw_bytes``, ``inline_bytes`` (records held in the window),
        ``threads``, ``flags``, ``capture``, ``frame_offset`` (records stored once, in the
        received frame at that offset)."""
        return self._table("traces", self._KEY + [
            "rank", "state", "reason", "left_out", "count", "encoding", "raw_bytes",
            "inline_bytes", "threads", "flags", "capture", "frame_offset"])


class Recording(Tables):
    """A recording read into tables (the methods of :class:`Tables`).

    >>> r = Recording("run.mpiw")
    >>> r.functions()          # one row per window and function
    >>> r.windows(), r.ranks(), r.pairs(), r.steps(), r.events(), r.job
    """

    def __init__(self, path, allow_truncated=False):
        super().__init__()
        self.path = os.fspath(path)
        self.allow_truncated = allow_truncated
        self.damage = None  # why reading stopped early (allow_truncated), else None
        self.version = None
        self.start = None  # RecordStart as a dict
        self.messages = 0  # received frames (checked, not decoded)
        self.records = 0
        self.holes = None  # runs of dropped samples: [(start, end, first window, last window)]
        self._read()

    def _refuse(self, w, why):
        self.refused += 1
        warnings.warn("%s: window %d refused (%s), left out" % (self.path, w.index, why))

    # ---- reading -------------------------------------------------------------------------

    def _fail(self, offset, reason):
        if not self.allow_truncated:
            raise RecordingError(self.path, offset, reason, " (Recording(..., "
                                 "allow_truncated=True) reads what precedes it)")
        self.damage = "%s at offset %d" % (reason, offset)
        warnings.warn("%s: %s: read %d records before it" % (self.path, self.damage,
                                                               self.records))

    def _read(self):
        try:
            f = open(self.path, "rb")
        except OSError as e:
            raise RecordingError(self.path, None, e.strerror or str(e)) from None
        with f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(32)
            if len(head) < 16 or head[:8] != MAGIC:
                raise RecordingError(self.path, 0, "not an mpiwatch recording (no MPIWATCH "
                                     "header)")
            version, hlen = struct.unpack_from("<II", head, 8)
            if version not in (1, 2, 3):
                raise RecordingError(self.path, 8, "unsupported format version %d (this reader "
                                     "reads versions 1 to 3)" % version)
            lo = 16 if version == 1 else 32
            if not lo <= hlen <= 4096 or hlen > size:
                raise RecordingError(self.path, 12, "bad header length %d" % hlen)
            self.version = version
            f.seek(hlen)
            pos = hlen
            chunks = []
            chunk_at = 0
            chunk_len = 0
            zipped = (TAG_ZRECORD, TAG_ZCHUNK) if version >= 3 else ()
            while pos < size:
                hdr = f.read(12)
                tag, n, crc = struct.unpack("<III", hdr) if len(hdr) == 12 else (0, 0, 0)
                why = None
                payload = b""
                if len(hdr) < 12:
                    why = "torn frame header (%d bytes left)" % (size - pos)
                elif tag not in (TAG_RECORD, TAG_INDEX, TAG_CHUNK) + zipped:
                    why = "bad frame tag 0x%08x" % tag
                elif n > MAX_FRAME:
                    why = "frame length %d over the cap %d" % (n, MAX_FRAME)
                elif n > size - pos - 12:
                    why = "torn frame (%d payload bytes claimed, %d left)" % (n, size - pos - 12)
                else:
                    payload = f.read(n)
                    if len(payload) != n:
                        why = "torn frame (file shrank while reading)"
                    elif zlib.crc32(payload) & 0xFFFFFFFF != crc:
                        why = "CRC mismatch (stored 0x%08x, computed 0x%08x)" % (
                            crc, zlib.crc32(payload) & 0xFFFFFFFF)
                    elif tag in zipped:
                        # Damaged like a torn frame when it does not decompress (the C reader's
                        # rule, mw_recording.c): inside a listed hole, reading goes on after it.
                        payload, why = self._unzip(pos, payload)
                        tag = TAG_RECORD if tag == TAG_ZRECORD else TAG_CHUNK
                if why is not None:
                    # Samples the collector dropped (format 3): the index lists where they were.
                    hole = self._hole_at(f, pos, size, head) if zipped and not chunks else None
                    if hole is None:
                        self._fail(pos, why)
                        return
                    pos = hole
                    f.seek(pos)
                    continue
                at = pos
                pos += 12 + n  # the frame on disk; n is its content from here on
                n = len(payload)
                if tag == TAG_CHUNK:
                    if not chunks:
                        chunk_at = at
                    chunks.append(payload)
                    chunk_len += n
                    if chunk_len > MAX_RECORD:
                        self._fail(chunk_at, "chunked record over %d bytes" % MAX_RECORD)
                        return
                    continue
                if chunks:
                    if tag != TAG_RECORD or chunk_len + n > MAX_RECORD:
                        self._fail(chunk_at, "chunked record cut or over %d bytes" % MAX_RECORD)
                        return
                    chunks.append(payload)
                    payload = b"".join(chunks)
                    at = chunk_at
                    chunks, chunk_len = [], 0
                if tag == TAG_INDEX:
                    if version >= 2 and n < INDEX_KEY:
                        self._fail(at, "index frame shorter than its key")
                        return
                    self.records += 1
                    continue  # the index only helps readers that seek
                if not self._record(at, payload):
                    return
            if chunks:
                self._fail(chunk_at, "chunked record cut at the end of the file")

    def _unzip(self, at, payload):
        """(the payload of a compressed frame, None), or (b"", why) when it is damaged."""
        try:
            import zstandard
        except ImportError:
            raise RecordingError(self.path, at, "compressed frames (format version 3) need the "
                                 "zstandard module (Debian: python3-zstandard)") from None
        try:
            want = zstandard.frame_content_size(payload)
            if want < 0 or want > MAX_FRAME:
                raise ValueError("declared size %d" % want)
            out = zstandard.ZstdDecompressor().decompress(payload, max_output_size=want)
            if len(out) != want:
                raise ValueError("%d bytes, not the %d declared" % (len(out), want))
        except Exception as e:  # ZstdError, and whatever a crafted payload provokes
            return b"", "compressed frame does not decompress (%s)" % e
        return out, None

    def _hole_at(self, f, pos, size, head):
        """Where reading goes on when `pos` is inside a run of samples the collector dropped
        (listed in the index frames, found by their tag and the file's key), else None."""
        if self.holes is None:
            self.holes = []
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            key = head[16:16 + INDEX_KEY]
            i = data.find(b"MWIX")
            while i >= 0:
                if data[i + 12:i + 12 + INDEX_KEY] == key:
                    n, crc = struct.unpack_from("<II", data, i + 4)
                    body = data[i + 12:i + 12 + n]
                    if len(body) == n and zlib.crc32(body) & 0xFFFFFFFF == crc:
                        try:
                            ix = pb.Record.FromString(body[INDEX_KEY:]).index
                        except Exception:
                            ix = None
                        for h in zip(ix.hole_start, ix.hole_end, ix.hole_window_min,
                                     ix.hole_window_max) if ix is not None else ():
                            if h[0] < h[1] <= i:
                                self.holes.append(tuple(h))
                i = data.find(b"MWIX", i + 1)
            data.close()
            self.holes.sort()
        for start, end, _, _ in self.holes:
            if start <= pos < end:
                return end
        return None

    def _record(self, at, payload):
        self.records += 1
        if _body_field(payload) == _F_MESSAGE:
            self.messages += 1
            return True
        try:
            rec = pb.Record.FromString(payload)
        except Exception as e:  # DecodeError, and whatever a crafted payload provokes
            self._fail(at, "record does not decode (%s)" % e)
            return False
        body = rec.WhichOneof("body")
        full, self._full = getattr(self, "_full", None), None
        if body == "window":
            self._window(rec.window, rec.mono_ns, rec.real_ns)
            self._full = rec.window.index
        elif body == "window_lean":
            # The coarse tier's copy of a window (docs/recording.md "Tiers"): skipped right
            # after the full window, taken where the full one was dropped with the samples.
            if full != rec.window_lean.index:
                self.lean_windows = getattr(self, "lean_windows", 0) + 1
                self._window(rec.window_lean, rec.mono_ns, rec.real_ns)
        elif body == "ranks":
            # The coarse tier's per-rank sums over windows (docs/recording.md "Tiers").
            rk, s = rec.ranks, rec.ranks.sums
            for row in zip(s.rf_rank, s.rf_fn, s.rf_count, s.rf_ns, s.rf_bytes):
                self._rows["rank_sums"].append((self._current, rk.first_window, rk.last_window,
                                                rk.windows) + tuple(row))
        elif body == "job":
            self._job(rec.job)
        elif body == "step":
            self._step(rec.step)
        elif body == "event":
            self._event(rec.event, rec.mono_ns)
        elif body == "lateness":
            self._lateness(rec.lateness)
        elif body == "start":
            s = rec.start
            self.start = {"collector_version": s.collector_version,
                          "proto_version": s.proto_version,
                          "function_table_hash": s.function_table_hash,
                          "lateness_ms": s.lateness_ms,
                          "silence_timeout_ms": s.silence_timeout_ms,
                          "real_ns": rec.real_ns, "mono_ns": rec.mono_ns}
        return True

    def traced_calls(self, exporter=None):
        """Every traced record of the recording's exact traces, one row each (the keys of
        ``mpiwatch-export --format trace``, docs/export.md), matched sends and receives
        sharing ``match``.  The records are a compressed column format (proto/mw_trace.c):
        they are decoded, checked and matched by ``mpiwatch-export`` (``exporter``: its path;
        by default ``$MPIWATCH_EXPORT``, else ``mpiwatch-export`` on PATH), not by Python."""
        exe = exporter or os.environ.get("MPIWATCH_EXPORT") or shutil.which("mpiwatch-export")
        if not exe:
            raise RuntimeError("traced_calls needs mpiwatch-export (not found on PATH; set "
                               "MPIWATCH_EXPORT)")
        p = subprocess.run([exe, "--format", "trace", self.path], capture_output=True,
                           check=False)
        if p.returncode != 0:
            raise RecordingError(self.path, None, "mpiwatch-export --format trace failed: " +
                                 p.stderr.decode(errors="replace").strip())
        rows = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
        df = pd.DataFrame([r for r in rows if r.get("type") == "record"])
        if not df.empty:
            df = df.drop(columns=["type"])
        return df

    def __repr__(self):
        return "Recording(%r, jobs=%d, windows=%d)" % (self.path, len(self.jobs),
                                                        len(self._rows["windows"]))
