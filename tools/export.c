/* export.c: mpiwatch-export, a recording (FILE.mpiw) converted for other tools.
 *
 *   mpiwatch-export --format perfetto|csv|jsonl|summary|capture FILE.mpiw [-o OUT|-] [--per-rank]
 *   mpiwatch-export --format vtk FILE.mpiw -o DIR [--by window|step] [--from N] [--to N]
 *                   [--every N] [--network FILE] [--node-gap G]
 *   mpiwatch-export --format trace FILE.mpiw [-o OUT|-]
 *   mpiwatch-export --format otf2 FILE.mpiw -o DIR
 *   mpiwatch-export --format lateness FILE.mpiw [-o OUT|-]   (export_lateness.c)
 *   mpiwatch-export --format logical FILE.mpiw [-o OUT|-]    (export_trace.c)
 *   mpiwatch-export --format coarse FILE.mpiw [-o OUT|-]     (export_coarse.c)
 *
 * perfetto  Chrome trace event JSON (ui.perfetto.dev, chrome://tracing): a counter track per
 *           function with the fraction of ranks inside it per sub-slot, one track per rank
 *           (grouped by host) with the recorded longest calls, one more per rank with the
 *           calls of captured windows (mpiwatch.capture), instant markers for partial
 *           windows and job events;
 * csv       one row per window and function, or with --per-rank one row per rank, window and
 *           function from the raw samples the collector accepted;
 * jsonl     one merged window per line (proto/mw_window_json.c);
 * summary   the collector's summary JSON, byte for byte what the live --summary-json wrote;
 * capture   one JSON line per captured window of a rank: its request, its counts and its calls;
 * vtk       a directory of VTK PolyData files, one per window or step, and a .pvd collection
 *           for ParaView (export_vtk.c, which reads the file on its own).
 * trace     every record of the traced windows (docs/trace.md) as one JSON line, messages
 *           matched (export_trace.c, which reads the file on its own, like the next one);
 * otf2      the traced windows as an OTF2 archive in a directory (export_otf2.c).
 * The formats and columns are described in docs/export.md.
 *
 * DESIGN: one pass over the file with the reader of proto/mw_recording.h, writing as it reads,
 * so a recording of any length is exported in the memory of a window (plus, for the trace,
 * a few words per rank). Windows come from the recorded Window frames, exactly as the live
 * feed published them. What needs the collector's own judgement (which raw messages it
 * accepted, the exact job totals) is not re-implemented: every record is fed to a collector
 * core (mw_collector_apply_record) with the settings the recording started with, which is
 * what makes the summary identical to the live one and the per-rank rows agree with it; the
 * captured calls (perfetto, capture) are taken from the samples that core accepted, so they
 * passed the collector's validation (collector/ingest.c).
 * A torn or corrupt tail (a collector killed while writing) ends the input: what precedes it
 * is exported and a warning says so. Exit status: 0 done, 1 read or write error, 2 usage
 * error, missing file or not a recording.
 *
 * Trace timestamps are microseconds (as the format defines), written with three decimals and
 * relative to a whole second near the start, so that nanoseconds survive; the file sets no
 * displayTimeUnit because older Perfetto versions took it for the unit of the timestamps.
 * The trace writer keeps overlapping calls of one rank apart: Perfetto and chrome://tracing
 * require the slices of one thread to nest, and calls of different threads of a rank, or the
 * load generator's random calls, may overlap. A call goes to the first of a rank's lanes whose
 * previous call has ended; lane 0 is the thread "rank N" (tid N), further lanes are threads of
 * their own beside it. Calls that find no free lane are counted and reported, not written.
 */
#define _GNU_SOURCE /* memmem, open_memstream */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "mw_fnmap_msg.h"
#include "mw_version.h"
#include "collector.h"
#include "export_coarse.h"
#include "export_lateness.h"
#include "export_otf2.h"
#include "export_out.h"
#include "export_trace.h"
#include "export_vtk.h"
#include "mw_file.h"
#include "mw_recording.h"
#include "mw_progress.h"
#include "mw_window_json.h"

#define MW_EXPORT_LANES 4u         /* tracks per rank for overlapping calls */
#define MW_EXPORT_PID_TIMELINE 1   /* process of the counters and the markers */
#define MW_EXPORT_PID_NO_HOST 2    /* ranks whose host the job description does not give */
#define MW_EXPORT_PID_FIRST_HOST 3 /* hosts, in order of first appearance */
#define MW_EXPORT_MAX_HOSTS 65536u /* distinct host names the trace names */
/* Thread ids: rank r's lane l is tid r + l * MW_MAX_RANKS; every process also has a thread of
 * its own, tid TID_BASE + pid, for its metadata and (pid 1) the counters and markers. Trace
 * importers tie a tid to one process (Perfetto gives an event without a tid its pid as tid),
 * so no tid may serve two purposes. */
#define MW_EXPORT_TID_BASE ((int64_t)MW_EXPORT_LANES * MW_MAX_RANKS)
/* Rank r's captured calls, lane l: tid TID_CAPTURE + r + l * MW_MAX_RANKS, above every
 * metadata tid (TID_BASE + pid, pid < FIRST_HOST + MAX_HOSTS < MW_MAX_RANKS). */
#define MW_EXPORT_TID_CAPTURE (MW_EXPORT_TID_BASE + MW_MAX_RANKS)

typedef enum {
    FMT_PERFETTO,
    FMT_CSV,
    FMT_JSONL,
    FMT_SUMMARY,
    FMT_VTK,
    FMT_CAPTURE,
    FMT_TRACE,
    FMT_OTF2,
    FMT_LATENESS,
    FMT_LOGICAL,
    FMT_COARSE
} mw_export_format_t;

static const char *const FORMAT_NAMES[] = {"perfetto", "csv",     "jsonl", "summary",
                                           "vtk",      "capture", "trace", "otf2",
                                           "lateness", "logical", "coarse"};

/* ---- text helpers ------------------------------------------------------------------------- */

/* Writes s with every byte that is not part of well-formed UTF-8 replaced by U+FFFD, and
 * `quote` (when not 0) doubled as CSV wants. */
static void put_utf8(FILE *out, const char *s, char quote)
{
    while (*s) {
        int n = mw_utf8_seq(s);
        if (n == 0) {
            fputs("\xef\xbf\xbd", out);
            s++;
            continue;
        }
        if (quote && *s == quote)
            fputc(quote, out);
        fwrite(s, 1, (size_t)n, out);
        s += n;
    }
}

/* A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. */
static void csv_field(FILE *out, const char *s)
{
    if (!s)
        s = "";
    if (!strpbrk(s, ",\"\r\n")) {
        put_utf8(out, s, 0);
        return;
    }
    fputc('"', out);
    put_utf8(out, s, '"');
    fputc('"', out);
}

/* A JSON string literal. Names come from the recording unchecked: control characters are
 * escaped and what is not UTF-8 is replaced, so the output stays valid JSON. */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (s = s ? s : ""; *s;) {
        unsigned char c = (unsigned char)*s;
        int n = mw_utf8_seq(s);
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\u%04x", c);
        else if (n == 0)
            fputs("\\ufffd", out);
        else
            fwrite(s, 1, (size_t)n, out);
        s += n ? n : 1;
    }
    fputc('"', out);
}

/* Nanoseconds as seconds with all nine decimals (exact, no floating point). */
static void put_seconds(FILE *out, uint64_t ns)
{
    const uint64_t s = MW_NS_PER_S;
    fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / s, ns % s);
}

/* t - origin in microseconds with three decimals, exact to the nanosecond: trace timestamps
 * are microseconds, and a double would lose nanoseconds on absolute times. */
static void put_us(FILE *out, uint64_t t, uint64_t origin)
{
    uint64_t d = t >= origin ? t - origin : origin - t;
    fprintf(out, "%s%" PRIu64 ".%03u", t >= origin ? "" : "-", d / 1000, (unsigned)(d % 1000));
}

