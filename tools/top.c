/* top.c: mpiwatch-top, a terminal view of a running collector's live feed (`mpiwatch top`).
 *
 *   mpiwatch-top --connect EP [--once] [--functions N] [--timeout-ms MS]
 *                [--curve-server FILE --curve-key FILE]
 *
 * It subscribes to the collector's --publish feed (the job description and the merged
 * windows) and shows what the collector's own live view shows (collector/live.c): the job,
 * its ranks, the MPI share of the ranks' time in the last window and the functions that took
 * the most time over the last few seconds. On a terminal the block is redrawn in place twice
 * a second; anywhere else one line per second. With --once it waits for the job description
 * and a second of windows, prints the block once on stdout and exits (what the tests and
 * scripts use).
 *
 * DESIGN: like live.c, "recent" time per function is an exponentially decaying sum over the
 * windows with a 3 s time constant, which follows the last seconds without keeping a
 * history. Windows are read through proto's window view (mw_window_json.h: every field of a
 * message from a socket checked; a refused window is counted, never shown). Function names
 * come from the job description (JobInfo.function_names: entry i names id i + 1) and, for a
 * collector that does not send them, from this build's table. One blocking SUB socket with a
 * receive timeout: a client may wait. With CURVE keys (the options, or MPIWATCH_CURVE_SERVER
 * and MPIWATCH_CURVE_KEY) the socket is a CURVE client. Exit status: 0; 1 when nothing usable
 * arrived before the timeout, or a socket error; 2 for a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "mw_keyfile.h"
#include "mw_proto.h"
#include "mw_window_json.h"
#include "mw_version.h"

#define TOP_DECAY_NS 3e9
#define TOP_SLICE_MS 100
#define TOP_TTY_PERIOD_NS 500000000ull
#define TOP_LINE_PERIOD_NS 1000000000ull
#define TOP_ONCE_SPAN_NS 1000000000ull /* --once: windows gathered after the first */
#define TOP_MAX_FUNCTIONS 40
#define TOP_MAX_MESSAGE (64 << 20)

typedef struct {
    const char *connect, *curve_server, *curve_key;
    int once, functions;
    long timeout_ms; /* -1: wait forever */
} top_opts_t;

typedef struct {
    Mpiwatch__Feed *job_msg; /* the last job description */
    const Mpiwatch__JobInfo *job;
    mw_window_view_t *view;
    double recent_ns[MW_FN_COUNT];
    double last_fraction;
    uint32_t last_reporting, last_missing;
    uint64_t first_index, last_index, windows, refused;
    int have_first;
    const char *end; /* the job's end, from its job_end event or state */
    int lines;       /* printed by the last redraw (tty) */
} top_state_t;

static volatile sig_atomic_t top_stop;
static void top_on_signal(int sig)
{
    (void)sig;
    top_stop = 1;
}

static uint64_t top_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The name of function id `fn` in this job. */
static const char *top_fn_name(const top_state_t *st, uint32_t fn)
{
    const Mpiwatch__JobInfo *j = st->job;
    if (j && j->n_function_names && fn >= 1 && fn <= j->n_function_names &&
        j->function_names[fn - 1] && j->function_names[fn - 1][0])
        return j->function_names[fn - 1];
    return fn < MW_FN_COUNT ? mw_fn_name(fn) : "?";
}

static void top_window(top_state_t *st, const Mpiwatch__Window *w)
{
    if (mw_window_view_set(st->view, w) != 0) {
        st->refused++;
        return;
    }
    const mw_window_view_t *v = st->view;
    double keep = exp(-(double)v->window_ns / TOP_DECAY_NS);
    for (unsigned fn = 0; fn < MW_FN_COUNT; fn++)
        st->recent_ns[fn] *= keep;
    double inside = 0;
    for (uint32_t i = 0; i < v->n_fn; i++) {
        uint32_t fn = v->fn[i];
        const Mpiwatch__FunctionStat *s = v->stat[fn];
        st->recent_ns[fn] += s ? (double)s->total_ns : 0;
        inside += mw_window_view_fn_fraction(v, fn);
    }
    /* The share of the reporting ranks' time inside MPI, by occupancy when the window has it
     * (the honest share), else by summed call time. */
    if (!w->occ_total_ns && v->ranks && v->window_ns)
        inside = (double)w->mpi_time_ns / ((double)v->window_ns * v->ranks);
    st->last_fraction = inside;
    st->last_reporting = w->ranks_reporting;
    st->last_missing = w->ranks_missing;
    if (!st->have_first) {
        st->first_index = w->index;
        st->have_first = 1;
    }
    st->last_index = w->index;
    st->windows++;
}

