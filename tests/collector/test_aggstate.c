/* test_aggstate.c: aggregators' accounting (aggstate.c; docs/collector.md, "Accounting through
 * aggregators").
 *
 * The accounting test plays a tree: two aggregator collectors (A: ranks 0-1, B: ranks 2-3) and
 * a root that also takes rank 4 directly, all socket-free cores driven with the same clock.
 * The aggregators' closed windows become Partials (mw__partial_envelope_pack) and their
 * accounting AggStates (mw__aggstate_envelope_pack), exactly as upstream.c sends them; the
 * test loses something on every hop: a sample of rank 1 never reaches A, A drops the partial of
 * one window (mw__aggstate_dropped), one of B's partials is sent but never reaches the root, a
 * sample of rank 4 never reaches the root. The root's summary must satisfy, exactly, per
 * function and job-wide, with the ranks' models kept here independently:
 *     calls at the ranks == calls in the summary + calls reported missing,
 * and split the missing calls by hop as they were lost. The ranks' byes are forwarded verbatim
 * to the root: accepted, and not counted twice.
 *
 * Then the refusals of AggState (bad id, wrong job, oversize or bad names, inconsistent arrays,
 * decreasing totals, another process claiming an id), each leaving the kept state as it was,
 * and a hello without names naming a table that the job already received with names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>
#include <stdio.h>

#include "aggstate.h"
#include "fixture.h"
#include "fx_json.h"
#include "mw_fnmap.h"
#include "partial.h"
#include "report.h"

#define JOB "agg-job"
#define NFN 3
#define SIZE 5u
#define WINDOWS 5u

typedef struct {
    uint64_t calls[NFN], ns[NFN], bytes[NFN];
    uint64_t samples;
} model_t;

static uint64_t calls_of(uint32_t r, uint64_t k, int i)
{
    if (i == 2 && k < 2)
        return 0;
    return 1 + (k * 3 + r + (uint64_t)i) % 5;
}

/* Appends the model's totals in increasing function id. */
static void add_totals(tm_msg_t *m, const model_t *md)
{
    int order[NFN] = {0, 1, 2};
    for (int a = 0; a < NFN; a++)
        for (int b = a + 1; b < NFN; b++)
            if (fx_fn(order[b]) < fx_fn(order[a])) {
                int t = order[a];
                order[a] = order[b];
                order[b] = t;
            }
    for (int j = 0; j < NFN; j++) {
        int i = order[j];
        if (md->calls[i])
            tm_add_total(m, fx_fn(i), md->calls[i], md->ns[i], md->bytes[i]);
    }
}

/* Rank r's sample of window k (the model advances whether or not it is delivered); its calls
 * are added to *lost when it is not. */
static void send_window(fx_t *f, model_t *md, uint32_t r, uint64_t k, int deliver, uint64_t *lost)
{
    tm_msg_t m;
    tm_sample(&m, JOB, r, FX_W0 + k, f->now.real_ns);
    for (int i = 0; i < NFN; i++) {
        uint64_t n = calls_of(r, k, i);
        if (!n)
            continue;
        tm_add_fn(&m, fx_fn(i), n, n * 1000 + (uint64_t)i, 900, 1100 + (uint64_t)i,
                  n * 8 * (uint64_t)i);
        md->calls[i] += n;
        md->ns[i] += n * 1000 + (uint64_t)i;
        md->bytes[i] += n * 8 * (uint64_t)i;
        if (!deliver && lost)
            *lost += n;
    }
    md->samples++;
    m.sample.samples_total = md->samples;
    add_totals(&m, md);
    if (deliver)
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
}

/* Rank r's bye, packed (so that it can be forwarded verbatim). */
static size_t pack_bye(const model_t *md, uint32_t r, uint8_t **out)
{
    tm_msg_t m;
    tm_bye(&m, JOB, r);
    m.bye.windows_sent = md->samples;
    for (int i = 0; i < NFN; i++)
        m.bye.calls_total += md->calls[i];
    add_totals(&m, md);
    return tm_pack(&m, out);
}

static mw_reject_t feed_bytes(fx_t *f, const uint8_t *p, size_t n)
{
    return mw_collector_frame(f->c, p, n, 1, &f->now);
}

/* ---- an aggregator: its closed windows become partials, as upstream.c does ------------------ */

#define MAX_PARTIALS 16
typedef struct {
    fx_t *f;
    uint32_t id;
    uint64_t seq;
    mw_pb_encoder_t enc;
    int64_t drop_window;        /* window whose partial ZeroMQ "did not take" (-1 none) */
    int64_t lose_window;        /* window whose partial was sent but never arrived (-1 none) */
    uint64_t lost_in_drop;      /* calls of the dropped partial */
    uint64_t lost_in_wire;      /* calls of the partial lost on the way */
    uint8_t *msg[MAX_PARTIALS]; /* partials to deliver, in order */
    size_t len[MAX_PARTIALS];
    unsigned n;
} agg_t;

static uint64_t window_calls(const mw_window_t *w)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < w->n_fn_used; i++)
        n += w->fn[w->fn_used[i]].s.count;
    return n;
}

static void agg_on_window(const mw_window_t *w, void *user)
{
    agg_t *a = user;
    fx_on_window(w, a->f);
    size_t len = mw__partial_envelope_pack(a->f->c, &a->enc, w, a->id, a->seq++);
    assert_true(len > 0);
    if ((int64_t)w->index == a->drop_window) {
        mw__aggstate_dropped(a->f->c, w);
        a->lost_in_drop += window_calls(w);
        return;
    }
    mw__aggstate_sent(a->f->c, w);
    if ((int64_t)w->index == a->lose_window) {
        a->lost_in_wire += window_calls(w);
        return;
    }
    assert_true(a->n < MAX_PARTIALS);
    a->msg[a->n] = malloc(len);
    assert_non_null(a->msg[a->n]);
    memcpy(a->msg[a->n], a->enc.out, len);
    a->len[a->n++] = len;
}

