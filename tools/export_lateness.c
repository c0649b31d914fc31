/* export_lateness.c: mpiwatch-export --format lateness, the lateness summaries a collector
 * published while the job ran (docs/lateness.md), as JSON lines.
 *
 * DESIGN: the collector's online analysis (collector/lateness.c) records every batch it
 * publishes as a Record.lateness frame; this export writes them back exactly as they were
 * computed online, one line per window summary ("type":"window") and one per logical step
 * ("type":"step"), in the order the collector produced them, and nothing is recomputed: a test
 * can compare these online results with an offline extraction of the same recording. A
 * recording without lateness frames (an older one, or --lateness off) gives an empty output
 * and a note on stderr. Function ids are written as names through the collector's table
 * (the one the recording's ids are in).
 */
#include "export_lateness.h"
#include "export_out.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mw_fnmap_msg.h"
#include "mw_file.h"
#include "mw_proto.h"
#include "mw_recording.h"
#include "mw_wire.h"

/* Writes s as a JSON string; bytes that are not well-formed UTF-8, and control characters,
 * are written as U+FFFD or escaped, so that a job name from the ranks never breaks a line. */
static void put_json_string(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        unsigned char ch = p[i];
        if (ch == '"' || ch == '\\') {
            fputc('\\', out);
            fputc(ch, out);
            i++;
        } else if (ch < 0x20 || ch == 0x7f) {
            fprintf(out, "\\u%04x", ch);
            i++;
        } else if (ch < 0x80) {
            fputc(ch, out);
            i++;
        } else {
            int k = mw_wire_utf8_seq(p + i, n - i);
            if (k <= 0) {
                fputs("\\ufffd", out);
                i++;
            } else {
                fwrite(p + i, 1, (size_t)k, out);
                i += (size_t)k;
            }
        }
    }
    fputc('"', out);
}

static const char *fn_name(uint32_t fn)
{
    const char *name = fn < MW_FN_SPACE ? mw_fn_name(fn) : NULL;
    return name ? name : "unknown";
}

/* One summary line: the fields every summary has, then the window-only ones. */
static void summary_line(FILE *out, const Mpiwatch__Lateness *l, const Mpiwatch__LatenessSummary *s,
                         int window)
{
    fprintf(out, "{\"type\":\"%s\",\"job\":", window ? "window" : "step");
    put_json_string(out, l->job);
    fprintf(out,
            ",\"%s\":%" PRIu64 ",\"events\":%" PRIu64 ",\"lateness_max_ns\":%" PRId64
            ",\"lateness_rank\":%" PRIu32 ",\"lateness_fn\":\"%s\",\"diff_max_ns\":%" PRId64
            ",\"diff_rank\":%" PRIu32 ",\"diff_fn\":\"%s\",\"lost_ns\":%" PRId64,
            window ? "window" : "step", s->key, s->events, s->lateness_max_ns, s->lateness_rank,
            fn_name(s->lateness_fn), s->diff_max_ns, s->diff_rank, fn_name(s->diff_fn), s->lost_ns);
    if (window)
        fprintf(out,
                ",\"lateness_step\":%" PRIu64 ",\"diff_step\":%" PRIu64 ",\"start_ns\":%" PRIu64
                ",\"window_ns\":%" PRIu64 ",\"traced_ranks\":%" PRIu32 ",\"partitions\":%" PRIu32
                ",\"lateness_share\":",
                s->lateness_step, s->diff_step, s->start_ns, s->window_ns, s->traced_ranks,
                s->partitions);
    if (window && isfinite(s->lateness_share)) /* a recording's NaN / inf is not JSON: null */
        fprintf(out, "%.9g", s->lateness_share);
    else if (window)
        fputs("null", out);
    fputs("}\n", out);
}

int mw__export_lateness(const char *input, const char *output)
{
    char err[512] = "";
    mw_rec_reader_t *r;
    mw__xout_t xo;
    int orc = mw__xout_open_reader(input, &r, &xo, output);
    if (orc != 0)
        return orc;
    FILE *out = xo.f;
    int rc = 0;
    uint64_t batches = 0, skipped = 0, gaps = 0;
    mw_fnmap_t fnmap = {0}; /* the job's function ids -> this build's */
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
        /* The job's function ids -> this build's (docs/function-table.md). */
        mw_fnmap_record(&fnmap, (Mpiwatch__Record *)rec, NULL, err, sizeof err);
        if (rec->body_case != MPIWATCH__RECORD__BODY_LATENESS || !rec->lateness)
            continue;
        const Mpiwatch__Lateness *l = rec->lateness;
        batches++;
        for (size_t i = 0; i < l->n_windows; i++)
            if (l->windows[i])
                summary_line(out, l, l->windows[i], 1);
        for (size_t i = 0; i < l->n_steps; i++)
            if (l->steps[i])
                summary_line(out, l, l->steps[i], 0);
        skipped = l->windows_skipped; /* cumulative: the last batch has the job's */
        gaps = l->gaps;
    }
    if (mw_rec_reader_truncated(r))
        fprintf(stderr,
                "mpiwatch-export: %s ends with an incomplete frame (its collector was "
                "killed?): exported up to the last complete one\n",
                input);
    mw_fnmap_free(&fnmap);
    mw_rec_reader_close(r);
    if (rc == 0 && batches == 0)
        fprintf(stderr,
                "mpiwatch-export: %s has no lateness summaries (recorded by an older "
                "collector, or with --lateness off)\n",
                input);
    else if (rc == 0 && skipped)
        fprintf(stderr,
                "mpiwatch-export: the online analysis was behind and skipped %" PRIu64
                " traced window(s) (%" PRIu64 " gaps): their summaries are missing\n",
                skipped, gaps);
    return mw__xout_close(&xo, rc);
}
