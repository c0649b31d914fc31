/* test_loss.c: exact loss accounting (docs/collector.md, "Loss accounting").
 *
 * Each test plays ranks with a model of what they did (their running totals since MPI_Init,
 * kept here independently of the collector), feeds the collector only some of their samples
 * (gaps in the sequence, a collector that joins late, late samples, a rank that dies without a
 * bye) and checks the identity the summary promises, exactly, for calls, time and bytes:
 *     what the ranks did == what the summary merged + what it reports missing,
 * and that `missed` is exactly the part of the samples that never arrived. Crafted totals
 * (decreasing, smaller than the sample itself, a function that disappears, unsorted, mixed
 * with samples without totals) are refused with the reason "totals" and change nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>
#include <stdio.h>

#include "fixture.h"
#include "fx_json.h"
#include "summary.h"
#include "report.h"

#define JOB "loss-job"
#define NFN 3 /* the model's functions: fx_fn(0..2) */

/* What one rank did, as its library counts it: every window's calls, whether sent or not. */
typedef struct {
    uint64_t calls[NFN], ns[NFN], bytes[NFN];
    uint64_t samples;
} model_t;

/* Window k's calls of function i on rank r: deterministic, different per window, and function
 * 2 only from window 3 on (a function called for the first time mid-run). */
static uint64_t calls_of(uint32_t r, uint64_t k, int i)
{
    if (i == 2 && k < 3)
        return 0;
    return 1 + (k * 3 + r + (uint64_t)i) % 5;
}

/* Builds rank r's sample of window FX_W0 + k and advances the model, as the library does:
 * the totals include this sample. */
static void rank_window(fx_t *f, tm_msg_t *m, model_t *md, uint32_t r, uint64_t k)
{
    tm_sample(m, JOB, r, FX_W0 + k, f->now.real_ns);
    for (int i = 0; i < NFN; i++) {
        uint64_t n = calls_of(r, k, i);
        if (!n)
            continue;
        tm_add_fn(m, fx_fn(i), n, n * 1000 + (uint64_t)i, 900, 1100 + (uint64_t)i,
                  n * 8 * (uint64_t)i);
        md->calls[i] += n;
        md->ns[i] += n * 1000 + (uint64_t)i;
        md->bytes[i] += n * 8 * (uint64_t)i;
    }
    md->samples++;
    m->sample.samples_total = md->samples;
}

/* Appends the model's totals to a sample or bye, in increasing function id. */
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

static void send_window(fx_t *f, model_t *md, uint32_t r, uint64_t k, int deliver)
{
    tm_msg_t m;
    rank_window(f, &m, md, r, k);
    add_totals(&m, md);
    if (deliver)
        assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
}

static void send_bye(fx_t *f, const model_t *md, uint32_t r)
{
    tm_msg_t m;
    tm_bye(&m, JOB, r);
    m.bye.windows_sent = md->samples;
    for (int i = 0; i < NFN; i++)
        m.bye.calls_total += md->calls[i];
    add_totals(&m, md);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
}

static cJSON *summary(fx_t *f)
{
    char *text = mw_summary_json(f->c);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    cJSON_free(text);
    return root;
}

/* The identity, per function and in total, against the models of ranks 0..n-1 (what the ranks
 * did, known independently of the collector), and the summary's own at_ranks. */
static void check_identity(const cJSON *root, const model_t *md, uint32_t n)
{
    const cJSON *fns = item(root, "functions"), *missed = item(root, "missed");
    const cJSON *mfns = item(missed, "functions"), *at = item(missed, "at_ranks");
    uint64_t calls = 0, ns = 0, bytes = 0, samples = 0;
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
    }
    for (uint32_t r = 0; r < n; r++)
        samples += md[r].samples;
    assert_int_equal(u64(at, "calls"), calls);
    assert_int_equal(u64(at, "time_ns"), ns);
    assert_int_equal(u64(at, "bytes"), bytes);
    assert_int_equal(u64(at, "samples"), samples);
    uint64_t merged = 0;
    for (int i = 0; i < NFN; i++)
        merged += fn_figure(fns, i, "count");
    assert_int_equal(merged + u64(missed, "calls"), calls);
}

static const cJSON *rank_entry(const cJSON *root, uint32_t rank)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, item(root, "per_rank"))
    {
        if (u64(e, "rank") == rank)
            return e;
    }
    fail_msg("rank %u not in per_rank", rank);
    return NULL;
}

static int array_is(const cJSON *arr, const int *want, int n)
{
    if (cJSON_GetArraySize(arr) != n)
        return 0;
    for (int i = 0; i < n; i++)
        if ((int)cJSON_GetArrayItem(arr, i)->valuedouble != want[i])
            return 0;
    return 1;
}

