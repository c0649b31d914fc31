#!/usr/bin/env python3
"""Synthetic MPI point-to-point traces with ground truth, and two matching algorithms.

A small discrete simulator of MPI matching semantics (one thread per rank):
  - per (src,dst) FIFO delivery (a message from src to dst arrives after src's earlier ones),
    senders interleaved randomly at the receiver;
  - a posted receive takes the earliest *arrived* unmatched message that fits its pattern
    (comm, src|ANY, tag|ANY); an arriving message goes to the earliest *posted* pending
    receive that fits it (MPI non-overtaking + receive posting order);
  - Isend/Irecv, Waitany/Testsome-like completion in random order, Sendrecv, persistent
    requests (each Start = new message), Mprobe/Mrecv (matched at Mprobe), Probe (no match),
    cancelled receives and sends (cancel succeeds only while unmatched), MPI_PROC_NULL.

Each rank writes the records the shim would write (program order, post_seq per rank):
  SEND_POST  seq comm dst tag bytes t          (Send/Isend/Start of a send/Sendrecv's send)
  SEND_DONE  seq t cancelled                   (completion of that send)
  RECV_POST  seq comm src_pat tag_pat t        (Recv/Irecv/Start/Sendrecv's recv; Mprobe match)
  RECV_DONE  seq src tag bytes t cancelled     (completion: actual source/tag from status)
The hidden truth: msg id for each SEND_POST seq and RECV_POST seq.

Algorithms:
  A. "zip": collector-side, per channel (comm,src,dst,tag): sends in post order, receives in
     post (match) order, k-th with k-th. Works only on complete spans.
  B. "stamp": rank-side (sender thread, off the hot path, over ALL ring records, traced or
     not): each send gets idx = per-channel post counter; each receive gets idx = number of
     earlier-posted receives that ended on the same channel, finalised only when every
     earlier-posted receive whose pattern could match that channel has completed. The
     collector matches (comm,src,dst,tag,idx) by equality: gaps in tracing do not matter.
"""
import random, sys
from collections import defaultdict, deque

ANY = -1
PROC_NULL = -2


