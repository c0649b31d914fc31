/* terrain_values.h: the known per-rank values of the terrain's tests (test_terrain.c and the
 * "terrain" pattern of mw-synth, synth_terrain.c), stated once: per rank r of R, function j
 * (the j-th id of the function table) or region id g, and window k of the run (from 0).
 *
 *   functions  (tv_fn_names[j], j = 0 .. 39)
 *              time   1 us * (40 - j) * (1 + r % 8); rank R*5/8 also 4 ms * (k + 1) in j = 2
 *                     and rank R/4 1.5 ms * (k + 1) in j = 0 (the two hot cells)
 *              count  1 + (r + j) % 5; rank R*5/8 also 1000 in j = 5
 *              bytes  0 when j % 3 == 0, else 256 * j * (1 + r % 4); rank R/2 also 1 MiB in j = 1
 *   regions    "solver" (1), "halo" (2), "io" (3): exclusive 100 us * g * (1 + r % 4), rank R/3
 *              also 8 ms * (k + 1) in "halo"; inclusive = exclusive + 50 us * g; count g;
 *              MPI time = exclusive / 2
 */
#ifndef MW_TEST_TERRAIN_VALUES_H
#define MW_TEST_TERRAIN_VALUES_H

#include <stdint.h>
#include <stdlib.h>

#include "mw_proto.h"

#define TV_REGIONS 3
static const char *const tv_region_names[TV_REGIONS] = {"solver", "halo", "io"};

/* The functions of the pattern, j = 0 .. 39: the j-th one's id, and the j of an id (-1). */
#define TV_FNS_MAX 40
static const char *const tv_fn_names[TV_FNS_MAX] = {
    "MPI_Allreduce", "MPI_Waitall",        "MPI_Isend",         "MPI_Irecv",        "MPI_Send",
    "MPI_Recv",      "MPI_Bcast",          "MPI_Barrier",       "MPI_Wait",         "MPI_Alltoall",
    "MPI_Allgather", "MPI_Reduce",         "MPI_Sendrecv",      "MPI_Gather",       "MPI_Scatter",
    "MPI_Test",      "MPI_Iprobe",         "MPI_Alltoallv",     "MPI_Allgatherv",   "MPI_Gatherv",
    "MPI_Scatterv",  "MPI_Reduce_scatter", "MPI_Ssend",         "MPI_Probe",        "MPI_Testall",
    "MPI_Waitany",   "MPI_Comm_split",     "MPI_Comm_dup",      "MPI_Put",          "MPI_Get",
    "MPI_Win_fence", "MPI_Accumulate",     "MPI_File_write_at", "MPI_File_read_at", "MPI_Exscan",
    "MPI_Scan",      "MPI_Iallreduce",     "MPI_Ibcast",        "MPI_Start",        "MPI_Startall"};

static inline unsigned tv_fn(unsigned j)
{
    static unsigned ids[TV_FNS_MAX]; /* looked up once: the tests ask millions of times */
    if (j >= TV_FNS_MAX)
        return 0;
    if (!ids[j])
        ids[j] = mw_fn_id(tv_fn_names[j]);
    return ids[j];
}

static inline int tv_fn_index(unsigned id)
{
    for (unsigned j = 0; j < TV_FNS_MAX; j++)
        if (tv_fn(j) == id)
            return (int)j;
    return -1;
}

static inline uint32_t tv_hot(uint32_t ranks)
{
    return ranks * 5 / 8;
}

static inline uint64_t tv_ns(uint32_t ranks, uint32_t r, unsigned j, uint64_t k)
{
    uint64_t v = 1000ull * (40 - j) * (1 + r % 8);
    if (r == tv_hot(ranks) && j == 2)
        v += 4000000ull * (k + 1);
    if (r == ranks / 4 && j == 0)
        v += 1500000ull * (k + 1);
    return v;
}

static inline uint64_t tv_count(uint32_t ranks, uint32_t r, unsigned j)
{
    return 1 + (r + j) % 5 + (r == tv_hot(ranks) && j == 5 ? 1000 : 0);
}

static inline uint64_t tv_bytes(uint32_t ranks, uint32_t r, unsigned j)
{
    if (r == ranks / 2 && j == 1)
        return 256ull * j * (1 + r % 4) + (1u << 20);
    return j % 3 == 0 ? 0 : 256ull * j * (1 + r % 4);
}

static inline uint64_t tv_excl(uint32_t ranks, uint32_t r, unsigned g, uint64_t k)
{
    uint64_t v = 100000ull * g * (1 + r % 4);
    if (r == ranks / 3 && g == 2)
        v += 8000000ull * (k + 1);
    return v;
}

static inline uint64_t tv_incl(uint32_t ranks, uint32_t r, unsigned g, uint64_t k)
{
    return tv_excl(ranks, r, g, k) + 50000ull * g;
}

/* Window `index` (window k of the run, from 0) of a job of `ranks` ranks with `nfn` functions,
 * as a collector merges it: the summary of every rank (function totals) and the per-rank
 * entries rf_* and rr_*, rank-major, ids increasing. Packed into *buf (malloc'ed); 0 or -1. */