/* Where a window is in its job (docs/export.md): its number counted from the job's first
 * window in the file, and its start in ns after that window's start. */
typedef struct {
    uint64_t window, t_ns;
} mw_export_place_t;

/* The place columns that begin every CSV row: window, t_s, grid_index, start_s. */
static void csv_place(FILE *out, const mw_window_view_t *v, const mw_export_place_t *p)
{
    fprintf(out, "%" PRIu64 ",", p->window);
    put_seconds(out, p->t_ns);
    fprintf(out, ",%" PRIu64 ",", v->index);
    put_seconds(out, v->start_ns);
}

/* --table (csv): what one row is. */
typedef enum { TABLE_FUNCTIONS, TABLE_REGIONS, TABLE_SITES, TABLE_SPREAD } mw_csv_table_t;

/* ---- CSV ---------------------------------------------------------------------------------- */

static void csv_header(FILE *out, int per_rank)
{
    if (per_rank)
        fputs("window,t_s,grid_index,start_s,rank,host,function,calls,time_ns,min_ns,max_ns,"
              "bytes,fraction_inside\n",
              out);
    else
        fputs("window,t_s,grid_index,start_s,function,calls,time_ns,min_ns,max_ns,bytes,"
              "fraction_inside,ranks_reporting,ranks_missing\n",
              out);
}

/* The figures shared by both kinds of rows: calls, time, min, max (empty without calls),
 * bytes, fraction inside. */
static void csv_figures(FILE *out, const mw_window_view_t *v, uint32_t id)
{
    const Mpiwatch__FunctionStat *f = v->stat[id];
    uint64_t count = f ? f->count : 0;
    fprintf(out, ",%" PRIu64 ",%" PRIu64 ",", count, f ? f->total_ns : 0);
    if (count)
        fprintf(out, "%" PRIu64 ",%" PRIu64, f->min_ns, f->max_ns);
    else
        fputc(',', out);
    fprintf(out, ",%" PRIu64 ",%.6g", f ? f->bytes : 0, mw_window_view_fn_fraction(v, id));
}

/* One row per function with data in the window of a filled view. */
static void csv_window_rows(FILE *out, const mw_window_view_t *v, const mw_export_place_t *p)
{
    const Mpiwatch__Window *w = v->w;
    for (uint32_t i = 0; i < v->n_fn; i++) {
        csv_place(out, v, p);
        fputc(',', out);
        csv_field(out, mw_fn_name(v->fn[i]));
        csv_figures(out, v, v->fn[i]);
        fprintf(out, ",%" PRIu32 ",%" PRIu32 "\n", w ? w->ranks_reporting : v->ranks,
                w ? w->ranks_missing : 0);
    }
}

/* --table regions|sites|spread: one row per window and region, per window and (call site,
 * function), or per window and function with its spread across ranks (docs/export.md). Region
 * and site names come from the latest job description (empty when it has none for the id). */
static void csv_table_header(FILE *out, mw_csv_table_t table)
{
    static const char *const head[] = {
        [TABLE_REGIONS] =
            "window,t_s,grid_index,start_s,region_id,region,count,incl_ns,excl_ns,mpi_ns,ranks\n",
        [TABLE_SITES] =
            "window,t_s,grid_index,start_s,site_id,function,file,line,mpi_function,count,ns,bytes,"
            "max_ns,ranks,top_rank,top_rank_ns\n",
        [TABLE_SPREAD] =
            "window,t_s,grid_index,start_s,function,ranks_reporting,time_ns,rank_sd_ns,rank_max,"
            "rank_max_ns\n",
    };
    fputs(head[table], out);
}

static void csv_table_rows(FILE *out, const mw_window_view_t *v, const Mpiwatch__JobInfo *job,
                           mw_csv_table_t table, const mw_export_place_t *p)
{
    const Mpiwatch__Window *w = v->w;
    if (table == TABLE_REGIONS) {
        for (size_t i = 0; i < w->n_regions; i++) {
            const Mpiwatch__RegionStat *r = w->regions[i];
            const Mpiwatch__Region *def = job && r->region && r->region <= job->n_regions
                                              ? job->regions[r->region - 1]
                                              : NULL;
            csv_place(out, v, p);
            fprintf(out, ",%" PRIu32 ",", r->region);
            csv_field(out, def && def->id == r->region && def->name ? def->name : "");
            fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 "\n", r->count,
                    r->incl_ns, r->excl_ns, r->mpi_ns, r->ranks);
        }
    } else if (table == TABLE_SITES) {
        for (size_t i = 0; i < w->n_sites; i++) {
            const Mpiwatch__SiteStat *t = w->sites[i];
            if (t->fn == 0 || t->fn >= MW_FN_SPACE)
                continue;
            const Mpiwatch__CallSite *def =
                job && t->site && t->site <= job->n_sites ? job->sites[t->site - 1] : NULL;
            if (def && def->id != t->site)
                def = NULL;
            csv_place(out, v, p);
            fprintf(out, ",%" PRIu32 ",", t->site);
            csv_field(out, def && def->function ? def->function : "");
            fputc(',', out);
            csv_field(out, def && def->file ? def->file : "");
            fprintf(out, ",%" PRIu32 ",", def ? def->line : 0);
            csv_field(out, mw_fn_name(t->fn));
            fprintf(out,
                    ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",%" PRIu32
                    ",%" PRIu64 "\n",
                    t->count, t->ns, t->bytes, t->max_ns, t->ranks, t->top_rank, t->top_rank_ns);
        }
    } else {
        for (uint32_t i = 0; i < v->n_fn; i++) {
            const Mpiwatch__FunctionStat *f = v->stat[v->fn[i]];
            if (!f || !f->count)
                continue;
            csv_place(out, v, p);
            fputc(',', out);
            csv_field(out, mw_fn_name(v->fn[i]));
            /* A recording's spread is not trusted: NaN or infinity leaves the field empty. */
            fprintf(out, ",%" PRIu32 ",%" PRIu64 ",", w->ranks_reporting, f->total_ns);
            if (isfinite(f->rank_sd_ns))
                fprintf(out, "%.6f", f->rank_sd_ns);
            fprintf(out, ",%" PRIu32 ",%" PRIu64 "\n", f->rank_max, f->rank_max_ns);
        }
    }
}

/* One row per function with data in one rank's sample (a view filled from a sample). */
static void csv_rank_rows(FILE *out, const mw_window_view_t *v, uint32_t rank, const char *host,
                          const mw_export_place_t *p)
{
    for (uint32_t i = 0; i < v->n_fn; i++) {
        csv_place(out, v, p);
        fprintf(out, ",%" PRIu32 ",", rank);
        csv_field(out, host);
        fputc(',', out);
        csv_field(out, mw_fn_name(v->fn[i]));
        csv_figures(out, v, v->fn[i]);
        fputc('\n', out);
    }
}

/* Keeps a copy of a job description in *keep (records are only valid until the next one is
 * read). Returns 0, or -1 when out of memory. */
static int keep_job(Mpiwatch__JobInfo **keep, const Mpiwatch__JobInfo *job)
{
    Mpiwatch__JobInfo *copy = mw_job_info_copy(job);
    if (!copy)
        return -1;
    if (*keep)
        mpiwatch__job_info__free_unpacked(*keep, NULL);
    *keep = copy;
    return 0;
}

/* ---- Chrome trace ------------------------------------------------------------------------- */