/* Text from the job (it comes from a rank): control characters shown as '?'. */
static void top_clean(FILE *f, const char *s, int max)
{
    for (int n = 0; s && *s && n < max; s++, n++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

/* The block; returns its line count. */
static int top_block(FILE *f, const top_state_t *st, int functions)
{
    const Mpiwatch__JobInfo *j = st->job;
    int lines = 0;
    fputs("mpiwatch top  job ", f);
    top_clean(f, j && j->job[0] ? j->job : "?", 64);
    fputs("  program ", f);
    top_clean(f, j && j->program[0] ? j->program : "?", 64);
    fprintf(f, "  ranks %u/%u", st->last_reporting, j ? j->size : 0);
    if (st->end)
        fprintf(f, "  (job ended: %s)", st->end);
    fputc('\n', f);
    lines++;
    if (!st->windows) {
        fputs("  waiting for the first window\n", f);
        return lines + 1;
    }
    fprintf(f, "  w %llu  MPI %.1f%% of the ranks' time",
            (unsigned long long)(st->last_index - st->first_index), 100.0 * st->last_fraction);
    if (st->last_missing)
        fprintf(f, "  (%u ranks missing)", st->last_missing);
    fputc('\n', f);
    lines++;
    /* The top functions by recent time: a selection of the few largest, no full sort. */
    double total = 0;
    for (unsigned fn = 1; fn < MW_FN_COUNT; fn++)
        total += st->recent_ns[fn];
    unsigned char used[MW_FN_COUNT] = {0};
    for (int k = 0; k < functions; k++) {
        unsigned best = 0;
        for (unsigned fn = 1; fn < MW_FN_COUNT; fn++)
            if (!used[fn] && st->recent_ns[fn] > 0 &&
                (!best || st->recent_ns[fn] > st->recent_ns[best]))
                best = fn;
        if (!best)
            break;
        used[best] = 1;
        fprintf(f, "  %-28s %5.1f%% of MPI time (last seconds)\n", top_fn_name(st, best),
                total > 0 ? 100.0 * st->recent_ns[best] / total : 0.0);
        lines++;
    }
    return lines;
}

/* One line, for a log or a pipe. */
static void top_line(FILE *f, const top_state_t *st)
{
    const Mpiwatch__JobInfo *j = st->job;
    fputs("job ", f);
    top_clean(f, j && j->job[0] ? j->job : "?", 64);
    fprintf(f, " ranks %u/%u w %llu MPI %.1f%%", st->last_reporting, j ? j->size : 0,
            (unsigned long long)(st->last_index - st->first_index), 100.0 * st->last_fraction);
    unsigned best = 0;
    for (unsigned fn = 1; fn < MW_FN_COUNT; fn++)
        if (st->recent_ns[fn] > 0 && (!best || st->recent_ns[fn] > st->recent_ns[best]))
            best = fn;
    if (best)
        fprintf(f, " top %s", top_fn_name(st, best));
    fputc('\n', f);
}

static int top_setopt(void *s, int opt, const void *v, size_t len, const char *name)
{
    if (zmq_setsockopt(s, opt, v, len) != 0) {
        fprintf(stderr, "mpiwatch-top: zmq_setsockopt(%s): %s\n", name, zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/* Handles one feed message. */
static void top_message(top_state_t *st, zmq_msg_t *body)
{
    Mpiwatch__Feed *m = mpiwatch__feed__unpack(NULL, zmq_msg_size(body), zmq_msg_data(body));
    if (!m) {
        st->refused++;
        return;
    }
    if (m->body_case == MPIWATCH__FEED__BODY_JOB && m->job) {
        if (st->job_msg)
            mpiwatch__feed__free_unpacked(st->job_msg, NULL);
        st->job_msg = m;
        st->job = m->job;
        if (m->job->state && m->job->state[0] && strcmp(m->job->state, "running") != 0)
            st->end = "see the collector's report";
        return;
    }
    if (m->body_case == MPIWATCH__FEED__BODY_WINDOW && m->window)
        top_window(st, m->window);
    else if (m->body_case == MPIWATCH__FEED__BODY_EVENT && m->event && m->event->kind) {
        if (strcmp(m->event->kind, "job_end") == 0)
            st->end = "see the collector's report";
        else if (strcmp(m->event->kind, "job_start") == 0) {
            st->end = NULL;
            st->have_first = 0;
            st->windows = 0;
            memset(st->recent_ns, 0, sizeof st->recent_ns);
        }
    }
    mpiwatch__feed__free_unpacked(m, NULL);
}

static int top_run(void *ctx, const top_opts_t *o)
{
    top_state_t st;
    memset(&st, 0, sizeof st);
    if (!(st.view = mw_window_view_new())) {
        fprintf(stderr, "mpiwatch-top: out of memory\n");
        return 1;
    }
    char err[300];
    mw_curve_client_t curve;
    int use_curve = mw_curve_client_load(o->curve_server, o->curve_key, &curve, err, sizeof err);
    int rc = 1, linger = 0, slice = TOP_SLICE_MS;
    int64_t maxmsg = TOP_MAX_MESSAGE;
    void *s = zmq_socket(ctx, ZMQ_SUB);
    if (use_curve < 0) {
        fprintf(stderr, "mpiwatch-top: %s\n", err);
        rc = 2;
        goto out;
    }
    if (!s) {
        fprintf(stderr, "mpiwatch-top: zmq_socket: %s\n", zmq_strerror(zmq_errno()));
        goto out;
    }
    if (top_setopt(s, ZMQ_LINGER, &linger, sizeof linger, "ZMQ_LINGER") < 0 ||
        top_setopt(s, ZMQ_RCVTIMEO, &slice, sizeof slice, "ZMQ_RCVTIMEO") < 0 ||
        top_setopt(s, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg, "ZMQ_MAXMSGSIZE") < 0 ||
        top_setopt(s, ZMQ_SUBSCRIBE, "job", 3, "ZMQ_SUBSCRIBE") < 0 ||
        top_setopt(s, ZMQ_SUBSCRIBE, "window", 6, "ZMQ_SUBSCRIBE") < 0 ||
        top_setopt(s, ZMQ_SUBSCRIBE, "event", 5, "ZMQ_SUBSCRIBE") < 0)
        goto out;
    if (use_curve > 0 && mw_curve_client_apply(s, &curve, err, sizeof err) != 0) {
        fprintf(stderr, "mpiwatch-top: %s\n", err);
        goto out;
    }
    if (zmq_connect(s, o->connect) != 0) {
        fprintf(stderr, "mpiwatch-top: cannot connect to %s: %s\n", o->connect,
                zmq_strerror(zmq_errno()));
        goto out;
    }
    int tty = !o->once && isatty(STDOUT_FILENO);
    uint64_t start = top_now_ns(), last_draw = 0, first_window_at = 0, last_msg = start;
    while (!top_stop) {
        zmq_msg_t topic, body;
        zmq_msg_init(&topic);
        zmq_msg_init(&body);
        int got = 0;
        if (zmq_msg_recv(&topic, s, 0) >= 0) {
            if (zmq_msg_more(&topic) && zmq_msg_recv(&body, s, 0) >= 0) {
                int extra = 0;
                while (zmq_msg_more(&body)) { /* never sent by a collector: drained, refused */
                    extra = 1;
                    zmq_msg_close(&body);
                    zmq_msg_init(&body);
                    if (zmq_msg_recv(&body, s, 0) < 0)
                        break;
                }
                if (extra)
                    st.refused++;
                else
                    top_message(&st, &body);
                got = 1;
            } else {
                st.refused++;
            }
        } else if (zmq_errno() != EAGAIN && zmq_errno() != EINTR) {
            fprintf(stderr, "mpiwatch-top: receiving: %s\n", zmq_strerror(zmq_errno()));
            zmq_msg_close(&topic);
            zmq_msg_close(&body);
            goto out;
        }
        zmq_msg_close(&topic);
        zmq_msg_close(&body);
        uint64_t now = top_now_ns();
        if (got)
            last_msg = now;
        if (st.windows && !first_window_at)
            first_window_at = now;
        if (o->once) {
            if (st.job && first_window_at && now - first_window_at >= TOP_ONCE_SPAN_NS) {
                top_block(stdout, &st, o->functions);
                rc = fflush(stdout) == 0 ? 0 : 1;
                goto out;
            }
        } else if (st.job && now - last_draw >= (tty ? TOP_TTY_PERIOD_NS : TOP_LINE_PERIOD_NS)) {
            last_draw = now;
            if (tty) {
                if (st.lines)
                    printf("\033[%dA\033[J", st.lines);
                st.lines = top_block(stdout, &st, o->functions);
            } else if (st.windows) {
                top_line(stdout, &st);
            }
            fflush(stdout);
            rc = 0;
        }
        if (o->timeout_ms >= 0 && (now - last_msg) / 1000000 > (uint64_t)o->timeout_ms) {
            fprintf(stderr, "mpiwatch-top: nothing received from %s for %ld ms%s\n", o->connect,
                    o->timeout_ms,
                    use_curve > 0 ? " (with CURVE: is your client key among the collector's "
                                    "--curve-clients? docs/attach.md)"
                                  : "");
            break;
        }
        if (!o->once && st.end && st.windows) {
            if (tty) {
                if (st.lines)
                    printf("\033[%dA\033[J", st.lines);
                top_block(stdout, &st, o->functions);
            }
            fflush(stdout);
            rc = 0;
            break;
        }
    }
    if (o->once && rc != 0 && !top_stop)
        fprintf(stderr, "mpiwatch-top: no job description and windows from %s\n", o->connect);
out:
    if (st.refused)
        fprintf(stderr, "mpiwatch-top: %llu messages refused (malformed)\n",
                (unsigned long long)st.refused);
    mw_keyfile_wipe(&curve, sizeof curve);
    if (s)
        zmq_close(s);
    if (st.job_msg)
        mpiwatch__feed__free_unpacked(st.job_msg, NULL);
    mw_window_view_free(st.view);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mpiwatch-top --connect ENDPOINT [--once] [--functions N] [--timeout-ms MS]\n"
               "                    [--curve-server FILE --curve-key FILE]\n"
               "A terminal view of a running job from its collector's live feed (--publish):\n"
               "the job, its ranks, the MPI share of the last window and the functions that\n"
               "took the most MPI time over the last seconds. `mpiwatch top JOB` finds the\n"
               "endpoint in the registry (docs/attach.md).\n"
               "  --once          print the view once, after a second of windows, and exit\n"
               "  --functions N   functions shown (default 8, at most 40)\n"
               "  --timeout-ms MS give up after MS without a message (default: 15000 with\n"
               "                  --once, else never)\n"
               "  --curve-server, --curve-key  CURVE keys (default $MPIWATCH_CURVE_SERVER and\n"
               "                  $MPIWATCH_CURVE_KEY; docs/security.md)\n");
    fputs("\n  -h, --help         print this help and exit\n"
          "      --version      print the version and exit\n",
          f);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"connect", required_argument, NULL, 'c'},
                                             {"once", no_argument, NULL, 'o'},
                                             {"functions", required_argument, NULL, 'f'},
                                             {"timeout-ms", required_argument, NULL, 'T'},
                                             {"curve-server", required_argument, NULL, 'S'},
                                             {"curve-key", required_argument, NULL, 'K'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {NULL, 0, NULL, 0}};
    top_opts_t o = {.functions = 8, .timeout_ms = -2};
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            o.connect = optarg;
            break;
        case 'o':
            o.once = 1;
            break;
        case 'f':
            o.functions = (int)strtol(optarg, &end, 10);
            if (*end || o.functions < 1 || o.functions > TOP_MAX_FUNCTIONS) {
                fprintf(stderr, "mpiwatch-top: --functions: 1 to %d\n", TOP_MAX_FUNCTIONS);
                return 2;
            }
            break;
        case 'T':
            errno = 0;
            o.timeout_ms = strtol(optarg, &end, 10);
            if (errno || *end || o.timeout_ms < 1) {
                fprintf(stderr, "mpiwatch-top: --timeout-ms: a positive number\n");
                return 2;
            }
            break;
        case 'S':
            o.curve_server = optarg;
            break;
        case 'K':
            o.curve_key = optarg;
            break;
        case 'V':
            printf("mpiwatch-top %s\n", MW_VERSION_FULL);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc || !o.connect) {
        usage(stderr);
        return 2;
    }
    if (o.timeout_ms == -2)
        o.timeout_ms = o.once ? 15000 : -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = top_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    void *ctx = zmq_ctx_new();
    if (!ctx) {
        fprintf(stderr, "mpiwatch-top: zmq_ctx_new: %s\n", zmq_strerror(zmq_errno()));
        return 1;
    }
    int rc = top_run(ctx, &o);
    zmq_ctx_term(ctx);
    return rc;
}
