/* test_source.c: the viewer's data source (viewer/source.c, source_replay.c) on synthetic
 * recordings.
 *
 * A "picking" recording (synth.h: 16 ranks, 20 windows, four known long calls) is written to a
 * temporary directory and opened as the viewer opens it:
 *   - at speed 0, with the whole run needed: polling settles with exactly the recording's
 *     windows in the model, the extent is the recording's span, the job is the final one
 *     (complete, 16 ranks, its name and hosts), and the status counts requests and no error;
 *   - a rank request for rank 5 over the whole run returns rank 5's known long call (exact:
 *     function, start, duration, bytes, peer) and none of the other ranks' long calls; one for
 *     a range without long calls returns none;
 *   - at speed 10 the windows appear over time: few at the first poll, all of them once the
 *     replay has played (about 0.2 s: more than 0.15 s, and under 2 s in one of three tries,
 *     so that a loaded machine does not fail it), and the job then ends;
 *   - a missing file or one that is not a recording is refused with a message.
 * A plain main: the first failed check prints where and exits 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model.h"
#include "source.h"
#include "synth.h"

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Polls until nothing is asked for, nothing is busy and polls add nothing (or `secs` pass).
 * Returns the windows added. */
static long settle(mw_source_t *s, mw_model_t *m, double secs)
{
    long added = 0;
    int quiet = 0;
    uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
    while (now_ns() < end && quiet < 3) {
        int n = mw_source_poll(s, m, now_ns());
        CHECK(n >= 0, "poll failed");
        added += n;
        quiet = n == 0 && !mw_model_busy(m) && !mw_source_rank_busy(s) ? quiet + 1 : 0;
        mw_source_wait(s, 5);
    }
    return added;
}

static void test_replay(const char *path, const sy_result_t *r, uint32_t ranks, uint32_t windows)
{
    char err[256];
    mw_source_t *s = mw_source_replay(path, 0, err, sizeof err);
    CHECK(s, "%s", err);
    mw_model_t *m = mw_model_new(0);
    CHECK(m, "mw_model_new");
    /* The first poll sets the job: then the whole run can be declared needed. */
    CHECK(mw_source_poll(s, m, now_ns()) >= 0, "first poll");
    const Mpiwatch__JobInfo *job = mw_model_job(m);
    CHECK(job, "no job after the first poll");
    double secs = (double)windows * (double)r->window_ns / 1e9;
    mw_model_need(m, 0, secs, 0, secs);
    settle(s, m, 20);

    job = mw_model_job(m);
    CHECK(job && !strcmp(job->job, "synth-picking"), "job name %s", job ? job->job : "(none)");
    CHECK(job->size == ranks, "size %u", job->size);
    CHECK(job->state && !strcmp(job->state, "complete"), "state %s", job->state);
    size_t hosts = 0; /* the collector's host 0 is "", the unknown host */
    for (size_t i = 0; i < job->n_hosts; i++)
        hosts += job->hosts[i] && *job->hosts[i];
    CHECK(hosts == 4, "%zu named hosts", hosts);
    CHECK(job->n_ranks == ranks, "rank infos %zu", job->n_ranks);
    uint64_t oldest = 0, newest = 0;
    CHECK(mw_model_extent(m, &oldest, &newest) == 0, "no extent");
    CHECK(oldest == r->first_window && newest == r->last_window,
          "extent %" PRIu64 "..%" PRIu64 ", want %" PRIu64 "..%" PRIu64, oldest, newest,
          r->first_window, r->last_window);
    CHECK(mw_model_cached_windows(m) == windows, "cached %zu windows, want %u",
          mw_model_cached_windows(m), windows);
    for (uint64_t k = r->first_window; k <= r->last_window; k++) {
        const Mpiwatch__Window *w = mw_model_window(m, k);
        CHECK(w && w->index == k, "window %" PRIu64 " missing", k);
        CHECK(w->ranks_reporting == ranks && w->ranks_missing == 0, "window %" PRIu64, k);
    }
    CHECK(mw_model_origin_ns(m) == r->first_window * r->window_ns, "origin");
    mw_source_status_t st;
    mw_source_status(s, &st);
    CHECK(!st.live && !st.playing && st.ended, "status live %d playing %d ended %d", st.live,
          st.playing, st.ended);
    CHECK(st.requests > 0 && st.replies == st.requests && st.errors == 0,
          "requests %" PRIu64 " replies %" PRIu64 " errors %" PRIu64, st.requests, st.replies,
          st.errors);
    CHECK(!strcmp(st.what, path), "what %s", st.what);
    CHECK(strstr(mw_source_event(s), "job_end") != NULL, "last event '%s'", mw_source_event(s));

    /* Rank 5's samples: its long call, exactly, and no one else's. */
    const sy_call_t *want = NULL;
    for (unsigned i = 0; i < r->n_calls; i++)
        if (r->calls[i].rank == 5)
            want = &r->calls[i];
    CHECK(want, "the pattern has no long call of rank 5");
    CHECK(mw_source_want_rank(s, 5, r->first_window, r->last_window) == 0, "want_rank");
    CHECK(mw_source_rank_busy(s), "rank request not busy");
    settle(s, m, 20);
    CHECK(!mw_source_rank_busy(s), "rank request still busy");
    uint32_t rank = 99;
    size_t n = 0;
    const mw_rank_call_t *calls = mw_model_rank_calls(m, &rank, &n);
    CHECK(rank == 5 && n > 0, "rank %u, %zu calls", rank, n);
    int exact = 0, found = 0;
    uint64_t counted = 0;
    for (size_t i = 0; i < n; i++) {
        counted += calls[i].count;
        if (!calls[i].exact)
            continue;
        exact++;
        if (calls[i].fn == want->fn && calls[i].start_ns == want->start_ns &&
            calls[i].duration_ns == want->duration_ns && calls[i].bytes == want->bytes &&
            calls[i].peer == want->peer)
            found++;
    }
    CHECK(exact == 1 && found == 1, "%d exact calls, %d of them rank 5's known one", exact, found);
    /* Background: 2 calls per sub-slot the rank is not inside its long call (16 per window). */
    CHECK(counted > 2u * 16 * (windows - 1), "rank 5: %" PRIu64 " calls counted", counted);

    /* A range without long calls of rank 5: its first two windows. */
    CHECK(mw_source_want_rank(s, 5, r->first_window, r->first_window + 1) == 0, "want_rank");
    settle(s, m, 20);
    calls = mw_model_rank_calls(m, &rank, &n);
    exact = 0;
    for (size_t i = 0; i < n; i++)
        exact += calls[i].exact;
    CHECK(rank == 5 && n > 0 && exact == 0, "rank %u: %zu calls, %d exact", rank, n, exact);

    mw_source_free(s);
    mw_model_free(m);
}