typedef struct {
    FILE *out;
    uint64_t events; /* written so far (a comma before every one but the first) */
    int have_origin;
    uint64_t origin_ns; /* time 0 of the trace, global ns */

    double last[MW_FN_SPACE]; /* counter value last written per function */
    int have_prev;            /* a window was written ... */
    uint64_t prev_index;      /* ... its index and end */
    uint64_t prev_end_ns;

    Mpiwatch__JobInfo *job; /* copy of the latest job description, or NULL */
    uint32_t *job_host_pid; /* [job->n_hosts]: pid of each of its hosts */
    char **hosts;           /* distinct host names seen, pid = FIRST_HOST + position */
    uint32_t n_hosts, cap_hosts;

    uint64_t *lane_end; /* [cap_ranks * LANES]: end of the last call on each lane */
    uint32_t *lane_pid; /* [cap_ranks * LANES]: pid the lane's thread was named in (0: not) */
    uint64_t *cap_end;  /* the same for the lanes of captured calls */
    uint32_t *cap_pid;
    uint32_t cap_ranks;
    uint32_t *order; /* scratch: one sample's captured calls, sorted by start */
    size_t cap_order;

    const Mpiwatch__Call **calls; /* scratch: one window's calls, sorted by start */
    size_t cap_calls;

    uint64_t n_calls, calls_no_lane, calls_bad, partial_windows, job_events, before_origin;
    uint64_t captured_calls, captured_no_lane;
} mw_trace_t;

/* Starts an event: the separator and the opening brace. */
static FILE *ev_begin(mw_trace_t *t)
{
    fputs(t->events++ ? ",\n{" : "\n{", t->out);
    return t->out;
}

