/* synth_terrain.c: mw-synth's "terrain" pattern (synth.h): merged windows whose per-rank
 * figures (Window.rf_*, rr_*) are the known values of terrain_values.h, and a job description
 * naming the code regions (JobInfo.regions).
 *
 * DESIGN: the windows are crafted as a collector merges them and written with the collector's
 * own recording writer (as mw-trace-synth does), not fed through the collector core: the test
 * is of the viewer, and the per-rank figures must be exactly the stated ones whatever the
 * collector's merge does. The JSON printed beside states, for the whole run, what the terrain
 * must show: the columns by total, the largest cells and the largest value, for functions (time)
 * and regions (exclusive time), computed here by brute force over the same values.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "options.h"
#include "record_file.h"
#include "synth.h"
#include "terrain_values.h"

#define ST_ORIGIN 1700000000000000000ull
#define ST_BINS 40u
#define ST_TOP 5

/* The run's sum of rank r, function j (time) or region g (exclusive time). */
static double st_value(const sy_options_t *o, int regions, uint32_t r, unsigned id)
{
    double s = 0;
    for (uint64_t k = 0; k < o->windows; k++)
        s += (double)(regions ? tv_excl(o->ranks, r, id, k)
                              : tv_ns(o->ranks, r, (unsigned)tv_fn_index(id), k));
    return s;
}

/* Prints the expected terrain of functions (regions = 0) or regions over the whole run. */
static void st_expect(const sy_options_t *o, int regions, FILE *json)
{
    unsigned n = regions ? TV_REGIONS : o->functions;
    double *tot = calloc(MW_FN_COUNT + TV_REGIONS + 1, sizeof *tot);
    unsigned *order = calloc(n, sizeof *order);
    if (!tot || !order) {
        free(tot);
        free(order);
        return;
    }
    struct {
        uint32_t rank;
        unsigned id;
        double v;
    } top[ST_TOP];
    int ntop = 0;
    for (unsigned i = 0; i < n; i++)
        order[i] = regions ? i + 1 : tv_fn(i);
    for (uint32_t r = 0; r < o->ranks; r++)
        for (unsigned i = 0; i < n; i++) {
            double v = st_value(o, regions, r, order[i]);
            tot[order[i]] += v;
        }
    for (unsigned i = 0; i < n; i++) /* by total, ties by id */
        for (unsigned j = i + 1; j < n; j++)
            if (tot[order[j]] > tot[order[i]] ||
                (tot[order[j]] == tot[order[i]] && order[j] < order[i])) {
                unsigned x = order[i];
                order[i] = order[j];
                order[j] = x;
            }
    unsigned named = n > 20 ? 20 : n; /* MW_TERRAIN_COLS */
    for (uint32_t r = 0; r < o->ranks; r++)
        for (unsigned c = 0; c < named; c++) {
            double v = st_value(o, regions, r, order[c]);
            int k = ntop;
            if (ntop < ST_TOP)
                ntop++;
            else if (!(v > top[ST_TOP - 1].v))
                continue;
            else
                k = ST_TOP - 1;
            while (k > 0 && top[k - 1].v < v) {
                top[k] = top[k - 1];
                k--;
            }
            top[k].rank = r;
            top[k].id = order[c];
            top[k].v = v;
        }
    fprintf(json, "\"%s\": {\"metric\": \"%s\", \"ncols\": %u, \"cols\": [",
            regions ? "regions" : "functions", regions ? "exclusive time" : "time",
            named + (n > named));
    for (unsigned c = 0; c < named; c++)
        fprintf(json, "%s\"%s\"", c ? ", " : "",
                regions ? tv_region_names[order[c] - 1] : mw_fn_name(order[c]));
    fprintf(json, "], \"top\": [");
    for (int i = 0; i < ntop; i++)
        fprintf(json, "%s{\"rank\": %u, \"name\": \"%s\", \"value\": %.17g}", i ? ", " : "",
                top[i].rank, regions ? tv_region_names[top[i].id - 1] : mw_fn_name(top[i].id),
                top[i].v);
    fprintf(json, "]}");
    free(tot);
    free(order);
}

int sy_write_terrain(const sy_options_t *o, const char *path, FILE *json, sy_result_t *res)
{
    if (o->functions < 1 || o->functions > 40 || o->ranks < 4) {
        fprintf(stderr, "mw-synth: terrain: 1..40 functions and at least 4 ranks\n");
        return -1;
    }
    mw__log_level = MW_LOG_ERROR;
    mw_collector_options_t opt;
    mw_collector_options_defaults(&opt);
    mw_clock_t now;
    mw__clock_now(&now);
    mw_record_t *rec = mw__record_open(path, &opt, &now);
    if (!rec) {
        mw_collector_options_free(&opt);
        return -1;
    }
    const char *name = o->job ? o->job : "synth-terrain";
    Mpiwatch__JobInfo job = MPIWATCH__JOB_INFO__INIT;
    Mpiwatch__Region rg[TV_REGIONS], *rgp[TV_REGIONS];
    for (unsigned g = 0; g < TV_REGIONS; g++) {
        mpiwatch__region__init(&rg[g]);
        rg[g].id = g + 1;
        rg[g].name = (char *)tv_region_names[g];
        rg[g].source = 1;
        rgp[g] = &rg[g];
    }
    job.job = (char *)name;
    job.program = "mw-synth";
    job.size = o->ranks;
    job.window_ns = o->window_ns;
    job.subslots = o->subslots;
    job.duration_bins = ST_BINS;
    job.function_table_hash = mw_fn_table_hash();
    job.function_count = MW_FN_COUNT;
    job.state = "complete";
    job.n_regions = TV_REGIONS;
    job.regions = rgp;
    size_t n = mpiwatch__job_info__get_packed_size(&job);
    uint8_t *buf = malloc(n ? n : 1);
    int rc = buf ? 0 : -1;
    if (buf) {
        mpiwatch__job_info__pack(&job, buf);
        mw__record_job(rec, &now, buf, n);
        free(buf);
    }
    uint64_t w0 = ST_ORIGIN / o->window_ns;
    for (uint64_t k = 0; k < o->windows && rc == 0; k++) {
        now.mono_ns += o->window_ns;
        now.real_ns += o->window_ns;
        rc = tv_pack_window(o->ranks, o->functions, k, w0 + k, o->window_ns, o->subslots, ST_BINS,
                            &buf, &n);
        if (rc == 0) {
            mw__record_window(rec, &now, w0 + k, buf, n);
            free(buf);
        }
    }
    mw__record_close(rec);
    mw_collector_options_free(&opt);
    if (rc != 0) {
        fprintf(stderr, "mw-synth: out of memory\n");
        return -1;
    }
    if (res) {
        memset(res, 0, sizeof *res);
        res->first_window = w0;
        res->last_window = w0 + o->windows - 1;
        res->window_ns = o->window_ns;
    }
    if (json) {
        fprintf(json,
                "{\"pattern\": \"terrain\", \"job\": \"%s\", \"ranks\": %u, \"nfunctions\": %u, "
                "\"windows\": %u, \"window_ns\": %" PRIu64 ", \"origin_ns\": %llu, "
                "\"duration_s\": %.9g, \"hot_rank\": %u, \"hot_region_rank\": %u, ",
                name, o->ranks, o->functions, o->windows, o->window_ns, ST_ORIGIN,
                (double)(o->windows * o->window_ns) / 1e9, tv_hot(o->ranks), o->ranks / 3);
        st_expect(o, 0, json);
        fprintf(json, ", ");
        st_expect(o, 1, json);
        fprintf(json, "}\n");
        fflush(json);
    }
    return 0;
}