class Sim:
    def __init__(self, nranks, seed):
        self.n = nranks
        self.rng = random.Random(seed)
        self.t = 0
        self.recs = [[] for _ in range(nranks)]   # per rank: list of record tuples
        self.seq = [0] * nranks
        self.arrived = [[] for _ in range(nranks)]  # per dst: unmatched arrived msgs (in order)
        self.inflight = defaultdict(deque)          # (src,dst) -> msgs not yet arrived
        self.pending = [[] for _ in range(nranks)]  # per dst: posted unmatched receives (post order)
        self.truth_send = {}   # (rank, seq) -> msg id
        self.truth_recv = {}   # (rank, seq) -> msg id
        self.msgs = {}         # id -> dict
        self.nmsg = 0
        self.reqs = [dict() for _ in range(nranks)]  # outstanding requests per rank: seq -> req

    def tick(self):
        self.t += self.rng.randint(1, 5)
        return self.t

    def rec(self, r, *fields):
        self.recs[r].append(fields)

    # ---- matching core
    @staticmethod
    def fits(rv, m):
        return (rv['comm'] == m['comm'] and (rv['src'] in (ANY, m['src']))
                and (rv['tag'] in (ANY, m['tag'])))

    def deliver_some(self):
        # move a random number of in-flight messages to 'arrived', per-pair FIFO
        keys = [k for k, q in self.inflight.items() if q]
        self.rng.shuffle(keys)
        for k in keys[: self.rng.randint(0, len(keys))]:
            m = self.inflight[k].popleft()
            self.arrive(m)

    def arrive(self, m):
        dst = m['dst']
        for rv in self.pending[dst]:
            if self.fits(rv, m):
                self.pending[dst].remove(rv)
                self.bind(rv, m)
                return
        self.arrived[dst].append(m)

    def bind(self, rv, m):
        m['matched'] = True
        rv['msg'] = m
        self.truth_recv[(m['dst'], rv['seq'])] = m['id']

    def post_recv(self, r, comm, src, tag, kind='recv'):
        s = self.seq[r]; self.seq[r] += 1
        rv = dict(seq=s, comm=comm, src=src, tag=tag, msg=None, cancelled=False, kind=kind)
        self.rec(r, 'RECV_POST', s, comm, src, tag, self.tick())
        if src == PROC_NULL:
            rv['null'] = True
            return rv
        for m in self.arrived[r]:
            if self.fits(rv, m):
                self.arrived[r].remove(m)
                self.bind(rv, m)
                return rv
        self.pending[r].append(rv)
        return rv

    def post_send(self, r, comm, dst, tag, nbytes):
        s = self.seq[r]; self.seq[r] += 1
        self.rec(r, 'SEND_POST', s, comm, dst, tag, nbytes, self.tick())
        sd = dict(seq=s, cancelled=False, null=(dst == PROC_NULL))
        if dst == PROC_NULL:
            return sd
        m = dict(id=self.nmsg, src=r, dst=dst, comm=comm, tag=tag, bytes=nbytes, matched=False)
        self.nmsg += 1
        self.msgs[m['id']] = m
        self.truth_send[(r, s)] = m['id']
        sd['msg'] = m
        self.inflight[(r, dst)].append(m)
        return sd

    def complete_recv(self, r, rv):
        if rv.get('null'):
            self.rec(r, 'RECV_DONE', rv['seq'], PROC_NULL, ANY, 0, self.tick(), 0)
            return True
        if rv['cancelled']:
            self.rec(r, 'RECV_DONE', rv['seq'], ANY, ANY, 0, self.tick(), 1)
            return True
        if rv['msg'] is None:
            return False
        m = rv['msg']
        self.rec(r, 'RECV_DONE', rv['seq'], m['src'], m['tag'], m['bytes'], self.tick(), 0)
        return True

    def complete_send(self, r, sd):
        # eager model: a send completes any time after posting (buffered), unless cancelled
        self.rec(r, 'SEND_DONE', sd['seq'], self.tick(), 1 if sd['cancelled'] else 0)
        return True

    def cancel_recv(self, r, rv):
        if rv['msg'] is None and not rv.get('null') and rv in self.pending[r]:
            self.pending[r].remove(rv)
            rv['cancelled'] = True

    def cancel_send(self, r, sd):
        m = sd.get('msg')
        if m is None or m['matched']:
            return
        q = self.inflight[(r, m['dst'])]
        if m in q:
            q.remove(m)
        elif m in self.arrived[m['dst']]:
            self.arrived[m['dst']].remove(m)
        else:
            return
        sd['cancelled'] = True
        del self.truth_send[(r, sd['seq'])]

    def mprobe(self, r, comm, src, tag):
        """Mprobe: matches (dequeues) an arrived message; returns a receive bound to it or None.
        The shim records the Mprobe as the RECV_POST (the match point), Mrecv as RECV_DONE."""
        for m in self.arrived[r]:
            if m['comm'] == comm and src in (ANY, m['src']) and tag in (ANY, m['tag']):
                # MPI: Mprobe matches in the same order as a receive posted now would
                s = self.seq[r]; self.seq[r] += 1
                self.rec(r, 'RECV_POST', s, comm, src, tag, self.tick())
                self.arrived[r].remove(m)
                rv = dict(seq=s, comm=comm, src=src, tag=tag, msg=None, cancelled=False, kind='mprobe')
                self.bind(rv, m)
                return rv
        return None

    def drain(self):
        while any(self.inflight.values()):
            self.deliver_some()


