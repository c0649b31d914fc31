"""Following a collector's live feed (``--publish``, docs/feed.md) into the same tables.

A SUB socket receives two-frame messages (topic, ``Feed``).  Every message is checked before
use: a wrong frame count, a body over the size cap, a body that does not decode or whose body
does not match its topic is counted (:attr:`Follower.bad`) and skipped, never raised, since a
feed is a stream from another process.  CURVE (docs/security.md) is used when key files are
given (or ``MPIWATCH_CURVE_SERVER`` / ``MPIWATCH_CURVE_KEY`` are set), as ``mpiwatch-feed`` does.

Delivery is best effort (a PUB socket drops for a subscriber that does not read): gaps in the
window indices are counted in :attr:`Follower.gaps`; the history endpoint or the recording has
what was missed.
"""

import configparser
import os
import stat
import time
from collections import namedtuple

import pandas as pd
import zmq

from ._pb import pb
from .recording import Tables

TOPICS = ("job", "window", "event", "step", "trace", "lateness")
MAX_MESSAGE = 256 << 20  # the viewer's cap: a job description is at most 48 MiB encoded

#: A window as it arrived: ``index`` (grid), ``window`` (job-relative), ``t_s``, ``job``,
#: ``row`` (its row of :meth:`Tables.windows`, a Series), ``functions``, ``ranks``,
#: ``pairs`` (its rows of those tables) and ``message`` (the ``Window`` protobuf).
WindowUpdate = namedtuple("WindowUpdate", "index window t_s job row functions ranks pairs "
                          "message")


class FeedError(Exception):
    """A setup error: a bad endpoint or key file."""