/* Names a process (tid < 0) or a thread and gives it its place in the list. */
static void trace_meta(mw_trace_t *t, const char *what, uint32_t pid, int64_t tid, const char *name,
                       int64_t sort)
{
    int thread = tid >= 0;
    if (!thread)
        tid = MW_EXPORT_TID_BASE + pid;
    FILE *o = ev_begin(t);
    fprintf(o, "\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRId64, what, pid, tid);
    fputs(",\"args\":{\"name\":", o);
    json_string(o, name);
    fputs("}}", o);
    o = ev_begin(t);
    fprintf(o, "\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRId64,
            thread ? "thread_sort_index" : "process_sort_index", pid, tid);
    fprintf(o, ",\"args\":{\"sort_index\":%" PRId64 "}}", sort);
}

static int trace_begin(mw_trace_t *t, FILE *out)
{
    memset(t, 0, sizeof *t);
    t->out = out;
    fputs("{\"traceEvents\":[", out);
    trace_meta(t, "process_name", MW_EXPORT_PID_TIMELINE, -1,
               "MPI timeline: fraction of ranks inside each function", 0);
    trace_meta(t, "thread_name", MW_EXPORT_PID_TIMELINE,
               MW_EXPORT_TID_BASE + MW_EXPORT_PID_TIMELINE, "windows and job events", 0);
    trace_meta(t, "process_name", MW_EXPORT_PID_NO_HOST, -1, "ranks (host unknown)", 1);
    return 0;
}

/* Time 0 of the trace: the start of the recording (a whole second of the collector's clock),
 * or else the first time seen. Rank times are on rank 0's realtime clock, which the hosts keep
 * close to the collector's; anything earlier gets a negative timestamp and is counted. */
static void trace_set_origin(mw_trace_t *t, uint64_t ns)
{
    if (t->have_origin)
        return;
    t->origin_ns = ns - ns % MW_NS_PER_S;
    t->have_origin = 1;
}

static void trace_ts(mw_trace_t *t, const char *key, uint64_t ns)
{
    trace_set_origin(t, ns);
    if (ns < t->origin_ns)
        t->before_origin++;
    fprintf(t->out, ",\"%s\":", key);
    put_us(t->out, ns, t->origin_ns);
}

static void trace_counter(mw_trace_t *t, uint32_t fn, uint64_t ns, double value)
{
    FILE *o = ev_begin(t);
    fputs("\"name\":", o);
    json_string(o, mw_fn_name(fn));
    fputs(",\"cat\":\"inside\",\"ph\":\"C\"", o);
    trace_ts(t, "ts", ns);
    fprintf(o, ",\"pid\":%d,\"tid\":%" PRId64 ",\"args\":{\"fraction\":%.6g}}",
            MW_EXPORT_PID_TIMELINE, MW_EXPORT_TID_BASE + MW_EXPORT_PID_TIMELINE, value);
    t->last[fn] = value;
}

/* Brings every counter that is not at 0 back to 0 at `ns` (a gap without windows, the end). */
static void trace_counters_zero(mw_trace_t *t, uint64_t ns)
{
    for (uint32_t fn = 1; fn < MW_FN_SPACE; fn++)
        if (t->last[fn] != 0)
            trace_counter(t, fn, ns, 0);
}

static void trace_instant(mw_trace_t *t, const char *name, uint64_t ns)
{
    FILE *o = ev_begin(t);
    fputs("\"name\":", o);
    json_string(o, name);
    fputs(",\"ph\":\"i\",\"s\":\"g\"", o);
    trace_ts(t, "ts", ns);
    fprintf(o, ",\"pid\":%d,\"tid\":%" PRId64 ",\"args\":{", MW_EXPORT_PID_TIMELINE,
            MW_EXPORT_TID_BASE + MW_EXPORT_PID_TIMELINE);
}

/* The pid of a host name, naming its process the first time. Returns NO_HOST when the table
 * of names is full or out of memory. */
static uint32_t trace_host_pid(mw_trace_t *t, const char *name)
{
    if (!name || !*name) /* the collector's "" host: unknown */
        return MW_EXPORT_PID_NO_HOST;
    for (uint32_t i = 0; i < t->n_hosts; i++)
        if (strcmp(t->hosts[i], name) == 0)
            return MW_EXPORT_PID_FIRST_HOST + i;
    if (t->n_hosts >= MW_EXPORT_MAX_HOSTS)
        return MW_EXPORT_PID_NO_HOST;
    if (t->n_hosts == t->cap_hosts) {
        uint32_t cap = t->cap_hosts ? 2 * t->cap_hosts : 16;
        char **h = realloc(t->hosts, cap * sizeof *h);
        if (!h)
            return MW_EXPORT_PID_NO_HOST;
        t->hosts = h;
        t->cap_hosts = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return MW_EXPORT_PID_NO_HOST;
    t->hosts[t->n_hosts] = copy;
    uint32_t pid = MW_EXPORT_PID_FIRST_HOST + t->n_hosts++;
    trace_meta(t, "process_name", pid, -1, name, pid);
    return pid;
}

/* Takes a new job description and gives each of its hosts a process. A job is described again
 * as ranks say hello and at its end, with the same hosts in the same places: those keep their
 * pid without a search. Returns 0, or -1 when out of memory. */
static int trace_job(mw_trace_t *t, const Mpiwatch__JobInfo *job)
{
    Mpiwatch__JobInfo *copy = NULL;
    uint32_t *pids = malloc((job->n_hosts ? job->n_hosts : 1) * sizeof *pids);
    if (!pids || keep_job(&copy, job) < 0) {
        free(pids);
        return -1;
    }
    const Mpiwatch__JobInfo *old = t->job;
    for (size_t i = 0; i < copy->n_hosts; i++) {
        if (old && i < old->n_hosts && strcmp(old->hosts[i], copy->hosts[i]) == 0)
            pids[i] = t->job_host_pid[i];
        else
            pids[i] = trace_host_pid(t, copy->hosts[i]);
    }
    if (t->job)
        mpiwatch__job_info__free_unpacked(t->job, NULL);
    free(t->job_host_pid);
    t->job = copy;
    t->job_host_pid = pids;
    return 0;
}

static uint32_t trace_rank_pid(const mw_trace_t *t, uint32_t rank)
{
    const char *host = mw_jobinfo_host(t->job, rank);
    if (!host)
        return MW_EXPORT_PID_NO_HOST;
    /* mw_jobinfo_host returned hosts[i]: find i by pointer. */
    for (size_t i = 0; i < t->job->n_hosts; i++)
        if (t->job->hosts[i] == host)
            return t->job_host_pid[i];
    return MW_EXPORT_PID_NO_HOST;
}

/* Makes room for the lanes of `rank`. Returns 0, or -1 (rank out of range, out of memory). */
static int trace_reserve_rank(mw_trace_t *t, uint32_t rank)
{
    if (rank < t->cap_ranks)
        return 0;
    if (rank >= MW_MAX_RANKS)
        return -1;
    uint32_t cap = t->cap_ranks ? t->cap_ranks : 64;
    while (cap <= rank)
        cap *= 2;
    size_t n = (size_t)cap * MW_EXPORT_LANES, old = (size_t)t->cap_ranks * MW_EXPORT_LANES;
    uint64_t *ends = realloc(t->lane_end, n * sizeof *ends);
    if (!ends)
        return -1;
    t->lane_end = ends;
    uint32_t *pids = realloc(t->lane_pid, n * sizeof *pids);
    if (!pids)
        return -1;
    t->lane_pid = pids;
    memset(ends + old, 0, (n - old) * sizeof *ends);
    memset(pids + old, 0, (n - old) * sizeof *pids);
    ends = realloc(t->cap_end, n * sizeof *ends);
    if (!ends)
        return -1;
    t->cap_end = ends;
    pids = realloc(t->cap_pid, n * sizeof *pids);
    if (!pids)
        return -1;
    t->cap_pid = pids;
    memset(ends + old, 0, (n - old) * sizeof *ends);
    memset(pids + old, 0, (n - old) * sizeof *pids);
    t->cap_ranks = cap;
    return 0;
}

static int cmp_call_start(const void *pa, const void *pb)
{
    const Mpiwatch__Call *a = *(const Mpiwatch__Call *const *)pa;
    const Mpiwatch__Call *b = *(const Mpiwatch__Call *const *)pb;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->duration_ns < b->duration_ns ? 1 : a->duration_ns > b->duration_ns ? -1 : 0;
}

/* Writes one call on the first free lane of its rank. */
static void trace_call(mw_trace_t *t, const Mpiwatch__Call *c, uint64_t window)
{
    if (trace_reserve_rank(t, c->rank) < 0) {
        t->calls_bad++;
        return;
    }
    uint64_t end =
        c->start_ns > UINT64_MAX - c->duration_ns ? UINT64_MAX : c->start_ns + c->duration_ns;
    size_t base = (size_t)c->rank * MW_EXPORT_LANES;
    uint32_t lane = 0;
    while (lane < MW_EXPORT_LANES && t->lane_end[base + lane] > c->start_ns)
        lane++;
    if (lane == MW_EXPORT_LANES) {
        t->calls_no_lane++;
        return;
    }
    t->lane_end[base + lane] = end;
    uint32_t pid = trace_rank_pid(t, c->rank);
    int64_t tid = (int64_t)c->rank + (int64_t)lane * MW_MAX_RANKS;
    if (t->lane_pid[base + lane] != pid) {
        char name[64];
        if (lane == 0)
            snprintf(name, sizeof name, "rank %" PRIu32, c->rank);
        else
            snprintf(name, sizeof name, "rank %" PRIu32 " (overlapping calls %u)", c->rank, lane);
        trace_meta(t, "thread_name", pid, tid, name, (int64_t)base + lane);
        t->lane_pid[base + lane] = pid;
    }
    FILE *o = ev_begin(t);
    fputs("\"name\":", o);
    json_string(o, mw_fn_name(c->fn));
    fputs(",\"cat\":\"mpi\",\"ph\":\"X\"", o);
    trace_ts(t, "ts", c->start_ns);
    fputs(",\"dur\":", o);
    put_us(o, end, c->start_ns);
    fprintf(o, ",\"pid\":%" PRIu32 ",\"tid\":%" PRId64 ",\"args\":{\"bytes\":%" PRIu64, pid, tid,
            c->bytes);
    if (c->peer >= 0)
        fprintf(o, ",\"peer\":%" PRId32, c->peer);
    fprintf(o, ",\"window\":%" PRIu64 "}}", window);
    t->n_calls++;
}

/* ---- captured calls (mpiwatch.capture, docs/steering.md) --------------------------------- */

static const Mpiwatch__Capture *sort_capture; /* qsort has no context argument */

static int cmp_capture_start(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int64_t sa = sort_capture->start[a], sb = sort_capture->start[b];
    if (sa != sb)
        return sa < sb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Sorts the calls of a capture by start into t->order. Returns 0, or -1 (out of memory). */
static int capture_order(mw_trace_t *t, const Mpiwatch__Capture *cp)
{
    if (cp->n_fn > t->cap_order) {
        uint32_t *o = realloc(t->order, cp->n_fn * sizeof *o);
        if (!o)
            return -1;
        t->order = o;
        t->cap_order = cp->n_fn;
    }
    for (uint32_t i = 0; i < cp->n_fn; i++)
        t->order[i] = i;
    sort_capture = cp;
    qsort(t->order, cp->n_fn, sizeof *t->order, cmp_capture_start);
    return 0;
}

/* The captured calls of one accepted sample as complete events on the rank's capture lanes:
 * thread "rank N captured calls", tid TID_CAPTURE + rank (+ L x 2^20 for overlapping calls).
 * Returns 0, or -1 when out of memory. */
static int trace_capture(mw_trace_t *t, uint32_t rank, const Mpiwatch__Sample *s,
                         uint64_t window_ns)
{
    const Mpiwatch__Capture *cp = s->capture;
    if (trace_reserve_rank(t, rank) < 0 || capture_order(t, cp) < 0)
        return -1;
    const uint64_t wstart = s->window_start_ns ? s->window_start_ns : s->window * window_ns;
    const size_t base = (size_t)rank * MW_EXPORT_LANES;
    const uint32_t pid = trace_rank_pid(t, rank);
    for (uint32_t k = 0; k < cp->n_fn; k++) {
        uint32_t i = t->order[k];
        uint64_t start = (uint64_t)((int64_t)wstart + cp->start[i]);
        uint64_t end = start + cp->duration_ns[i]; /* bounded by the collector's checks */
        uint32_t lane = 0;
        while (lane < MW_EXPORT_LANES && t->cap_end[base + lane] > start)
            lane++;
        if (lane == MW_EXPORT_LANES) {
            t->captured_no_lane++;
            continue;
        }
        t->cap_end[base + lane] = end;
        int64_t tid = MW_EXPORT_TID_CAPTURE + (int64_t)rank + (int64_t)lane * MW_MAX_RANKS;
        if (t->cap_pid[base + lane] != pid) {
            char name[80];
            if (lane == 0)
                snprintf(name, sizeof name, "rank %" PRIu32 " captured calls", rank);
            else
                snprintf(name, sizeof name, "rank %" PRIu32 " captured calls (overlapping %u)",
                         rank, lane);
            /* Listed after the longest calls' tracks of the host, in rank order. */
            trace_meta(t, "thread_name", pid, tid, name,
                       (int64_t)MW_EXPORT_LANES * MW_MAX_RANKS + (int64_t)base + lane);
            t->cap_pid[base + lane] = pid;
        }
        FILE *o = ev_begin(t);
        fputs("\"name\":", o);
        json_string(o, mw_fn_name(cp->fn[i]));
        fputs(",\"cat\":\"capture\",\"ph\":\"X\"", o);
        trace_ts(t, "ts", start);
        fputs(",\"dur\":", o);
        put_us(o, end, start);
        fprintf(o, ",\"pid\":%" PRIu32 ",\"tid\":%" PRId64 ",\"args\":{\"bytes\":%" PRIu64, pid,
                tid, cp->bytes[i]);
        if (cp->peer[i] >= 0)
            fprintf(o, ",\"peer\":%" PRId32, cp->peer[i]);
        fprintf(o, ",\"window\":%" PRIu64 "}}", s->window);
        t->captured_calls++;
    }
    return 0;
}

/* --format capture: one JSON line for one captured window of one rank. */
static int capture_line(FILE *out, mw_trace_t *t, uint32_t rank, const Mpiwatch__Sample *s,
                        uint64_t window_ns)
{
    const Mpiwatch__Capture *cp = s->capture;
    if (capture_order(t, cp) < 0)
        return -1;
    /* The sample's own place on the grid when it says (the grid can change mid-job). */
    uint64_t wstart = s->window_start_ns ? s->window_start_ns : s->window * window_ns;
    if (s->window_ns)
        window_ns = s->window_ns;
    fprintf(out,
            "{\"rank\":%" PRIu32 ",\"window\":%" PRIu64 ",\"start_ns\":%" PRIu64
            ",\"window_ns\":%" PRIu64 ",\"first\":%" PRIu64 ",\"windows\":%" PRIu32
            ",\"skipped\":%" PRIu32 ",\"dropped\":%" PRIu64 ",\"calls_late\":%" PRIu64
            ",\"counts\":{",
            rank, s->window, wstart, window_ns, cp->first, cp->windows, cp->skipped, cp->dropped,
            s->calls_late);
    int first = 1;
    for (size_t i = 0; i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        if (!mw_fn_timed(f->fn) || !f->count)
            continue;
        fputs(first ? "" : ",", out);
        json_string(out, mw_fn_name(f->fn));
        fprintf(out, ":%" PRIu64, f->count);
        first = 0;
    }
    fputs("},\"calls\":[", out);
    for (uint32_t k = 0; k < cp->n_fn; k++) {
        uint32_t i = t->order[k];
        fputs(k ? ",[" : "[", out);
        json_string(out, mw_fn_name(cp->fn[i]));
        fprintf(out, ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRId32 "]", cp->start[i],
                cp->duration_ns[i], cp->bytes[i], cp->peer[i]);
    }
    fputs("]}\n", out);
    return 0;
}

/* The events of one window of a filled view: counters per sub-slot, a marker when ranks were
 * missing, the longest calls. Returns 0, or -1 when out of memory. */
static int trace_window(mw_trace_t *t, const mw_window_view_t *v)
{
    const Mpiwatch__Window *w = v->w;
    uint64_t start = v->start_ns;
    uint64_t end = start > UINT64_MAX - v->window_ns ? UINT64_MAX : start + v->window_ns;

    /* Counters hold their value until the next event: after a gap without windows they go
     * back to 0 where the last window ended, and a function without data in this window goes
     * to 0 where it starts. Only changes are written. */
    if (t->have_prev && v->index != t->prev_index + 1)
        trace_counters_zero(t, t->prev_end_ns);
    for (uint32_t fn = 1; fn < MW_FN_SPACE; fn++)
        if (t->last[fn] != 0 && v->occ_fn_ns[fn] == 0)
            trace_counter(t, fn, start, 0);
    for (uint32_t i = 0; i < v->n_fn; i++) {
        uint32_t fn = v->fn[i];
        if (!v->occ_fn_ns[fn])
            continue;
        for (uint32_t s = 0; s < v->subslots; s++) {
            double f = mw_window_view_inside(v, fn, s);
            if (f != t->last[fn])
                trace_counter(t, fn, start + s * v->slot_ns, f);
        }
    }
    t->have_prev = 1;
    t->prev_index = v->index;
    t->prev_end_ns = end;

    if (w->ranks_missing) {
        char name[64];
        snprintf(name, sizeof name, "partial window %" PRIu64, v->index);
        trace_instant(t, name, start);
        fprintf(t->out,
                "\"window\":%" PRIu64 ",\"ranks_reporting\":%" PRIu32 ",\"ranks_missing\":%" PRIu32
                "}}",
                v->index, w->ranks_reporting, w->ranks_missing);
        t->partial_windows++;
    }

    if (w->n_longest > t->cap_calls) {
        const Mpiwatch__Call **calls = realloc(t->calls, w->n_longest * sizeof *calls);
        if (!calls)
            return -1;
        t->calls = calls;
        t->cap_calls = w->n_longest;
    }
    size_t n = 0;
    for (size_t i = 0; i < w->n_longest; i++) {
        const Mpiwatch__Call *c = w->longest ? w->longest[i] : NULL;
        if (!c || c->fn == 0 || c->fn >= MW_FN_SPACE)
            t->calls_bad++;
        else
            t->calls[n++] = c;
    }
    if (n > 1) /* t->calls is NULL for a window without long calls */
        qsort(t->calls, n, sizeof *t->calls, cmp_call_start);
    for (size_t i = 0; i < n; i++)
        trace_call(t, t->calls[i], v->index);
    return 0;
}

/* A job event (start, end, ranks declared dead, ...) as a global marker. */
static void trace_job_event(mw_trace_t *t, const Mpiwatch__JobEvent *e, uint64_t record_real_ns)
{
    trace_instant(t, e->kind && *e->kind ? e->kind : "event",
                  e->real_ns ? e->real_ns : record_real_ns);
    FILE *o = t->out;
    fputs("\"job\":", o);
    json_string(o, e->job);
    fputs(",\"detail\":", o);
    json_string(o, e->detail);
    fputs("}}", o);
    t->job_events++;
}

/* Closes the counters and the JSON document. */
static void trace_end(mw_trace_t *t)
{
    if (t->have_prev)
        trace_counters_zero(t, t->prev_end_ns);
    fprintf(t->out,
            "\n],\n\"otherData\":{\"generator\":\"mpiwatch-export\","
            "\"origin_ns\":\"%" PRIu64 "\",\"calls\":\"%" PRIu64
            "\",\"calls_without_lane\":\"%" PRIu64 "\",\"captured_calls\":\"%" PRIu64
            "\",\"captured_without_lane\":\"%" PRIu64 "\"}}\n",
            t->origin_ns, t->n_calls, t->calls_no_lane, t->captured_calls, t->captured_no_lane);
}

static void trace_free(mw_trace_t *t)
{
    if (t->job)
        mpiwatch__job_info__free_unpacked(t->job, NULL);
    free(t->job_host_pid);
    for (uint32_t i = 0; i < t->n_hosts; i++)
        free(t->hosts[i]);
    free(t->hosts);
    free(t->lane_end);
    free(t->lane_pid);
    free(t->cap_end);
    free(t->cap_pid);
    free(t->order);
    free(t->calls);
    memset(t, 0, sizeof *t);
}

/* ---- the export --------------------------------------------------------------------------- */

typedef struct {
    mw_export_format_t format;
    int per_rank;
    mw_csv_table_t table;
    const char *input;
    const char *output; /* "-" for stdout; a directory for vtk */
    mw_vtk_opts_t vtk;  /* --by, --from, --to, --every (vtk only) */
    int progress;       /* -1 on a terminal (default), 0 --no-progress, 1 --progress */
} mw_export_opts_t;

typedef struct {
    const mw_export_opts_t *o;
    FILE *out;
    mw_window_view_t *view;
    Mpiwatch__JobInfo *job; /* jsonl: copy of the latest job description */
    mw_trace_t trace;

    /* summary and --per-rank: a collector core that judges every record as the live one did */
    mw_collector_options_t copt;
    mw_collector_t *core;
    mw_arena_t arena; /* --per-rank: a second decoding of the messages the core accepted */

    uint64_t bad_windows;     /* windows with malformed entries */
    uint64_t refused_windows; /* malformed windows, left out whole */

    /* Tiers (docs/recording.md): samples before window raw_from were dropped by the recording;
     * the core takes no sample before it and no timer event before the first one from it. */
    int tiered, raw_started;
    uint64_t raw_from;

    /* The job-relative place of windows: the job the windows belong to (the name of the
     * latest job description) and its first window in the file, index and start. */
    char *place_job;
    int have_origin;
    uint64_t origin_index, origin_ns;
} mw_export_t;

/* A job description: when it names another job than the windows so far (a recording of
 * several jobs), the next window starts the job-relative numbering again. Returns 0, or -1
 * when out of memory. */
static int place_job(mw_export_t *x, const char *name)
{
    name = name ? name : "";
    if (x->place_job && strcmp(x->place_job, name) == 0)
        return 0;
    free(x->place_job);
    x->place_job = strdup(name);
    x->have_origin = 0;
    return x->place_job ? 0 : -1;
}

/* The place of the window (or sample) in a filled view. The job's first window is the first
 * one read; a window of a lower index read later (a sample out of order, with --per-rank)
 * becomes the origin from then on. */
static mw_export_place_t place_of(mw_export_t *x, const mw_window_view_t *v)
{
    if (!x->have_origin || v->index < x->origin_index) {
        x->origin_index = v->index;
        x->origin_ns = v->start_ns;
        x->have_origin = 1;
    }
    mw_export_place_t p = {v->index - x->origin_index,
                           v->start_ns >= x->origin_ns ? v->start_ns - x->origin_ns : 0};
    return p;
}

static void export_warn(const mw_export_t *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void export_warn(const mw_export_t *x, const char *fmt, ...)
{
    (void)x;
    FILE *err = stderr;
    va_list ap;
    va_start(ap, fmt);
    fputs("mpiwatch-export: ", err);
    vfprintf(err, fmt, ap);
    fputc('\n', err);
    va_end(ap);
}

static int export_core_init(mw_export_t *x)
{
    mw_collector_options_defaults(&x->copt);
    x->copt.quiet = 1;
    x->core = malloc(sizeof *x->core); /* large: dense per-function tables */
    if (!x->core || mw_collector_init(x->core, &x->copt) < 0) {
        free(x->core);
        x->core = NULL;
        export_warn(x, "cannot start a collector core: out of memory");
        return -1;
    }
    if (x->o->format != FMT_SUMMARY &&
        mw_arena_init(&x->arena, 4 * (size_t)MW_MAX_MESSAGE_BYTES) < 0) {
        export_warn(x, "cannot allocate a decoding arena: out of memory");
        return -1;
    }
    /* The core's end-of-job report and its log are useful live, noise in an export: the
     * report goes nowhere and only the core's error lines reach stderr. */
    x->core->report_out = NULL;
    mw_collector_set_log(NULL, MW_LOG_ERROR);
    return 0;
}

/* The settings the recording was made with, so that windows close and jobs end as they did.
 * Values outside what the collector accepts keep the defaults. */
static void export_core_start(mw_export_t *x, const Mpiwatch__RecordStart *s)
{
    if (s->lateness_ms >= 1 && s->lateness_ms <= 3600000)
        x->copt.lateness_ms = s->lateness_ms;
    if (s->silence_timeout_ms >= 1 && s->silence_timeout_ms <= 86400000)
        x->copt.silence_timeout_ms = s->silence_timeout_ms;
}

/* A message the core has just accepted, when it is a sample: --per-rank rows, or its
 * captured calls (perfetto, capture). Returns 0, or -1 when out of memory. */
static int export_rank_sample(mw_export_t *x, const ProtobufCBinaryData *msg)
{
    const Mpiwatch__Envelope *env = mw_envelope_decode(&x->arena, msg->data, msg->len);
    if (!env || env->body_case != MPIWATCH__ENVELOPE__BODY_SAMPLE)
        return 0;
    const mw_job_t *job = &x->core->job;
    if (x->o->per_rank) {
        mw_window_view_set_sample(x->view, env->sample, job->window_ns, job->subslots);
        mw_export_place_t p = place_of(x, x->view);
        csv_rank_rows(x->out, x->view, env->rank,
                      env->rank < job->size ? mw_job_host(job, env->rank) : "", &p);
        return 0;
    }
    if (!env->sample->capture)
        return 0;
    if (x->o->format == FMT_CAPTURE)
        return capture_line(x->out, &x->trace, env->rank, env->sample, job->window_ns);
    return trace_capture(&x->trace, env->rank, env->sample, job->window_ns);
}

/* One record. Returns 0, or -1 on a fatal error (out of memory). */
static int export_record(mw_export_t *x, const Mpiwatch__Record *rec)
{
    mw_export_format_t f = x->o->format;
    if (rec->body_case == MPIWATCH__RECORD__BODY_JOB && rec->job && place_job(x, rec->job->job) < 0)
        return -1;
    uint64_t sw;
    int skip = 0;
    if (x->tiered && rec->body_case == MPIWATCH__RECORD__BODY_MESSAGE &&
        mw_rec_sample_window(rec->message.data, rec->message.len, &sw)) {
        skip = sw < x->raw_from;
        x->raw_started |= !skip;
    } else if (x->tiered && rec->body_case == MPIWATCH__RECORD__BODY_TICK) {
        skip = !x->raw_started; /* the dropped span would look silent */
    }
    if (x->core && !skip) {
        if (rec->body_case == MPIWATCH__RECORD__BODY_START && rec->start)
            export_core_start(x, rec->start);
        uint64_t accepted = x->core->stats.accepted;
        mw_collector_apply_record(x->core, rec);
        if (f != FMT_SUMMARY && rec->body_case == MPIWATCH__RECORD__BODY_MESSAGE &&
            x->core->stats.accepted > accepted && export_rank_sample(x, &rec->message) < 0)
            return -1;
        if (f != FMT_PERFETTO)
            return 0; /* summary, --per-rank and capture come from the core only */
    }
    switch (rec->body_case) {
    case MPIWATCH__RECORD__BODY_START:
        if (f == FMT_PERFETTO)
            trace_set_origin(&x->trace, rec->real_ns);
        return 0;
    case MPIWATCH__RECORD__BODY_JOB:
        if (!rec->job)
            return 0;
        if (f == FMT_PERFETTO)
            return trace_job(&x->trace, rec->job);
        if (f == FMT_JSONL || (f == FMT_CSV && x->o->table != TABLE_FUNCTIONS))
            return keep_job(&x->job, rec->job);
        return 0;
    case MPIWATCH__RECORD__BODY_EVENT:
        if (f == FMT_PERFETTO && rec->event)
            trace_job_event(&x->trace, rec->event, rec->real_ns);
        return 0;
    case MPIWATCH__RECORD__BODY_WINDOW:
        break;
    default:
        return 0;
    }
    if (!rec->window)
        return 0;
    if (mw_window_view_set(x->view, rec->window) < 0) { /* the window policy (mw_window_json.h) */
        x->refused_windows++;
        return 0;
    }
    if (x->view->skipped)
        x->bad_windows++;
    mw_export_place_t p = place_of(x, x->view);
    if (f == FMT_CSV && x->o->table != TABLE_FUNCTIONS) {
        csv_table_rows(x->out, x->view, x->job, x->o->table, &p);
    } else if (f == FMT_CSV) {
        csv_window_rows(x->out, x->view, &p);
    } else if (f == FMT_JSONL) {
        cJSON *j = mw_window_view_json(x->view, x->job);
        if (j && mw_window_json_add_place(j, p.window, p.t_ns) < 0) {
            cJSON_Delete(j);
            j = NULL;
        }
        char *text = j ? cJSON_PrintUnformatted(j) : NULL;
        cJSON_Delete(j);
        if (!text)
            return -1;
        fputs(text, x->out);
        fputc('\n', x->out);
        cJSON_free(text);
    } else if (f == FMT_PERFETTO) {
        return trace_window(&x->trace, x->view);
    }
    return 0;
}

/* Writes what comes after the last record. Returns 0, or -1. */
static int export_finish(mw_export_t *x)
{
    switch (x->o->format) {
    case FMT_PERFETTO:
        trace_end(&x->trace);
        break;
    case FMT_SUMMARY: {
        char *text = mw_summary_json(x->core);
        if (!text)
            return -1;
        /* The live collector writes the text and a final newline (mw__write_file). */
        fputs(text, x->out);
        fputc('\n', x->out);
        cJSON_free(text);
        break;
    }
    default:
        break;
    }
    return 0;
}

static void export_free(mw_export_t *x)
{
    if (x->core) {
        mw_collector_free(x->core);
        free(x->core);
    }
    mw_arena_free(&x->arena);
    if (x->job)
        mpiwatch__job_info__free_unpacked(x->job, NULL);
    free(x->place_job);
    trace_free(&x->trace);
    mw_window_view_free(x->view);
}

/* Runs the export. Returns the exit status. */
static int export_run(const mw_export_opts_t *o)
{
    if (o->format == FMT_VTK) {
        mw_vtk_opts_t v = o->vtk;
        v.input = o->input;
        v.dir = o->output;
        return mw_export_vtk(&v);
    }
    if (o->format == FMT_TRACE)
        return mw__export_trace(o->input, o->output);
    if (o->format == FMT_OTF2)
        return mw__export_otf2(o->input, o->output);
    if (o->format == FMT_LATENESS)
        return mw__export_lateness(o->input, o->output);
    if (o->format == FMT_LOGICAL)
        return mw__export_logical(o->input, o->output);
    if (o->format == FMT_COARSE)
        return mw__export_coarse(o->input, o->output);
    char err[512] = "";
    mw_rec_reader_t *r;
    mw__xout_t xo;
    int orc = mw__xout_open_reader(o->input, &r, &xo, o->output);
    if (orc != 0)
        return orc;
    FILE *out = xo.f;

    mw_export_t x;
    memset(&x, 0, sizeof x);
    x.o = o;
    x.out = out;
    int rc = 0;
    x.view = mw_window_view_new();
    if (!x.view) {
        fprintf(stderr, "mpiwatch-export: out of memory\n");
        rc = 1;
    } else if ((o->format == FMT_SUMMARY || o->format == FMT_PERFETTO || o->format == FMT_CAPTURE ||
                o->per_rank) &&
               export_core_init(&x) < 0) {
        rc = 1;
    } else if (o->format == FMT_PERFETTO) {
        trace_begin(&x.trace, out);
    } else if (o->format == FMT_CSV && o->table != TABLE_FUNCTIONS) {
        csv_table_header(out, o->table);
    } else if (o->format == FMT_CSV) {
        csv_header(out, o->per_rank);
    }

    if (rc == 0 && mw_rec_reader_tier(r, 0, UINT64_MAX, &x.raw_from) == 1) {
        x.tiered = 1;
        fprintf(stderr,
                "mpiwatch-export: %s: raw samples from window %" PRIu64 ", merged windows "
                "before (the recording dropped older samples, docs/recording.md \"Tiers\"): "
                "windows (csv, jsonl) cover the whole run; the summary, --per-rank, perfetto and "
                "capture cover the samples from that window on\n",
                o->input, x.raw_from);
    }
    struct stat st;
    mw_progress_t progress;
    mw_progress_init(&progress, "export", o->progress,
                     stat(o->input, &st) == 0 ? (uint64_t)st.st_size : 0);
    uint64_t records = 0, windows = 0;
    mw__xlean_t lean = {0};
    mw_fnmap_t fnmap = {0}; /* the job's function ids -> this build's (mw_fnmap_msg.h) */
    mw_fnmap_keep_t keep = {0};
    while (rc == 0) {
        const Mpiwatch__Record *rec;
        uint64_t at = 0;
        int n = mw_rec_reader_next(r, &rec, &at, err, sizeof err);
        if (n == 0)
            break;
        if (n < 0) {
            export_warn(&x, "%s: %s", o->input, err);
            rc = 1;
            break;
        }
        records++;
        windows += rec->body_case == MPIWATCH__RECORD__BODY_WINDOW;
        mw__xlean_note(&lean, r, rec);
        mw_progress_update(&progress, at, windows);
        mw_fnmap_keep_clear(&keep);
        if (mw_fnmap_record(&fnmap, (Mpiwatch__Record *)rec, &keep, err, sizeof err) == UINT64_MAX)
            export_warn(&x, "%s: %s; its function ids are taken as this build's", o->input, err);
        if (export_record(&x, rec) < 0) {
            export_warn(&x, "out of memory at record %" PRIu64, records);
            rc = 1;
        }
    }
    mw_fnmap_free(&fnmap);
    mw_fnmap_keep_free(&keep);
    mw_progress_end(&progress, windows);
    if (rc == 0 && export_finish(&x) < 0) {
        fprintf(stderr, "mpiwatch-export: out of memory\n");
        rc = 1;
    }
    if (rc == 0 && mw_rec_reader_truncated(r))
        fprintf(stderr,
                "mpiwatch-export: warning: %s ends with an incomplete or corrupt frame "
                "(a collector stopped while writing?): exported the %" PRIu64
                " complete records before it\n",
                o->input, records);
    if (records == 0 && rc == 0)
        fprintf(stderr, "mpiwatch-export: warning: %s holds no records\n", o->input);
    mw__xlean_report(&lean, o->input);
    if (x.refused_windows)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " malformed window(s) refused, left out "
                "whole\n",
                x.refused_windows);
    if (x.bad_windows)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " window(s) had malformed entries, "
                "left out\n",
                x.bad_windows);
    if (x.trace.before_origin)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " event(s) before the start of the "
                "recording (rank clocks behind the collector's?): negative timestamps\n",
                x.trace.before_origin);
    if (x.trace.captured_no_lane)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " captured call(s) overlapped %u others "
                "of the same rank: not in the trace\n",
                x.trace.captured_no_lane, MW_EXPORT_LANES);
    if (x.trace.calls_no_lane || x.trace.calls_bad)
        fprintf(stderr,
                "mpiwatch-export: warning: %" PRIu64 " call(s) overlapped %u others of the "
                "same rank and %" PRIu64 " were malformed: not in the trace\n",
                x.trace.calls_no_lane, MW_EXPORT_LANES, x.trace.calls_bad);
    export_free(&x);
    mw_rec_reader_close(r);
    return mw__xout_close(&xo, rc);
}