def run_program(nranks=6, steps=400, seed=1):
    """Random program: every step a random rank does a random operation."""
    S = Sim(nranks, seed)
    rng = S.rng
    comms = [0, 1, 2]   # job-wide comm ids (world + two dups/splits)
    tags = [0, 1, 7]
    outstanding = [[] for _ in range(nranks)]   # (kind, obj)
    persist = [dict() for _ in range(nranks)]   # persistent templates
    for _ in range(steps):
        r = rng.randrange(nranks)
        op = rng.random()
        peer = rng.randrange(nranks)
        comm = rng.choice(comms); tag = rng.choice(tags)
        if op < 0.25:      # Isend (blocking Send = Isend + immediate completion in this model)
            sd = S.post_send(r, comm, peer, tag, rng.choice([8, 64, 4096]))
            if rng.random() < 0.05:
                S.deliver_some(); S.cancel_send(r, sd)
            outstanding[r].append(('s', sd))
        elif op < 0.50:    # Irecv, maybe wildcard
            src = ANY if rng.random() < 0.3 else peer
            tg = ANY if rng.random() < 0.3 else tag
            rv = S.post_recv(r, comm, src, tg)
            outstanding[r].append(('r', rv))
        elif op < 0.55:    # Sendrecv (send posted first, then recv, same call)
            sd = S.post_send(r, comm, peer, tag, 16)
            rv = S.post_recv(r, comm, rng.randrange(nranks), tag)
            outstanding[r].append(('s', sd)); outstanding[r].append(('r', rv))
        elif op < 0.62:    # persistent send/recv: each Start is a new message
            key = ('ps', comm, peer, tag)
            persist[r][key] = True
            if rng.random() < 0.5:
                outstanding[r].append(('s', S.post_send(r, comm, peer, tag, 128)))
            else:
                outstanding[r].append(('r', S.post_recv(r, comm, peer, tag)))
        elif op < 0.66:    # Mprobe + later Mrecv
            rv = S.mprobe(r, comm, ANY if rng.random() < .5 else peer, ANY)
            if rv is not None:
                outstanding[r].append(('r', rv))
        elif op < 0.68:    # MPI_PROC_NULL
            outstanding[r].append(('r', S.post_recv(r, comm, PROC_NULL, tag)))
        elif op < 0.70:    # cancel a pending receive
            for k, o in outstanding[r]:
                if k == 'r' and o['msg'] is None:
                    S.cancel_recv(r, o); break
        else:              # Waitany/Testsome: complete a random subset, random order
            S.deliver_some()
            lst = outstanding[r]
            rng.shuffle(lst)
            keep = []
            for k, o in lst:
                done = False
                if rng.random() < 0.6:
                    done = S.complete_send(r, o) if k == 's' else S.complete_recv(r, o)
                if not done:
                    keep.append((k, o))
            outstanding[r] = keep
    # end: deliver all, complete everything completable, cancel the rest (posted, never matched)
    S.drain()
    for r in range(nranks):
        for k, o in outstanding[r]:
            if k == 's':
                S.complete_send(r, o)
            elif not S.complete_recv(r, o):
                S.cancel_recv(r, o); S.complete_recv(r, o)
    return S


# ------------------------------------------------------------------ rank side: stamping
def stamp_rank(recs, max_defer=None):
    """Off-hot-path pass over one rank's records in order. Returns {seq: (kind, key, idx)}
    for sends and completed receives; idx None = could not be resolved."""
    out = {}
    send_ctr = defaultdict(int)      # (comm,dst,tag) -> next index
    recv_ctr = defaultdict(int)      # (comm,src,tag) -> receives already indexed
    posted = {}                      # seq -> (comm, src_pat, tag_pat)
    sends = {}                       # seq -> (comm, dst, tag)
    done = {}                        # seq -> (src, tag, cancelled)
    unresolved = []                  # receive seqs in post order awaiting index
    for rec in recs:
        kind = rec[0]
        if kind == 'SEND_POST':
            _, s, comm, dst, tag, nb, t = rec
            sends[s] = (comm, dst, tag)
        elif kind == 'SEND_DONE':
            _, s, t, canc = rec
            comm, dst, tag = sends.pop(s)
            if dst == PROC_NULL or canc:
                continue
            # NOTE: a send's index must be taken in post order; a send cancelled later would
            # shift it. Here we index at completion but in post-seq order via a small buffer.
            out[s] = ('S', (comm, dst, tag), None)
        elif kind == 'RECV_POST':
            _, s, comm, src, tag, t = rec
            posted[s] = (comm, src, tag)
            unresolved.append(s)
        elif kind == 'RECV_DONE':
            _, s, src, tag, nb, t, canc = rec
            done[s] = (src, tag, canc)
            # resolve in post order: the head is final once it is done
            while unresolved and unresolved[0] in done:
                h = unresolved.pop(0)
                hsrc, htag, hcanc = done.pop(h)
                comm = posted.pop(h)[0]
                if hsrc == PROC_NULL or hcanc:
                    continue
                key = (comm, hsrc, htag)
                out[h] = ('R', key, recv_ctr[key]); recv_ctr[key] += 1
    # sends: index in post order (cancelled and PROC_NULL excluded; only known at completion)
    for s in sorted(k for k, v in out.items() if v[0] == 'S'):
        _, key, _ = out[s]
        out[s] = ('S', key, send_ctr[key]); send_ctr[key] += 1
    return out


