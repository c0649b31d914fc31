#!/usr/bin/python3
# Count events by type with the Debian python3-otf2 bindings (high-level API).
# MUST run with /usr/bin/python3: a pyenv/venv python does not see
# /usr/lib/python3/dist-packages where python3-otf2 installs `otf2`.
# Usage: /usr/bin/python3 otf2_count.py ARCHIVE/traces.otf2 [-v]
import sys
from collections import Counter
import otf2

path = sys.argv[1]
verbose = "-v" in sys.argv
counts = Counter()
with otf2.reader.open(path) as trace:
    d = trace.definitions
    if verbose:
        print("clock:", d.clock_properties.timer_resolution,
              d.clock_properties.global_offset, d.clock_properties.trace_length)
        for c in d.comms:
            print("comm", c.name, "group", c.group.group_type, list(c.group.members),
                  "parent", c.parent.name if c.parent else None)
        for loc in d.locations:
            print("loc", loc._ref, loc.name, loc.group.name, loc.number_of_events)
    last = {}
    for location, event in trace.events:   # merged, time-ordered over locations
        counts[type(event).__name__] += 1
        if verbose and type(event).__name__ in ("MpiSend", "MpiRecv", "MpiIsend", "MpiIrecv",
                                                "MpiCollectiveEnd"):
            print(location.name, event)
for k in sorted(counts):
    print(k, counts[k])
print("TOTAL", sum(counts.values()))
