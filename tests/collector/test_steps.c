/* test_steps.c: per-step totals by difference, step closing and step-mark validation
 * (collector/steps.c, docs/steps.md), with crafted samples carrying StepMarks; the work of
 * the bookkeeping per mark (counted, not timed: issue 12, defect 5) and the caps on what a
 * rank can claim (open steps, marks of closed steps, pairs of open steps, carried peers), each
 * overflowed by crafted marks and checked against the exact count of what it refused, in the
 * counters, the stats JSON and the text report (issue 12, delivery item 2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>
#include <stdio.h>

#include "fixture.h"
#include "steps.h"
#include "summary.h"
#include "report.h"

#define JOB "job-steps"

/* Storage for the marks of one sample. */
typedef struct {
    Mpiwatch__StepMark mark[80];
    Mpiwatch__StepMark *markp[80];
    Mpiwatch__FunctionStat fs[80][4];
    Mpiwatch__FunctionStat *fsp[80][4];
    uint32_t peer_rank[80][2];
    uint64_t peer_messages[80][2], peer_bytes[80][2];
} marks_t;

/* Adds a mark: `count` calls (count*100 ns, count*10 bytes) of fx_fn(0) so far in the window,
 * and `msgs` messages (msgs*10 bytes) to `peer` (none when msgs is 0). */
static Mpiwatch__StepMark *add_mark(tm_msg_t *m, marks_t *k, uint64_t step, uint64_t end_ns,
                                    uint64_t count, uint32_t peer, uint64_t msgs)
{
    size_t i = m->sample.n_steps++;
    Mpiwatch__StepMark *s = &k->mark[i];
    mpiwatch__step_mark__init(s);
    s->step = step;
    s->end_ns = end_ns;
    s->source = 1;
    if (count) {
        Mpiwatch__FunctionStat *f = &k->fs[i][0];
        mpiwatch__function_stat__init(f);
        f->fn = fx_fn(0);
        f->count = count;
        f->total_ns = count * 100;
        f->min_ns = f->max_ns = 100;
        f->bytes = count * 10;
        k->fsp[i][0] = f;
        s->n_functions = 1;
        s->functions = k->fsp[i];
    }
    if (msgs) {
        k->peer_rank[i][0] = peer;
        k->peer_messages[i][0] = msgs;
        k->peer_bytes[i][0] = msgs * 10;
        s->n_peer_rank = s->n_peer_messages = s->n_peer_bytes = 1;
        s->peer_rank = k->peer_rank[i];
        s->peer_messages = k->peer_messages[i];
        s->peer_bytes = k->peer_bytes[i];
    }
    k->markp[i] = s;
    m->sample.steps = k->markp;
    return s;
}

/* A sample of `rank` for window w with `count` calls of fx_fn(0) and `msgs` messages to peer. */
static void sample(fx_t *f, tm_msg_t *m, uint32_t rank, uint64_t w, uint64_t count, uint32_t peer,
                   uint64_t msgs)
{
    tm_sample(m, JOB, rank, w, f->now.real_ns);
    if (count)
        tm_add_fn(m, fx_fn(0), count, count * 100, 100, 100, count * 10);
    if (msgs)
        tm_add_peer(m, peer, msgs, msgs * 10);
}

static uint64_t at(uint64_t w, uint64_t ms)
{
    return w * TM_WINDOW_NS + ms * MW_NS_PER_MS;
}

/* The i-th closed step, decoded (caller frees). */
static Mpiwatch__Step *closed_step(fx_t *f, size_t i)
{
    const uint8_t *pb;
    size_t len = mw__steps_kept(f->c, i, &pb);
    assert_true(len > 0);
    Mpiwatch__Step *s = mpiwatch__step__unpack(NULL, len, pb);
    assert_non_null(s);
    return s;
}

static void steps_counts(fx_t *f, uint64_t *late, uint64_t *below_open, uint64_t *forced)
{
    *late = mw__steps_refused(f->c, MW_STEPS_LATE);
    *below_open = mw__steps_refused(f->c, MW_STEPS_BELOW_OPEN);
    *forced = mw__steps_refused(f->c, MW_STEPS_FORCED);
}

