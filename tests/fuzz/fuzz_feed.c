/* fuzz_feed.c: a libFuzzer target for what the viewer does with a collector's feed: decoding
 * a published job description, window, time step or job event, and everything the viewer's
 * model and topology layout then derive from it.
 *
 * One input is a sequence of feed messages as they arrive on the viewer's SUB socket (the
 * second frame, an Mpiwatch__Feed), each preceded by its length as 2 little-endian bytes. Each
 * goes through viewer/source_live.c's own handler of a feed message (mw__source_feed_message, on a
 * source without sockets: the job description's checks, windows waiting for a job, steps and
 * events), and then the model is read
 * the way the views read it: the legend, the stats, the time and duration axes, the stacked
 * timeline, the call-density buffer of the focus range, the events' places and texts, the 3-D
 * topology layout of the job description and the communication lines of every cached window
 * and step (viewer/topo.c: a deep topology once crashed it).
 *
 * DESIGN: everything that parses or trusts a field of the message is the viewer's own code,
 * linked from mw_viewer_source and mw_viewer_model; nothing of the dispatch is repeated here.
 * Buffers are small (64 columns, a 64 x 32 density buffer) so that an input stays fast.
 * The seeds (tests/fuzz/seeds.c) are the job, windows, steps and events of a seed recording
 * written by the collector, wrapped as feed messages.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "source.h"
#include "topo.h"
#include "fuzz.h"

#define FUZZ_COLS 64
#define FUZZ_W 64
#define FUZZ_H 32

static volatile double sink;

/* The views' reads of the model. */
static void read_model(mw_model_t *m)
{
    mw_view_t v;
    mw_view_init(&v);
    mw_view_update(&v, m);
    double t0, t1;
    mw_view_focus(&v, &t0, &t1);
    mw_model_need(m, v.t0, v.t1, t0, t1);
    uint64_t first, last;
    for (int i = 0; i < 8 && mw_model_wanted(m, &first, &last, 64); i++)
        mw_model_answered(m, first, last);

    mw_legend_entry_t legend[32];
    int n = mw_model_legend(m, legend, 32);
    sink += n;
    mw_model_stats_t st;
    mw_model_stats(m, &st);
    sink += (double)st.windows;

    static float cols[FUZZ_COLS * (MW_PALETTE + 2)];
    sink += mw_timeline_columns(m, v.t0, v.t1, FUZZ_COLS, cols);
    double d0, d1;
    mw_density_range(m, t0, t1, &d0, &d1);
    static float D[FUZZ_W * FUZZ_H], C[FUZZ_W * FUZZ_H * 3];
    sink += mw_density_bin(m, &v, t0, t1, d0, d1, FUZZ_W, FUZZ_H, D, C);

    mw_layout_t l;
    mw_layout(&l, 800, 600, 1.0f, 1, 1, 2);
    mw_tick_t ticks[32];
    sink += mw_time_ticks(v.t0, v.t1, &l.timeline, ticks, 32);
    sink += mw_duration_ticks(d0, d1, &l.density, ticks, 32);
    mw_pick_t pick =
        mw_pick(m, &v, &l, l.density.x + l.density.w / 2, l.density.y + l.density.h / 2, 4);
    sink += (double)pick.kind;

    char text[512];
    const mw_event_t *prev = NULL;
    for (size_t i = 0; i < mw_model_event_count(m); i++) {
        const mw_event_t *e = mw_model_event_at(m, i);
        double t;
        uint64_t w;
        if (mw_model_event_time(m, e, &t, &w) == 0)
            sink += t;
        mw_event_text(m, e, prev, text, sizeof text);
        prev = e;
    }

    const Mpiwatch__JobInfo *job = mw_model_job(m);
    mw_topo_layout_t L;
    memset(&L, 0, sizeof L);
    if (mw_topo_layout(&L, job) == 0) {
        mw_topo_lines_t lines;
        memset(&lines, 0, sizeof lines);
        for (uint64_t i = 0; i < 64 && i <= st.newest; i++) {
            const Mpiwatch__Window *w = mw_model_window(m, st.newest - i);
            if (w && mw_topo_lines(&lines, &L, mw_pairs_of_window(w)) == 0)
                sink += (double)lines.n_lines;
        }
        for (size_t i = 0; i < mw_model_step_count(m) && i < 64; i++) {
            const Mpiwatch__Step *s = mw_model_step_at(m, i);
            if (s && mw_topo_lines(&lines, &L, mw_pairs_of_step(s)) == 0)
                sink += (double)lines.n_lines;
        }
        mw_topo_lines_free(&lines);
    }
    mw_topo_layout_free(&L);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mw_model_t *m = mw_model_new(16u << 20);
    mw_source_t *src = mw__source_detached();
    if (!m || !src) {
        mw_model_free(m);
        mw_source_free(src);
        return 0;
    }
    size_t pos = 0;
    while (pos + 2 <= size) {
        size_t len = (size_t)data[pos] | (size_t)data[pos + 1] << 8;
        pos += 2;
        if (len > size - pos)
            len = size - pos;
        mw__source_feed_message(src, m, data + pos, len);
        pos += len;
    }
    read_model(m);
    mw_source_free(src);
    mw_model_free(m);
    return 0;
}
