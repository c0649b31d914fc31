/* test_callsites.c: the call-site tables of the recorder and the sender's side (callsites.c):
 * exact per-(site, function) totals, a full table counted as dropped, the resolution budget
 * per sample (sites numbered at once with a cheap definition, the complete one sent later
 * under the same id), and definitions sent again after a dropped sample.
 *
 * The timer is put in clock_gettime mode with a zero offset (as in test_record.c), and the
 * return address a wrapper would store (t->ra) is set by hand to addresses inside this
 * program's functions, so that the sender's resolution finds them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf.h"
#include "shim.h"

#define W 1000000ull /* 1 ms windows */
static acc_t acc;

/* Addresses to call from: inside this function (4 KiB of it; the tests use the first 2100
 * bytes). The file is built with -g (tests/shim/CMakeLists.txt): libdw finds its lines. */
__attribute__((noinline, used)) void site_anchor(void);
__attribute__((noinline, used)) void site_anchor(void)
{
    __asm__ volatile(".rept 4096\n\tnop\n\t.endr");
}

static uint64_t site(unsigned i)
{
    return (uint64_t)(uintptr_t)&site_anchor + 1 + i;
}

static void setup_recorder(void)
{
    static int mapped;
    if (!mapped) {
        setenv("MPIWATCH_CALLSITES", "on", 1);
        setenv("MPIWATCH_CALLSITES_MAX", "16", 1);
        memset(&mw__g, 0, sizeof mw__g);
        mw__config_read(&mw__g.cfg);
        mw__g.cfg.subslots = 10;
        mw__g.cfg.longest = 4;
        mw__g.cfg.max_threads = 8;
        mw__g.size = 8;
        mw__timer_init(2);
        mw__g.offset_ns = 0;
        mw__g.need_fence = 1;
        assert_int_equal(mw__alloc(), 0);
        assert_int_equal(mw__acc_init(&acc), 0);
        mapped = 1;
    }
    mw__grid_init(W, 10);
    mw__set_state(1, 0);
    mw__acc_clear(&acc);
    /* Only the count budget, so that what a sample resolves does not depend on the machine's
     * load; test_over_budget sets the time budget itself. */
    mw__sites_resolve_max = 64;
    mw__sites_resolve_ns = UINT64_MAX;
}

static mw_thread_t *self(void)
{
    mw_thread_t *t = mw__self(0);
    assert_non_null(t);
    assert_true(t->site_off != 0);
    return t;
}

static void call_at(mw_thread_t *t, uint64_t ra, unsigned fn, uint64_t t0, uint64_t d,
                    uint64_t bytes)
{
    t->ra = ra;
    mw__record(t, fn, t0, t0 + d, bytes, -1);
}

/* The (site, function) entry of a sample, by the site's return address; NULL when absent. */
static const Mpiwatch__CallSiteDef *def_of(const Mpiwatch__CallSiteDef *const *defs, size_t n,
                                           uint32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (defs[i]->id == id)
            return defs[i];
    return NULL;
}

