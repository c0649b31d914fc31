/* mw-regions-synth: writes a recording of crafted windows with known code regions, call sites,
 * per-rank region times, per-function pairs and spread across ranks, for the viewer's region
 * snapshot test (tests/viewer/snapshot_regions.sh).
 *
 *   mw-regions-synth FILE.mpiw   (the expected values as JSON on stdout)
 *
 * 8 ranks on 2 hosts (ranks 0-3 on node0, 4-7 on node1), 100 ms windows, 6 windows. The job
 * names three regions: 1 "solve", 2 "exchange", 3 "io", and two call sites of MPI_Allreduce:
 * 1 solve.c:42 in solve(), 2 main.c:17 in main(). In window k < 5, rank r has exclusive time
 * (10 + 5 r) ms in solve (inclusive 10 ms more), (20 - 2 r) ms in exchange, and rank 0 30 ms in
 * io in even windows; the window's RegionStat is the sum over ranks. Window 5 holds solve
 * instances that began earlier and ended in it: 150 ms exclusive on every rank (a share of 1.5,
 * which the timeline clamps). Per-function pairs: every rank r sends 10 MPI_Isend messages of
 * 1 KiB to r + 1 and 3 MPI_Send messages of 100 B to r - 1 (mod 8); pair_* sums them.
 * MPI_Allreduce: 4 ms per rank per window, 60% at site 1 and 40% at site 2, rank_sd_ns 1000 k +
 * 500, the busiest rank k with 5 ms + k us.
 *
 * DESIGN: the windows are written by the collector's recording writer (mw__record_window) as
 * mw-trace-synth does, not merged from samples, so the test does not depend on the collector's
 * merging of these fields: it checks the viewer against the fields as the wire contract states
 * them (proto/mpiwatch.proto).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "mw_proto.h"
#include "options.h"
#include "record_file.h"

#define R 8u
#define NW 6u
#define WNS 100000000ull
#define SUBS 10u
#define BINS 40u
#define ORIGIN 1700000000000000000ull
#define MS 1000000ull

static uint64_t solve_excl(uint32_t r, uint64_t k)
{
    return k == 5 ? 150 * MS : (10 + 5 * (uint64_t)r) * MS;
}

static uint64_t exch_excl(uint32_t r, uint64_t k)
{
    return k == 5 ? 0 : (20 - 2 * (uint64_t)r) * MS;
}

static uint64_t io_excl(uint32_t r, uint64_t k)
{
    return k < 5 && k % 2 == 0 && r == 0 ? 30 * MS : 0;
}

static int write_window(mw_record_t *rec, const mw_clock_t *now, uint64_t k)
{
    Mpiwatch__Window w = MPIWATCH__WINDOW__INIT;
    w.index = ORIGIN / WNS + k;
    w.window_ns = WNS;
    w.subslots = SUBS;
    w.duration_bins = BINS;
    w.ranks_reporting = R;
    w.start_ns = ORIGIN + k * WNS;
    w.closed_real_ns = w.start_ns + WNS + 2 * MS;

    /* MPI_Allreduce: 4 ms per rank, its occupancy over the sub-slots, two sites. */
    Mpiwatch__FunctionStat fs[3], *fsp[3];
    const unsigned fns[3] = {MW_ID_Allreduce, MW_ID_Isend, MW_ID_Send};
    for (int i = 0; i < 3; i++) {
        mpiwatch__function_stat__init(&fs[i]);
        fs[i].fn = fns[i];
        fs[i].count = R * (i == 0 ? 4 : i == 1 ? 10 : 3);
        fs[i].total_ns = i == 0 ? R * 4 * MS : R * (i == 1 ? 10 : 3) * 2000;
        fsp[i] = &fs[i];
    }
    fs[0].rank_sd_ns = 1000.0 * (double)k + 500.0;
    fs[0].rank_max = (uint32_t)k;
    fs[0].rank_max_ns = 5 * MS + k * 1000;
    w.n_functions = 3;
    w.functions = fsp;
    w.mpi_time_ns = fs[0].total_ns + fs[1].total_ns + fs[2].total_ns;
    uint32_t occ_fn[SUBS], occ_sub[SUBS];
    uint64_t occ_ns[SUBS];
    for (unsigned u = 0; u < SUBS; u++) {
        occ_fn[u] = MW_ID_Allreduce;
        occ_sub[u] = u;
        occ_ns[u] = R * 4 * MS / SUBS;
        w.occ_total_ns += occ_ns[u];
    }
    w.n_occ_fn = w.n_occ_sub = w.n_occ_ns = SUBS;
    w.occ_fn = occ_fn;
    w.occ_sub = occ_sub;
    w.occ_ns = occ_ns;

    Mpiwatch__SiteStat ss[2], *ssp[2];
    for (int i = 0; i < 2; i++) {
        mpiwatch__site_stat__init(&ss[i]);
        ss[i].site = (uint32_t)i + 1;
        ss[i].fn = MW_ID_Allreduce;
        ss[i].count = R * (i == 0 ? 3 : 1);
        ss[i].ns = fs[0].total_ns * (i == 0 ? 6 : 4) / 10;
        ss[i].bytes = ss[i].count * 8;
        ss[i].max_ns = 2 * MS;
        ss[i].ranks = R;
        ss[i].top_rank = i == 0 ? 7 : 3;
        ss[i].top_rank_ns = ss[i].ns / R + 1000;
        ssp[i] = &ss[i];
    }
    w.n_sites = 2;
    w.sites = ssp;

    /* Regions: per rank (rr_*), summed (regions). */
    uint32_t rr_rank[3 * R], rr_region[3 * R];
    uint64_t rr_count[3 * R], rr_incl[3 * R], rr_excl[3 * R], rr_mpi[3 * R];
    Mpiwatch__RegionStat rs[3], *rsp[3];
    for (int g = 0; g < 3; g++) {
        mpiwatch__region_stat__init(&rs[g]);
        rs[g].region = (uint32_t)g + 1;
    }
    size_t nr = 0;
    for (uint32_t r = 0; r < R; r++) {
        uint64_t ex[3] = {solve_excl(r, k), exch_excl(r, k), io_excl(r, k)};
        for (int g = 0; g < 3; g++) {
            if (!ex[g])
                continue;
            rr_rank[nr] = r;
            rr_region[nr] = (uint32_t)g + 1;
            rr_count[nr] = 1;
            rr_excl[nr] = ex[g];
            rr_incl[nr] = ex[g] + (g == 0 ? 10 * MS : 0);
            rr_mpi[nr] = g == 1 ? 2 * MS : 0;
            rs[g].count++;
            rs[g].excl_ns += rr_excl[nr];
            rs[g].incl_ns += rr_incl[nr];
            rs[g].mpi_ns += rr_mpi[nr];
            rs[g].ranks++;
            nr++;
        }
    }
    size_t ng = 0;
    for (int g = 0; g < 3; g++)
        if (rs[g].count)
            rsp[ng++] = &rs[g];
    w.n_regions = ng;
    w.regions = rsp;
    w.n_rr_rank = w.n_rr_region = w.n_rr_count = w.n_rr_incl_ns = w.n_rr_excl_ns = w.n_rr_mpi_ns =
        nr;
    w.rr_rank = rr_rank;
    w.rr_region = rr_region;
    w.rr_count = rr_count;
    w.rr_incl_ns = rr_incl;
    w.rr_excl_ns = rr_excl;
    w.rr_mpi_ns = rr_mpi;

    /* Pairs: Isend to r + 1, Send to r - 1; pair_* sums them (different destinations). */
    uint32_t fsrc[2 * R], fdst[2 * R], ffn[2 * R];
    uint64_t fmsg[2 * R], fbytes[2 * R];
    for (uint32_t r = 0; r < R; r++) {
        fsrc[2 * r] = fsrc[2 * r + 1] = r;
        fdst[2 * r] = (r + 1) % R;
        ffn[2 * r] = MW_ID_Isend;
        fmsg[2 * r] = 10;
        fbytes[2 * r] = 10 * 1024;
        fdst[2 * r + 1] = (r + R - 1) % R;
        ffn[2 * r + 1] = MW_ID_Send;
        fmsg[2 * r + 1] = 3;
        fbytes[2 * r + 1] = 300;
    }
    w.n_fpair_src = w.n_fpair_dst = w.n_fpair_fn = w.n_fpair_messages = w.n_fpair_bytes = 2 * R;
    w.fpair_src = fsrc;
    w.fpair_dst = fdst;
    w.fpair_fn = ffn;
    w.fpair_messages = fmsg;
    w.fpair_bytes = fbytes;
    w.n_pair_src = w.n_pair_dst = w.n_pair_messages = w.n_pair_bytes = 2 * R;
    w.pair_src = fsrc;
    w.pair_dst = fdst;
    w.pair_messages = fmsg;
    w.pair_bytes = fbytes;

    size_t n = mpiwatch__window__get_packed_size(&w);
    uint8_t *buf = malloc(n);
    if (!buf)
        return -1;
    mpiwatch__window__pack(&w, buf);
    mw__record_window(rec, now, w.index, buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mw-regions-synth FILE.mpiw\n");
        return 2;
    }
    mw__log_level = MW_LOG_ERROR;
    mw_collector_options_t opt;
    mw_collector_options_defaults(&opt);
    mw_clock_t now;
    mw__clock_now(&now);
    mw_record_t *rec = mw__record_open(argv[1], &opt, &now);
    if (!rec)
        return 1;
    Mpiwatch__JobInfo job = MPIWATCH__JOB_INFO__INIT;
    job.job = "regions-synth";
    job.program = "regions-synth";
    job.size = R;
    job.window_ns = WNS;
    job.subslots = SUBS;
    job.duration_bins = BINS;
    job.function_table_hash = mw_fn_table_hash();
    job.function_count = MW_FN_COUNT;
    job.state = "complete";
    char *hosts[2] = {"node0", "node1"};
    job.n_hosts = 2;
    job.hosts = hosts;
    Mpiwatch__RankInfo ri[R], *rip[R];
    for (uint32_t r = 0; r < R; r++) {
        mpiwatch__rank_info__init(&ri[r]);
        ri[r].rank = r;
        ri[r].host = r / 4;
        rip[r] = &ri[r];
    }
    job.n_ranks = R;
    job.ranks = rip;
    static const char *names[3] = {"solve", "exchange", "io"};
    Mpiwatch__Region rg[3], *rgp[3];
    for (int i = 0; i < 3; i++) {
        mpiwatch__region__init(&rg[i]);
        rg[i].id = (uint32_t)i + 1;
        rg[i].name = (char *)names[i];
        rg[i].source = 1;
        rgp[i] = &rg[i];
    }
    job.n_regions = 3;
    job.regions = rgp;
    Mpiwatch__CallSite cs[2], *csp[2];
    for (int i = 0; i < 2; i++) {
        mpiwatch__call_site__init(&cs[i]);
        cs[i].id = (uint32_t)i + 1;
        cs[i].module = "/opt/app/bin/app";
        cs[i].offset = 0x1234u + 0x100u * (unsigned)i;
        cs[i].function = i == 0 ? "solve" : "main";
        cs[i].file = i == 0 ? "/src/app/solve.c" : "/src/app/main.c";
        cs[i].line = i == 0 ? 42 : 17;
        csp[i] = &cs[i];
    }
    job.n_sites = 2;
    job.sites = csp;
    size_t n = mpiwatch__job_info__get_packed_size(&job);
    uint8_t *buf = malloc(n);
    if (!buf)
        return 1;
    mpiwatch__job_info__pack(&job, buf);
    mw__record_job(rec, &now, buf, n);
    free(buf);
    int rc = 0;
    for (uint64_t k = 0; k < NW && rc == 0; k++) {
        now.mono_ns += WNS;
        now.real_ns += WNS;
        rc = write_window(rec, &now, k);
    }
    mw__record_close(rec);
    /* The expected values: shares of rank-time per window and region, the per-rank values. */
    printf("{\"ranks\": %u, \"windows\": %u, \"window_ns\": %llu,\n \"shares\": [", R, NW,
           (unsigned long long)WNS);
    for (uint64_t k = 0; k < NW; k++) {
        double s[3] = {0, 0, 0};
        for (uint32_t r = 0; r < R; r++) {
            s[0] += (double)solve_excl(r, k);
            s[1] += (double)exch_excl(r, k);
            s[2] += (double)io_excl(r, k);
        }
        printf("%s[%.6f, %.6f, %.6f]", k ? ", " : "", s[0] / (R * (double)WNS),
               s[1] / (R * (double)WNS), s[2] / (R * (double)WNS));
    }
    printf("],\n \"solve_excl_w0\": [");
    for (uint32_t r = 0; r < R; r++)
        printf("%s%llu", r ? ", " : "", (unsigned long long)solve_excl(r, 0));
    printf("],\n \"solve_incl_w0\": [");
    for (uint32_t r = 0; r < R; r++)
        printf("%s%llu", r ? ", " : "", (unsigned long long)(solve_excl(r, 0) + 10 * MS));
    printf("],\n \"isend\": {\"lines\": %u, \"messages\": %u}, \"send\": {\"lines\": %u, "
           "\"messages\": %u},\n \"sites\": [{\"site\": 1, \"file\": \"/src/app/solve.c\", "
           "\"line\": 42, \"share\": 0.6, \"top_rank\": 7}, {\"site\": 2, \"file\": "
           "\"/src/app/main.c\", \"line\": 17, \"share\": 0.4, \"top_rank\": 3}]}\n",
           R, 10 * R, R, 3 * R);
    return rc ? 1 : 0;
}