static inline int tv_pack_window(uint32_t ranks, unsigned nfn, uint64_t k, uint64_t index,
                                 uint64_t window_ns, uint32_t subslots, uint32_t bins,
                                 uint8_t **buf, size_t *len)
{
    Mpiwatch__Window w = MPIWATCH__WINDOW__INIT;
    w.index = index;
    w.window_ns = window_ns;
    w.subslots = subslots;
    w.duration_bins = bins;
    w.ranks_reporting = ranks;
    w.start_ns = index * window_ns;
    w.closed_real_ns = w.start_ns + window_ns + 2000000;
    size_t nf = (size_t)ranks * nfn, nr = (size_t)ranks * TV_REGIONS;
    uint32_t *fr = malloc(nf * 4), *ff = malloc(nf * 4), *rr = malloc(nr * 4), *rg = malloc(nr * 4);
    uint64_t *fc = malloc(nf * 8), *fn = malloc(nf * 8), *fb = malloc(nf * 8);
    uint64_t *rc = malloc(nr * 8), *ri = malloc(nr * 8), *re = malloc(nr * 8), *rm = malloc(nr * 8);
    Mpiwatch__FunctionStat *fs = calloc(nfn ? nfn : 1, sizeof *fs);
    Mpiwatch__FunctionStat **fsp = calloc(nfn ? nfn : 1, sizeof *fsp);
    Mpiwatch__RegionStat rs[TV_REGIONS], *rsp[TV_REGIONS];
    uint32_t *ofn = NULL, *osub = NULL;
    uint64_t *ons = NULL;
    int rcode = -1;
    if (!fr || !ff || !rr || !rg || !fc || !fn || !fb || !rc || !ri || !re || !rm || !fs || !fsp)
        goto out;
    for (unsigned j = 0; j < nfn; j++) {
        mpiwatch__function_stat__init(&fs[j]);
        fs[j].fn = tv_fn(j);
        fsp[j] = &fs[j];
    }
    for (unsigned g = 0; g < TV_REGIONS; g++) {
        mpiwatch__region_stat__init(&rs[g]);
        rs[g].region = g + 1;
        rs[g].ranks = ranks;
        rsp[g] = &rs[g];
    }
    size_t a = 0, b = 0;
    for (uint32_t r = 0; r < ranks; r++) {
        for (unsigned j = 0; j < nfn; j++, a++) {
            fr[a] = r;
            ff[a] = tv_fn(j);
            fc[a] = tv_count(ranks, r, j);
            fn[a] = tv_ns(ranks, r, j, k);
            fb[a] = tv_bytes(ranks, r, j);
            fs[j].count += fc[a];
            fs[j].total_ns += fn[a];
            fs[j].bytes += fb[a];
            w.mpi_time_ns += fn[a];
        }
        for (unsigned g = 1; g <= TV_REGIONS; g++, b++) {
            rr[b] = r;
            rg[b] = g;
            rc[b] = g;
            re[b] = tv_excl(ranks, r, g, k);
            ri[b] = tv_incl(ranks, r, g, k);
            rm[b] = re[b] / 2;
            rs[g - 1].count += rc[b];
            rs[g - 1].incl_ns += ri[b];
            rs[g - 1].excl_ns += re[b];
            rs[g - 1].mpi_ns += rm[b];
        }
    }
    /* The timeline's occupancy: each function's time spread evenly over the sub-slots. */
    size_t no = (size_t)nfn * subslots;
    ofn = malloc((no ? no : 1) * 4);
    osub = malloc((no ? no : 1) * 4);
    ons = malloc((no ? no : 1) * 8);
    if (!ofn || !osub || !ons)
        goto out;
    for (unsigned j = 0; j < nfn; j++)
        for (uint32_t u = 0; u < subslots; u++) {
            size_t i = (size_t)j * subslots + u;
            ofn[i] = tv_fn(j);
            osub[i] = u;
            ons[i] = fs[j].total_ns / subslots;
            w.occ_total_ns += ons[i];
        }
    w.n_occ_fn = w.n_occ_sub = w.n_occ_ns = no;
    w.occ_fn = ofn;
    w.occ_sub = osub;
    w.occ_ns = ons;
    w.n_functions = nfn;
    w.functions = fsp;
    w.n_regions = TV_REGIONS;
    w.regions = rsp;
    w.n_rf_rank = w.n_rf_fn = w.n_rf_count = w.n_rf_ns = w.n_rf_bytes = nf;
    w.rf_rank = fr;
    w.rf_fn = ff;
    w.rf_count = fc;
    w.rf_ns = fn;
    w.rf_bytes = fb;
    w.n_rr_rank = w.n_rr_region = w.n_rr_count = w.n_rr_incl_ns = w.n_rr_excl_ns = w.n_rr_mpi_ns =
        nr;
    w.rr_rank = rr;
    w.rr_region = rg;
    w.rr_count = rc;
    w.rr_incl_ns = ri;
    w.rr_excl_ns = re;
    w.rr_mpi_ns = rm;
    *len = mpiwatch__window__get_packed_size(&w);
    *buf = malloc(*len ? *len : 1);
    if (*buf) {
        mpiwatch__window__pack(&w, *buf);
        rcode = 0;
    }
out:
    free(ofn), free(osub), free(ons);
    free(fr), free(ff), free(rr), free(rg), free(fc), free(fn), free(fb);
    free(rc), free(ri), free(re), free(rm), free(fs), free(fsp);
    return rcode;
}

#endif