/* Gaps in the sequence: rank 0 loses windows 3 and 4, rank 1 loses window 7; both say bye. */
static void test_gaps_and_bye(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    model_t md[2] = {0};
    uint64_t lost_calls = 0, lost_ns = 0;
    for (uint64_t k = 0; k < 10; k++)
        for (uint32_t r = 0; r < 2; r++) {
            int lost = (r == 0 && (k == 3 || k == 4)) || (r == 1 && k == 7);
            if (lost)
                for (int i = 0; i < NFN; i++) {
                    lost_calls += calls_of(r, k, i);
                    lost_ns += calls_of(r, k, i) ? calls_of(r, k, i) * 1000 + (uint64_t)i : 0;
                }
            send_window(f, &md[r], r, k, !lost);
        }
    send_bye(f, &md[0], 0);
    send_bye(f, &md[1], 1);
    assert_int_equal(f->c->job.ended, MW_END_COMPLETE);

    cJSON *root = summary(f);
    check_identity(root, md, 2);
    const cJSON *missed = item(root, "missed");
    assert_int_equal(u64(missed, "calls"), lost_calls);
    assert_int_equal(u64(missed, "time_ns"), lost_ns);
    assert_int_equal(u64(missed, "samples"), 3);
    static const int both[] = {0, 1};
    assert_true(array_is(item(missed, "ranks"), both, 2));
    assert_true(array_is(item(missed, "ranks_without_bye"), NULL, 0));
    const cJSON *m0 = item(rank_entry(root, 0), "missed");
    assert_int_equal(u64(m0, "samples"), 2);
    assert_string_equal(cJSON_GetStringValue(item(m0, "totals")), "bye");
    uint64_t c0 = 0;
    for (int i = 0; i < NFN; i++)
        c0 += calls_of(0, 3, i) + calls_of(0, 4, i);
    assert_int_equal(u64(m0, "calls"), c0);
    cJSON_Delete(root);

    /* The text report states the same identity. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    mw__report_write(f->c, mem);
    fclose(mem);
    char want[160];
    uint64_t all = 0;
    for (int i = 0; i < NFN; i++)
        all += md[0].calls[i] + md[1].calls[i];
    snprintf(want, sizeof want, "calls at the ranks: %llu = %llu in this report + %llu missed",
             (unsigned long long)all, (unsigned long long)(all - lost_calls),
             (unsigned long long)lost_calls);
    if (!strstr(text, want))
        fail_msg("report lacks '%s':\n%s", want, text);
    free(text);

    /* And the stats JSON. */
    text = mw__stats_json(f->c);
    root = cJSON_Parse(text);
    cJSON_free(text);
    assert_int_equal(u64(item(root, "missed"), "calls"), lost_calls);
    cJSON_Delete(root);
    fx_free(f);
}

/* A collector that joins late: the first sample it sees of each rank is window 5, whose
 * totals cover windows 0..5. The bye of the last window is lost too (the rank died). */
static void test_join_late_and_dead(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    model_t md[2] = {0};
    for (uint64_t k = 0; k < 5; k++)
        for (uint32_t r = 0; r < 2; r++)
            send_window(f, &md[r], r, k, 0); /* no collector yet */
    model_t before[2] = {md[0], md[1]};
    fx_hellos(f, JOB, 2);
    for (uint64_t k = 5; k < 9; k++)
        for (uint32_t r = 0; r < 2; r++)
            send_window(f, &md[r], r, k, 1);
    send_bye(f, &md[0], 0);
    /* Rank 1 goes on for one more window that never arrives, then dies without a bye. */
    send_window(f, &md[1], 1, 9, 0);
    fx_advance(f, f->opt.silence_timeout_ms + 1000);
    assert_int_equal(f->c->job.ended, MW_END_SILENCE);

    cJSON *root = summary(f);
    const cJSON *missed = item(root, "missed");
    /* Rank 1's window 9 is unknown to the collector: its totals are as of window 8. */
    model_t seen[2] = {md[0], md[1]};
    for (int i = 0; i < NFN; i++) {
        uint64_t n = calls_of(1, 9, i);
        seen[1].calls[i] -= n;
        seen[1].ns[i] -= n ? n * 1000 + (uint64_t)i : 0;
        seen[1].bytes[i] -= n * 8 * (uint64_t)i;
    }
    seen[1].samples--;
    check_identity(root, seen, 2);
    uint64_t want = 0;
    for (int i = 0; i < NFN; i++)
        want += before[0].calls[i] + before[1].calls[i];
    assert_int_equal(u64(missed, "calls"), want);
    assert_int_equal(u64(missed, "samples"), 10);
    static const int one[] = {1};
    assert_true(array_is(item(missed, "ranks_without_bye"), one, 1));
    assert_string_equal(cJSON_GetStringValue(item(item(rank_entry(root, 1), "missed"), "totals")),
                        "last_sample");
    assert_string_equal(cJSON_GetStringValue(item(item(rank_entry(root, 0), "missed"), "totals")),
                        "bye");
    cJSON_Delete(root);
    fx_free(f);
}