def stamp_rank_eager(recs):
    """Same, but resolves a receive as soon as every earlier-posted *pending* receive whose
    pattern could match its channel has completed (patterns that cannot match do not block)."""
    out = {}
    posted = {}; done = {}; pend = []       # pend: post-ordered seqs not yet indexed
    recv_ctr = defaultdict(int)
    sends = {}; send_list = []
    def could(pat, key):
        comm, src, tag = pat
        return comm == key[0] and src in (ANY, key[1]) and tag in (ANY, key[2])
    for rec in recs:
        kind = rec[0]
        if kind == 'SEND_POST':
            sends[rec[1]] = rec[2:5]
        elif kind == 'SEND_DONE':
            comm, dst, tag = sends.pop(rec[1])
            if dst != PROC_NULL and not rec[3]:
                send_list.append((rec[1], (comm, dst, tag)))
        elif kind == 'RECV_POST':
            posted[rec[1]] = rec[2:5]; pend.append(rec[1])
        elif kind == 'RECV_DONE':
            done[rec[1]] = rec[2], rec[3], rec[6]
            progress = True
            while progress:
                progress = False
                for i, s in enumerate(pend):
                    if s not in done:
                        continue
                    src, tag, canc = done[s]
                    if src == PROC_NULL or canc:
                        pend.pop(i); done.pop(s); progress = True; break
                    key = (posted[s][0], src, tag)
                    if any(could(posted[e], key) for e in pend[:i] if e not in done):
                        continue
                    # earlier-posted receives on the same channel must already be indexed
                    if any(e in done and (posted[e][0], done[e][0], done[e][1]) == key
                           for e in pend[:i]):
                        continue
                    out[s] = ('R', key, recv_ctr[key]); recv_ctr[key] += 1
                    pend.pop(i); done.pop(s); progress = True; break
    ctr = defaultdict(int)
    for s, key in sorted(send_list):
        out[s] = ('S', key, ctr[key]); ctr[key] += 1
    return out


def match_stamped(S, stamps, traced):
    """Collector: equality on (comm,src,dst,tag,idx). traced(rank, seq) -> record visible."""
    sends = {}
    for r in range(S.n):
        for s, (k, key, idx) in stamps[r].items():
            if k == 'S' and idx is not None:
                comm, dst, tag = key
                sends[(comm, r, dst, tag, idx)] = (r, s)
    res = {}
    for r in range(S.n):
        for s, (k, key, idx) in stamps[r].items():
            if k != 'R' or not traced(r, s):
                continue
            comm, src, tag = key
            hit = sends.get((comm, src, r, tag, idx))
            res[(r, s)] = hit if (hit and traced(*hit)) else ('untraced-send', hit)
    return res


def match_zip(S, traced):
    """Collector-only zip over visible records (no stamps)."""
    sendq = defaultdict(list); recvq = defaultdict(list)
    for r in range(S.n):
        sp = {}; rp = {}
        for rec in S.recs[r]:
            if rec[0] == 'SEND_POST':
                sp[rec[1]] = rec
            elif rec[0] == 'SEND_DONE':
                p = sp.pop(rec[1])
                if p[3] == PROC_NULL or rec[3] or not traced(r, rec[1]):
                    continue
                sendq[(p[2], r, p[3], p[4])].append(rec[1])
            elif rec[0] == 'RECV_POST':
                rp[rec[1]] = rec
            elif rec[0] == 'RECV_DONE':
                p = rp.pop(rec[1])
                if rec[2] == PROC_NULL or rec[6] or not traced(r, rec[1]):
                    continue
                recvq[(p[2], rec[2], r, rec[3])].append(rec[1])
    res = {}
    for key, rl in recvq.items():
        sl = sorted(sendq.get(key, []))
        for i, s in enumerate(sorted(rl)):
            res[(key[2], s)] = (key[1], sl[i]) if i < len(sl) else None
    return res


