#!/usr/bin/env python3
"""windows_equal.py: compares the windows a replay published with those in the recording.

    windows_equal.py all EXPORT.jsonl FEED.jsonl
    windows_equal.py range EXPORT.jsonl FEED.jsonl T0_NS T1_NS FROM_S TO_S

EXPORT.jsonl is `mpiwatch-export --format jsonl` of the recording (the windows the live
collector closed, as it recorded them); FEED.jsonl is what `mpiwatch-feed --subscribe --topic
window` received from `mpiwatch-collector --replay --publish` (the windows the replay derived
again). Both are printed by proto/mw_window_json.c, so a window regenerated differently differs
here field by field. The export adds the job's name and the longest calls' hosts, which the
feed's window lacks (the subscriber knows no job): those keys are left out of the comparison.

DESIGN: this does not trust the replaying collector's own "N compared, 0 differ" line; it looks
at what the replay really published.
- all: the feed holds every exported window, in the same order, each equal to the recorded one.
- range: a replay with --from FROM_S --to TO_S of a recording whose collector was started
  between the realtime clocks T0_NS and T1_NS (so its first frame, from which --from counts, is
  at or after T0_NS). No window that closed before T0_NS + FROM_S was published (windows before
  --from are applied with the feed detached); every window received equals the recorded one;
  every window that closed between T1_NS + FROM_S + 0.05 s and T0_NS + TO_S - 0.05 s was received
  (the test has the subscriber connected before the replay starts, tests/record/bindgate.c;
  the 50 ms margins cover windows closing at the range's edges).
"""
import json
import sys


def load(path, feed):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            obj = json.loads(line)
            if feed:
                if obj.get("topic") != "window":
                    continue
                obj = obj["window"]
            else:
                obj.pop("job", None)
                for call in obj.get("longest", []):
                    call.pop("host", None)
            # The job-relative place counts from the first window each reader saw of the job
            # (a subscriber that joined at --from saw a later one): not a window's content.
            obj.pop("window", None)
            obj.pop("t_s", None)
            out.append(obj)
    return out


def main():
    mode, export_path, feed_path = sys.argv[1:4]
    recorded = load(export_path, False)
    got = load(feed_path, True)
    by_index = {w["index"]: w for w in recorded}
    print(f"{len(recorded)} windows recorded, {len(got)} published by the replay")
    bad = 0
    for w in got:
        r = by_index.get(w["index"])
        if r is None:
            print(f"window {w['index']} was published but is not in the recording")
            bad += 1
        elif r != w:
            keys = sorted(k for k in set(r) | set(w) if r.get(k) != w.get(k))
            print(f"window {w['index']} differs from the recorded one in {keys}")
            bad += 1
    if mode == "all":
        want = [w["index"] for w in recorded]
        have = [w["index"] for w in got]
        if not want:
            print("the recording holds no window")
            bad += 1
        if have != want:
            missing = sorted(set(want) - set(have))
            print(f"published {len(have)} windows, recorded {len(want)}; missing {missing[:10]}"
                  f", order equal: {sorted(have) == have}")
            bad += 1
    elif mode == "range":
        t0, t1 = int(sys.argv[4]), int(sys.argv[5])
        frm, to = float(sys.argv[6]), float(sys.argv[7])
        early = [w["index"] for w in got if w["closed_real_ns"] < t0 + frm * 1e9]
        if early:
            print(f"published before --from {frm}: windows {early}")
            bad += 1
        lo, hi = t1 + (frm + 0.05) * 1e9, t0 + (to - 0.05) * 1e9
        must = [w["index"] for w in recorded if lo <= w["closed_real_ns"] <= hi]
        have = {w["index"] for w in got}
        lost = [k for k in must if k not in have]
        if lost:
            print(f"windows in range not published: {lost}")
            bad += 1
        if not got:
            print("nothing published in range")
            bad += 1
        print(f"in range: {len(got)} published, {len(must)} required, "
              f"{len(recorded) - len(got)} not published")
    else:
        sys.exit(f"unknown mode {mode}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