static void agg_init(agg_t *a, uint32_t id)
{
    memset(a, 0, sizeof *a);
    a->f = fx_new();
    a->id = id;
    a->drop_window = a->lose_window = -1;
    a->f->c->on_window = agg_on_window;
    a->f->c->on_window_user = a;
}

static void agg_free(agg_t *a)
{
    for (unsigned i = 0; i < a->n; i++)
        free(a->msg[i]);
    mw__pb_encoder_free(&a->enc);
    fx_free(a->f);
}

/* The aggregator's AggState, delivered to the root. */
static mw_reject_t agg_state_to(agg_t *a, fx_t *root, int final)
{
    size_t len = mw__aggstate_envelope_pack(a->f->c, &a->enc, a->id, a->seq++, final);
    assert_true(len > 0);
    return feed_bytes(root, a->enc.out, len);
}

static void agg_deliver(agg_t *a, fx_t *root)
{
    for (unsigned i = 0; i < a->n; i++) {
        assert_int_equal(feed_bytes(root, a->msg[i], a->len[i]), MW_ACCEPTED);
        free(a->msg[i]);
    }
    a->n = 0;
}

/* ---- JSON helpers -------------------------------------------------------------------------- */

static cJSON *summary(fx_t *f)
{
    char *text = mw_summary_json(f->c);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    cJSON_free(text);
    return root;
}

/* The identity per function and job-wide against the models (what the ranks did). */
static void check_identity(const cJSON *root, const model_t *md, uint32_t n)
{
    const cJSON *fns = item(root, "functions"), *missed = item(root, "missed");
    const cJSON *mfns = item(missed, "functions"), *at = item(missed, "at_ranks");
    uint64_t calls = 0, ns = 0, bytes = 0, samples = 0, merged = 0;
    for (int i = 0; i < NFN; i++) {
        uint64_t c = 0, t = 0, b = 0;
        for (uint32_t r = 0; r < n; r++) {
            c += md[r].calls[i];
            t += md[r].ns[i];
            b += md[r].bytes[i];
        }
        assert_int_equal(fn_figure(fns, i, "count") + fn_figure(mfns, i, "count"), c);
        assert_int_equal(fn_figure(fns, i, "time_ns") + fn_figure(mfns, i, "time_ns"), t);
        assert_int_equal(fn_figure(fns, i, "bytes") + fn_figure(mfns, i, "bytes"), b);
        calls += c;
        ns += t;
        bytes += b;
        merged += fn_figure(fns, i, "count");
    }
    for (uint32_t r = 0; r < n; r++)
        samples += md[r].samples;
    assert_int_equal(u64(at, "calls"), calls);
    assert_int_equal(u64(at, "time_ns"), ns);
    assert_int_equal(u64(at, "bytes"), bytes);
    assert_int_equal(u64(at, "samples"), samples);
    assert_int_equal(merged + u64(missed, "calls"), calls);
}

static const cJSON *agg_entry(const cJSON *root, uint32_t id)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, item(root, "aggregators"))
    {
        if (u64(e, "id") == id)
            return e;
    }
    fail_msg("aggregator %u not in the summary", id);
    return NULL;
}

/* ---- the tree -------------------------------------------------------------------------------- */