def check(S, res):
    ok = bad = miss = 0
    for (r, s), v in res.items():
        truth = S.truth_recv.get((r, s))
        if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], int):
            got = S.truth_send.get(v)
            if got == truth: ok += 1
            else: bad += 1
        else:
            miss += 1
    return ok, bad, miss


if __name__ == '__main__':
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    tot = defaultdict(lambda: [0, 0, 0])
    for seed in range(seeds):
        S = run_program(nranks=6, steps=500, seed=seed)
        # every receive in truth must complete exactly once
        allv = lambda r, s: True
        # gap model: rank 2's records with seq in [40,120) untraced (a budget gap), and
        # window-like cut: every record of every rank with seq < 30 untraced (capture start)
        gap = lambda r, s: not (r == 2 and 40 <= s < 120) and s >= 30
        st1 = [stamp_rank(S.recs[r]) for r in range(S.n)]
        st2 = [stamp_rank_eager(S.recs[r]) for r in range(S.n)]
        for name, res in [('zip/full', match_zip(S, allv)),
                          ('stamp/full', match_stamped(S, st1, allv)),
                          ('stamp-eager/full', match_stamped(S, st2, allv)),
                          ('zip/gaps', match_zip(S, gap)),
                          ('stamp/gaps', match_stamped(S, st1, gap))]:
            a = check(S, res)
            for i in range(3): tot[name][i] += a[i]
    for k, (ok, bad, miss) in tot.items():
        print(f'{k:18s} correct {ok:7d}  wrong {bad:6d}  unmatched/untraced-peer {miss:6d}')


def audit(seeds=200):
    """Stamps under gaps: every visible receive whose true send is visible must be matched."""
    gap = lambda r, s: not (r == 2 and 40 <= s < 120) and s >= 30
    lost = fine = 0
    for seed in range(seeds):
        S = run_program(nranks=6, steps=500, seed=seed)
        st = [stamp_rank(S.recs[r]) for r in range(S.n)]
        res = match_stamped(S, st, gap)
        inv = {v: k for k, v in S.truth_send.items()}
        for (r, s), v in res.items():
            snd = inv[S.truth_recv[(r, s)]]
            if gap(*snd):
                if v == snd: fine += 1
                else: lost += 1
    print(f'audit: visible pairs matched {fine}, visible pairs missed {lost}')


def defer_stats(seeds=100):
    """How many records after its completion a receive's index becomes final (head-of-line
    in post order vs pattern-aware)."""
    import statistics
    for name in ('post-order', 'pattern-aware'):
        d = []
        for seed in range(seeds):
            S = run_program(nranks=6, steps=500, seed=seed)
            for r in range(S.n):
                recs = S.recs[r]
                done_at = {rec[1]: i for i, rec in enumerate(recs) if rec[0] == 'RECV_DONE'}
                # replay incrementally to find resolution points
                fn = stamp_rank if name == 'post-order' else stamp_rank_eager
                prev = set()
                for i in range(len(recs)):
                    if recs[i][0] != 'RECV_DONE':
                        continue
                    cur = {s for s, v in fn(recs[:i + 1]).items() if v[0] == 'R'}
                    for s in cur - prev:
                        d.append(i - done_at[s])
                    prev = cur
        print(f'{name:14s} receives {len(d)}  deferral in records: median {statistics.median(d)}'
              f'  p99 {sorted(d)[int(.99*len(d))]}  max {max(d)}')


if __name__ == '__main__' and len(sys.argv) > 2:
    audit(); defer_stats(40)