/* The counters, the stats JSON's "steps_refused" (exactly the five reasons) and the report's
 * losses line all say `want` (late, below_open, forced, pairs, carry). */
static void expect_refused(fx_t *f, const uint64_t want[MW_STEPS_REFUSAL_COUNT])
{
    static const char *const names[] = {"late", "below_open", "forced", "pairs", "carry"};
    assert_int_equal(MW_STEPS_REFUSAL_COUNT, 5);
    char line[256] = "steps refused by a cap:";
    for (int r = 0; r < MW_STEPS_REFUSAL_COUNT; r++) {
        assert_string_equal(mw__steps_refusal_name((mw_steps_refusal_t)r), names[r]);
        assert_int_equal(mw__steps_refused(f->c, (mw_steps_refusal_t)r), want[r]);
        size_t n = strlen(line);
        snprintf(line + n, sizeof line - n, "%s %s %llu", r ? "," : "", names[r],
                 (unsigned long long)want[r]);
    }
    char *text = mw__stats_json(f->c);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    cJSON_free(text);
    assert_non_null(root);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "steps_refused");
    assert_true(cJSON_IsObject(st));
    assert_int_equal(cJSON_GetArraySize(st), MW_STEPS_REFUSAL_COUNT);
    for (int r = 0; r < MW_STEPS_REFUSAL_COUNT; r++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, names[r]);
        if (!cJSON_IsNumber(v))
            fail_msg("steps_refused.%s is missing", names[r]);
        assert_true(v->valuedouble == (double)want[r]);
    }
    cJSON_Delete(root);
    char *report = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&report, &len);
    assert_non_null(mem);
    mw__report_write(f->c, mem);
    fclose(mem);
    if (!strstr(report, line))
        fail_msg("no '%s' in the report:\n%s", line, report);
    free(report);
}

static void expect_step(fx_t *f, size_t i, uint64_t step, uint32_t ranks, uint64_t count,
                        uint64_t msgs)
{
    Mpiwatch__Step *s = closed_step(f, i);
    assert_int_equal(s->step, step);
    assert_int_equal(s->ranks, ranks);
    assert_int_equal(s->n_functions, count ? 1 : 0);
    if (count) {
        assert_int_equal(s->functions[0]->fn, fx_fn(0));
        assert_int_equal(s->functions[0]->count, count);
        assert_int_equal(s->functions[0]->total_ns, count * 100);
        assert_int_equal(s->functions[0]->bytes, count * 10);
        assert_int_equal(s->mpi_time_ns, count * 100);
    }
    uint64_t got = 0;
    for (size_t j = 0; j < s->n_pair_src; j++) {
        assert_int_equal(s->pair_src[j], 0);
        assert_int_equal(s->pair_dst[j], 1);
        got += s->pair_messages[j];
        assert_int_equal(s->pair_bytes[j], s->pair_messages[j] * 10);
    }
    assert_int_equal(got, msgs);
    mpiwatch__step__free_unpacked(s, NULL);
}

/* Rank 0: window 0 has 10 calls and 4 messages, marks of steps 0 (3 calls, 1 message) and 1
 * (7, 3); window 1 has 5 calls, a mark of step 2 after 2. Rank 1: window 0 has 4 calls, step 0
 * ends after all 4; window 1 has 6, steps 1 and 2 end after 1 and 6. By difference: step 0 =
 * 3 + 4, step 1 = (7-3) + (4-4 + 1), step 2 = (10-7 + 2) + (6-1); messages 1, 2, 1. */
