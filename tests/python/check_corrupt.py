#!/usr/bin/env python3
"""check_corrupt.py RECORDING DIR: damaged copies of a good recording give a clear error.

Every damaged copy (written into DIR) must raise mpiwatch.RecordingError (never another
exception, never a hang: the whole check runs under a 60 s alarm) whose message names the
problem; with allow_truncated=True the copies damaged after their start read what precedes the
damage, never more windows than the good file, and say why they stopped (Recording.damage).
"""

import os
import signal
import struct
import sys
import warnings
import zlib

import mpiwatch


def frames(data):
    """(offset, tag, length) of each frame of a good recording."""
    version, hlen = struct.unpack_from("<II", data, 8)
    pos, out = hlen, []
    while pos + 12 <= len(data):
        tag, n, _ = struct.unpack_from("<III", data, pos)
        out.append((pos, tag, n))
        pos += 12 + n
    return out


def main():
    path, d = sys.argv[1:3]
    signal.alarm(60)
    data = open(path, "rb").read()
    good = mpiwatch.Recording(path)
    nwin = len(good.windows())
    fr = frames(data)
    mid = fr[len(fr) // 2]
    big = max(fr, key=lambda f: f[2])

    cases = {}  # name -> (bytes, expected phrase in the message, readable prefix?)
    cases["empty"] = (b"", "not an mpiwatch recording", False)
    cases["not_a_recording"] = (b"GIF89a" + bytes(100), "not an mpiwatch recording", False)
    cases["bad_version"] = (data[:8] + struct.pack("<I", 7) + data[12:], "unsupported format "
                            "version 7", False)
    cases["bad_header_length"] = (data[:12] + struct.pack("<I", 1 << 20) + data[16:],
                                  "bad header length", False)
    cases["truncated_mid_frame"] = (data[:big[0] + 12 + big[2] // 2], "torn frame", True)
    cases["truncated_header"] = (data[:mid[0] + 5], "torn frame header", True)
    cases["truncated_55pct"] = (data[:len(data) * 55 // 100], "torn frame", True)
    flip = bytearray(data)
    flip[big[0] + 12 + big[2] // 2] ^= 0xFF
    cases["bad_crc"] = (bytes(flip), "CRC mismatch", True)
    huge = bytearray(data)
    struct.pack_into("<I", huge, mid[0] + 4, 0x7FFFFFFF)
    cases["length_over_cap"] = (bytes(huge), "over the cap", True)
    tag = bytearray(data)
    struct.pack_into("<I", tag, mid[0], 0x12345678)
    cases["bad_tag"] = (bytes(tag), "bad frame tag", True)
    # a frame with a valid CRC whose payload is not a Record
    junk = b"\x0a\xff\xff\xff\xff\x0f"
    forged = data + struct.pack("<III", 0x4652574D, len(junk), zlib.crc32(junk)) + junk
    cases["undecodable_record"] = (forged, "does not decode", True)
    # a compressed frame with a valid CRC whose payload is not zstd (outside any hole: damage)
    notz = b"not a zstd frame"
    cases["undecompressable"] = (data + struct.pack("<III", 0x465A574D, len(notz),
                                                     zlib.crc32(notz)) + notz,
                                 "does not decompress", True)
    # a chunked record cut by the end of the file
    chunk = b"\x08\x01"
    cut = data + struct.pack("<III", 0x4352574D, len(chunk), zlib.crc32(chunk)) + chunk
    cases["chunk_cut"] = (cut, "chunked record cut", True)

    failures = 0
    for name, (blob, phrase, prefix) in cases.items():
        p = os.path.join(d, name + ".mpiw")
        with open(p, "wb") as f:
            f.write(blob)
        try:
            mpiwatch.Recording(p)
            print("%s: read without an error" % name, file=sys.stderr)
            failures += 1
            continue
        except mpiwatch.RecordingError as e:
            if phrase not in str(e) or p not in str(e):
                print("%s: unclear error %r (expected %r)" % (name, str(e), phrase),
                      file=sys.stderr)
                failures += 1
        if prefix:
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                r = mpiwatch.Recording(p, allow_truncated=True)
            n = len(r.windows())
            if r.damage is None or phrase not in r.damage or n > nwin:
                print("%s: allow_truncated read %d of %d windows, damage %r" %
                      (name, n, nwin, r.damage), file=sys.stderr)
                failures += 1
            else:
                print("%s: %d of %d windows before the damage (%s)" % (name, n, nwin, r.damage))
    # the good file itself: no damage
    if good.damage is not None:
        print("the good recording reads as damaged: %s" % good.damage, file=sys.stderr)
        failures += 1
    if failures:
        return 1
    print("ok: %d damaged copies refused with a clear error" % len(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