/* ---- command line ------------------------------------------------------------------------- */

static void usage(FILE *out)
{
    fputs("usage: mpiwatch-export --format FORMAT FILE.mpiw [-o OUT] [--per-rank]\n"
          "       mpiwatch-export --format vtk FILE.mpiw -o DIR [--by window|step]\n"
          "                       [--from N] [--to N] [--every N] [--network FILE]\n"
          "                       [--node-gap G]\n"
          "       mpiwatch-export --format otf2 FILE.mpiw -o DIR\n"
          "\n"
          "Converts a recording made with mpiwatch-collector --record.\n"
          "\n"
          "  -f, --format FORMAT  perfetto  Chrome trace JSON for ui.perfetto.dev or "
          "chrome://tracing\n"
          "                       csv       one row per window and function\n"
          "                       jsonl     one merged window per line (JSON lines)\n"
          "                       summary   the collector's summary JSON\n"
          "                       capture   one JSON line per captured window of a rank\n"
          "                       vtk       ParaView: DIR/JOB_NNNNNN.vtp per frame, DIR/JOB.pvd\n"
          "                       trace     every traced call record as a JSON line, matched\n"
          "                       otf2      the traced windows as an OTF2 archive: "
          "DIR/traces.otf2\n"
          "                       lateness  the collector's online lateness summaries, one JSON\n"
          "                                 line per window and per logical step\n"
          "                       logical   CSV, one row per communication event: logical step,\n"
          "                                 lateness, differential lateness (docs/logical.md)\n"
          "                       coarse    the recording's per-rank sums over windows (its\n"
          "                                 coarse tier), one JSON line per frame\n"
          "  -o, --output OUT     the file to write; - (the default) writes to stdout\n"
          "      --per-rank       csv: one row per rank, window and function\n"
          "      --table T        csv: one row per window and function (functions, the\n"
          "                       default), region (regions), call site (sites), or function\n"
          "                       with its spread across ranks (spread)\n"
          "      --no-leap        trace, otf2, logical: logical steps without the leap merge\n"
          "                       (codes whose ranks communicate rarely; docs/logical.md)\n"
          "      --by window|step vtk: one file per window (default) or per time step\n"
          "      --from N, --to N vtk: only frames N.. and ..N (window offset or step number)\n"
          "      --every N        vtk: one frame in N\n"
          "      --network FILE   vtk: nodes grouped under their switches (a Slurm\n"
          "                       topology.conf; docs/topology.md), switches and link classes\n"
          "      --node-gap G     vtk: world units between node planes (default 4)\n"
          "      --progress, --no-progress\n"
          "                       csv, jsonl, summary, perfetto, capture: how far the export\n"
          "                       is, on stderr (default: when stderr is a terminal)\n"
          "  -h, --help           this text\n"
          "      --version        the version\n"
          "\n"
          "Exit status: 0 done, 1 read or write error, 2 usage error or not a recording.\n",
          out);
}