static void test_exact_and_defs(void **state)
{
    (void)state;
    setup_recorder();
    int64_t w = 2000;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)w * W;
    for (unsigned i = 1; i <= 10; i++)
        call_at(t, site(0), MW_ID_Allreduce, base + 10 * i, i, 8);
    for (unsigned i = 1; i <= 3; i++)
        call_at(t, site(40), MW_ID_Send, base + 500 + i, 100 * i, 64);
    call_at(t, site(0), MW_ID_Bcast, base + 900, 7, 4); /* same site, another function */
    mw__collect(&acc, w);
    Mpiwatch__Sample smp = MPIWATCH__SAMPLE__INIT;
    int64_t from = mw__sites_sample(&smp);
    assert_true(from >= 0);
    assert_int_equal(smp.n_site_defs, 2);
    assert_int_equal(smp.n_site_id, 3);
    assert_int_equal(smp.sites_dropped, 0);
    unsigned seen = 0;
    for (size_t i = 0; i < smp.n_site_id; i++) {
        const Mpiwatch__CallSiteDef *d = def_of((const Mpiwatch__CallSiteDef *const *)smp.site_defs,
                                                smp.n_site_defs, smp.site_id[i]);
        assert_non_null(d);
        assert_string_equal(d->function, "site_anchor");
        assert_true(d->module[0] != '\0');
        if (d->address == site(0) && smp.site_fn[i] == MW_ID_Allreduce) {
            assert_int_equal(smp.site_count[i], 10);
            assert_int_equal(smp.site_ns[i], 55);
            assert_int_equal(smp.site_bytes[i], 80);
            assert_int_equal(smp.site_max_ns[i], 10);
            seen |= 1;
        } else if (d->address == site(40) && smp.site_fn[i] == MW_ID_Send) {
            assert_int_equal(smp.site_count[i], 3);
            assert_int_equal(smp.site_ns[i], 600);
            assert_int_equal(smp.site_bytes[i], 192);
            assert_int_equal(smp.site_max_ns[i], 300);
            seen |= 2;
        } else if (d->address == site(0) && smp.site_fn[i] == MW_ID_Bcast) {
            assert_int_equal(smp.site_count[i], 1);
            seen |= 4;
        } else {
            fail_msg("unexpected entry: site %u fn %u", smp.site_id[i], smp.site_fn[i]);
        }
    }
    assert_int_equal(seen, 7);
    /* Handed over: the next sample carries no definition; a dropped one gives them back. */
    Mpiwatch__Sample s2 = MPIWATCH__SAMPLE__INIT;
    assert_int_equal(mw__sites_sample(&s2), -1);
    assert_int_equal(s2.n_site_defs, 0);
    assert_int_equal(s2.n_site_id, 0); /* nothing collected since */
    mw__sites_defs_lost(from);
    Mpiwatch__Sample s3 = MPIWATCH__SAMPLE__INIT;
    assert_true(mw__sites_sample(&s3) >= 0);
    assert_int_equal(s3.n_site_defs, 2);
    /* The slot was reset: the next window starts empty. */
    atomic_store(&mw__g.closed_upto, w);
    call_at(t, site(0), MW_ID_Allreduce, base + W + 5, 3, 8);
    mw__collect(&acc, w + 1);
    Mpiwatch__Sample s4 = MPIWATCH__SAMPLE__INIT;
    mw__sites_sample(&s4);
    assert_int_equal(s4.n_site_id, 1);
    assert_int_equal(s4.site_count[0], 1);
    assert_int_equal(s4.site_ns[0], 3);
    assert_int_equal(s4.n_site_defs, 0);
}

/* 16 entries per slot: more distinct sites in one window are dropped and counted, and entries
 * plus dropped calls are the calls. */
static void test_full_table(void **state)
{
    (void)state;
    setup_recorder();
    int64_t w = 3000;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)w * W, calls = 0;
    for (unsigned s = 0; s < 40; s++)
        for (unsigned k = 0; k <= s % 3; k++, calls++)
            call_at(t, site(100 + s), MW_ID_Barrier, base + 1000 + calls, 1, 0);
    mw__collect(&acc, w);
    Mpiwatch__Sample smp = MPIWATCH__SAMPLE__INIT;
    mw__sites_sample(&smp);
    uint64_t in = 0;
    for (size_t i = 0; i < smp.n_site_id; i++)
        in += smp.site_count[i];
    assert_true(smp.n_site_id <= 16);
    assert_true(smp.sites_dropped > 0);
    assert_int_equal(in + smp.sites_dropped, calls);
    assert_int_equal(acc.fn[MW_ID_Barrier].count, calls);
}

/* At most 64 sites are resolved per sample, but every new site is numbered and defined at once:
 * no call is dropped. The 36 resolved in the next sample are defined again, complete, under
 * their ids (8 threads x 16 entries hold 128 sites). */
