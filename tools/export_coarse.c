/* export_coarse.c: mpiwatch-export --format coarse, the per-rank content a recording keeps for
 * the whole run (its coarse tier, docs/recording.md "Tiers"), as JSON lines.
 *
 * DESIGN: the collector sums every window's per-rank content (rf_*, rr_*, pair_*, fpair_*,
 * the ranks' MPI shares) over --record-rank-every windows into one RecordRanks frame, kept
 * when the full windows are dropped with the raw samples. This export writes each frame as it
 * is, one line ("type":"ranks") with its windows and the summed entries as arrays of numbers,
 * so that the per-rank figures of an old range can be had although its full windows are gone;
 * the sums are exact, only their time resolution is the frame's. Function ids are written as
 * recorded, with their name in this build's table. A recording without the coarse tier (older,
 * or --record-full-span 0) gives an empty output and a note on stderr.
 */
#include "export_coarse.h"
#include "export_out.h"

#include <inttypes.h>
#include <stdio.h>

#include "mw_proto.h"
#include "mw_recording.h"

static const char *fn_name(uint32_t fn)
{
    const char *name = fn < MW_FN_SPACE ? mw_fn_name(fn) : NULL;
    return name ? name : "unknown";
}

/* Why a RecordRanks cannot be written (the window policy of mw_window_json.h: parallel arrays
 * of different lengths are refused whole, never paired by a guess), or NULL. */
static const char *ranks_check(const Mpiwatch__RecordRanks *rk)
{
    const Mpiwatch__Window *s = rk->sums;
    if (!s)
        return NULL;
    size_t rf = s->n_rf_rank, rr = s->n_rr_rank, pr = s->n_pair_src, fp = s->n_fpair_src;
    if (s->n_rf_fn != rf || s->n_rf_count != rf || s->n_rf_ns != rf || s->n_rf_bytes != rf ||
        s->n_rr_region != rr || s->n_rr_count != rr || s->n_rr_incl_ns != rr ||
        s->n_rr_excl_ns != rr || s->n_rr_mpi_ns != rr || s->n_pair_dst != pr ||
        s->n_pair_messages != pr || s->n_pair_bytes != pr || s->n_fpair_dst != fp ||
        s->n_fpair_fn != fp || s->n_fpair_messages != fp || s->n_fpair_bytes != fp)
        return "parallel arrays of different lengths";
    return NULL;
}

/* One RecordRanks (checked by ranks_check) as a line. */
static void ranks_line(FILE *out, const Mpiwatch__RecordRanks *rk)
{
    const Mpiwatch__Window *s = rk->sums;
    fprintf(out,
            "{\"type\":\"ranks\",\"first_window\":%" PRIu64 ",\"last_window\":%" PRIu64
            ",\"windows\":%" PRIu32 ",\"left_out\":%" PRIu64 ",\"functions\":[",
            rk->first_window, rk->last_window, rk->windows, rk->left_out);
    size_t n = s ? s->n_rf_rank : 0;
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s[%" PRIu32 ",%" PRIu32 ",\"%s\",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
                i ? "," : "", s->rf_rank[i], s->rf_fn[i], fn_name(s->rf_fn[i]), s->rf_count[i],
                s->rf_ns[i], s->rf_bytes[i]);
    fputs("],\"regions\":[", out);
    n = s ? s->n_rr_rank : 0;
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
                i ? "," : "", s->rr_rank[i], s->rr_region[i], s->rr_count[i], s->rr_incl_ns[i],
                s->rr_excl_ns[i], s->rr_mpi_ns[i]);
    fputs("],\"pairs\":[", out);
    n = s ? s->n_pair_src : 0;
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 "]", i ? "," : "",
                s->pair_src[i], s->pair_dst[i], s->pair_messages[i], s->pair_bytes[i]);
    fputs("],\"fn_pairs\":[", out);
    n = s ? s->n_fpair_src : 0;
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 "]",
                i ? "," : "", s->fpair_src[i], s->fpair_dst[i], s->fpair_fn[i],
                s->fpair_messages[i], s->fpair_bytes[i]);
    /* Per rank: the mean share of the windows it was in (null: none), and those windows. */
    fputs("],\"mpi_permille\":[", out);
    n = s ? s->n_rank_mpi_permille : 0;
    for (size_t i = 0; i < n; i++) {
        if (s->rank_mpi_permille[i] == 65535u)
            fprintf(out, "%snull", i ? "," : "");
        else
            fprintf(out, "%s%" PRIu32, i ? "," : "", s->rank_mpi_permille[i]);
    }
    fputs("],\"rank_windows\":[", out);
    for (size_t i = 0; i < rk->n_rank_windows; i++)
        fprintf(out, "%s%" PRIu32, i ? "," : "", rk->rank_windows[i]);
    fputs("]}\n", out);
}

int mw__export_coarse(const char *input, const char *output)
{
    char err[512] = "";
    mw_rec_reader_t *r;
    mw__xout_t xo;
    int orc = mw__xout_open_reader(input, &r, &xo, output);
    if (orc != 0)
        return orc;
    int rc = 0;
    uint64_t frames = 0, refused = 0;
    for (;;) {
        const Mpiwatch__Record *rec;
        int n = mw_rec_reader_next(r, &rec, NULL, err, sizeof err);
        if (n == 0)
            break;
        if (n < 0) {
            fprintf(stderr, "mpiwatch-export: %s: %s\n", input, err);
            rc = 1;
            break;
        }
        if (rec->body_case == MPIWATCH__RECORD__BODY_RANKS && rec->ranks) {
            const char *why = ranks_check(rec->ranks);
            if (why) {
                refused++;
                fprintf(stderr,
                        "mpiwatch-export: %s: per-rank sums of windows %" PRIu64 "..%" PRIu64
                        " left out: %s\n",
                        input, rec->ranks->first_window, rec->ranks->last_window, why);
                continue;
            }
            ranks_line(xo.f, rec->ranks);
            frames++;
        }
    }
    if (mw_rec_reader_truncated(r))
        fprintf(stderr,
                "mpiwatch-export: %s ends with an incomplete frame (its collector was "
                "killed?): exported up to the last complete one\n",
                input);
    mw_rec_reader_close(r);
    if (rc == 0 && frames == 0 && refused == 0)
        fprintf(stderr,
                "mpiwatch-export: %s has no coarse tier (recorded by an older collector, or "
                "with --record-full-span 0)\n",
                input);
    return mw__xout_close(&xo, rc);
}
