/* mw-source-probe: the viewer's data source on a live collector, for tests/viewer/source_live.sh.
 *
 *   mw-source-probe --feed EP [--history EP] [--seconds S] [--until-ended] [--rank R]
 *
 * Connects with mw_source_connect() and polls a model as the viewer's frame loop does (poll,
 * then wait at most 10 ms) for S seconds (default 5), or until the job has ended and nothing
 * is outstanding with --until-ended. The whole run is declared needed, so the model asks the
 * history endpoint for every window it lacks. With --rank R it then asks for rank R's calls
 * over the windows it holds and waits for them. Prints one JSON object: the status counters,
 * the job, the windows held (first, last, count, holes between them), the index of the first
 * window the feed delivered and how many held windows are older than it (they came from the
 * history endpoint), and the rank request's result. Exit status 0, or 1 on a failure.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "source.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"feed", required_argument, NULL, 'f'},    {"history", required_argument, NULL, 'h'},
        {"seconds", required_argument, NULL, 's'}, {"until-ended", no_argument, NULL, 'u'},
        {"rank", required_argument, NULL, 'r'},    {NULL, 0, NULL, 0}};
    const char *feed = NULL, *history = NULL;
    double seconds = 5;
    int until_ended = 0, opt;
    long rank = -1;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'f':
            feed = optarg;
            break;
        case 'h':
            history = optarg;
            break;
        case 's':
            seconds = atof(optarg);
            break;
        case 'u':
            until_ended = 1;
            break;
        case 'r':
            rank = atol(optarg);
            break;
        default:
            fprintf(stderr, "usage: mw-source-probe --feed EP [--history EP] [--seconds S] "
                            "[--until-ended] [--rank R]\n");
            return 2;
        }
    }
    if (!feed) {
        fprintf(stderr, "mw-source-probe: --feed is required\n");
        return 2;
    }
    char err[256];
    mw_source_t *s = mw_source_connect(feed, history, err, sizeof err);
    if (!s) {
        fprintf(stderr, "mw-source-probe: %s\n", err);
        return 1;
    }
    mw_model_t *m = mw_model_new(0);
    if (!m) {
        fprintf(stderr, "mw-source-probe: out of memory\n");
        return 1;
    }
    mw_source_status_t st;
    uint64_t t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9), added = 0;
    uint64_t first_feed = 0;
    int have_first_feed = 0, rc = 0;
    while (now_ns() < end) {
        int n = mw_source_poll(s, m, now_ns());
        if (n < 0) {
            fprintf(stderr, "mw-source-probe: mw_source_poll failed\n");
            rc = 1;
            break;
        }
        added += (uint64_t)n;
        mw_model_need(m, 0, 1e7, 0, 1e7);
        mw_source_status(s, &st);
        uint64_t o, nw;
        if (!have_first_feed && st.feed_windows > 0 && mw_model_extent(m, &o, &nw) == 0) {
            /* The feed's first window is the newest one known when it arrived (the history's
             * last windows are older: the feed is ahead of what history replies had). */
            first_feed = nw;
            have_first_feed = 1;
        }
        if (until_ended && st.ended && !mw_model_busy(m) && now_ns() - t0 > 1000000000ull)
            break;
        mw_source_wait(s, 10);
    }
    long rank_calls = -1, rank_exact = -1;
    uint64_t oldest = 0, newest = 0;
    int have_ext = mw_model_extent(m, &oldest, &newest) == 0;
    if (rank >= 0 && have_ext && mw_source_want_rank(s, (uint32_t)rank, oldest, newest) == 0) {
        uint64_t t1 = now_ns();
        while (mw_source_rank_busy(s) && now_ns() - t1 < 10000000000ull) {
            if (mw_source_poll(s, m, now_ns()) < 0)
                break;
            mw_source_wait(s, 10);
        }
        uint32_t r = 0;
        size_t n = 0;
        const mw_rank_call_t *calls = mw_model_rank_calls(m, &r, &n);
        if (calls && r == (uint32_t)rank) {
            rank_calls = rank_exact = 0;
            for (size_t i = 0; i < n; i++) {
                rank_calls += (long)calls[i].count;
                rank_exact += calls[i].exact;
            }
        }
    }
    mw_source_status(s, &st);
    uint64_t held = 0, holes = 0, older = 0, lo = 0, hi = 0;
    if (have_ext) {
        for (uint64_t k = oldest; k <= newest; k++) {
            if (!mw_model_window(m, k))
                continue;
            if (!held)
                lo = k;
            else if (k != hi + 1)
                holes += k - hi - 1;
            hi = k;
            held++;
            older += have_first_feed && k < first_feed;
        }
    }
    const Mpiwatch__JobInfo *job = mw_model_job(m);
    printf("{\"connected\": %d, \"ended\": %d, \"job\": \"%s\", \"size\": %u, "
           "\"feed_windows\": %" PRIu64 ", \"feed_gaps\": %" PRIu64 ", \"requests\": %" PRIu64
           ", \"replies\": %" PRIu64 ", \"errors\": %" PRIu64 ", \"added\": %" PRIu64
           ", \"extent\": [%" PRIu64 ", %" PRIu64 "], \"held\": %" PRIu64
           ", \"held_first\": %" PRIu64 ", \"held_last\": %" PRIu64 ", \"holes\": %" PRIu64
           ", \"first_feed\": %" PRIu64 ", \"older_than_feed\": %" PRIu64
           ", \"rank_calls\": %ld, \"rank_exact\": %ld, \"event\": \"%s\"}\n",
           st.connected, st.ended, job && job->job ? job->job : "", job ? job->size : 0,
           st.feed_windows, st.feed_gaps, st.requests, st.replies, st.errors, added, oldest, newest,
           held, lo, hi, holes, first_feed, older, rank_calls, rank_exact, mw_source_event(s));
    mw_source_free(s);
    mw_model_free(m);
    return rc;
}
