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
#include "mw_window_json.h"

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
            const char *why = mw_rec_ranks_check(rec->ranks);
            if (why) {
                refused++;
                fprintf(stderr,
                        "mpiwatch-export: %s: per-rank sums of windows %" PRIu64 "..%" PRIu64
                        " left out: %s\n",
                        input, rec->ranks->first_window, rec->ranks->last_window, why);
                continue;
            }
            mw_rank_sums_json(xo.f, rec->ranks);
            fputc('\n', xo.f);
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