/* Late samples (their window closed without them) are merged into the summary, counted as
 * late and not as missed: the identity holds with nothing missed. */
static void test_late_samples(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    model_t md[2] = {0};
    tm_msg_t held[4];
    for (uint64_t k = 0; k < 4; k++) {
        send_window(f, &md[0], 0, k, 1);
        rank_window(f, &held[k], &md[1], 1, k);
        add_totals(&held[k], &md[1]);
    }
    fx_advance(f, 4 * TM_WINDOW_NS / MW_NS_PER_MS + f->opt.lateness_ms + 1000);
    uint64_t late0 = f->c->job.late;
    for (uint64_t k = 0; k < 4; k++)
        assert_int_equal(fx_feed(f, &held[k]), MW_ACCEPTED);
    assert_true(f->c->job.late >= late0 + 1);
    send_bye(f, &md[0], 0);
    send_bye(f, &md[1], 1);
    cJSON *root = summary(f);
    check_identity(root, md, 2);
    assert_true(u64(root, "late") >= 1);
    assert_int_equal(u64(item(root, "missed"), "calls"), 0);
    assert_int_equal(u64(item(root, "missed"), "samples"), 0);
    cJSON_Delete(root);
    fx_free(f);
}

/* Crafted totals are refused ("totals"), counted, and leave the accounting unchanged. */
static void test_crafted_totals(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    fx_hellos(f, JOB, 2);
    model_t md[2] = {0};
    for (uint64_t k = 0; k < 4; k++)
        send_window(f, &md[0], 0, k, 1);
    uint64_t before = f->c->stats.rejected[MW_REJECT_TOTALS];
    tm_msg_t m;
    unsigned refused = 0;
    model_t tmp;
#define REFUSE(setup)                                                                              \
    do {                                                                                           \
        tmp = md[0];                                                                               \
        rank_window(f, &m, &tmp, 0, 4);                                                            \
        add_totals(&m, &tmp);                                                                      \
        setup;                                                                                     \
        assert_int_equal(fx_feed(f, &m), MW_REJECT_TOTALS);                                        \
        refused++;                                                                                 \
    } while (0)
    REFUSE(m.total_calls[0] = 1);                           /* totals decrease */
    REFUSE(m.total_calls[0] -= 1);                          /* less than the sample adds */
    REFUSE(m.total_ns[0] = 0);                              /* time decreases */
    REFUSE(m.sample.samples_total = md[0].samples);         /* samples do not grow */
    REFUSE(m.sample.n_total_fn--; m.sample.n_total_calls--; /* a function disappears */
           m.sample.n_total_ns--; m.sample.n_total_bytes--);
    REFUSE(m.sample.n_total_bytes--);            /* arrays of different lengths */
    REFUSE(m.total_fn[1] = m.total_fn[0]);       /* not strictly increasing */
    REFUSE(m.total_calls[2] = MW_TOTAL_MAX + 1); /* over the cap */
    REFUSE(m.sample.n_total_fn = m.sample.n_total_calls = m.sample.n_total_ns = /* no totals */
           m.sample.n_total_bytes = 0;
           m.sample.samples_total = 0);
#undef REFUSE
    assert_int_equal(f->c->stats.rejected[MW_REJECT_TOTALS], before + refused);
    /* A rank that merged samples without totals cannot switch to totals. */
    tm_sample(&m, JOB, 1, FX_W0, f->now.real_ns);
    tm_add_fn(&m, fx_fn(0), 3, 300, 100, 100, 0);
    assert_int_equal(fx_feed(f, &m), MW_ACCEPTED);
    tm_sample(&m, JOB, 1, FX_W0 + 1, f->now.real_ns);
    tm_add_total(&m, fx_fn(0), 4, 400, 0);
    m.sample.samples_total = 2;
    assert_int_equal(fx_feed(f, &m), MW_REJECT_TOTALS);

    /* The honest next sample still goes through and the identity is intact. */
    send_window(f, &md[0], 0, 4, 1);
    send_bye(f, &md[0], 0);
    cJSON *root = summary(f);
    const cJSON *missed = item(root, "missed");
    assert_int_equal(u64(missed, "calls"), 0);
    static const int one[] = {1};
    assert_true(array_is(item(missed, "ranks_without_totals"), one, 1));
    /* Rank 1 (no totals) counts as what was merged from it. */
    assert_int_equal(u64(item(missed, "at_ranks"), "calls"),
                     md[0].calls[0] + md[0].calls[1] + md[0].calls[2] + 3);
    cJSON_Delete(root);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gaps_and_bye),
        cmocka_unit_test(test_join_late_and_dead),
        cmocka_unit_test(test_late_samples),
        cmocka_unit_test(test_crafted_totals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
