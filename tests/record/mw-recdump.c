/* mw-recdump: what a recording holds, for the shell tests (the scripts in tests/record).
 *
 *   mw-recdump FILE.mpiw
 *
 * Reads every record in order and prints one "key value" line per fact: the number of records
 * of each kind, whether the file ends with a torn or damaged frame, the kind of the last
 * record, the span (first and last window), and how many of the windows read in order are
 * found through the index (mw_rec_reader_find_window) at the offset of the first window frame
 * with their index, and how many of those have their first sample's offset; for per-call
 * traces, how many recorded windows' traces name the frame holding their records
 * (trace_refs), how many of those resolve (mw_rec_reader_resolve_window; trace_unresolved),
 * and the windows' bytes as stored and as the feed published them once resolved
 * (window_bytes_stored, window_bytes_live: what storing the records twice would cost); the bytes
 * the records of each kind take in the file and would take uncompressed (disk_KIND, plain_KIND;
 * mw_rec_reader_last_size), the largest number of ranks a window reported (ranks), what the
 * windows' per-rank arrays (rank_mpi_permille, rf_*, rr_*) and pairs (pair_*, fpair_*) take of
 * their bytes as stored, uncompressed (window_bytes_rank, window_bytes_pairs), and whether
 * samples were dropped (tier_dropped 1) and from which window on all are there (tier_raw_from;
 * docs/recording.md "Tiers"); for the coarse tier, the windows read as lean copies (lean: also
 * counted in `window`; disk_lean and plain_lean include the copies skipped after their full
 * window, disk_window and plain_window are the full windows only), the RecordRanks frames
 * (rank_sums), and the per-rank totals summed over the full windows and over the RecordRanks
 * frames (sums_full, sums_coarse: rf count, ns, bytes, pair messages, bytes, fpair bytes, rr
 * count, windows), equal when no full window was dropped. Exit status
 * 0 when the file could be read (a torn tail included), 1 when not.
 *
 * DESIGN: only the public reader API (proto/mw_recording.h), as the viewer and tools use it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mw_recording.h"

int main(int argc, char **argv)
{
    static const char *const kinds[] = {
        [MPIWATCH__RECORD__BODY__NOT_SET] = "other",   [MPIWATCH__RECORD__BODY_MESSAGE] = "message",
        [MPIWATCH__RECORD__BODY_WINDOW] = "window",    [MPIWATCH__RECORD__BODY_JOB] = "job",
        [MPIWATCH__RECORD__BODY_EVENT] = "event",      [MPIWATCH__RECORD__BODY_TICK] = "tick",
        [MPIWATCH__RECORD__BODY_FINISH] = "finish",    [MPIWATCH__RECORD__BODY_INDEX] = "index",
        [MPIWATCH__RECORD__BODY_START] = "start",      [MPIWATCH__RECORD__BODY_STEP] = "step",
        [MPIWATCH__RECORD__BODY_WINDOW_LEAN] = "lean", [MPIWATCH__RECORD__BODY_RANKS] = "rank_sums",
    };
    enum { NKINDS = sizeof kinds / sizeof kinds[0] };
    char err[256];
    if (argc != 2) {
        fprintf(stderr, "usage: mw-recdump FILE.mpiw\n");
        return 2;
    }
    mw_rec_reader_t *rd = mw_rec_reader_open(argv[1], err, sizeof err);
    if (!rd) {
        fprintf(stderr, "mw-recdump: %s\n", err);
        return 1;
    }
    unsigned long long counts[NKINDS] = {0}, records = 0, disk[NKINDS] = {0}, plain[NKINDS] = {0};
    unsigned long long ranks = 0, rank_bytes = 0, pair_bytes = 0;
    unsigned long long refs = 0, unresolved = 0, stored = 0, live = 0;
    size_t n_win = 0, cap = 0;
    uint64_t *win = NULL, *off = NULL;
    const char *last = "none";
    unsigned long long full[8] = {0}, coarse[8] = {0};
    const Mpiwatch__Record *rec;
    uint64_t at;
    int k;
    while ((k = mw_rec_reader_next(rd, &rec, &at, err, sizeof err)) == 1) {
        unsigned kind = (unsigned)rec->body_case < NKINDS && kinds[rec->body_case]
                            ? (unsigned)rec->body_case
                            : 0;
        counts[kind]++;
        records++;
        uint64_t d, p;
        mw_rec_reader_last_size(rd, &d, &p);
        unsigned bk = kind;
        if (kind == MPIWATCH__RECORD__BODY_WINDOW && mw_rec_reader_last_lean(rd)) {
            bk = MPIWATCH__RECORD__BODY_WINDOW_LEAN;
            counts[bk]++;
        }
        disk[bk] += d;
        plain[bk] += p;
        last = kinds[kind];
        /* The coarse tier's totals against the full windows' (exact sums). */
        const Mpiwatch__Window *sw = NULL;
        unsigned long long *acc = NULL;
        if (rec->body_case == MPIWATCH__RECORD__BODY_RANKS && rec->ranks && rec->ranks->sums) {
            sw = rec->ranks->sums;
            acc = coarse;
            coarse[7] += rec->ranks->windows;
        } else if (bk == MPIWATCH__RECORD__BODY_WINDOW && rec->window) {
            sw = rec->window;
            acc = full;
            full[7]++;
        }
        for (size_t i = 0; sw && i < sw->n_rf_rank; i++) {
            acc[0] += i < sw->n_rf_count ? sw->rf_count[i] : 0;
            acc[1] += i < sw->n_rf_ns ? sw->rf_ns[i] : 0;
            acc[2] += i < sw->n_rf_bytes ? sw->rf_bytes[i] : 0;
        }
        for (size_t i = 0; sw && i < sw->n_pair_messages && i < sw->n_pair_bytes; i++)
            acc[3] += sw->pair_messages[i], acc[4] += sw->pair_bytes[i];
        for (size_t i = 0; sw && i < sw->n_fpair_bytes; i++)
            acc[5] += sw->fpair_bytes[i];
        for (size_t i = 0; sw && i < sw->n_rr_count; i++)
            acc[6] += sw->rr_count[i];
        if (rec->body_case == MPIWATCH__RECORD__BODY_WINDOW && rec->window) {
            Mpiwatch__Window *w = rec->window;
            if (w->ranks_reporting > ranks)
                ranks = w->ranks_reporting;
            /* What the per-rank arrays and the pairs take of it (uncompressed), for the size
             * benchmark's projection of a tier that keeps them at a coarser time step. */
            size_t all = mpiwatch__window__get_packed_size(w);
            size_t n_perm = w->n_rank_mpi_permille;
            size_t k_rf[5] = {w->n_rf_rank, w->n_rf_fn, w->n_rf_count, w->n_rf_ns, w->n_rf_bytes};
            size_t k_rr[6] = {w->n_rr_rank,    w->n_rr_region,  w->n_rr_count,
                              w->n_rr_incl_ns, w->n_rr_excl_ns, w->n_rr_mpi_ns};
            size_t k_p[4] = {w->n_pair_src, w->n_pair_dst, w->n_pair_messages, w->n_pair_bytes};
            size_t k_f[5] = {w->n_fpair_src, w->n_fpair_dst, w->n_fpair_fn, w->n_fpair_messages,
                             w->n_fpair_bytes};
            w->n_rank_mpi_permille = 0;
            w->n_rf_rank = w->n_rf_fn = w->n_rf_count = w->n_rf_ns = w->n_rf_bytes = 0;
            w->n_rr_rank = w->n_rr_region = w->n_rr_count = w->n_rr_incl_ns = 0;
            w->n_rr_excl_ns = w->n_rr_mpi_ns = 0;
            size_t no_rank = mpiwatch__window__get_packed_size(w);
            w->n_pair_src = w->n_pair_dst = w->n_pair_messages = w->n_pair_bytes = 0;
            w->n_fpair_src = w->n_fpair_dst = w->n_fpair_fn = w->n_fpair_messages = 0;
            w->n_fpair_bytes = 0;
            size_t lite = mpiwatch__window__get_packed_size(w);
            rank_bytes += all - no_rank;
            pair_bytes += no_rank - lite;
            w->n_rank_mpi_permille = n_perm;
            w->n_rf_rank = k_rf[0], w->n_rf_fn = k_rf[1], w->n_rf_count = k_rf[2];
            w->n_rf_ns = k_rf[3], w->n_rf_bytes = k_rf[4];
            w->n_rr_rank = k_rr[0], w->n_rr_region = k_rr[1], w->n_rr_count = k_rr[2];
            w->n_rr_incl_ns = k_rr[3], w->n_rr_excl_ns = k_rr[4], w->n_rr_mpi_ns = k_rr[5];
            w->n_pair_src = k_p[0], w->n_pair_dst = k_p[1], w->n_pair_messages = k_p[2];
            w->n_pair_bytes = k_p[3];
            w->n_fpair_src = k_f[0], w->n_fpair_dst = k_f[1], w->n_fpair_fn = k_f[2];
            w->n_fpair_messages = k_f[3], w->n_fpair_bytes = k_f[4];
            stored += mpiwatch__window__get_packed_size(w);
            for (size_t i = 0; i < w->n_traces; i++)
                refs += w->traces[i] && w->traces[i]->frame_offset;
            int bad = mw_rec_reader_resolve_window(rd, w, NULL);
            unresolved += bad > 0 ? (unsigned long long)bad : 0;
            live += mpiwatch__window__get_packed_size(w);
            if (n_win == cap) {
                cap = cap ? 2 * cap : 256;
                win = realloc(win, cap * sizeof *win);
                off = realloc(off, cap * sizeof *off);
                if (!win || !off) {
                    fprintf(stderr, "mw-recdump: out of memory\n");
                    return 1;
                }
            }
            win[n_win] = rec->window->index;
            off[n_win++] = at;
        }
    }
    if (k < 0) {
        fprintf(stderr, "mw-recdump: %s\n", err);
        return 1;
    }
    uint64_t sd, sp;
    unsigned long long skipped = mw_rec_reader_lean_skipped(rd, &sd, &sp);
    disk[MPIWATCH__RECORD__BODY_WINDOW_LEAN] += sd;
    plain[MPIWATCH__RECORD__BODY_WINDOW_LEAN] += sp;
    printf("records %llu\nlean_skipped %llu\n", records, skipped);
    for (int t = 0; t < 2; t++) {
        const unsigned long long *a = t ? coarse : full;
        printf("%s %llu %llu %llu %llu %llu %llu %llu %llu\n", t ? "sums_coarse" : "sums_full",
               a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
    }
    for (unsigned i = 0; i < NKINDS; i++)
        if (kinds[i])
            printf("%s %llu\n", kinds[i], counts[i]);
    for (unsigned i = 0; i < NKINDS; i++)
        if (kinds[i])
            printf("disk_%s %llu\nplain_%s %llu\n", kinds[i], disk[i], kinds[i], plain[i]);
    printf("ranks %llu\nwindow_bytes_rank %llu\nwindow_bytes_pairs %llu\n", ranks, rank_bytes,
           pair_bytes);
    printf("truncated %d\n", mw_rec_reader_truncated(rd));
    printf("trace_refs %llu\ntrace_unresolved %llu\nwindow_bytes_stored %llu\n"
           "window_bytes_live %llu\n",
           refs, unresolved, stored, live);
    printf("last %s\n", last);

    uint64_t first_w, last_w, first_m, last_m;
    int s = mw_rec_reader_span(rd, &first_w, &last_w, &first_m, &last_m);
    if (s == 1)
        printf("span %llu %llu\nspan_seconds %.3f\n", (unsigned long long)first_w,
               (unsigned long long)last_w, (double)(last_m - first_m) / 1e9);
    else
        printf("span none\n");

    /* Tiers: whether samples were dropped, and from which window on all are there. */
    uint64_t raw_from = 0;
    int tiered = mw_rec_reader_tier(rd, 0, UINT64_MAX, &raw_from);
    printf("tier_dropped %d\ntier_raw_from %llu\n", tiered, (unsigned long long)raw_from);

    unsigned long long found = 0, first_known = 0;
    for (size_t i = 0; i < n_win; i++) {
        /* Two jobs in one recording can have windows with the same index: find_window gives
         * the first. */
        size_t j = 0;
        while (win[j] != win[i])
            j++;
        uint64_t wo, fs;
        if (mw_rec_reader_find_window(rd, win[i], &wo, &fs) == 1 && wo == off[j]) {
            found++;
            first_known += fs != 0;
        }
    }
    printf("find_ok %llu\nfind_first_sample %llu\n", found, first_known);
    free(win);
    free(off);
    mw_rec_reader_close(rd);
    return 0;
}