static void test_resolve_budget(void **state)
{
    (void)state;
    setup_recorder();
    int64_t w = 4000;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t = self();
    uint32_t id_of[100] = {0};
    for (int round = 0; round < 2; round++) {
        /* 10 windows of 10 sites each, collected one by one into one sample */
        for (unsigned s = 0; s < 100; s++) {
            int64_t k = w + round * 10 + s / 10;
            atomic_store(&mw__g.closed_upto, k - 1);
            call_at(t, site(200 + s), MW_ID_Reduce, (uint64_t)k * W + 100 + s, 1, 0);
            if (s % 10 == 9)
                mw__collect(&acc, k);
        }
        Mpiwatch__Sample smp = MPIWATCH__SAMPLE__INIT;
        mw__sites_sample(&smp);
        unsigned in = 0;
        for (size_t i = 0; i < smp.n_site_id; i++) {
            assert_int_equal(smp.site_count[i], 1);
            in += (unsigned)smp.site_count[i];
        }
        assert_int_equal(in, 100);
        assert_int_equal(smp.sites_dropped, 0);
        unsigned full = 0;
        for (size_t i = 0; i < smp.n_site_defs; i++) {
            const Mpiwatch__CallSiteDef *d = smp.site_defs[i];
            assert_true(d->address >= site(200) && d->address < site(300));
            unsigned s = (unsigned)(d->address - site(200));
            if (round == 0) {
                assert_int_equal(id_of[s], 0);
                id_of[s] = d->id;
            } else {
                assert_int_equal(d->id, id_of[s]); /* the same id, now complete */
            }
            if (d->line) { /* complete: libdw's function, file and line */
                assert_string_equal(d->function, "site_anchor");
                assert_true(strstr(d->file, "test_callsites.c") != NULL);
                full++;
            } else {
                assert_string_equal(d->file, "");
            }
        }
        if (round == 0) {
            assert_int_equal(smp.n_site_defs, 100); /* all defined, 64 of them resolved */
            assert_int_equal(full, 64);
        } else {
            assert_int_equal(smp.n_site_defs, 36); /* the others, complete */
            assert_int_equal(full, 36);
        }
    }
    /* Nothing left to send. */
    Mpiwatch__Sample smp = MPIWATCH__SAMPLE__INIT;
    assert_int_equal(mw__sites_sample(&smp), -1);
    assert_int_equal(smp.n_site_defs, 0);
}

/* Resolution over its budget in the first sample (the first libdw load on a loaded machine):
 * the counts are exact there with the cheap definitions; the complete ones follow under the
 * same ids, again after a lost sample, and then never again. */
static void test_over_budget(void **state)
{
    (void)state;
    setup_recorder();
    mw__sites_resolve_ns = 0; /* no time for libdw in this sample */
    int64_t w = 6000;
    atomic_store(&mw__g.closed_upto, w - 1);
    mw_thread_t *t = self();
    uint64_t base = (uint64_t)w * W;
    for (unsigned i = 1; i <= 7; i++)
        call_at(t, site(2000), MW_ID_Allreduce, base + 10 * i, i, 8);
    for (unsigned i = 1; i <= 5; i++)
        call_at(t, site(2040), MW_ID_Send, base + 500 + i, 10, 16);
    mw__collect(&acc, w);
    Mpiwatch__Sample a = MPIWATCH__SAMPLE__INIT;
    assert_true(mw__sites_sample(&a) >= 0);
    assert_int_equal(a.sites_dropped, 0);
    assert_int_equal(a.n_site_id, 2);
    assert_int_equal(a.n_site_defs, 2);
    mw_dw_site_t cheap[2], full[2];
    uint32_t ids[2];
    for (size_t i = 0; i < 2; i++) {
        const Mpiwatch__CallSiteDef *d = a.site_defs[i];
        unsigned k = d->address == site(2000) ? 0 : 1;
        assert_int_equal(d->address, site(k ? 2040 : 2000));
        mw__dw_cheap(d->address, &cheap[k]);
        mw__dw_resolve(d->address, &full[k]);
        ids[k] = d->id;
        /* The cheap definition: module and offset (libdw's too), file "" and line 0. */
        assert_true(d->module[0] != '\0');
        assert_string_equal(d->module, cheap[k].module);
        assert_string_equal(d->module, full[k].module);
        assert_int_equal(d->offset, full[k].offset);
        assert_string_equal(d->function, cheap[k].function);
        assert_string_equal(d->file, "");
        assert_int_equal(d->line, 0);
    }
    for (size_t i = 0; i < a.n_site_id; i++) {
        unsigned k = a.site_id[i] == ids[0] ? 0 : 1;
        assert_int_equal(a.site_id[i], ids[k]);
        assert_int_equal(a.site_fn[i], k ? MW_ID_Send : MW_ID_Allreduce);
        assert_int_equal(a.site_count[i], k ? 5 : 7);
        assert_int_equal(a.site_ns[i], k ? 50 : 28);
        assert_int_equal(a.site_bytes[i], k ? 80 : 56);
    }
    /* Still no time: nothing resolved, nothing sent. */
    Mpiwatch__Sample b = MPIWATCH__SAMPLE__INIT;
    assert_int_equal(mw__sites_sample(&b), -1);
    /* Time again: the complete definitions, same ids, module and offset. */
    mw__sites_resolve_ns = UINT64_MAX;
    atomic_store(&mw__g.closed_upto, w);
    call_at(t, site(2000), MW_ID_Allreduce, base + W + 5, 3, 8);
    mw__collect(&acc, w + 1);
    Mpiwatch__Sample c = MPIWATCH__SAMPLE__INIT;
    int64_t token = mw__sites_sample(&c);
    assert_true(token >= 0);
    assert_int_equal(c.n_site_id, 1);
    assert_int_equal(c.site_count[0], 1);
    assert_int_equal(c.sites_dropped, 0);
    assert_int_equal(c.n_site_defs, 2);
    for (int lost = 0; lost < 2; lost++) {
        for (size_t i = 0; i < c.n_site_defs; i++) {
            const Mpiwatch__CallSiteDef *d = c.site_defs[i];
            unsigned k = d->id == ids[0] ? 0 : 1;
            assert_int_equal(d->id, ids[k]);
            assert_int_equal(d->address, site(k ? 2040 : 2000));
            assert_string_equal(d->module, cheap[k].module);
            assert_int_equal(d->offset, full[k].offset);
            assert_string_equal(d->function, "site_anchor");
            assert_string_equal(d->file, full[k].file);
            assert_int_equal(d->line, full[k].line);
        }
        if (!lost) { /* that sample was dropped: they go again */
            mw__sites_defs_lost(token);
            c = (Mpiwatch__Sample)MPIWATCH__SAMPLE__INIT;
            assert_true(mw__sites_sample(&c) >= 0);
            assert_int_equal(c.n_site_defs, 2);
        }
    }
    Mpiwatch__Sample d = MPIWATCH__SAMPLE__INIT;
    assert_int_equal(mw__sites_sample(&d), -1);
    assert_int_equal(d.n_site_defs, 0);
}

