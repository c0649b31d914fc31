#!/usr/bin/env python3
"""analyse.py RUN.mpiw [--top N] [--bin S] [--plot OUT.png]: what an MPI job spent its time on.

An example of the mpiwatch Python package (docs/python.md) on a recording made with
`mpiwatch run --record RUN.mpiw -- mpirun ...`:

  1. the top functions: calls, time in them summed over the ranks and its share, bytes;
  2. the MPI fraction over time: the share of the ranks' time spent inside MPI, per S seconds;
  3. the imbalance: per rank, the time outside MPI (computing), and the job's load imbalance
     1 - mean / max of it (0: perfectly balanced; the slowest rank makes the others wait in
     MPI), per window and over the job.

With --plot (needs matplotlib) the MPI fraction and the per-rank compute time are drawn too.
Run it with the package on PYTHONPATH (PREFIX/lib/python3/dist-packages, docs/python.md), e.g.
  PYTHONPATH=/usr/local/lib/python3/dist-packages python3 analyse.py run.mpiw
"""

import argparse
import sys

import mpiwatch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("recording")
    ap.add_argument("--top", type=int, default=8, help="functions to list (8)")
    ap.add_argument("--bin", type=float, default=1.0, help="seconds per line over time (1)")
    ap.add_argument("--plot", help="also draw into this PNG (matplotlib)")
    a = ap.parse_args()

    r = mpiwatch.Recording(a.recording)
    job = r.job
    win = r.windows()
    if job is None or win.empty:
        print("%s: no job or no window recorded" % a.recording, file=sys.stderr)
        return 1
    span = win["t_s"].iloc[-1] + win["window_ns"].iloc[-1] / 1e9
    print("job %s: %s, %d ranks on %d host(s), %d windows of %g ms, %.1f s" %
          (job.name, job.program, job.size, len(job.hosts), len(win), job.window_ns / 1e6, span))

    # 1. top functions
    tot = r.totals()
    rank_time = (win["window_ns"] * win["ranks_reporting"]).sum()
    print("\nTop functions (time summed over the ranks; share of the ranks' time)")
    print("  %-24s %12s %12s %7s %14s" % ("function", "calls", "time_s", "share", "bytes"))
    for f in tot.head(a.top).itertuples():
        print("  %-24s %12d %12.3f %6.1f%% %14d" % (f.function, f.calls, f.time_ns / 1e9,
                                                    100.0 * f.time_ns / rank_time, f.bytes))

    # 2. MPI fraction over time, by occupancy (time inside MPI during each window)
    win["bin"] = (win["t_s"] // a.bin).astype(int)
    over = win.groupby("bin").agg(occ=("occ_total_ns", "sum"), ns=("window_ns", "sum"),
                                  ranks=("ranks_reporting", "mean"))
    over["fraction"] = over["occ"] / (over["ns"] * over["ranks"])
    print("\nMPI fraction over time (share of the ranks' time inside MPI, per %g s)" % a.bin)
    for b, row in over.iterrows():
        frac = min(row["fraction"], 1.0)
        print("  t = %6.1f s  %5.1f%%  %s" % (b * a.bin, 100 * row["fraction"],
                                             "#" * int(round(40 * frac))))

    # 3. imbalance: compute time = window time - time inside MPI, per rank
    rm = r.rank_mpi().dropna(subset=["mpi_fraction"])
    rm = rm.merge(win[["grid_index", "window_ns"]], on="grid_index")
    rm["compute_ns"] = (1.0 - rm["mpi_fraction"].clip(upper=1.0)) * rm["window_ns"]
    per_rank = rm.groupby("rank").agg(compute_ns=("compute_ns", "sum"),
                                      mpi_fraction=("mpi_fraction", "mean"))
    print("\nImbalance (time outside MPI per rank; load imbalance = 1 - mean / max)")
    print("  %6s %12s %13s" % ("rank", "compute_s", "mpi_fraction"))
    for rank, row in per_rank.iterrows():
        print("  %6d %12.3f %12.1f%%" % (rank, row["compute_ns"] / 1e9,
                                         100 * row["mpi_fraction"]))
    c = per_rank["compute_ns"]
    job_imb = 1.0 - c.mean() / c.max() if c.max() > 0 else 0.0
    per_win = rm.groupby("grid_index")["compute_ns"].agg(["mean", "max"])
    per_win = per_win[per_win["max"] > 0]
    win_imb = (1.0 - per_win["mean"] / per_win["max"]).mean() if len(per_win) else 0.0
    print("  load imbalance over the job %.3f, mean of the windows' %.3f; slowest rank %d" %
          (job_imb, win_imb, int(c.idxmax())))

    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6))
        ax1.plot(win["t_s"], win["occ_fraction"])
        ax1.set_xlabel("time (s)")
        ax1.set_ylabel("MPI fraction")
        ax2.bar(per_rank.index, per_rank["compute_ns"] / 1e9)
        ax2.set_xlabel("rank")
        ax2.set_ylabel("compute (s)")
        fig.tight_layout()
        fig.savefig(a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