def _read_key(path, secret):
    """(public, secret) Z85 keys of a key file ([curve] public-key / secret-key)."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise FeedError("%s: %s" % (path, e.strerror)) from None
    if secret and st.st_mode & 0o077:
        raise FeedError("%s: a secret key file must not be accessible by group or others "
                        "(chmod 600)" % path)
    if not stat.S_ISREG(st.st_mode) or st.st_size > 65536:
        raise FeedError("%s: not a key file" % path)
    cp = configparser.ConfigParser(interpolation=None)
    try:
        with open(path, encoding="utf-8") as f:
            cp.read_file(f)
        pub = cp.get("curve", "public-key").strip()
        sec = cp.get("curve", "secret-key").strip() if secret else None
    except (configparser.Error, UnicodeDecodeError) as e:
        raise FeedError("%s: not a key file (%s)" % (path, e)) from None
    for k in (pub, sec):
        if k is not None and len(k) != 40:
            raise FeedError("%s: a key is 40 characters of Z85" % path)
    return pub.encode(), sec.encode() if sec else None


class Follower(Tables):
    """A subscription to a collector's feed; iterate it for ``(topic, item)`` pairs.

    ``item`` is a :class:`WindowUpdate` for ``window``, a :class:`~mpiwatch.Job` for ``job``,
    a dict for ``event`` and ``step``, the protobuf message for ``trace`` and ``lateness``.
    Every window, job, step and event received is also kept in the tables
    (:meth:`Tables.functions` ... over everything received so far).

    Iteration ends after ``timeout_s`` seconds without a message (None: never), after
    ``max_windows`` windows, or with ``until_job_end`` once a ``job_end`` event arrived.
    """

    def __init__(self, endpoint, topics=("job", "window", "event", "step"), curve_server=None,
                 curve_key=None, timeout_s=None, max_windows=None, until_job_end=False,
                 context=None):
        super().__init__()
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        self.max_windows = max_windows
        self.until_job_end = until_job_end
        self.bad = 0  # messages refused (frames, size, decoding, topic)
        self.gaps = 0  # windows missing between consecutive indices of a job
        self.received = 0
        self._last_index = {}
        self._windows_seen = 0
        curve_server = curve_server or os.environ.get("MPIWATCH_CURVE_SERVER")
        curve_key = curve_key or os.environ.get("MPIWATCH_CURVE_KEY")
        if bool(curve_server) != bool(curve_key):
            raise FeedError("CURVE needs both the collector's public key file and a client key "
                            "file")
        self._ctx = context or zmq.Context.instance()
        self.socket = self._ctx.socket(zmq.SUB)
        s = self.socket
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
        s.setsockopt(zmq.RCVHWM, 1024)
        if curve_server:
            server_pub, _ = _read_key(curve_server, False)
            pub, sec = _read_key(curve_key, True)
            s.setsockopt(zmq.CURVE_SERVERKEY, server_pub)
            s.setsockopt(zmq.CURVE_PUBLICKEY, pub)
            s.setsockopt(zmq.CURVE_SECRETKEY, sec)
        for t in topics:
            if t not in TOPICS:
                raise FeedError("unknown topic %r (%s)" % (t, ", ".join(TOPICS)))
            s.setsockopt(zmq.SUBSCRIBE, t.encode())
        try:
            s.connect(endpoint)
        except zmq.ZMQError as e:
            s.close()
            raise FeedError("%s: %s" % (endpoint, e)) from None

    def close(self):
        self.socket.close(0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _receive(self, timeout_ms):
        if not self.socket.poll(timeout_ms):
            return None
        return self.socket.recv_multipart(copy=True)

    def __iter__(self):
        deadline = None
        while True:
            if self.max_windows is not None and self._windows_seen >= self.max_windows:
                return
            wait = None if self.timeout_s is None else int(self.timeout_s * 1000)
            now = time.monotonic()
            if wait is not None:
                deadline = now + self.timeout_s if deadline is None else deadline
                wait = max(0, int((deadline - now) * 1000))
            parts = self._receive(wait)
            if parts is None:
                return
            deadline = None
            item = self._decode(parts)
            if item is None:
                continue
            yield item
            if self.until_job_end and item[0] == "event" and item[1]["kind"] == "job_end":
                return

    def _decode(self, parts):
        if len(parts) != 2 or len(parts[1]) > MAX_MESSAGE:
            self.bad += 1
            return None
        topic = parts[0].decode(errors="replace")
        try:
            msg = pb.Feed.FromString(parts[1])
        except Exception:  # DecodeError, or whatever a crafted message provokes
            self.bad += 1
            return None
        body = msg.WhichOneof("body")
        if body != topic or topic not in TOPICS:
            self.bad += 1
            return None
        self.received += 1
        if topic == "job":
            self._job(msg.job)
            return topic, self._jobs[msg.job.job]
        if topic == "event":
            e = msg.event
            self._event(e)
            return topic, {"job": e.job, "kind": e.kind, "detail": e.detail,
                           "real_ns": e.real_ns}
        if topic == "step":
            s = msg.step
            self._step(s)
            return topic, {"job": self._current, "step": s.step, "start_ns": s.start_ns,
                           "end_ns": s.end_ns, "ranks": s.ranks, "mpi_time_ns": s.mpi_time_ns}
        if topic == "window":
            return self._window_update(msg.window)
        return topic, getattr(msg, body)

    def _window_update(self, w):
        before = {k: len(v) for k, v in self._rows.items()}
        refused = self.refused
        self._window(w)
        if self.refused != refused:
            return None
        self._cache.clear()
        self._windows_seen += 1
        job = self._current
        last = self._last_index.get(job)
        if last is not None and w.index > last + 1:
            self.gaps += w.index - last - 1
        self._last_index[job] = w.index

        def part(name, columns, named=False):
            df = self._frame(name, columns, before[name])
            return self._names(df) if named else df

        key = self._KEY
        win = part("windows", self._windows_columns()).iloc[0]
        return "window", WindowUpdate(
            index=w.index, window=int(win["window"]), t_s=float(win["t_s"]), job=job, row=win,
            functions=part("functions", self._functions_columns(), True),
            ranks=part("ranks", key + ["rank", "fn", "calls", "time_ns", "bytes"], True),
            pairs=part("pairs", key + ["src", "dst", "messages", "bytes"]), message=w)


def follow(endpoint, **kwargs):
    """A :class:`Follower` on ``endpoint`` (a collector's ``--publish``); iterate it for
    ``(topic, item)`` pairs.  Keyword arguments: ``topics``, ``curve_server``, ``curve_key``
    (key files), ``timeout_s``, ``max_windows``, ``until_job_end``."""
    return Follower(endpoint, **kwargs)
