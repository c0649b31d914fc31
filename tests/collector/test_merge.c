/* test_merge.c: window merge, closing rules, late samples, exact totals, job end.
 *
 * Time is moved by hand (fx_advance), so every deadline is checked one millisecond before and
 * at the moment it passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture.h"

#define JOB "merge-job"

static void send_sample(fx_t *f, uint32_t rank, uint64_t w, uint64_t count, uint64_t total)
{
    tm_msg_t m;
    tm_sample(&m, JOB, rank, w, f->now.real_ns);
    if (count)
        tm_add_fn(&m, fx_fn(0), count, total, total / count, total / count, 8 * count);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
}

static void test_close_when_all_reported(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 3);
    const unsigned ar = fx_fn(0), send = fx_fn(1);
    uint64_t t = f->now.real_ns;
    for (uint32_t r = 0; r < 3; r++) {
        tm_msg_t m;
        tm_sample(&m, JOB, r, FX_W0, t);
        tm_add_fn(&m, ar, 10 + r, 1000 * (r + 1), 50 + r, 400 + r, 80);
        tm_add_fn(&m, send, 1, 100, 100, 100, 1024);
        m.fs[0].hist_first = 5;
        m.fs[0].n_hist = 2;
        m.hist[0][0] = 3;
        m.hist[0][1] = 7 + r;
        tm_add_peer(&m, (r + 1) % 3, 1, 1024);
        tm_add_occ(&m, ar, 2, 1000);
        tm_add_density(&m, ar, 2, 9, 1, 4);           /* same cell on every rank */
        tm_add_density(&m, ar, -(int32_t)r, 5, 0, 1); /* cells of their own */
        tm_add_call(&m, ar, t - 5000, 3000 + 100 * r, 0, -1);
        m.sample.records_dropped = 1;
        m.sample.calls_late = 2;
        m.sample.samples_dropped_total = r; /* rank r has lost r samples so far */
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
        assert_int_equal(f->n_closed, r == 2 ? 1 : 0);
    }
    const fx_window_t *w = &f->closed[0];
    assert_int_equal(w->index, FX_W0);
    assert_int_equal(w->reporting, 3);
    assert_int_equal(w->missing, 0);
    assert_int_equal(w->fn[0].s.count, 10 + 11 + 12);
    assert_int_equal(w->fn[0].s.total_ns, 6000);
    assert_int_equal(w->fn[0].s.min_ns, 50);
    assert_int_equal(w->fn[0].s.max_ns, 402);
    assert_int_equal(w->fn[0].s.bytes, 240);
    assert_int_equal(w->fn[0].hist[5], 9);
    assert_int_equal(w->fn[0].hist[6], 7 + 8 + 9);
    assert_int_equal(w->fn[1].s.count, 3);
    assert_int_equal(w->fn[1].s.bytes, 3072);
    assert_int_equal(w->mpi_time_ns, 6300);
    assert_true(w->mpi_fraction > 6300.0 / (3.0 * TM_WINDOW_NS) * 0.999 &&
                w->mpi_fraction < 6300.0 / (3.0 * TM_WINDOW_NS) * 1.001);
    assert_int_equal(w->occ[0][2], 3000);
    assert_int_equal(w->occ_total_ns, 3000);
    assert_true(w->occ_fraction > 1e-5 * 0.999 && w->occ_fraction < 1e-5 * 1.001);
    assert_int_equal(w->occ[0][3], 0);
    /* One density cell shared by every rank (summed) and one of each rank's own. */
    assert_int_equal(w->n_density, 4);
    uint64_t shared = 0;
    for (uint32_t i = 0; i < w->n_density; i++)
        if (w->density[i].sub == 2 && w->density[i].bin == 9 && w->density[i].end == 1)
            shared = w->density[i].count;
    assert_int_equal(shared, 12);
    fx_free(f);
}