/* Parses argv into *o. Returns 0, 1 for --help, 2 for --version, or -1 with a message in err. */
static int parse_args(mw_export_opts_t *o, int argc, char **argv, char *err, size_t errlen)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"per-rank", no_argument, NULL, 'r'},
        {"table", required_argument, NULL, 't'},
        {"no-leap", no_argument, NULL, 'L'}, /* trace, logical, otf2 */
        {"by", required_argument, NULL, 'b'},
        {"from", required_argument, NULL, 'F'},
        {"to", required_argument, NULL, 'T'},
        {"every", required_argument, NULL, 'E'},
        {"network", required_argument, NULL, 'N'}, /* vtk */
        {"node-gap", required_argument, NULL, 'G'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"progress", no_argument, NULL, 'P'}, /* csv, jsonl, summary, perfetto, capture */
        {"no-progress", no_argument, NULL, 'Q'},
        {NULL, 0, NULL, 0},
    };
    const char *format = NULL;
    int vtk_opt = 0, no_leap = 0;
    memset(o, 0, sizeof *o);
    o->output = "-";
    o->progress = -1;
    opterr = 0;
    optind = 1;
    for (;;) {
        int c = getopt_long(argc, argv, ":f:o:h", longopts, NULL);
        if (c == -1)
            break;
        switch (c) {
        case 'f':
            format = optarg;
            break;
        case 'o':
            o->output = optarg;
            break;
        case 'r':
            o->per_rank = 1;
            break;
        case 't': {
            static const char *const tables[] = {"functions", "regions", "sites", "spread"};
            unsigned k = 0;
            while (k < 4 && strcmp(optarg, tables[k]) != 0)
                k++;
            if (k == 4) {
                snprintf(err, errlen, "--table takes functions, regions, sites or spread, not '%s'",
                         optarg);
                return -1;
            }
            o->table = (mw_csv_table_t)k;
            break;
        }
        case 'L':
            no_leap = 1;
            break;
        case 'P':
        case 'Q':
            o->progress = c == 'P';
            break;
        case 'b':
            if (strcmp(optarg, "window") != 0 && strcmp(optarg, "step") != 0) {
                snprintf(err, errlen, "--by takes window or step, not '%s'", optarg);
                return -1;
            }
            o->vtk.by_step = strcmp(optarg, "step") == 0;
            vtk_opt = 1;
            break;
        case 'F':
        case 'T':
        case 'E': {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(optarg, &end, 10);
            if (!*optarg || *end || errno || *optarg == '-' || (c == 'E' && n == 0)) {
                snprintf(err, errlen, "%s takes a%s number, not '%s'", argv[optind - 1],
                         c == 'E' ? " positive" : "", optarg);
                return -1;
            }
            if (c == 'F') {
                o->vtk.have_from = 1;
                o->vtk.from = n;
            } else if (c == 'T') {
                o->vtk.have_to = 1;
                o->vtk.to = n;
            } else {
                o->vtk.every = n;
            }
            vtk_opt = 1;
            break;
        }
        case 'N':
            o->vtk.network = optarg;
            vtk_opt = 1;
            break;
        case 'G': {
            char *end;
            double g = strtod(optarg, &end);
            if (!*optarg || *end || !(g > 0 && g <= 1000)) {
                snprintf(err, errlen, "--node-gap takes a number in (0, 1000], not '%s'", optarg);
                return -1;
            }
            o->vtk.node_gap = g;
            vtk_opt = 1;
            break;
        }
        case 'h':
            return 1;
        case 'V':
            return 2;
        case ':':
            snprintf(err, errlen, "%s needs a value", argv[optind - 1]);
            return -1;
        default:
            snprintf(err, errlen, "unknown option %s", argv[optind - 1]);
            return -1;
        }
    }
    if (!format) {
        snprintf(err, errlen, "--format is required");
        return -1;
    }
    size_t i = 0;
    while (i < sizeof FORMAT_NAMES / sizeof FORMAT_NAMES[0] && strcmp(format, FORMAT_NAMES[i]))
        i++;
    if (i == sizeof FORMAT_NAMES / sizeof FORMAT_NAMES[0]) {
        snprintf(err, errlen,
                 "unknown format '%s' (perfetto, csv, jsonl, summary, vtk, capture, trace, "
                 "otf2, lateness, logical or coarse)",
                 format);
        return -1;
    }
    o->format = (mw_export_format_t)i;
    if (o->per_rank && o->format != FMT_CSV) {
        snprintf(err, errlen, "--per-rank goes with --format csv");
        return -1;
    }
    if (o->table != TABLE_FUNCTIONS && (o->format != FMT_CSV || o->per_rank)) {
        snprintf(err, errlen, "--table goes with --format csv, without --per-rank");
        return -1;
    }
    if (no_leap && o->format != FMT_TRACE && o->format != FMT_OTF2 && o->format != FMT_LOGICAL) {
        snprintf(err, errlen, "--no-leap goes with --format trace, otf2 or logical");
        return -1;
    }
    mw__export_no_leap = no_leap;
    if (vtk_opt && o->format != FMT_VTK) {
        snprintf(err, errlen,
                 "--by, --from, --to, --every, --network and --node-gap go with --format vtk");
        return -1;
    }
    if (optind >= argc) {
        snprintf(err, errlen, "no recording given");
        return -1;
    }
    if (argc - optind > 1) {
        snprintf(err, errlen, "one recording at a time ('%s' is extra)", argv[optind + 1]);
        return -1;
    }
    o->input = argv[optind];
    if (!*o->output) {
        snprintf(err, errlen, "-o needs a file name (or - for stdout)");
        return -1;
    }
    if ((o->format == FMT_VTK || o->format == FMT_OTF2) && strcmp(o->output, "-") == 0) {
        snprintf(err, errlen, "--format %s writes several files: -o DIR is required",
                 FORMAT_NAMES[o->format]);
        return -1;
    }
    return 0;
}

#ifndef MW_EXPORT_NO_MAIN
int main(int argc, char **argv)
{
    mw_export_opts_t o;
    char err[256];
    int p = parse_args(&o, argc, argv, err, sizeof err);
    if (p == 1) {
        usage(stdout);
        return 0;
    }
    if (p == 2) {
        printf("mpiwatch-export %s\n", MW_VERSION_FULL);
        return 0;
    }
    if (p < 0) {
        fprintf(stderr, "mpiwatch-export: %s (try --help)\n", err);
        return 2;
    }
    return export_run(&o);
}
#endif