static void test_difference(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    marks_t k;
    uint64_t w = FX_W0;
    fx_hellos(f, JOB, 2);

    sample(f, &m, 0, w, 10, 1, 4);
    add_mark(&m, &k, 0, at(w, 10), 3, 1, 1);
    add_mark(&m, &k, 1, at(w, 50), 7, 1, 3);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    sample(f, &m, 0, w + 1, 5, 1, 0);
    add_mark(&m, &k, 2, at(w + 1, 20), 2, 0, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    /* Rank 1 has not ended any step: nothing closes. */
    assert_int_equal(mw__steps_closed(f->c), 0);

    sample(f, &m, 1, w, 4, 0, 0);
    add_mark(&m, &k, 0, at(w, 90), 4, 0, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(mw__steps_closed(f->c), 1); /* step 0 only */
    sample(f, &m, 1, w + 1, 6, 0, 0);
    add_mark(&m, &k, 1, at(w + 1, 5), 1, 0, 0);
    add_mark(&m, &k, 2, at(w + 1, 60), 6, 0, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(mw__steps_closed(f->c), 3);

    expect_step(f, 0, 0, 2, 7, 1);
    expect_step(f, 1, 1, 2, 5, 2);
    expect_step(f, 2, 2, 2, 10, 1);
    Mpiwatch__Step *s = closed_step(f, 2);
    assert_int_equal(s->start_ns, at(w, 50));   /* rank 0's previous mark */
    assert_int_equal(s->end_ns, at(w + 1, 60)); /* rank 1's mark */
    mpiwatch__step__free_unpacked(s, NULL);
    fx_free(f);
}

/* A step some rank never ends closes at the job's end with the ranks it has. */
static void test_close_at_end(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    marks_t k;
    uint64_t w = FX_W0;
    fx_hellos(f, JOB, 2);
    sample(f, &m, 0, w, 3, 0, 0);
    add_mark(&m, &k, 0, at(w, 10), 2, 0, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    sample(f, &m, 1, w, 1, 0, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(mw__steps_closed(f->c), 0);
    for (uint32_t r = 0; r < 2; r++) {
        tm_bye(&m, JOB, r);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    assert_int_equal(f->c->job.ended, MW_END_COMPLETE);
    assert_int_equal(mw__steps_closed(f->c), 1);
    expect_step(f, 0, 0, 1, 2, 0);
    fx_free(f);
}

/* Every defect of a mark is rejected as bad_field and leaves no step behind. */
static void test_validation(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    marks_t k;
    uint64_t w = FX_W0;
    fx_hellos(f, JOB, 2);
    for (int defect = 0; defect < 9; defect++) {
        sample(f, &m, 0, w, 10, 1, 4);
        Mpiwatch__StepMark *a = add_mark(&m, &k, 0, at(w, 10), 3, 1, 1);
        Mpiwatch__StepMark *b = add_mark(&m, &k, 1, at(w, 50), 7, 1, 3);
        switch (defect) {
        case 0:
            b->functions[0]->count = 11;
            break; /* above the window's totals */
        case 1:
            a->functions[0]->count = 8;
            break; /* above the next mark */
        case 2:
            b->peer_messages[0] = 5;
            break; /* messages above the totals */
        case 3:
            b->peer_rank[0] = 2;
            break; /* peer outside the job */
        case 4:
            a->functions[0]->fn = MW_FN_COUNT;
            break; /* invalid function */
        case 5:
            a->source = 0;
            break; /* unknown source */
        case 6:
            b->end_ns = at(w + 100, 0);
            break; /* after the window */
        case 7:
            a->end_ns = at(w, 60);
            break; /* out of order */
        case 8:    /* too many marks */
            for (uint64_t i = 2; i < MW_STEPS_MAX_MARKS + 1; i++)
                add_mark(&m, &k, i, at(w, 50), 7, 1, 3);
            break;
        }
        uint64_t before = f->c->stats.rejected[MW_REJECT_BAD_FIELD];
        assert_string_equal(mw__reject_name(fx_feed(f, &m)), "bad_field");
        assert_int_equal(f->c->stats.rejected[MW_REJECT_BAD_FIELD], before + 1);
    }
    /* The valid sample is still accepted afterwards (no scratch left dirty) and is exact. */
    sample(f, &m, 0, w, 10, 1, 4);
    add_mark(&m, &k, 0, at(w, 10), 3, 1, 1);
    add_mark(&m, &k, 1, at(w, 50), 7, 1, 3);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    sample(f, &m, 1, w, 2, 0, 0);
    add_mark(&m, &k, 1, at(w, 70), 2, 0, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(mw__steps_closed(f->c), 2);
    expect_step(f, 0, 0, 1, 3, 1);
    expect_step(f, 1, 1, 2, 4 + 2, 2);
    fx_free(f);
}

/* Issue 12, defect 5: the bookkeeping of a step mark must not depend on the job's size. 2048
 * ranks end one step per window for 4 windows; the work counter (rank records and open-step
 * entries visited) must stay within a constant per mark. The old code scanned every rank and
 * every open-step slot per marked sample: about 2048 x (2048 + 1024) visits per window. */
static void test_work_per_mark(void **state)
{
    (void)state;
    enum { RANKS = 2048, WINDOWS = 4, PER_MARK = 32 };
    fx_t *f = fx_new();
    tm_msg_t m;
    marks_t k;
    uint64_t w = FX_W0;
    fx_hellos(f, JOB, RANKS);
    uint64_t marks = 0;
    for (uint64_t s = 0; s < WINDOWS; s++) {
        for (uint32_t r = 0; r < RANKS; r++) {
            sample(f, &m, r, w + s, 2, (r + 1) % RANKS, 1);
            add_mark(&m, &k, s, at(w + s, 50), 1, (r + 1) % RANKS, 1);
            assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
            marks++;
        }
        /* Every rank ended step s: it closed, and only it. */
        assert_int_equal(mw__steps_closed(f->c), s + 1);
    }
    uint64_t work = mw__steps_work(f->c);
    print_message("steps work: %llu visits for %llu marks\n", (unsigned long long)work,
                  (unsigned long long)marks);
    assert_true(work <= PER_MARK * marks);
    Mpiwatch__Step *st = closed_step(f, 3);
    assert_int_equal(st->step, 3);
    assert_int_equal(st->ranks, RANKS);
    assert_int_equal(st->n_functions, 1);
    assert_int_equal(st->functions[0]->count, 2 * RANKS); /* 1 before the mark, 1 carried */
    assert_int_equal(st->n_pair_src, RANKS);
    mpiwatch__step__free_unpacked(st, NULL);
    fx_free(f);
}

/* Every step count a peer can claim is capped: rank 0 ends 1152 steps (even numbers from 10,
 * 64 per window) while rank 1 ends none. At most MW_STEPS_MAX_OPEN wait; the 128 oldest close
 * with rank 0 only, counted as forced. Rank 1 then ends step 5 (closed before it came: late),
 * 265 (above the floor 264 but below every open step while the cap is reached: refused) and
 * 400: its calls of the first two are folded into step 400, which closes with both ranks and
 * every call, and so do the open steps below it. The work stays within a constant per mark. */
static void test_cap_late_refused(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    marks_t k;
    uint64_t w = FX_W0, marks = 0;
    fx_hellos(f, JOB, 2);
    for (uint64_t i = 0; i < 18; i++) {
        sample(f, &m, 0, w + i, 65, 0, 0);
        for (uint64_t j = 0; j < 64; j++, marks++)
            add_mark(&m, &k, 10 + 2 * (64 * i + j), at(w + i, 1 + j), j + 1, 0, 0);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
        fx_advance(f, 100);
    }
    uint64_t late, refused, forced;
    steps_counts(f, &late, &refused, &forced);
    assert_int_equal(forced, 18 * 64 - MW_STEPS_MAX_OPEN);
    assert_int_equal(mw__steps_closed(f->c), forced);
    assert_int_equal(late + refused, 0);
    Mpiwatch__Step *st = closed_step(f, forced - 1);
    assert_int_equal(st->step, 264);
    assert_int_equal(st->ranks, 1);
    mpiwatch__step__free_unpacked(st, NULL);

    sample(f, &m, 1, w + 17, 10, 0, 0);
    add_mark(&m, &k, 5, at(w + 17, 10), 2, 0, 0);
    add_mark(&m, &k, 265, at(w + 17, 20), 3, 0, 0);
    add_mark(&m, &k, 400, at(w + 17, 30), 7, 0, 0);
    marks += 3;
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    steps_counts(f, &late, &refused, &forced);
    assert_int_equal(late, 1);
    assert_int_equal(refused, 1);
    assert_int_equal(forced, 128);
    /* The same counts, by reason, in the stats JSON and the report. */
    expect_refused(f, (const uint64_t[MW_STEPS_REFUSAL_COUNT]){1, 1, 128, 0, 0});
    /* Steps 266..400 (even) closed: 68 more. */
    assert_int_equal(mw__steps_closed(f->c), 128 + 68);
    st = closed_step(f, 128 + 67);
    assert_int_equal(st->step, 400);
    assert_int_equal(st->ranks, 2);
    assert_int_equal(st->folded, 2);
    assert_int_equal(st->n_functions, 1);
    assert_int_equal(st->functions[0]->count, 1 + 7); /* rank 0's one call, all 7 of rank 1 */
    mpiwatch__step__free_unpacked(st, NULL);
    st = closed_step(f, 128);
    assert_int_equal(st->step, 266);
    assert_int_equal(st->ranks, 1); /* rank 1 passed it without ending it */
    mpiwatch__step__free_unpacked(st, NULL);
    assert_true(mw__steps_work(f->c) <= 32 * marks);
    fx_free(f);
}

/* A sample with more peers than tm_msg_t holds: rank `rank`'s window w with `peers` peers (ids
 * 0..peers-1), `msgs` messages of 10 bytes each to every one, and `n_marks` marks of steps
 * steps[0..], mark j's snapshot holding j + 1 messages to every peer (so each mark hands its
 * step one new message per peer). */
enum { BIG_PEERS = 512 };
static Mpiwatch__StepMark big_mark[MW_STEPS_MAX_MARKS];
static Mpiwatch__StepMark *big_markp[MW_STEPS_MAX_MARKS];
static uint32_t big_rank[BIG_PEERS];
static uint64_t big_msgs[MW_STEPS_MAX_MARKS + 1][BIG_PEERS];
static uint64_t big_bytes[MW_STEPS_MAX_MARKS + 1][BIG_PEERS];

static void big_sample(fx_t *f, tm_msg_t *m, uint32_t rank, uint64_t w, uint32_t peers,
                       uint64_t msgs, unsigned n_marks, const uint64_t *steps)
{
    tm_sample(m, JOB, rank, w, f->now.real_ns);
    for (uint32_t p = 0; p < peers; p++) {
        big_rank[p] = p;
        big_msgs[MW_STEPS_MAX_MARKS][p] = msgs;
        big_bytes[MW_STEPS_MAX_MARKS][p] = msgs * 10;
    }
    m->sample.n_peer_rank = m->sample.n_peer_messages = m->sample.n_peer_bytes = peers;
    m->sample.peer_rank = big_rank;
    m->sample.peer_messages = big_msgs[MW_STEPS_MAX_MARKS];
    m->sample.peer_bytes = big_bytes[MW_STEPS_MAX_MARKS];
    for (unsigned j = 0; j < n_marks; j++) {
        Mpiwatch__StepMark *k = &big_mark[j];
        mpiwatch__step_mark__init(k);
        k->step = steps[j];
        k->end_ns = at(w, 1 + j);
        k->source = 1;
        for (uint32_t p = 0; p < peers; p++) {
            big_msgs[j][p] = j + 1;
            big_bytes[j][p] = (j + 1) * 10;
        }
        k->n_peer_rank = k->n_peer_messages = k->n_peer_bytes = peers;
        k->peer_rank = big_rank;
        k->peer_messages = big_msgs[j];
        k->peer_bytes = big_bytes[j];
        big_markp[j] = k;
    }
    m->sample.n_steps = n_marks;
    m->sample.steps = big_markp;
}

/* Issue 12, delivery item 2: a rank's carry holds an entry per peer it talked to since its
 * last mark, so 512 ranks talking to all 512 would hold 512^2 entries. The carries may grow
 * by 256 entries per rank job-wide (131,072 here); beyond that a peer's segment is left out
 * of the step and counted as `carry`. Every rank ends step 0 at the start of window w, then
 * sends one message to each of the 512 ranks; in window w+1 it ends step 1, which gets what
 * the carries held.
 *
 * Exact count: a peer table starts at 16 entries and doubles, each doubling charged. A rank
 * growing to 512 costs 496, so ranks 0..263 fit whole (130,944); rank 264 grows to 128
 * (+16+32+64 = 131,056; 256 would need 128 more) and leaves out 512-128 = 384; rank 265 grows
 * to 32 (+16 = 131,072, the whole budget) and leaves out 480; ranks 266..511 keep their
 * initial 16 and leave out 496 each: 384 + 480 + 246 x 496 = 122,880 segments. Step 1 then
 * has the other 512^2 - 122,880 = 139,264 pairs, one message each. */
static void test_carry_budget(void **state)
{
    (void)state;
    enum { RANKS = BIG_PEERS };
    fx_t *f = fx_new();
    tm_msg_t m;
    uint64_t w = FX_W0;
    const uint64_t step0 = 0, step1 = 1;
    fx_hellos(f, JOB, RANKS);
    for (uint32_t r = 0; r < RANKS; r++) {
        big_sample(f, &m, r, w, RANKS, 1, 1, &step0);
        big_mark[0].n_peer_rank = big_mark[0].n_peer_messages = big_mark[0].n_peer_bytes = 0;
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    assert_int_equal(mw__steps_closed(f->c), 1); /* step 0: every rank ended it, nothing in it */
    uint64_t carry, budget, pairs;
    mw__steps_held(f->c, &carry, &budget, &pairs);
    assert_int_equal(budget, MW_STEPS_CARRY_PER_RANK * RANKS);
    assert_int_equal(carry, budget); /* grown to the budget exactly, not beyond */
    const uint64_t left_out = 384 + 480 + 246 * 496;
    expect_refused(f, (const uint64_t[MW_STEPS_REFUSAL_COUNT]){0, 0, 0, 0, left_out});

    for (uint32_t r = 0; r < RANKS; r++) {
        big_sample(f, &m, r, w + 1, 0, 0, 1, &step1);
        big_mark[0].n_peer_rank = big_mark[0].n_peer_messages = big_mark[0].n_peer_bytes = 0;
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    assert_int_equal(mw__steps_closed(f->c), 2);
    mw__steps_held(f->c, &carry, &budget, &pairs);
    assert_int_equal(carry, 0); /* handed to step 1 and given back */
    assert_int_equal(pairs, 0); /* step 1 closed: its list was given back too */
    Mpiwatch__Step *st = closed_step(f, 1);
    assert_int_equal(st->step, 1);
    assert_int_equal(st->ranks, RANKS);
    uint64_t msgs = 0;
    for (size_t j = 0; j < st->n_pair_src; j++)
        msgs += st->pair_messages[j];
    assert_int_equal(st->n_pair_src, (uint64_t)RANKS * RANKS - left_out);
    assert_int_equal(msgs + left_out, (uint64_t)RANKS * RANKS); /* kept + counted = sent */
    mpiwatch__step__free_unpacked(st, NULL);
    /* Budget given back: a rank can carry all its peers again, nothing more is refused. */
    big_sample(f, &m, 7, w + 2, RANKS, 1, 0, NULL);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(mw__steps_refused(f->c, MW_STEPS_CARRY), left_out);
    fx_free(f);
}

/* Issue 12, delivery item 2: pairs of one step beyond MW_MERGE_MAX_PAIRS used to be dropped
 * without a count, and 1024 open steps could each hold that many. Rank 0 of a 512-rank job
 * (the others never mark, so the steps stay open) ends step 10 64 times per sample, each mark
 * handing it one message to each of 512 peers: 32,768 pair entries per sample. After 128
 * samples step 10 holds 2^22 entries (its list grew from 16 to 2^22: 2^22 - 16 charged); the
 * 129th sample's 32,768 are refused. Step 11 then gets 16 + 16 entries (the last 16 of the
 * budget) and 32,768 - 32 are refused: 65,504 `pairs` in all. */
static void test_pairs_budget(void **state)
{
    (void)state;
    enum { RANKS = BIG_PEERS, PER_SAMPLE = MW_STEPS_MAX_MARKS * BIG_PEERS };
    assert_int_equal(MW_STEPS_MAX_PAIRS, MW_MERGE_MAX_PAIRS);
    fx_t *f = fx_new();
    tm_msg_t m;
    uint64_t w = FX_W0;
    uint64_t steps[MW_STEPS_MAX_MARKS];
    fx_hellos(f, JOB, RANKS);
    const uint64_t fill = MW_STEPS_MAX_PAIRS / PER_SAMPLE; /* 128 */
    for (uint64_t i = 0; i < fill + 2; i++) {
        for (unsigned j = 0; j < MW_STEPS_MAX_MARKS; j++)
            steps[j] = i <= fill ? 10 : 11;
        big_sample(f, &m, 0, w + i, RANKS, MW_STEPS_MAX_MARKS, MW_STEPS_MAX_MARKS, steps);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
        fx_advance(f, 100);
        if (i + 1 == fill)
            assert_int_equal(mw__steps_refused(f->c, MW_STEPS_PAIRS), 0);
    }
    uint64_t carry, budget, pairs;
    mw__steps_held(f->c, &carry, &budget, &pairs);
    assert_int_equal(pairs, MW_STEPS_MAX_PAIRS); /* (2^22 - 16) + 16 */
    assert_int_equal(carry, 0);                  /* each mark handed its 512 peers over */
    const uint64_t refused = PER_SAMPLE + (PER_SAMPLE - 32);
    expect_refused(f, (const uint64_t[MW_STEPS_REFUSAL_COUNT]){0, 0, 0, refused, 0});
    assert_int_equal(mw__steps_closed(f->c), 0);

    /* The job ends: both steps close with what they kept, and the pair budget is given back. */
    for (uint32_t r = 0; r < RANKS; r++) {
        tm_bye(&m, JOB, r);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    assert_int_equal(mw__steps_closed(f->c), 2);
    mw__steps_held(f->c, &carry, &budget, &pairs);
    assert_int_equal(pairs, 0);
    Mpiwatch__Step *st = closed_step(f, 1);
    assert_int_equal(st->step, 11);
    assert_int_equal(st->n_pair_src, 32);
    mpiwatch__step__free_unpacked(st, NULL);
    fx_free(f);
}

/* Resident memory of this process in KiB (VmRSS), or -1. */
static long rss_kib(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    if (fp)
        fclose(fp);
    return kib;
}

/* Issue 12, delivery item 2: the job size a hello claims sizes the steps' per-rank arrays, but
 * they must cost memory only for ranks that send samples. One hello claiming MW_MAX_RANKS
 * (2^20) ranks made steps.c write every rank record at job start: about 139 MiB resident.
 * Now the records are calloc'd and left untouched until a rank's first sample. */
static void test_claimed_size_untouched(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    tm_hello(&m, JOB, 0, MW_MAX_RANKS, f->now.real_ns);
    long before = rss_kib();
    assert_true(before > 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    assert_int_equal(f->c->job.size, MW_MAX_RANKS);
    assert_non_null(f->c->steps);
    mw_step_assembly_t *kept = f->c->steps;
    f->c->steps = NULL; /* measure the steps alone: a fresh assembly for the claimed size */
    long mid = rss_kib();
    assert_int_equal(mw__steps_begin(f->c, MW_MAX_RANKS, TM_WINDOW_NS, 0), 0);
    long steps_kib = rss_kib() - mid;
    print_message("steps of a %u-rank claim: +%ld KiB resident (collector in all: +%ld KiB)\n",
                  MW_MAX_RANKS, steps_kib, rss_kib() - before);
    assert_true(steps_kib < 8 * 1024);
    /* A rank far up still works: it ends step 0 and the step waits for the others. */
    tm_msg_t s;
    marks_t k;
    sample(f, &s, 0, FX_W0, 2, 0, 0);
    add_mark(&s, &k, 0, at(FX_W0, 10), 1, 0, 0);
    assert_int_equal(fx_feed(f, &s), MW_ACCEPTED);
    assert_int_equal(mw__steps_closed(f->c), 0);
    mw__steps_free(f->c);
    f->c->steps = kept;
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_difference),       cmocka_unit_test(test_close_at_end),
        cmocka_unit_test(test_validation),       cmocka_unit_test(test_work_per_mark),
        cmocka_unit_test(test_cap_late_refused), cmocka_unit_test(test_carry_budget),
        cmocka_unit_test(test_pairs_budget),     cmocka_unit_test(test_claimed_size_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