static void test_window_content(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    const unsigned ar = fx_fn(0);
    uint64_t t = f->now.real_ns;
    for (uint32_t r = 0; r < 2; r++) {
        tm_msg_t m;
        tm_sample(&m, JOB, r, FX_W0, t);
        tm_add_fn(&m, ar, 1, 10, 10, 10, 0);
        tm_add_peer(&m, 1 - r, 3, 300);
        tm_add_peer(&m, r, 1, 5);
        tm_add_density(&m, ar, 2, 9, 1, 4);
        tm_add_density(&m, ar, -1, 3, 0, 1 + r);
        tm_add_call(&m, ar, t - 5000, 3000 + 100 * r, 16, (int32_t)(1 - r));
        tm_add_call(&m, fx_fn(3), t - 9000, 50, 0, -1);
        m.sample.records_dropped = 1;
        m.sample.calls_late = 2;
        m.sample.samples_dropped_total = 4 * r;
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    assert_int_equal(f->n_closed, 1);
    const fx_window_t *w = &f->closed[0];
    assert_int_equal(w->n_density, 2);
    for (uint32_t i = 0; i < w->n_density; i++) {
        const mw_density_cell_t *d = &w->density[i];
        assert_int_equal(d->fn, ar);
        if (d->sub == 2) {
            assert_int_equal(d->bin, 9);
            assert_int_equal(d->end, 1);
            assert_int_equal(d->count, 8);
        } else {
            assert_int_equal(d->sub, -1);
            assert_int_equal(d->end, 0);
            assert_int_equal(d->count, 3);
        }
    }
    assert_int_equal(w->n_pairs, 4);
    for (uint32_t i = 0; i < w->n_pairs; i++) {
        const mw_pair_sum_t *p = &w->pairs[i];
        assert_int_equal(p->messages, p->src == p->dst ? 1 : 3);
    }
    assert_int_equal(w->n_longest, 4);
    assert_int_equal(w->longest[0].rank, 1); /* 3100 ns */
    assert_int_equal(w->longest[0].duration_ns, 3100);
    assert_int_equal(w->longest[0].peer, 0);
    assert_int_equal(w->longest[1].rank, 0);
    assert_int_equal(w->longest[3].duration_ns, 50);
    assert_int_equal(w->records_dropped, 2);
    assert_int_equal(w->calls_late, 4);
    assert_int_equal(w->samples_dropped, 4);
    fx_free(f);
}

static void test_longest_keeps_top(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 4);
    /* 4 ranks x 12 calls = 48 > MW_MERGE_LONGEST: the 32 longest must survive, sorted. */
    for (uint32_t r = 0; r < 4; r++) {
        tm_msg_t m;
        tm_sample(&m, JOB, r, FX_W0, f->now.real_ns);
        for (uint32_t i = 0; i < 12; i++)
            tm_add_call(&m, fx_fn(0), f->now.real_ns - 10000, 1000 + 7 * ((i * 4 + r) * 13 % 48), 0,
                        -1);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    const fx_window_t *w = &f->closed[0];
    assert_int_equal(w->n_longest, MW_MERGE_LONGEST);
    assert_int_equal(w->longest[0].duration_ns, 1000 + 7 * 47);
    for (uint32_t i = 0; i < MW_MERGE_LONGEST; i++)
        assert_int_equal(w->longest[i].duration_ns, 1000 + 7 * (47 - i));
    fx_free(f);
}

static void test_close_by_deadline(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 3);
    send_sample(f, 0, FX_W0, 5, 500);
    fx_advance(f, 200);
    send_sample(f, 1, FX_W0, 5, 500); /* the deadline counts from the first sample */
    long ms = mw_collector_timeout_ms(f->c, &f->now);
    assert_true(ms >= 799 && ms <= 800);
    fx_advance(f, 799);
    assert_int_equal(f->n_closed, 0);
    fx_advance(f, 1);
    assert_int_equal(f->n_closed, 1);
    assert_int_equal(f->closed[0].reporting, 2);
    assert_int_equal(f->closed[0].missing, 1);
    assert_int_equal(f->c->job.partial_windows, 1);
    assert_int_equal(f->c->stats.partial_windows, 1);

    /* The straggler's sample is late: counted, kept in the totals, not in any window. */
    send_sample(f, 2, FX_W0, 7, 700);
    assert_int_equal(f->c->job.late, 1);
    assert_int_equal(f->c->stats.late, 1);
    assert_int_equal(f->n_closed, 1);
    assert_int_equal(f->c->job.fn[fx_fn(0)].count, 17);
    assert_int_equal(f->c->job.fn[fx_fn(0)].total_ns, 1700);
    assert_int_equal(f->c->job.ranks[2].mpi_time_ns, 700);

    /* The next window has everyone again and closes at once, complete. */
    for (uint32_t r = 0; r < 3; r++)
        send_sample(f, r, FX_W0 + 1, 1, 10);
    assert_int_equal(f->n_closed, 2);
    assert_int_equal(f->closed[1].index, FX_W0 + 1);
    assert_int_equal(f->closed[1].missing, 0);
    assert_int_equal(f->closed[1].reporting, 3);
    fx_free(f);
}