/* One replay at speed 10; returns how long it played (s). */
static double test_playing(const char *path, const sy_result_t *r, uint32_t windows)
{
    char err[256];
    mw_source_t *s = mw_source_replay(path, 10, err, sizeof err);
    CHECK(s, "%s", err);
    mw_model_t *m = mw_model_new(0);
    uint64_t t0 = now_ns();
    int first = mw_source_poll(s, m, t0);
    CHECK(first >= 0 && first < (int)windows / 2, "first poll added %d windows", first);
    mw_source_status_t st;
    mw_source_status(s, &st);
    CHECK(st.playing && !st.ended, "playing %d ended %d at the start", st.playing, st.ended);
    double secs = (double)windows * (double)r->window_ns / 1e9;
    mw_model_need(m, 0, secs, 0, secs);
    while (now_ns() - t0 < 5000000000ull) {
        CHECK(mw_source_poll(s, m, now_ns()) >= 0, "poll");
        mw_source_status(s, &st);
        if (!st.playing)
            break;
        mw_source_wait(s, 10);
    }
    double took = (double)(now_ns() - t0) / 1e9;
    CHECK(!st.playing && st.ended, "still playing after %.2f s", took);
    /* The recording spans about 2.1 s of collector time: 0.21 s at speed 10. Pacing can only
     * make it longer, so faster than 0.15 s fails at once; the caller judges the upper bound. */
    CHECK(took > 0.15, "played in %.3f s: not paced", took);
    settle(s, m, 10);
    CHECK(mw_model_cached_windows(m) == windows, "cached %zu", mw_model_cached_windows(m));
    uint64_t oldest, newest;
    CHECK(mw_model_extent(m, &oldest, &newest) == 0 && oldest == r->first_window &&
              newest == r->last_window,
          "extent");
    mw_source_free(s);
    mw_model_free(m);
    return took;
}

int main(void)
{
    char dir[] = "/tmp/mw-test-source.XXXXXX", path[256], err[256];
    CHECK(mkdtemp(dir), "mkdtemp");
    snprintf(path, sizeof path, "%s/picking.mpiw", dir);
    sy_options_t o;
    sy_defaults(&o);
    o.pattern = SY_PICKING;
    sy_result_t r;
    CHECK(sy_write_result(&o, path, NULL, &r) == 0, "cannot write %s", path);

    test_replay(path, &r, o.ranks, o.windows);
    /* Under 2 s, which a replay at speed 1 (2.1 s) cannot reach: a replay slowed by other jobs
     * on a loaded machine is tried again, up to three times, while one that ignores its speed
     * is too slow every time. */
    double took = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        took = test_playing(path, &r, o.windows);
        printf("viewer_source: played at speed 10 in %.3f s\n", took);
        if (took < 2.0)
            break;
    }
    CHECK(took < 2.0, "played in %.3f s three times: the speed is not applied", took);

    CHECK(!mw_source_replay("/nonexistent/x.mpiw", 0, err, sizeof err) && *err, "missing file");
    char bad[256];
    snprintf(bad, sizeof bad, "%s/bad.mpiw", dir);
    FILE *f = fopen(bad, "w");
    CHECK(f, "fopen");
    fputs("this is not a recording\n", f);
    fclose(f);
    err[0] = 0;
    CHECK(!mw_source_replay(bad, 0, err, sizeof err) && *err, "not a recording");

    unlink(path);
    unlink(bad);
    rmdir(dir);
    printf("test_source: all checks passed\n");
    return 0;
}
