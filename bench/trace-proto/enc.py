#!/usr/bin/env python3
"""enc.py: bytes per traced call for a synthetic stencil stream, per window per rank.

Stream: 3-D 7-point stencil on one rank, per iteration Irecv x6, Isend x6 (6 neighbours,
tag per direction, halo bytes per direction), Waitall (12 requests), Allreduce 8 B every
iteration; 14 calls per iteration. Durations log-normal (exact ns), starts increasing
(posting gaps ~50-300 ns, compute gap fills the window). Window 100 ms.
Encodings (each window encoded alone, as it would be sent):
  raw24    fixed 24-byte records
  cap      today's Capture layout (packed columns: fn, start from window start (sint),
           duration, bytes, peer) + tag and comm columns, all columns per call
  delta    packed columns: start delta to previous start (varint), duration (varint),
           fn (varint); peer/tag/comm/bytes only for calls that have them (p2p, collectives),
           peer as zigzag(peer - own rank), comm as a per-window dictionary index,
           tag zigzag, bytes varint; Waitall: count of completed requests
  +zstd-1 / +zstd-3 of each; also zstd on raw24.
Usage: enc.py [seed]
"""
import ctypes, math, random, struct, sys

Z = ctypes.CDLL("libzstd.so.1")
Z.ZSTD_compressBound.restype = ctypes.c_size_t
Z.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
Z.ZSTD_compress.restype = ctypes.c_size_t
Z.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def zstd(b, lvl):
    cap = Z.ZSTD_compressBound(len(b))
    dst = ctypes.create_string_buffer(cap)
    n = Z.ZSTD_compress(dst, cap, b, len(b), lvl)
    return n


def varint(v, out):
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def zz(v):
    return (v << 1) ^ (v >> 63)


def packed(field, vals, out, signed=False):
    """protobuf packed repeated field: key, length, varints"""
    if not vals:
        return
    body = bytearray()
    for v in vals:
        varint(zz(v) if signed else v, body)
    varint((field << 3) | 2, out)
    varint(len(body), out)
    out += body


FN = dict(Irecv=1, Isend=2, Waitall=3, Allreduce=4)
WIN = 100_000_000