/* Each rank's share of the window inside MPI (by occupancy, in thousandths), and the mark of
 * a rank whose sample the window does not have; a window reused from the ring starts clean. */
static void test_rank_mpi_share(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 3);
    for (uint64_t k = 0; k < 2; k++) {
        for (uint32_t r = 0; r < 2; r++) {
            tm_msg_t m;
            tm_sample(&m, JOB, r, FX_W0 + k, f->now.real_ns);
            /* rank 0: 30% of the window in two sub-slots; rank 1: 55% (window k = 0) */
            uint64_t ns = (r == 0 ? 300 : 550 - 100 * k) * (TM_WINDOW_NS / 1000);
            tm_add_occ(&m, fx_fn(0), 1, ns / 2);
            tm_add_occ(&m, fx_fn(1), 2, ns - ns / 2);
            assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
        }
    }
    fx_advance(f, 1000);
    assert_int_equal(f->n_closed, 2);
    for (uint64_t k = 0; k < 2; k++) {
        const fx_window_t *w = &f->closed[k];
        assert_int_equal(w->n_rank_pm, 3);
        assert_int_equal(w->rank_pm[0], 300);
        assert_int_equal(w->rank_pm[1], 550 - 100 * k);
        assert_int_equal(w->rank_pm[2], MW_RANK_PM_NONE);
    }
    fx_free(f);
}

static void test_out_of_order(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    send_sample(f, 0, FX_W0, 1, 10);
    send_sample(f, 0, FX_W0 + 1, 1, 10);
    send_sample(f, 0, FX_W0 + 2, 1, 10);
    assert_int_equal(f->n_closed, 0);
    /* Rank 1 started one window earlier: not late, the first window moves back. */
    send_sample(f, 1, FX_W0 - 1, 1, 10);
    assert_int_equal(f->c->job.late, 0);
    assert_int_equal(f->n_closed, 1);
    assert_int_equal(f->closed[0].index, FX_W0 - 1);
    assert_int_equal(f->closed[0].reporting, 1);
    assert_int_equal(f->closed[0].missing, 0); /* rank 0 had nothing before FX_W0 */
    send_sample(f, 1, FX_W0 + 1, 1, 10);       /* skips FX_W0: closes it and FX_W0 + 1 */
    assert_int_equal(f->n_closed, 3);
    assert_int_equal(f->closed[1].index, FX_W0);
    assert_int_equal(f->closed[1].reporting, 1);
    assert_int_equal(f->closed[2].index, FX_W0 + 1);
    assert_int_equal(f->closed[2].reporting, 2);
    send_sample(f, 1, FX_W0 + 2, 1, 10);
    assert_int_equal(f->n_closed, 4);
    assert_int_equal(f->closed[3].index, FX_W0 + 2);
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(f->closed[i].missing, 0);
    fx_free(f);
}