/* A sample carries at most 256 definitions: after a lost sample gives all of them back, they
 * go over several samples, and an entry whose definition was not carried yet is dropped. */
static void test_defs_cap(void **state)
{
    (void)state;
    setup_recorder();
    mw_thread_t *t = self();
    int64_t w = 5000;
    unsigned s0 = 1000;
    int64_t first = -1;
    uint32_t first_id = 0;
    for (unsigned round = 0; round < 5; round++) {
        for (unsigned k = 0; k < 8; k++, w++) {
            atomic_store(&mw__g.closed_upto, w - 1);
            for (unsigned j = 0; j < 8; j++)
                call_at(t, site(s0++), MW_ID_Gather, (uint64_t)w * W + 100 + j, 1, 0);
            mw__collect(&acc, w);
        }
        Mpiwatch__Sample smp = MPIWATCH__SAMPLE__INIT;
        int64_t token = mw__sites_sample(&smp);
        assert_int_equal(smp.n_site_defs, 64);
        if (round == 0) {
            first = token;
            first_id = smp.site_defs[0]->id;
        }
    }
    assert_true(first >= 0);
    mw__sites_defs_lost(first); /* every definition goes again */
    /* one call from the site defined last */
    atomic_store(&mw__g.closed_upto, w - 1);
    call_at(t, site(s0 - 1), MW_ID_Gather, (uint64_t)w * W + 100, 1, 0);
    mw__collect(&acc, w);
    Mpiwatch__Sample a = MPIWATCH__SAMPLE__INIT;
    assert_true(mw__sites_sample(&a) >= 0);
    assert_int_equal(a.n_site_defs, 256);
    uint32_t last_id = 0;
    for (size_t i = 0; i < a.n_site_defs; i++) {
        assert_int_equal(a.site_defs[i]->id, first_id + i);
        last_id = a.site_defs[i]->id;
    }
    assert_int_equal(a.n_site_id, 0); /* its site's definition is not in this sample */
    assert_int_equal(a.sites_dropped, 1);
    Mpiwatch__Sample b = MPIWATCH__SAMPLE__INIT;
    assert_true(mw__sites_sample(&b) >= 0);
    assert_true(b.n_site_defs > 0 && b.n_site_defs <= 256);
    assert_int_equal(b.site_defs[0]->id, last_id + 1);
    assert_int_equal(b.site_defs[b.n_site_defs - 1]->id, first_id + 5 * 64 - 1);
    assert_int_equal(b.n_site_id, 0);
    Mpiwatch__Sample c = MPIWATCH__SAMPLE__INIT;
    assert_int_equal(mw__sites_sample(&c), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_and_defs), cmocka_unit_test(test_full_table),
        cmocka_unit_test(test_resolve_budget), cmocka_unit_test(test_over_budget),
        cmocka_unit_test(test_defs_cap),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    mw__sites_close();
    return rc;
}