static void test_tree_accounting(void **state)
{
    (void)state;
    agg_t A, B;
    agg_init(&A, 0);
    agg_init(&B, 7);
    fx_t *R = fx_new();
    model_t md[SIZE] = {0};
    uint64_t lost_rank_agg = 0, lost_direct = 0;

    /* Hellos: each aggregator its ranks; the root every rank (as the aggregators forward). */
    tm_msg_t m;
    for (uint32_t r = 0; r < SIZE; r++) {
        tm_hello(&m, JOB, r, SIZE, R->now.real_ns);
        assert_int_equal(fx_feed(R, &m), MW_ACCEPTED);
        if (r < 2)
            assert_int_equal(fx_feed(A.f, &m), MW_ACCEPTED);
        else if (r < 4)
            assert_int_equal(fx_feed(B.f, &m), MW_ACCEPTED);
    }
    /* An AggState before any partial (its ids, nothing sent yet). */
    assert_int_equal(agg_state_to(&A, R, 0), MW_ACCEPTED);
    assert_int_equal(agg_state_to(&B, R, 0), MW_ACCEPTED);
    assert_non_null(mw__aggstate_fnmap(R->c, 0));
    assert_non_null(mw__aggstate_fnmap(R->c, 7));
    assert_null(mw__aggstate_fnmap(R->c, 1));

    A.drop_window = (int64_t)(FX_W0 + 3);
    B.lose_window = (int64_t)(FX_W0 + 1);
    for (uint64_t k = 0; k < WINDOWS; k++) {
        send_window(A.f, &md[0], 0, k, 1, NULL);
        send_window(A.f, &md[1], 1, k, k != 2, &lost_rank_agg);
        send_window(B.f, &md[2], 2, k, 1, NULL);
        send_window(B.f, &md[3], 3, k, 1, NULL);
        send_window(R, &md[4], 4, k, k != 2, &lost_direct);
    }
    /* B's windows close; its partials reach the root before its next AggState (mid-run, the
     * root has merged what the AggState it holds does not count as sent yet). */
    fx_advance(B.f, 3000);
    assert_int_equal(B.f->n_closed, WINDOWS);
    agg_deliver(&B, R);
    mw_agg_figures_t fig;
    mw__aggs_figures(&R->c->job, 1, &fig);
    assert_int_equal(fig.id, 7);
    assert_int_equal(fig.at_ranks.calls, fig.merged.calls + fig.to_agg.calls + fig.to_parent.calls);
    /* Then A's, with an AggState first, as upstream.c sends them. */
    fx_advance(A.f, 3000);
    assert_int_equal(A.f->n_closed, WINDOWS);
    assert_int_equal(agg_state_to(&A, R, 0), MW_ACCEPTED);
    agg_deliver(&A, R);
    assert_true(A.lost_in_drop > 0 && B.lost_in_wire > 0);

    /* The byes: to the aggregators, and forwarded verbatim to the root; rank 4 directly. */
    for (uint32_t r = 0; r < SIZE; r++) {
        uint8_t *bye;
        size_t n = pack_bye(&md[r], r, &bye);
        if (r < 4)
            assert_int_equal(feed_bytes(r < 2 ? A.f : B.f, bye, n), MW_ACCEPTED);
        assert_int_equal(feed_bytes(R, bye, n), MW_ACCEPTED);
        free(bye);
    }
    /* Every rank said bye: the job waits for its aggregators' final AggStates. */
    assert_int_equal(R->c->job.ended, MW_END_NONE);
    assert_int_equal(agg_state_to(&A, R, 1), MW_ACCEPTED);
    assert_int_equal(R->c->job.ended, MW_END_NONE);
    assert_int_equal(agg_state_to(&B, R, 1), MW_ACCEPTED);
    assert_int_equal(R->c->job.ended, MW_END_COMPLETE);
    for (int r = 1; r < MW_REJECT_COUNT; r++)
        assert_int_equal(R->c->stats.rejected[r], 0);

    cJSON *root = summary(R);
    check_identity(root, md, SIZE);
    const cJSON *missed = item(root, "missed");
    /* A's dropped partial left its merge: lost between A and the root, as B's lost one. */
    uint64_t to_aggs = lost_rank_agg, to_root = B.lost_in_wire + A.lost_in_drop;
    assert_int_equal(u64(item(missed, "ranks_to_aggregators"), "calls"), to_aggs);
    assert_int_equal(u64(item(missed, "aggregators_to_collector"), "calls"), to_root);
    assert_int_equal(u64(missed, "calls"), to_aggs + to_root + lost_direct);
    /* Samples: one of rank 1, A's dropped window (2 ranks), B's lost window (2), one of rank 4. */
    assert_int_equal(u64(missed, "samples"), 1 + 2 + 2 + 1);
    /* Only the direct rank has per-rank figures here; no rank is "without totals". */
    assert_int_equal(cJSON_GetArraySize(item(missed, "ranks")), 1);
    assert_int_equal(cJSON_GetArrayItem(item(missed, "ranks"), 0)->valueint, 4);
    assert_int_equal(cJSON_GetArraySize(item(missed, "ranks_without_totals")), 0);
    const cJSON *e;
    cJSON_ArrayForEach(e, item(root, "per_rank"))
    {
        const char *want = u64(e, "rank") == 4 ? "bye" : "aggregator";
        assert_string_equal(item(item(e, "missed"), "totals")->valuestring, want);
    }

    const cJSON *a = agg_entry(root, 0), *b = agg_entry(root, 7);
    uint64_t a_at = 0, b_at = 0;
    for (int i = 0; i < NFN; i++) {
        a_at += md[0].calls[i] + md[1].calls[i];
        b_at += md[2].calls[i] + md[3].calls[i];
    }
    assert_int_equal(u64(item(a, "at_ranks"), "calls"), a_at);
    assert_int_equal(u64(item(b, "at_ranks"), "calls"), b_at);
    assert_int_equal(u64(item(item(a, "missed"), "ranks_to_aggregator"), "calls"), to_aggs);
    assert_int_equal(u64(item(item(a, "missed"), "aggregator_to_collector"), "calls"),
                     A.lost_in_drop);
    assert_int_equal(u64(item(item(b, "missed"), "ranks_to_aggregator"), "calls"), 0);
    assert_int_equal(u64(item(item(b, "missed"), "aggregator_to_collector"), "calls"),
                     B.lost_in_wire);
    assert_int_equal(u64(a, "partials_dropped"), 1);
    assert_int_equal(u64(a, "partials_sent"), WINDOWS - 1);
    assert_int_equal(u64(b, "partials_sent"), WINDOWS);
    assert_int_equal(u64(b, "partials_merged"), WINDOWS - 1);
    assert_int_equal(u64(a, "ranks"), 2);
    assert_int_equal(u64(a, "ranks_done"), 2);
    assert_true(cJSON_IsTrue(item(a, "final")));
    cJSON_Delete(root);

    /* The report's line states the same split. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    mw__report_write(R->c, mem);
    fclose(mem);
    char want[256];
    mw_loss_t loss;
    mw__job_loss(&R->c->job, &loss, NULL);
    snprintf(want, sizeof want,
             "calls at the ranks: %llu = %llu in this report + %llu missed (%llu between ranks "
             "and aggregators, %llu between aggregators and this collector)",
             (unsigned long long)loss.at_ranks.calls, (unsigned long long)loss.merged.calls,
             (unsigned long long)(to_aggs + to_root + lost_direct), (unsigned long long)to_aggs,
             (unsigned long long)to_root);
    if (!strstr(text, want))
        fail_msg("the report lacks \"%s\":\n%s", want, text);
    free(text);

    agg_free(&A);
    agg_free(&B);
    fx_free(R);
}

/* ---- refusals ------------------------------------------------------------------------------- */

#define NAMES 8u
typedef struct {
    Mpiwatch__Envelope env;
    Mpiwatch__AggState s;
    char *names[MW_FN_TABLE_MAX + 2];
    uint32_t fn[NAMES + 1];
    uint64_t calls[NAMES + 1], ns[NAMES + 1], bytes[NAMES + 1], sent[NAMES + 1];
} st_t;

/* A valid AggState of aggregator `id`: this build's first NAMES names, totals of ids 1..3 of
 * `scale` calls each, half of them sent. */
static void st_make(st_t *t, uint32_t id, uint64_t scale)
{
    memset(t, 0, sizeof *t);
    mpiwatch__envelope__init(&t->env);
    mpiwatch__agg_state__init(&t->s);
    t->env.version = MW_PROTO_VERSION;
    t->env.job = JOB;
    t->env.rank = id;
    t->env.body_case = MPIWATCH__ENVELOPE__BODY_AGG;
    t->env.agg = &t->s;
    t->s.id = id;
    t->s.host = "node0";
    t->s.pid = 4242;
    for (unsigned i = 0; i < NAMES; i++)
        t->names[i] = (char *)mw_fn_name(i + 1);
    t->s.n_function_names = NAMES;
    t->s.function_names = t->names;
    t->s.ranks = 2;
    for (unsigned i = 0; i < 3; i++) {
        t->fn[i] = i + 1;
        t->calls[i] = scale * (i + 1);
        t->ns[i] = 1000 * scale;
        t->bytes[i] = 8 * scale;
        t->sent[i] = t->calls[i] / 2;
    }
    t->s.n_total_fn = t->s.n_total_calls = t->s.n_total_ns = t->s.n_total_bytes = 3;
    t->s.total_fn = t->fn;
    t->s.total_calls = t->calls;
    t->s.total_ns = t->ns;
    t->s.total_bytes = t->bytes;
    t->s.n_sent_calls = 3;
    t->s.sent_calls = t->sent;
    t->s.n_sent_ns = 3;
    t->s.sent_ns = t->ns; /* all of the time sent */
    t->s.n_sent_bytes = 3;
    t->s.sent_bytes = t->bytes;
    t->s.samples_total = 10 * scale;
    t->s.samples_merged = 5 * scale;
}

static mw_reject_t st_feed(fx_t *f, const st_t *t)
{
    size_t n = mpiwatch__envelope__get_packed_size(&t->env);
    uint8_t *buf = malloc(n ? n : 1);
    assert_non_null(buf);
    mpiwatch__envelope__pack(&t->env, buf);
    mw_reject_t r = feed_bytes(f, buf, n);
    free(buf);
    return r;
}

static uint64_t kept_calls(fx_t *f, uint32_t i)
{
    mw_agg_figures_t fig;
    mw__aggs_figures(&f->c->job, i, &fig);
    return fig.at_ranks.calls;
}

static void test_refusals(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    st_t t;
    /* No job yet. */
    st_make(&t, 3, 10);
    assert_int_equal(st_feed(f, &t), MW_REJECT_NO_HELLO);
    fx_hellos(f, JOB, 4);

    /* Bad ids: past the cap, or not the envelope's sender. */
    st_make(&t, MW_MAX_AGGREGATORS, 10);
    assert_int_equal(st_feed(f, &t), MW_REJECT_RANK_RANGE);
    st_make(&t, 3, 10);
    t.env.rank = 4;
    assert_int_equal(st_feed(f, &t), MW_REJECT_RANK_RANGE);
    /* Another job. */
    st_make(&t, 3, 10);
    t.env.job = "other-job";
    assert_int_equal(st_feed(f, &t), MW_REJECT_JOB_MISMATCH);
    /* Names capped as a hello's: too many, too long, not a name; kinds not one per name. */
    st_make(&t, 3, 10);
    for (unsigned i = 0; i < MW_FN_TABLE_MAX + 1; i++)
        t.names[i] = "MPI_Send";
    t.s.n_function_names = MW_FN_TABLE_MAX + 1;
    assert_int_equal(st_feed(f, &t), MW_REJECT_TABLE_MISMATCH);
    char longname[MW_FN_NAME_MAX + 2];
    memset(longname, 'A', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    st_make(&t, 3, 10);
    t.names[2] = longname;
    assert_int_equal(st_feed(f, &t), MW_REJECT_TABLE_MISMATCH);
    st_make(&t, 3, 10);
    t.names[1] = "MPI_Send\x1b[2J";
    assert_int_equal(st_feed(f, &t), MW_REJECT_TABLE_MISMATCH);
    st_make(&t, 3, 10);
    uint32_t kinds[2] = {0, 0};
    t.s.n_function_kinds = 2;
    t.s.function_kinds = kinds;
    assert_int_equal(st_feed(f, &t), MW_REJECT_TABLE_MISMATCH);
    st_make(&t, 3, 10);
    t.s.n_function_names = 0; /* a first AggState without names: its ids mean nothing */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TABLE_MISMATCH);
    /* A host that is not text. */
    st_make(&t, 3, 10);
    t.s.host = "node\n0";
    assert_int_equal(st_feed(f, &t), MW_REJECT_BAD_FIELD);
    /* Arrays: lengths, order, ids of its table, sent above made, more ranks than the job. */
    st_make(&t, 3, 10);
    t.s.n_total_ns = 2;
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    st_make(&t, 3, 10);
    t.s.n_sent_calls = 2;
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    st_make(&t, 3, 10);
    t.fn[1] = 1;
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    st_make(&t, 3, 10);
    t.fn[2] = NAMES + 1;
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    st_make(&t, 3, 10);
    t.sent[0] = t.calls[0] + 1;
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    st_make(&t, 3, 10);
    t.s.samples_merged = t.s.samples_total + 1;
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    st_make(&t, 3, 10);
    t.calls[0] = 1ull << 60;
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    st_make(&t, 3, 10);
    t.s.ranks = 5;
    assert_int_equal(st_feed(f, &t), MW_REJECT_BAD_FIELD);
    assert_int_equal(mw__aggs_count(&f->c->job), 0); /* nothing kept of any of them */

    /* Accepted; then nothing of it may decrease. */
    st_make(&t, 3, 10);
    assert_int_equal(st_feed(f, &t), MW_ACCEPTED);
    assert_int_equal(mw__aggs_count(&f->c->job), 1);
    assert_int_equal(kept_calls(f, 0), 10 + 20 + 30);
    st_make(&t, 3, 20);
    t.calls[1] = 19; /* below the 20 it had */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    st_make(&t, 3, 20);
    t.s.n_total_fn = t.s.n_total_calls = t.s.n_total_ns = t.s.n_total_bytes = 2;
    t.s.n_sent_calls = t.s.n_sent_ns = t.s.n_sent_bytes = 2; /* function 3 is gone */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    st_make(&t, 3, 20);
    t.s.samples_total = 5;
    t.s.samples_merged = 5;
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    st_make(&t, 3, 20);
    t.sent[0] = 0; /* what it sent, per function, never decreases either */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    /* Another process claiming id 3; a table whose older ids changed names. */
    st_make(&t, 3, 20);
    t.s.pid = 4243;
    assert_int_equal(st_feed(f, &t), MW_REJECT_DUPLICATE_HELLO);
    st_make(&t, 3, 20);
    t.names[0] = t.names[1];
    t.names[1] = (char *)mw_fn_name(1);
    assert_int_equal(st_feed(f, &t), MW_REJECT_TABLE_MISMATCH);
    assert_int_equal(kept_calls(f, 0), 10 + 20 + 30); /* still the accepted one */

    /* Its table grows by a name this build lacks: the new id maps to a new extra, an AggState
     * without names reads its ids with the map kept. */
    st_make(&t, 3, 20);
    t.names[NAMES] = "MPIX_Agg_extra";
    t.s.n_function_names = NAMES + 1;
    t.fn[3] = NAMES + 1;
    t.calls[3] = 4;
    t.ns[3] = 40;
    t.bytes[3] = 0;
    t.sent[3] = 4;
    t.s.n_total_fn = t.s.n_total_calls = t.s.n_total_ns = t.s.n_total_bytes = 4;
    t.s.n_sent_calls = t.s.n_sent_ns = t.s.n_sent_bytes = 4;
    assert_int_equal(st_feed(f, &t), MW_ACCEPTED);
    const mw_fnmap_t *map = mw__aggstate_fnmap(f->c, 3);
    assert_non_null(map);
    unsigned extra = mw_fn_id("MPIX_Agg_extra");
    assert_true(extra >= MW_FN_COUNT);
    assert_int_equal(mw_fnmap_get(map, NAMES + 1), extra);
    assert_int_equal(kept_calls(f, 0), 20 + 40 + 60 + 4);
    t.s.n_function_names = 0;
    t.calls[3] = 5;
    assert_int_equal(st_feed(f, &t), MW_ACCEPTED);
    assert_int_equal(kept_calls(f, 0), 20 + 40 + 60 + 5);
    /* A second aggregator; the sums over both. */
    st_make(&t, 9, 1);
    t.s.host = "node1";
    assert_int_equal(st_feed(f, &t), MW_ACCEPTED);
    mw_tally_t at = {0}, to_agg = {0}, to_parent = {0};
    mw__aggs_totals(&f->c->job, &at, NULL, &to_agg, &to_parent, NULL);
    assert_int_equal(at.calls, 20 + 40 + 60 + 5 + 1 + 2 + 3);
    /* Nothing merged from them: the unsent half is missed before them, the rest after. */
    assert_int_equal(to_agg.calls,
                     (20 - 10) + (40 - 20) + (60 - 30) + (5 - 4) + (1 - 0) + (2 - 1) + (3 - 1));
    assert_int_equal(to_agg.calls + to_parent.calls, at.calls);
    fx_free(f);
}

/* ---- a hello without names, of a table the job received with names -------------------------- */

static char *emu_names[MW_FN_COUNT];
static uint32_t emu_kinds[MW_FN_COUNT];
#define EMU_N ((size_t)MW_FN_COUNT) /* an extra + this build's names in reverse order */

static uint32_t emu(unsigned local)
{
    return MW_FN_COUNT + 1u - local;
}

static void emu_setup(void)
{
    emu_names[0] = "MPIX_Emu_extra";
    emu_kinds[0] = MW_KIND_COLL;
    for (unsigned local = 1; local < MW_FN_COUNT; local++) {
        emu_names[emu(local) - 1] = (char *)mw_fn_name(local);
        emu_kinds[emu(local) - 1] = mw_fn_kind(local);
    }
}

static void emu_hello(tm_msg_t *m, const char *job, uint32_t rank, uint32_t size, uint64_t now,
                      int named)
{
    tm_hello(m, job, rank, size, now);
    m->hello.function_count = EMU_N;
    m->hello.function_table_hash = mw_fn_names_hash((const char *const *)emu_names, EMU_N);
    m->hello.n_function_names = named ? EMU_N : 0;
    m->hello.function_names = named ? emu_names : NULL;
    m->hello.n_function_kinds = named ? EMU_N : 0;
    m->hello.function_kinds = named ? emu_kinds : NULL;
}

static void test_nameless_hello(void **state)
{
    (void)state;
    emu_setup();
    fx_t *f = fx_new();
    tm_msg_t m;
    const unsigned ar = fx_fn(0);
    /* Its table unknown in this job: a hello without names is refused. */
    emu_hello(&m, JOB, 1, 2, f->now.real_ns, 0);
    assert_int_equal(fx_feed(f, &m), MW_REJECT_TABLE_MISMATCH);
    /* Once a hello named it, the same table by its hash alone maps by those names. */
    emu_hello(&m, JOB, 0, 2, f->now.real_ns, 1);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    emu_hello(&m, JOB, 1, 2, f->now.real_ns, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    /* The same hash with another size is no table (its repeated hello is refused). */
    tm_msg_t m2;
    emu_hello(&m2, JOB, 1, 2, f->now.real_ns, 0);
    m2.hello.function_count = EMU_N - 1;
    assert_int_equal(fx_feed(f, &m2), MW_REJECT_TABLE_MISMATCH);
    /* Rank 1's ids are the emulated table's: its calls land under the right names. */
    for (uint32_t r = 0; r < 2; r++) {
        tm_sample(&m, JOB, r, FX_W0, f->now.real_ns);
        tm_add_fn(&m, emu(ar), 3 + r, 3000, 900, 1100, 0);
        tm_add_fn(&m, 1 /* the extra */, 2, 200, 100, 100, 0);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    fx_advance(f, 2000);
    assert_int_equal(f->n_closed, 1);
    assert_int_equal(f->closed[0].fn[0].s.count, 3 + 4); /* fx_fn(0): MPI_Allreduce */
    cJSON *root = summary(f);
    const cJSON *fns = item(root, "functions");
    assert_int_equal(u64(item(fns, "MPI_Allreduce"), "count"), 7);
    assert_int_equal(u64(item(fns, "MPIX_Emu_extra"), "count"), 4);
    cJSON_Delete(root);
    for (uint32_t r = 0; r < 2; r++) {
        tm_bye(&m, JOB, r);
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    }
    assert_int_equal(f->c->job.ended, MW_END_COMPLETE);
    /* Another job: the tables of the previous one are forgotten, the nameless hello refused. */
    emu_hello(&m, "next-job", 0, 2, f->now.real_ns, 0);
    assert_int_equal(fx_feed(f, &m), MW_REJECT_TABLE_MISMATCH);
    fx_free(f);
}

/* An aggregator whose final AggState never comes: the job ends complete after the grace; a
 * bye it forwarded before any partial listed its rank is accepted and not counted twice. */
static void test_final_grace(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    st_t t;
    st_make(&t, 1, 10);
    assert_int_equal(st_feed(f, &t), MW_ACCEPTED);
    model_t md = {0};
    md.calls[0] = 5;
    md.ns[0] = 50;
    md.samples = 1;
    for (uint32_t r = 0; r < 2; r++) {
        uint8_t *bye;
        size_t n = pack_bye(&md, r, &bye);
        assert_int_equal(feed_bytes(f, bye, n), MW_ACCEPTED);
        free(bye);
    }
    assert_int_equal(f->c->job.ended, MW_END_NONE);
    mw_loss_t loss;
    mw__job_loss(&f->c->job, &loss, NULL);
    assert_int_equal(loss.at_ranks.calls, 10 + 20 + 30); /* the AggState's, no bye's on top */
    assert_int_equal(loss.ranks_no_totals, 0);
    mw_clock_t before = f->now;
    assert_true(mw_collector_timeout_ms(f->c, &before) <= 2000);
    fx_advance(f, 1000);
    assert_int_equal(f->c->job.ended, MW_END_NONE);
    fx_advance(f, 1000);
    assert_int_equal(f->c->job.ended, MW_END_COMPLETE);
    fx_free(f);
}

/* A rank of an aggregator that died sends its samples to the root itself (the library's
 * fallback): they are merged, without counting its running totals a second time (they are in
 * its aggregator's last AggState), and the identity still holds. */
static void test_fallback_sample(void **state)
{
    (void)state;
    agg_t A;
    agg_init(&A, 2);
    fx_t *R = fx_new();
    model_t md[2] = {0};
    tm_msg_t m;
    for (uint32_t r = 0; r < 2; r++) {
        tm_hello(&m, JOB, r, 2, R->now.real_ns);
        assert_int_equal(fx_feed(R, &m), MW_ACCEPTED);
        assert_int_equal(fx_feed(A.f, &m), MW_ACCEPTED);
    }
    for (uint64_t k = 0; k < 2; k++)
        for (uint32_t r = 0; r < 2; r++)
            send_window(A.f, &md[r], r, k, 1, NULL);
    fx_advance(A.f, 3000);
    assert_int_equal(agg_state_to(&A, R, 0), MW_ACCEPTED);
    agg_deliver(&A, R);
    assert_true(mw__aggstate_via(&R->c->job, 0));
    mw_loss_t before;
    mw__job_loss(&R->c->job, &before, NULL);
    /* A dies; rank 0 sends window 2 to the root, with its totals since MPI_Init. */
    send_window(R, &md[0], 0, 2, 1, NULL);
    uint64_t k2 = 0;
    for (int i = 0; i < NFN; i++)
        k2 += calls_of(0, 2, i);
    mw_loss_t after;
    mw__job_loss(&R->c->job, &after, NULL);
    assert_int_equal(after.merged.calls, before.merged.calls + k2);
    assert_int_equal(after.at_ranks.calls, before.at_ranks.calls + k2); /* not its totals again */
    assert_int_equal(after.missed.calls, before.missed.calls);
    assert_int_equal(after.at_ranks.calls, after.merged.calls + after.missed.calls);
    agg_free(&A);
    fx_free(R);
}

/* The exact rule (docs/aggregator.md "Accounting"): aggregator A states each rank's share in
 * its AggStates; after its last AggState it still sends the partial of window 2, takes window
 * 3 of both ranks and dies. Rank 0 falls back: its window 4 and its bye come to the root
 * directly; rank 1's window 4 is lost and only its bye comes. Each rank's own totals take the
 * place of its share in A's last AggState: every call is counted once, in the summary or as
 * missed between the ranks and A (windows 3, and rank 1's window 4). Without the shares the
 * calls made after A's last AggState are in neither figure. */
static void test_fallback_exact(void **state)
{
    (void)state;
    agg_t A;
    agg_init(&A, 4);
    fx_t *R = fx_new();
    model_t md[2] = {0};
    tm_msg_t m;
    uint64_t lost = 0;
    for (uint32_t r = 0; r < 2; r++) {
        tm_hello(&m, JOB, r, 2, R->now.real_ns);
        assert_int_equal(fx_feed(R, &m), MW_ACCEPTED);
        assert_int_equal(fx_feed(A.f, &m), MW_ACCEPTED);
    }
    for (uint64_t k = 0; k < 2; k++)
        for (uint32_t r = 0; r < 2; r++)
            send_window(A.f, &md[r], r, k, 1, NULL);
    fx_advance(A.f, 3000);
    assert_int_equal(agg_state_to(&A, R, 0), MW_ACCEPTED); /* its last AggState */
    agg_deliver(&A, R);
    for (uint32_t r = 0; r < 2; r++) /* window 2: its partial reaches the root */
        send_window(A.f, &md[r], r, 2, 1, NULL);
    fx_advance(A.f, 3000);
    agg_deliver(&A, R);
    for (uint32_t r = 0; r < 2; r++) { /* window 3: taken by A, never sent on */
        for (int i = 0; i < NFN; i++)
            lost += calls_of(r, 3, i);
        send_window(A.f, &md[r], r, 3, 1, NULL);
    }
    /* A dies. Rank 0 falls back; rank 1's window 4 is lost on the way. */
    send_window(R, &md[0], 0, 4, 1, NULL);
    send_window(R, &md[1], 1, 4, 0, &lost);
    for (uint32_t r = 0; r < 2; r++) {
        uint8_t *bye;
        size_t n = pack_bye(&md[r], r, &bye);
        assert_int_equal(feed_bytes(R, bye, n), MW_ACCEPTED);
        free(bye);
    }
    fx_advance(R, 2500); /* A's final AggState never comes */
    assert_int_equal(R->c->job.ended, MW_END_COMPLETE);
    for (int r = 1; r < MW_REJECT_COUNT; r++)
        assert_int_equal(R->c->stats.rejected[r], 0);
    cJSON *root = summary(R);
    check_identity(root, md, 2);
    const cJSON *missed = item(root, "missed");
    assert_true(lost > 0);
    assert_int_equal(u64(missed, "calls"), lost);
    assert_int_equal(u64(item(missed, "ranks_to_aggregators"), "calls"), lost);
    assert_int_equal(u64(item(missed, "aggregators_to_collector"), "calls"), 0);
    const cJSON *a = agg_entry(root, 4);
    assert_int_equal(u64(item(a, "at_ranks"), "calls"),
                     u64(item(a, "merged"), "calls") + lost); /* both ranks' own totals */
    assert_false(cJSON_IsTrue(item(a, "final")));
    cJSON_Delete(root);
    agg_free(&A);
    fx_free(R);
}

/* An aggregator alive to the end: the ranks' byes, forwarded, agree with its shares, and its
 * figures are its own (the ranks' totals replace nothing). */
static void test_shares_alive(void **state)
{
    (void)state;
    agg_t A;
    agg_init(&A, 5);
    fx_t *R = fx_new();
    model_t md[2] = {0};
    tm_msg_t m;
    for (uint32_t r = 0; r < 2; r++) {
        tm_hello(&m, JOB, r, 2, R->now.real_ns);
        assert_int_equal(fx_feed(R, &m), MW_ACCEPTED);
        assert_int_equal(fx_feed(A.f, &m), MW_ACCEPTED);
    }
    for (uint64_t k = 0; k < 3; k++)
        for (uint32_t r = 0; r < 2; r++)
            send_window(A.f, &md[r], r, k, 1, NULL);
    fx_advance(A.f, 3000);
    assert_int_equal(agg_state_to(&A, R, 0), MW_ACCEPTED);
    agg_deliver(&A, R);
    for (uint32_t r = 0; r < 2; r++) {
        uint8_t *bye;
        size_t n = pack_bye(&md[r], r, &bye);
        assert_int_equal(feed_bytes(A.f, bye, n), MW_ACCEPTED);
        assert_int_equal(feed_bytes(R, bye, n), MW_ACCEPTED);
        free(bye);
    }
    assert_int_equal(agg_state_to(&A, R, 1), MW_ACCEPTED);
    assert_int_equal(R->c->job.ended, MW_END_COMPLETE);
    cJSON *root = summary(R);
    check_identity(root, md, 2);
    assert_int_equal(u64(item(root, "missed"), "calls"), 0);
    cJSON_Delete(root);
    agg_free(&A);
    fx_free(R);
}

/* Shares that do not fit the AggState are refused whole. */
static void test_share_refusals(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 4);
    st_t t;
    uint32_t rank[2] = {0, 2}, entries[2] = {2, 1}, fn[3] = {1, 2, 1};
    uint64_t samples[2] = {3, 4}, calls[3] = {5, 10, 5}, ns[3] = {100, 100, 100},
             bytes[3] = {8, 8, 8};
#define SHARES(t)                                                                                  \
    do {                                                                                           \
        (t).s.shares = 1;                                                                          \
        (t).s.n_share_rank = (t).s.n_share_entries = (t).s.n_share_samples = 2;                    \
        (t).s.share_rank = rank;                                                                   \
        (t).s.share_entries = entries;                                                             \
        (t).s.share_samples = samples;                                                             \
        (t).s.n_share_fn = (t).s.n_share_calls = (t).s.n_share_ns = (t).s.n_share_bytes = 3;       \
        (t).s.share_fn = fn;                                                                       \
        (t).s.share_calls = calls;                                                                 \
        (t).s.share_ns = ns;                                                                       \
        (t).s.share_bytes = bytes;                                                                 \
    } while (0)
    st_make(&t, 3, 10); /* totals: fn 1 10 calls, fn 2 20; 10000 ns, 80 bytes, 100 samples */
    SHARES(t);
    calls[0] = 6; /* ranks 0 and 2 share 11 calls of function 1: more than its 10 */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    calls[0] = 5;
    rank[1] = 0; /* ranks not increasing */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    rank[1] = 4; /* not a rank of the job */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    rank[1] = 2;
    fn[1] = 1; /* ids not increasing within a rank */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    fn[1] = NAMES + 1; /* not an id of its table */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    fn[1] = 2;
    entries[1] = 2; /* entries beyond the arrays */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    entries[1] = 1;
    t.s.n_share_ns = 2; /* arrays of different lengths */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    SHARES(t);
    samples[1] = 98; /* 101 samples of 100 */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    samples[1] = 4;
    t.s.shares = 0; /* shares listed without saying so */
    assert_int_equal(st_feed(f, &t), MW_REJECT_TOTALS);
    assert_int_equal(mw__aggs_count(&f->c->job), 0);
    SHARES(t);
    assert_int_equal(st_feed(f, &t), MW_ACCEPTED);
#undef SHARES
    fx_free(f);
}

/* Partials and AggStates tied to the connection of their aggregator's first AggState: the
 * frame's peer is played by frame_peer (server.c gives the CURVE key or the IP address). */
static const char *test_peer;
static const char *peer_of(void *msg, char *buf, size_t cap)
{
    (void)msg;
    if (!test_peer)
        return NULL;
    snprintf(buf, cap, "%s", test_peer);
    return buf;
}

static void test_connection(void **state)
{
    (void)state;
    agg_t A;
    agg_init(&A, 6);
    fx_t *R = fx_new();
    int frame;
    R->c->frame_peer = peer_of;
    R->c->frame_msg = &frame;
    model_t md[2] = {0};
    tm_msg_t m;
    for (uint32_t r = 0; r < 2; r++) {
        tm_hello(&m, JOB, r, 2, R->now.real_ns);
        assert_int_equal(fx_feed(R, &m), MW_ACCEPTED);
        assert_int_equal(fx_feed(A.f, &m), MW_ACCEPTED);
    }
    for (uint64_t k = 0; k < 2; k++)
        for (uint32_t r = 0; r < 2; r++)
            send_window(A.f, &md[r], r, k, 1, NULL);
    fx_advance(A.f, 3000);
    assert_int_equal(A.n, 2);
    test_peer = "key:aggregator-six";
    assert_int_equal(agg_state_to(&A, R, 0), MW_ACCEPTED); /* the first: its connection */
    /* Another connection: its partial and AggState refused, nothing merged. */
    test_peer = "key:forger";
    assert_int_equal(feed_bytes(R, A.msg[0], A.len[0]), MW_REJECT_CONNECTION);
    assert_int_equal(agg_state_to(&A, R, 0), MW_REJECT_CONNECTION);
    assert_int_equal(R->c->stats.rejected[MW_REJECT_CONNECTION], 2);
    mw_agg_figures_t fig;
    mw__aggs_figures(&R->c->job, 0, &fig);
    assert_int_equal(fig.partials_merged, 0);
    assert_int_equal(fig.states, 1);
    /* Its own connection; then one without an identity (not told apart: accepted). */
    test_peer = "key:aggregator-six";
    assert_int_equal(feed_bytes(R, A.msg[0], A.len[0]), MW_ACCEPTED);
    test_peer = NULL;
    assert_int_equal(feed_bytes(R, A.msg[1], A.len[1]), MW_ACCEPTED);
    mw__aggs_figures(&R->c->job, 0, &fig);
    assert_int_equal(fig.partials_merged, 2);
    R->c->frame_msg = NULL;
    agg_free(&A);
    fx_free(R);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_accounting), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_nameless_hello),  cmocka_unit_test(test_final_grace),
        cmocka_unit_test(test_fallback_sample), cmocka_unit_test(test_fallback_exact),
        cmocka_unit_test(test_shares_alive),    cmocka_unit_test(test_share_refusals),
        cmocka_unit_test(test_connection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