static void test_deadline_closes_in_order(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 3);
    send_sample(f, 0, FX_W0 + 1, 1, 10); /* window W0+1 opens first ... */
    fx_advance(f, 500);
    send_sample(f, 1, FX_W0, 1, 10); /* ... W0 half a second later */
    fx_advance(f, 499);
    assert_int_equal(f->n_closed, 0);
    fx_advance(f, 1); /* W0+1's deadline: W0 must close first */
    assert_int_equal(f->n_closed, 2);
    assert_int_equal(f->closed[0].index, FX_W0);
    assert_int_equal(f->closed[0].missing, 1); /* rank 2 */
    assert_int_equal(f->closed[1].index, FX_W0 + 1);
    assert_int_equal(f->closed[1].missing, 2); /* ranks 1 and 2 */
    fx_free(f);
}

static void test_bye_releases_window(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    send_sample(f, 0, FX_W0, 1, 10);
    assert_int_equal(f->n_closed, 0);
    tm_msg_t m;
    tm_bye(&m, JOB, 1);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(f->n_closed, 1);
    assert_int_equal(f->closed[0].missing, 0);
    fx_free(f);
}

static void test_hello_pending_ranks_wait(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    tm_hello(&m, JOB, 0, 2, f->now.real_ns);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    /* Rank 1's hello is still on its way: the window waits for it. */
    send_sample(f, 0, FX_W0, 1, 10);
    assert_int_equal(f->n_closed, 0);
    tm_hello(&m, JOB, 1, 2, f->now.real_ns);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    send_sample(f, 1, FX_W0, 1, 10);
    assert_int_equal(f->n_closed, 1);
    assert_int_equal(f->closed[0].reporting, 2);
    fx_free(f);
}

static void test_eviction(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    send_sample(f, 0, FX_W0, 1, 10);
    uint32_t cap = f->c->merge.cap;
    send_sample(f, 0, FX_W0 + cap, 1, 10); /* does not fit beside W0 */
    assert_int_equal(f->n_closed, 1);
    assert_int_equal(f->closed[0].index, FX_W0);
    assert_int_equal(f->closed[0].missing, 1);
    assert_int_equal(f->c->merge.evicted, 1);
    assert_int_equal(f->c->merge.head, (int64_t)FX_W0 + 1);
    send_sample(f, 1, FX_W0, 1, 10); /* closed by the eviction: late */
    assert_int_equal(f->c->job.late, 1);
    send_sample(f, 1, FX_W0 + 3, 1, 10); /* still open */
    assert_int_equal(f->c->job.late, 1);

    /* Far ahead (half a day of 100 ms windows): everything before closes, in order, at once.
     * The collector's clock is there too (a job far ahead of it is refused as `ahead`). */
    f->now.real_ns += 400000 * TM_WINDOW_NS;
    send_sample(f, 0, FX_W0 + 400000, 1, 10);
    assert_int_equal(f->n_closed, 3);
    assert_int_equal(f->closed[1].index, FX_W0 + 3);
    assert_int_equal(f->closed[2].index, FX_W0 + cap);
    assert_int_equal(f->c->merge.head, (int64_t)(FX_W0 + 400000 - cap + 1));
    send_sample(f, 1, FX_W0 + 400000, 1, 10); /* both there: closes */
    assert_int_equal(f->n_closed, 4);
    assert_int_equal(f->closed[3].index, FX_W0 + 400000);
    assert_int_equal(f->closed[3].reporting, 2);
    assert_int_equal(f->closed[3].missing, 0);
    fx_free(f);
}

/* A deterministic generator, so failures reproduce. */
static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* The job's entry for pair (src, dst), or NULL; there must be one at most. */
static const mw_pair_sum_t *job_pair(const mw_job_t *job, uint32_t src, uint32_t dst)
{
    const mw_pair_sum_t *found = NULL;
    for (uint32_t i = 0; i < job->pairs.n; i++) {
        const mw_pair_sum_t *p = MW__INDEX_AT(&job->pairs, const mw_pair_sum_t, i);
        if (p->src == src && p->dst == dst) {
            assert_null(found);
            found = p;
        }
    }
    return found;
}