def gen_window(rng, calls_per_window, me, nbrs, jitter):
    iters = max(1, calls_per_window // 14)
    period = WIN // iters
    recs = []  # (start, dur, fn, peer, tag, comm, bytes, nreq)
    t = rng.randrange(0, 2000)
    halo = [8 * 64 * 64, 8 * 64 * 64, 8 * 64 * 32, 8 * 64 * 32, 8 * 32 * 32, 8 * 32 * 32]
    for it in range(iters):
        t0 = t
        for fnname in ("Irecv", "Isend"):
            for d, p in enumerate(nbrs):
                dur = int(rng.lognormvariate(math.log(250), 0.4 * jitter))
                recs.append((t, dur, FN[fnname], p, 100 + d, 0, halo[d], 0))
                t += dur + int(rng.lognormvariate(math.log(60), 0.5 * jitter))
        dur = int(rng.lognormvariate(math.log(min(30_000, period * 0.2)), 1.5 * jitter))
        recs.append((t, dur, FN["Waitall"], -1, 0, 0, 0, 12))
        t += dur + 40
        dur = int(rng.lognormvariate(math.log(min(8_000, period * 0.05)), 1.0 * jitter))
        recs.append((t, dur, FN["Allreduce"], 0, 0, 1, 8, 0))  # root none: peer 0 unused
        t += dur
        t = max(t, t0 + int(period * rng.uniform(0.97, 1.03)))
        if t >= WIN:
            break
    return [r for r in recs if r[0] < WIN]


def enc_raw(recs):
    return b"".join(struct.pack("<IIHHIiI", s, d, f, c, p & 0xFFFFFFFF, tg, b & 0xFFFFFFFF) for (s, d, f, p, tg, c, b, n) in recs)


def enc_cap(recs):
    out = bytearray()
    packed(5, [r[2] for r in recs], out)
    packed(6, [r[0] for r in recs], out, signed=True)
    packed(7, [r[1] for r in recs], out)
    packed(8, [r[6] for r in recs], out)
    packed(9, [r[3] for r in recs], out, signed=True)
    packed(10, [r[4] for r in recs], out, signed=True)
    packed(11, [r[5] for r in recs], out)
    return bytes(out)


def enc_delta(recs, me):
    out = bytearray()
    starts, prev = [], 0
    for r in recs:
        starts.append(r[0] - prev)
        prev = r[0]
    p2p = [r for r in recs if r[2] in (1, 2)]
    coll = [r for r in recs if r[2] == 4]
    waits = [r for r in recs if r[2] == 3]
    comms = {}
    for r in p2p + coll:
        comms.setdefault(r[5], len(comms))
    packed(1, starts, out)
    packed(2, [r[1] for r in recs], out)
    packed(3, [r[2] for r in recs], out)
    packed(4, [r[3] - me for r in p2p], out, signed=True)
    packed(5, [r[4] for r in p2p], out, signed=True)
    packed(6, [comms[r[5]] for r in p2p + coll], out)
    packed(7, [r[6] for r in p2p + coll], out)
    packed(8, [r[7] for r in waits], out)
    packed(9, list(comms), out)  # dictionary: job-wide comm ids of this window
    return bytes(out)


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    rng = random.Random(seed)
    me = 1000
    nbrs = [me - 1, me + 1, me - 32, me + 32, me - 1024, me + 1024]
    print("bytes per call, median over windows (each window encoded and compressed alone)")
    print("%-8s %-7s %6s | %6s %6s %6s | %6s %6s %6s | %6s %6s %6s" % (
        "calls/w", "jitter", "calls", "raw24", "+z1", "+z3", "cap", "+z1", "+z3", "delta", "+z1", "+z3"))
    for jitter in (1.0, 2.0):
        for cpw in (100, 1000, 10000):
            rows = []
            nwin = 15 if cpw >= 10000 else 31
            for w in range(nwin):
                recs = gen_window(rng, cpw, me, nbrs, jitter)
                n = len(recs)
                raw, cap, dl = enc_raw(recs), enc_cap(recs), enc_delta(recs, me)
                rows.append((n, len(raw) / n, zstd(raw, 1) / n, zstd(raw, 3) / n, len(cap) / n, zstd(cap, 1) / n,
                             zstd(cap, 3) / n, len(dl) / n, zstd(dl, 1) / n, zstd(dl, 3) / n))
            med = [sorted(c)[len(c) // 2] for c in zip(*rows)]
            print("%-8d %-7.1f %6d | %6.2f %6.2f %6.2f | %6.2f %6.2f %6.2f | %6.2f %6.2f %6.2f" % (cpw, jitter, *med))


main()
if len(sys.argv) > 2:  # column breakdown and a dump for zstd -b
    rng = random.Random(7); me = 1000; nbrs = [me - 1, me + 1, me - 32, me + 32, me - 1024, me + 1024]
    allb = bytearray(); raw = bytearray(); ncalls = 0
    for w in range(20):
        recs = gen_window(rng, 1000, me, nbrs, 1.0); ncalls += len(recs)
        allb += enc_delta(recs, me); raw += enc_raw(recs)
    open(sys.argv[2] + ".delta", "wb").write(allb); open(sys.argv[2] + ".raw24", "wb").write(raw)
    print("dump: %d calls, delta %d B, raw24 %d B" % (ncalls, len(allb), len(raw)))
    recs = gen_window(random.Random(9), 1000, me, nbrs, 1.0); n = len(recs)
    p2p = [r for r in recs if r[2] in (1, 2)]; coll = [r for r in recs if r[2] == 4]
    prev = 0; st = []
    for r in recs: st.append(r[0] - prev); prev = r[0]
    def sz(vals, signed=False):
        o = bytearray(); packed(1, vals, o, signed); return len(o) / n
    print("column bytes per call (1000 calls/window): start-delta %.2f, duration %.2f, fn %.2f, peer %.2f, tag %.2f, comm %.2f, bytes %.2f, nreq %.2f" % (
        sz(st), sz([r[1] for r in recs]), sz([r[2] for r in recs]), sz([r[3] - me for r in p2p], True), sz([r[4] for r in p2p], True),
        sz([0 for r in p2p + coll]), sz([r[6] for r in p2p + coll]), sz([r[7] for r in recs if r[2] == 3])))
    print("start from window start instead of delta: %.2f" % sz([r[0] for r in recs]))
