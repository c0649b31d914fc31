"""mpiwatch: read mpiwatch recordings and live feeds into pandas tables.

    import mpiwatch
    r = mpiwatch.Recording("run.mpiw")
    r.job                       # the job: ranks, hosts, function names, grid
    r.functions()               # windows x functions: calls, time_ns, bytes, occupancy
    r.windows(), r.ranks(), r.pairs(), r.steps(), r.events(), r.regions(), r.sites()

    for topic, item in mpiwatch.follow("tcp://127.0.0.1:7812"):   # a collector's --publish
        ...

docs/python.md describes the tables; docs/recording.md and docs/feed.md the formats read.
"""

from .feed import FeedError, Follower, WindowUpdate, follow
from .recording import Job, Recording, RecordingError, Tables

__version__ = "0.1.0"
__all__ = ["Recording", "RecordingError", "Job", "Tables", "follow", "Follower",
           "WindowUpdate", "FeedError", "__version__"]