static void test_totals_exact(void **state)
{
    (void)state;
    enum { RANKS = 4, WINDOWS = 30, FNS = 5 };
    fx_t *f = fx_new();
    fx_hellos(f, JOB, RANKS);
    uint64_t seed = 12345;
    uint64_t want_count[FNS] = {0}, want_time[FNS] = {0}, want_bytes[FNS] = {0};
    uint64_t want_rank_time[RANKS] = {0}, want_pair_msgs[RANKS][RANKS] = {{0}};
    tm_msg_t held;

    for (uint64_t k = 0; k < WINDOWS; k++) {
        int hold = k % 7 == 3; /* rank 3's sample of this window arrives after the deadline */
        for (uint32_t r = 0; r < RANKS; r++) {
            tm_msg_t m;
            tm_msg_t *p = r == 3 && hold ? &held : &m;
            tm_sample(p, JOB, r, FX_W0 + k, f->now.real_ns);
            for (int i = 0; i < FNS; i++) {
                uint64_t count = lcg(&seed) % 50;
                if (count == 0)
                    continue;
                uint64_t total = count * (100 + lcg(&seed) % 100000);
                uint64_t bytes = lcg(&seed) % 1000000;
                tm_add_fn(p, fx_fn(i), count, total, total / count / 2, total / count * 2, bytes);
                want_count[i] += count;
                want_time[i] += total;
                want_bytes[i] += bytes;
                want_rank_time[r] += total;
            }
            uint32_t peer = (uint32_t)lcg(&seed) % RANKS;
            uint64_t msgs = 1 + lcg(&seed) % 9;
            tm_add_peer(p, peer, msgs, msgs * 64);
            want_pair_msgs[r][peer] += msgs;
            if (p == &m)
                assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
        }
        fx_advance(f, 100);
        if (hold) {
            fx_advance(f, 1000);
            assert_int_equal(fx_feed(f, &held), MW_ACCEPTED);
        }
    }
    for (uint32_t r = 0; r < RANKS; r++) {
        tm_msg_t m;
        tm_bye(&m, JOB, r);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    const mw_job_t *job = &f->c->job;
    assert_int_equal(job->ended, MW_END_COMPLETE);
    assert_int_equal(job->late, (WINDOWS + 3) / 7);
    assert_int_equal(job->partial_windows, (WINDOWS + 3) / 7);
    assert_int_equal(job->windows, WINDOWS);
    assert_int_equal(f->n_closed, WINDOWS);

    uint64_t window_count[FNS] = {0};
    for (unsigned i = 0; i < f->n_closed; i++) {
        assert_int_equal(f->closed[i].index, FX_W0 + i); /* in order, each once */
        for (int j = 0; j < FNS; j++)
            window_count[j] += f->closed[i].fn[j].s.count;
    }
    for (int i = 0; i < FNS; i++) {
        const mw_fn_total_t *t = &job->fn[fx_fn(i)];
        assert_int_equal(t->count, want_count[i]);
        assert_int_equal(t->total_ns, want_time[i]);
        assert_int_equal(t->bytes, want_bytes[i]);
        assert_true(window_count[i] <= want_count[i]); /* late ones are in totals only */
    }
    for (uint32_t r = 0; r < RANKS; r++) {
        assert_int_equal(job->ranks[r].mpi_time_ns, want_rank_time[r]);
        for (uint32_t d = 0; d < RANKS; d++) {
            const mw_pair_sum_t *p = job_pair(job, r, d);
            assert_int_equal(p ? p->messages : 0, want_pair_msgs[r][d]);
        }
    }
    fx_free(f);
}

/* Per-rank totals whatever the order of functions and peers in the samples: a first sample
 * in a scrambled order with a peer listed twice (the rank's block), later samples in other
 * orders, dropping some keys and adding new ones (late entries), checked against sums kept
 * here; every (rank, function) and (src, dst) must have exactly one entry. The window's pairs
 * fold the repeated peer too. */
static void test_rank_totals_any_order(void **state)
{
    (void)state;
    enum { RANKS = 6, WINDOWS = 12, FNS = 8 };
    fx_t *f = fx_new();
    fx_hellos(f, JOB, RANKS);
    uint64_t seed = 99;
    uint64_t want_fn[RANKS][FNS] = {{0}}, want_msgs[RANKS][RANKS] = {{0}};
    for (uint64_t k = 0; k < WINDOWS; k++) {
        for (uint32_t r = 0; r < RANKS; r++) {
            tm_msg_t m;
            tm_sample(&m, JOB, r, FX_W0 + k, f->now.real_ns);
            int order[FNS];
            for (int i = 0; i < FNS; i++)
                order[i] = i;
            for (int i = FNS - 1; i > 0; i--) { /* shuffle */
                int j = (int)(lcg(&seed) % (uint64_t)(i + 1)), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            /* The first window has functions 0..3 only; later ones any subset. */
            for (int i = 0; i < FNS; i++) {
                int fn = order[i];
                if (k == 0 ? fn >= 4 : lcg(&seed) % 3 == 0)
                    continue;
                uint64_t count = 1 + lcg(&seed) % 20;
                tm_add_fn(&m, fx_fn(fn), count, count * 10, 10, 10, 0);
                want_fn[r][fn] += count;
            }
            uint32_t peers[3] = {(uint32_t)lcg(&seed) % RANKS, (uint32_t)lcg(&seed) % RANKS,
                                 (uint32_t)lcg(&seed) % RANKS};
            if (k == 0)
                peers[2] = peers[0]; /* listed twice in the rank's first sample */
            for (int i = 0; i < 3; i++) {
                tm_add_peer(&m, peers[i], 1 + i, 8);
                want_msgs[r][peers[i]] += 1 + (uint64_t)i;
            }
            assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
        }
        if (k == 0) { /* window 0 folded each rank's repeated peer into one pair */
            assert_int_equal(f->n_closed, 1);
            assert_true(f->closed[0].n_pairs <= 2 * RANKS); /* fits the fixture's copy */
            for (uint32_t i = 0; i < f->closed[0].n_pairs; i++)
                for (uint32_t j = 0; j < i; j++)
                    assert_false(f->closed[0].pairs[i].src == f->closed[0].pairs[j].src &&
                                 f->closed[0].pairs[i].dst == f->closed[0].pairs[j].dst);
        }
    }
    const mw_job_t *job = &f->c->job;
    for (uint32_t r = 0; r < RANKS; r++) {
        for (int fn = 0; fn < FNS; fn++) {
            const mw_rank_fn_t *found = NULL;
            for (uint32_t i = 0; i < job->rank_fn.n; i++) {
                const mw_rank_fn_t *e = MW__INDEX_AT(&job->rank_fn, const mw_rank_fn_t, i);
                if (e->rank == r && e->fn == fx_fn(fn)) {
                    assert_null(found);
                    found = e;
                }
            }
            assert_int_equal(found ? found->count : 0, want_fn[r][fn]);
        }
        for (uint32_t d = 0; d < RANKS; d++) {
            const mw_pair_sum_t *p = job_pair(job, r, d);
            assert_int_equal(p ? p->messages : 0, want_msgs[r][d]);
        }
    }
    assert_int_equal(job->overflow, 0);
    fx_free(f);
}

static void test_latency_histogram(void **state)
{
    (void)state;
    mw_latency_t h;
    memset(&h, 0, sizeof h);
    assert_int_equal(mw__latency_quantile(&h, 0.5), 0);
    mw__latency_add(&h, 7);
    assert_int_equal(mw__latency_quantile(&h, 0.99), 7); /* exact below 16 ns */
    memset(&h, 0, sizeof h);
    for (uint64_t ms = 1; ms <= 1000; ms++)
        mw__latency_add(&h, ms * MW_NS_PER_MS);
    /* At most one bucket (1/8 of the value) above the true quantile, never below it. */
    uint64_t p50 = mw__latency_quantile(&h, 0.5), p99 = mw__latency_quantile(&h, 0.99);
    assert_true(p50 >= 500 * MW_NS_PER_MS && p50 <= 500 * MW_NS_PER_MS * 9 / 8);
    assert_true(p99 >= 990 * MW_NS_PER_MS && p99 <= 1000 * MW_NS_PER_MS);
    assert_int_equal(mw__latency_quantile(&h, 1.0), 1000 * MW_NS_PER_MS); /* clamped to max */
    mw__latency_add(&h, UINT64_MAX);
    assert_int_equal(mw__latency_quantile(&h, 1.0), UINT64_MAX);
}

/* The stats' close latency: from the window's end on the grid to its close (real time), and
 * from its last sample to its close (monotonic). */
static void test_close_latency(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    /* Move both clocks to 30 ms after the end of window FX_W0. */
    uint64_t to = (FX_W0 + 1) * TM_WINDOW_NS + 30 * MW_NS_PER_MS;
    f->now.mono_ns += to - f->now.real_ns;
    f->now.real_ns = to;
    send_sample(f, 0, FX_W0, 1, 10);
    f->now.mono_ns += 5 * MW_NS_PER_MS;
    f->now.real_ns += 5 * MW_NS_PER_MS;
    send_sample(f, 1, FX_W0, 1, 10); /* complete: closes now, 35 ms after its end */
    assert_int_equal(f->n_closed, 1);
    const mw_stats_t *st = &f->c->stats;
    assert_int_equal(st->close_latency.count, 1);
    assert_int_equal(mw__latency_quantile(&st->close_latency, 0.5), 35 * MW_NS_PER_MS);
    assert_int_equal(mw__latency_quantile(&st->close_wait, 0.5), 0);

    /* Window FX_W0 + 1 has one sample and closes at its deadline: it waited the lateness
     * allowance after its (only, so last) sample. */
    send_sample(f, 0, FX_W0 + 1, 1, 10);
    fx_advance(f, f->opt.lateness_ms);
    assert_int_equal(f->n_closed, 2);
    assert_int_equal(st->close_wait.count, 2);
    assert_int_equal(mw__latency_quantile(&st->close_wait, 1.0), f->opt.lateness_ms * MW_NS_PER_MS);
    uint64_t want = f->now.real_ns - (FX_W0 + 2) * TM_WINDOW_NS;
    assert_int_equal(mw__latency_quantile(&st->close_latency, 1.0), want);

    /* A window whose end is still ahead of the collector's clock counts as 0. */
    f->now.real_ns = (FX_W0 + 2) * TM_WINDOW_NS;
    send_sample(f, 0, FX_W0 + 5, 1, 10);
    send_sample(f, 1, FX_W0 + 5, 1, 10);
    assert_int_equal(f->n_closed, 3);
    assert_int_equal(st->close_latency.bucket[0], 1);
    fx_free(f);
}

static void test_job_end_silence(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    f->opt.exit_after_job = 1;
    fx_hellos(f, JOB, 3);
    tm_msg_t m;
    send_sample(f, 0, FX_W0, 1, 10);
    send_sample(f, 1, FX_W0, 1, 10);
    tm_bye(&m, JOB, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    fx_advance(f, 1000); /* W0 closes by deadline, rank 2 missing */
    assert_int_equal(f->n_closed, 1);
    send_sample(f, 1, FX_W0 + 1, 1, 10);
    fx_advance(f, 10000 - 1); /* the silence timeout counts from the last message */
    assert_int_equal(f->c->job.ended, MW_END_NONE);
    assert_false(f->c->exit_requested);
    fx_advance(f, 1);
    assert_int_equal(f->c->job.ended, MW_END_SILENCE);
    assert_int_equal(f->c->job.dead, 2);
    assert_int_equal(f->c->job.ranks[0].state, MW_RANK_DONE);
    assert_int_equal(f->c->job.ranks[2].state, MW_RANK_DEAD);
    assert_int_equal(f->n_closed, 2);
    assert_int_equal(f->closed[1].missing, 1);
    assert_true(f->c->exit_requested);
    assert_int_equal(mw_collector_timeout_ms(f->c, &f->now), -1);
    fx_free(f);
}

static void test_job_end_complete(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    f->opt.exit_after_job = 1;
    fx_hellos(f, JOB, 2);
    send_sample(f, 0, FX_W0, 1, 10);
    send_sample(f, 0, FX_W0 + 1, 1, 10);
    tm_msg_t m;
    tm_bye(&m, JOB, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_false(f->c->exit_requested);
    tm_bye(&m, JOB, 1); /* rank 1 never sent a sample */
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(f->c->job.ended, MW_END_COMPLETE);
    assert_true(f->c->exit_requested);
    assert_int_equal(f->n_closed, 2);
    fx_free(f);
}

static void test_finish_closes_windows(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    send_sample(f, 0, FX_W0, 1, 10);
    mw_collector_finish(f->c, &f->now);
    assert_int_equal(f->n_closed, 1);
    assert_int_equal(f->closed[0].missing, 1);
    assert_int_equal(f->c->job.ended, MW_END_SIGNAL);
    fx_free(f);
}

static void test_index(void **state)
{
    (void)state;
    mw__index_t ix;
    assert_int_equal(mw__index_init(&ix, sizeof(uint64_t), 4, 1u << 16), 0);
    for (int round = 0; round < 3; round++) {
        for (uint64_t k = 0; k < 50000; k++) {
            int created;
            uint64_t *v = mw__index_get(&ix, k * 0x100000001ull, &created);
            assert_non_null(v);
            assert_true(created);
            *v = k + (uint64_t)round;
        }
        assert_int_equal(ix.n, 50000);
        for (uint64_t k = 0; k < 50000; k++) {
            uint64_t *v = mw__index_find(&ix, k * 0x100000001ull);
            assert_non_null(v);
            assert_int_equal(*v, k + (uint64_t)round);
        }
        assert_null(mw__index_find(&ix, 7));
        mw__index_clear(&ix);
        assert_int_equal(ix.n, 0);
        assert_null(mw__index_find(&ix, 0x100000001ull));
    }
    /* A small clear (the probing path) also leaves nothing findable. */
    for (uint64_t k = 0; k < 100; k++)
        assert_non_null(mw__index_get(&ix, k << 40, NULL));
    mw__index_clear(&ix);
    for (uint64_t k = 0; k < 100; k++)
        assert_null(mw__index_find(&ix, k << 40));
    mw__index_free(&ix);

    assert_int_equal(mw__index_init(&ix, 8, 2, 4), 0);
    for (uint64_t k = 0; k < 4; k++)
        assert_non_null(mw__index_get(&ix, k, NULL));
    assert_null(mw__index_get(&ix, 99, NULL));    /* full */
    assert_non_null(mw__index_get(&ix, 2, NULL)); /* existing keys are still found */
    mw__index_free(&ix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_close_when_all_reported),
        cmocka_unit_test(test_window_content),
        cmocka_unit_test(test_longest_keeps_top),
        cmocka_unit_test(test_close_by_deadline),
        cmocka_unit_test(test_rank_mpi_share),
        cmocka_unit_test(test_out_of_order),
        cmocka_unit_test(test_deadline_closes_in_order),
        cmocka_unit_test(test_bye_releases_window),
        cmocka_unit_test(test_hello_pending_ranks_wait),
        cmocka_unit_test(test_eviction),
        cmocka_unit_test(test_totals_exact),
        cmocka_unit_test(test_rank_totals_any_order),
        cmocka_unit_test(test_latency_histogram),
        cmocka_unit_test(test_close_latency),
        cmocka_unit_test(test_job_end_silence),
        cmocka_unit_test(test_job_end_complete),
        cmocka_unit_test(test_finish_closes_windows),
        cmocka_unit_test(test_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
