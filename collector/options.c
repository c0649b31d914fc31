/* options.c: the collector's settings, described once in a table.
 *
 * DESIGN: each setting is one row (long name, type, where it lives in mw_collector_options_t,
 * bounds, help). The command line and the INI file (--config, read with inih) both go through
 * mw_collector_options_set(name, value), so `--help`, the file keys and --print-config can never
 * disagree with what is parsed. Flags win over the file whatever their order: the command
 * line is parsed first and marks the rows it set (from_cmdline); the file then skips those
 * rows (after checking their value on a scratch copy, so a bad file is still reported).
 */
#include "collector.h"
#include "options.h"
#include "upstream.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

typedef enum {
    OPT_STRING, /* char *, owned */
    OPT_LIST,   /* the listen endpoints: appended, commas separate several */
    OPT_FLAG,   /* int 0/1 */
    OPT_UINT,   /* uint64_t within [min, max] */
    OPT_DOUBLE, /* double within [min, max] */
    OPT_ACTION, /* int, command line only (--help, --version) */
} opt_type_t;

typedef struct {
    const char *name;
    char short_name;
    opt_type_t type;
    size_t offset;
    const char *metavar;
    double min, max; /* bounds of OPT_UINT and OPT_DOUBLE (exact in a double for all rows) */
    const char *help;
} opt_desc_t;

#define OPT_AT(o, d, type) ((type *)((char *)(o) + (d)->offset))
#define OPT_AT_CONST(o, d, type) ((const type *)((const char *)(o) + (d)->offset))

static const opt_desc_t opt_table[] = {
    {"listen", 'l', OPT_LIST, offsetof(mw_collector_options_t, listen), "ENDPOINT", 0, 0,
     "bind the ingest socket to ENDPOINT (tcp://HOST:PORT or ipc://PATH); repeat it or "
     "separate endpoints with commas to bind several"},
    {"summary-json", 0, OPT_STRING, offsetof(mw_collector_options_t, summary_json), "FILE", 0, 0,
     "write the job summary as JSON to FILE at job end and on SIGINT/SIGTERM"},
    {"report", 0, OPT_STRING, offsetof(mw_collector_options_t, report), "FILE", 0, 0,
     "also write the end-of-run report (always printed on stderr) to FILE"},
    {"stats-json", 0, OPT_STRING, offsetof(mw_collector_options_t, stats_json), "FILE", 0, 0,
     "write ingest statistics (accepted, rejected by reason, late, windows) as JSON to FILE"},
    {"exit-after-job", 0, OPT_FLAG, offsetof(mw_collector_options_t, exit_after_job), NULL, 0, 0,
     "exit (status 0) once the first job has ended and its outputs are written"},
    {"lateness-ms", 0, OPT_UINT, offsetof(mw_collector_options_t, lateness_ms), "N", 1, 3600000,
     "close a window N ms after its first sample arrived, even with ranks missing "
     "(default 1000)"},
    {"silence-timeout-ms", 0, OPT_UINT, offsetof(mw_collector_options_t, silence_timeout_ms), "N",
     1, 86400000, "end the job when no live rank has sent anything for N ms (default 10000)"},
    {"metrics-port", 0, OPT_UINT, offsetof(mw_collector_options_t, metrics_port), "N", 0, 65535,
     "serve Prometheus metrics at http://ADDR:N/metrics (ADDR from --metrics-bind; 0: off, "
     "the default)"},
    {"metrics-bind", 0, OPT_STRING, offsetof(mw_collector_options_t, metrics_bind), "ADDR", 0, 0,
     "the address of --metrics-port: a numeric IPv4 or IPv6 address (default 127.0.0.1); one "
     "that is not loopback (0.0.0.0, ::, a host address) needs --allow-insecure, because the "
     "page has no authentication (docs/metrics.md)"},
    {"record", 'r', OPT_STRING, offsetof(mw_collector_options_t, record), "FILE", 0, 0,
     "record everything received and derived (messages, merged windows, job events, an "
     "index) into FILE (.mpiw), readable up to its last complete frame even after a crash"},
    {"record-compress", 0, OPT_DOUBLE, offsetof(mw_collector_options_t, record_compress), "N", -7,
     19,
     "compress every recorded frame with zstd at level N, an integer: -7..-1 zstd's fast levels "
     "(-3: 1.45x smaller), 1..19 its usual ones (1: 1.65x); costs the collector's loop CPU "
     "(default 0: off; docs/recording.md)"},
    {"record-full-span", 0, OPT_UINT, offsetof(mw_collector_options_t, record_full_span), "S", 0,
     31536000,
     "keep the received samples and full merged windows of the last S seconds in the recording "
     "(default 60; 0: all); lean windows and per-rank sums are kept for the whole run "
     "(docs/recording.md, Tiers)"},
    {"record-keep-around", 0, OPT_UINT, offsetof(mw_collector_options_t, record_keep_around), "S",
     0, 31536000,
     "keep the received samples within S seconds of a rule firing or a steering request "
     "(captures included) for the whole run (default 60)"},
    {"record-rank-every", 0, OPT_UINT, offsetof(mw_collector_options_t, record_rank_every), "D", 1,
     1000000,
     "with the tiers, keep the per-rank content (per function count, time, bytes; MPI share; "
     "pairs) for the whole run summed over D windows (default 100)"},
    {"record-max-gb", 0, OPT_DOUBLE, offsetof(mw_collector_options_t, record_max_gb), "G", 0, 1e6,
     "bound the recording to G GB (1e9 bytes) on disk: at 90% the received samples are "
     "dropped and no longer recorded, at G the recording stops (default 0: no limit)"},
    {"replay", 0, OPT_STRING, offsetof(mw_collector_options_t, replay), "FILE", 0, 0,
     "read the recording FILE instead of listening, as if its ranks were live (outputs, "
     "--publish and --history work as in a live run)"},
    {"speed", 0, OPT_DOUBLE, offsetof(mw_collector_options_t, speed), "X", 0, 1000000,
     "replay at X times the recorded pace (default 1; 0: as fast as possible)"},
    {"from", 0, OPT_DOUBLE, offsetof(mw_collector_options_t, from_s), "S", 0, 1e9,
     "replay: publish from S seconds after the start of the recording (what comes before is "
     "processed at full speed and not published)"},
    {"to", 0, OPT_DOUBLE, offsetof(mw_collector_options_t, to_s), "S", -1, 1e9,
     "replay: stop S seconds after the start of the recording (default -1: at its end)"},
    {"progress", 0, OPT_FLAG, offsetof(mw_collector_options_t, progress), NULL, 0, 0,
     "replay: show how far the replay is on stderr (default: on a terminal with --quiet, where "
     "the live view does not show it)"},
    {"no-progress", 0, OPT_FLAG, offsetof(mw_collector_options_t, no_progress), NULL, 0, 0,
     "replay: never show the progress line"},
    {"publish", 0, OPT_STRING, offsetof(mw_collector_options_t, publish), "ENDPOINT", 0, 0,
     "publish the job and every merged window on a PUB socket bound to ENDPOINT"},
    {"rules", 0, OPT_STRING, offsetof(mw_collector_options_t, rules), "FILE", 0, 0,
     "evaluate the threshold rules of INI FILE on every merged window and run their actions "
     "(docs/steering.md); SIGHUP rereads it"},
    {"steer", 0, OPT_STRING, offsetof(mw_collector_options_t, steer), "ENDPOINT", 0, 0,
     "publish steering messages to the ranks on a PUB socket bound to ENDPOINT (the ranks "
     "connect to it through MPIWATCH_STEER; off by default)"},
    {"control", 0, OPT_STRING, offsetof(mw_collector_options_t, control), "ENDPOINT", 0, 0,
     "accept steering requests (mpiwatch steer) on a ROUTER socket bound to ENDPOINT (off by "
     "default)"},
    {"history", 0, OPT_STRING, offsetof(mw_collector_options_t, history), "ENDPOINT", 0, 0,
     "answer history requests (last N windows, a window range, one rank's samples) on a "
     "ROUTER socket bound to ENDPOINT"},
    {"history-windows", 0, OPT_UINT, offsetof(mw_collector_options_t, history_windows), "N", 1,
     1000000,
     "merged windows kept in memory for history requests (default 600); older ones are read "
     "from the recording"},
    {"history-mb", 0, OPT_UINT, offsetof(mw_collector_options_t, history_mb), "N", 1, 65536,
     "MiB of recent raw samples kept in memory for rank requests (default 64)"},
    {"endpoints-file", 0, OPT_STRING, offsetof(mw_collector_options_t, endpoints_file), "FILE", 0,
     0,
     "once every socket is bound, write the endpoints they really bound (ZMQ_LAST_ENDPOINT: "
     "the port chosen for tcp://HOST:* or :0) to FILE, one \"SOCKET ENDPOINT\" line each"},
    {"expect-ranks", 0, OPT_STRING, offsetof(mw_collector_options_t, expect_ranks), "N|any", 0, 0,
     "the number of ranks the launcher started (any: unknown, at least one): fewer hellos, or "
     "none, makes the report say why and the exit status 3 (docs/launcher.md)"},
    {"curve-secret", 0, OPT_STRING, offsetof(mw_collector_options_t, curve_secret), "FILE", 0, 0,
     "the collector's CURVE key pair (NAME.key from mpiwatch keygen, mode 0600): every socket "
     "it binds then takes CURVE clients only (docs/security.md); needs --curve-clients"},
    {"curve-clients", 0, OPT_STRING, offsetof(mw_collector_options_t, curve_clients), "PATH", 0, 0,
     "the public keys allowed to connect with --curve-secret: PATH is a directory of *.pub "
     "files or one file of keys"},
    {"allow-insecure", 0, OPT_FLAG, offsetof(mw_collector_options_t, allow_insecure), NULL, 0, 0,
     "bind endpoints that are not local (not ipc://PATH or loopback) without CURVE: anyone who "
     "reaches them can send data, read the feed and steer the job"},
    {"trace-budget", 0, OPT_UINT, offsetof(mw_collector_options_t, trace_budget), "CALLS_PER_S", 0,
     1e12,
     "the job's tracing budget: traced calls per second for all ranks together, spent by the "
     "plans sent as mpiwatch.trace on --steer (docs/trace.md; default 2000000; 0: no plans, "
     "the ranks follow their own default)"},
    {"lateness", 0, OPT_STRING, offsetof(mw_collector_options_t, lateness), "on|off|no-leap", 0, 0,
     "the online lateness analysis of the traced windows (logical steps, lateness and "
     "differential lateness on a worker thread; feed topic \"lateness\", docs/lateness.md; "
     "default on; no-leap: without the leap merge, for codes that are not bulk-synchronous, "
     "docs/logical.md)"},
    {"lateness-budget-ms", 0, OPT_UINT, offsetof(mw_collector_options_t, lateness_budget_ms), "N",
     0, 3600000,
     "the lateness analysis skips a closed window that waited more than N ms for its worker "
     "(it is behind; default 2000, 0: only its queue's caps)"},
    {"rank-detail", 0, OPT_STRING, offsetof(mw_collector_options_t, rank_detail), "on|off", 0, 0,
     "each merged window's per-rank figures of every function and region (Window.rf_*, rr_*: "
     "the terrain, docs/collector.md \"Regions and call sites\"; default on; off: only the "
     "sums over ranks, the entries counted in rank_detail_left_out)"},
    {"registry", 0, OPT_STRING, offsetof(mw_collector_options_t, registry), "DIR|off", 0, 0,
     "register this collector (job, endpoints, public key) in DIR for mpiwatch ls, view, top "
     "and steer (default $MPIWATCH_REGISTRY, else ~/.mpiwatch/jobs, else "
     "$XDG_RUNTIME_DIR/mpiwatch/jobs; off: not at all; docs/attach.md)"},
    {"upstream", 0, OPT_STRING, offsetof(mw_collector_options_t, upstream), "ENDPOINT", 0, 0,
     "run as an aggregator (docs/aggregator.md): send each merged window as one partial, the "
     "ranks' hellos and byes and this aggregator's accounting to the parent collector's "
     "ingest ENDPOINT (not with --replay or --rules)"},
    {"upstream-steer", 0, OPT_STRING, offsetof(mw_collector_options_t, upstream_steer), "ENDPOINT",
     0, 0,
     "relay the parent's steering (its --steer ENDPOINT) to the ranks on this aggregator's "
     "own --steer"},
    {"upstream-curve-server", 0, OPT_STRING,
     offsetof(mw_collector_options_t, upstream_curve_server), "FILE", 0, 0,
     "the parent's CURVE public key (NAME.pub): both upstream sockets are CURVE clients; "
     "needs --upstream-curve-secret, required for a parent that is not local unless "
     "--allow-insecure"},
    {"upstream-curve-secret", 0, OPT_STRING,
     offsetof(mw_collector_options_t, upstream_curve_secret), "FILE", 0, 0,
     "this aggregator's CURVE key pair (NAME.key, mode 0600) for the parent; its .pub must be "
     "among the parent's --curve-clients"},
    {"aggregator-id", 0, OPT_UINT, offsetof(mw_collector_options_t, aggregator_id), "N", 0, 4095,
     "this aggregator's id, unique in the job (e.g. the node index; default 0)"},
    {"quiet", 'q', OPT_FLAG, offsetof(mw_collector_options_t, quiet), NULL, 0, 0,
     "no live view on stderr"},
    {"verbose", 'v', OPT_FLAG, offsetof(mw_collector_options_t, verbose), NULL, 0, 0,
     "log every rejected message (with its reason) on stderr"},
    {"help", 'h', OPT_ACTION, offsetof(mw_collector_options_t, help), NULL, 0, 0,
     "print this help and exit"},
    {"version", 'V', OPT_ACTION, offsetof(mw_collector_options_t, version), NULL, 0, 0,
     "print the version and exit"},
    {"config", 0, OPT_STRING, offsetof(mw_collector_options_t, config), "FILE", 0, 0,
     "read settings from the [collector] section of INI FILE (key = long option name); "
     "options on the command line override it"},
    {"print-config", 0, OPT_ACTION, offsetof(mw_collector_options_t, print_config), NULL, 0, 0,
     "print the effective settings as an INI file and exit"},
};

#define OPT_COUNT (sizeof opt_table / sizeof opt_table[0])
_Static_assert(OPT_COUNT <= 64, "mw_collector_options_t.from_cmdline has one bit per option");

/* Whether the row has a key in the INI file: actions and --config itself (a file naming
 * another file would only add an include mechanism nobody asked for) are command-line only. */
static int opt_in_file(const opt_desc_t *d)
{
    return d->type != OPT_ACTION && d->offset != offsetof(mw_collector_options_t, config);
}

void mw_collector_options_defaults(mw_collector_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->lateness_ms = 1000;
    o->silence_timeout_ms = 10000;
    o->speed = 1.0;
    o->to_s = -1.0;
    o->history_windows = 600;
    o->history_mb = 64;
    o->record_compress = 0; /* costs the loop CPU: docs/recording.md, Compressed frames */
    /* With the coarse tier (docs/recording.md, Long runs): 60 s of full detail. */
    o->record_full_span = 60;
    o->record_rank_every = 100;
    o->record_keep_around = 60;
    o->trace_budget = 2000000; /* MW_TRACE_BUDGET_DEFAULT (trace_budget.h, docs/trace.md) */
    o->lateness_budget_ms = 2000;
}

static int opt_parse_flag(const char *value, int *out);

int mw_collector_options_rank_detail(const mw_collector_options_t *o)
{
    int on = 1;
    if (o->rank_detail && *o->rank_detail && opt_parse_flag(o->rank_detail, &on) < 0)
        on = 1; /* refused by mw_collector_options_check */
    return on;
}

long long mw_collector_options_expect_ranks(const mw_collector_options_t *o)
{
    if (!o->expect_ranks || !*o->expect_ranks)
        return 0;
    if (strcasecmp(o->expect_ranks, "any") == 0)
        return MW_EXPECT_ANY;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(o->expect_ranks, &end, 10);
    if (errno || *end || end == o->expect_ranks || o->expect_ranks[0] == '-' || n == 0 ||
        n > (1ull << 31))
        return -1;
    return (long long)n;
}

int mw_collector_options_lateness(const mw_collector_options_t *o)
{
    int on = 1;
    if (o->lateness && strcasecmp(o->lateness, "no-leap") == 0)
        return 2;
    if (o->lateness && *o->lateness && opt_parse_flag(o->lateness, &on) < 0)
        on = 1; /* refused by mw_collector_options_check */
    return on;
}

void mw_collector_options_free(mw_collector_options_t *o)
{
    for (unsigned i = 0; i < o->n_listen; i++)
        free(o->listen[i]);
    free(o->summary_json);
    free(o->report);
    free(o->stats_json);
    free(o->config);
    free(o->record);
    free(o->replay);
    free(o->publish);
    free(o->history);
    free(o->steer);
    free(o->rules);
    free(o->control);
    free(o->metrics_bind);
    free(o->curve_secret);
    free(o->endpoints_file);
    free(o->expect_ranks);
    free(o->curve_clients);
    free(o->lateness);
    free(o->rank_detail);
    free(o->registry);
    free(o->upstream);
    free(o->upstream_steer);
    free(o->upstream_curve_server);
    free(o->upstream_curve_secret);
    mw_collector_options_defaults(o);
}

static const opt_desc_t *opt_find(const char *name, size_t len)
{
    for (size_t i = 0; i < OPT_COUNT; i++)
        if (strlen(opt_table[i].name) == len && strncmp(opt_table[i].name, name, len) == 0)
            return &opt_table[i];
    return NULL;
}

static int opt_add_listen(mw_collector_options_t *o, const char *value, char *err, size_t errlen)
{
    const char *p = value;
    for (;;) {
        /* Blanks around an endpoint are dropped: "a, b" in a file means "a" and "b". Blanks
         * are what inih strips around a value (isspace: a '\r' too), so every endpoint taken
         * can be printed back by --print-config. */
        while (isspace((unsigned char)*p))
            p++;
        size_t len = strcspn(p, ",");
        size_t end = len;
        while (end > 0 && isspace((unsigned char)p[end - 1]))
            end--;
        if (end > 0) {
            if (o->n_listen == MW_MAX_LISTEN) {
                snprintf(err, errlen, "--listen: at most %d endpoints", MW_MAX_LISTEN);
                return -1;
            }
            char *ep = strndup(p, end);
            if (!ep) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            o->listen[o->n_listen++] = ep;
        }
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    return 0;
}

static int opt_parse_flag(const char *value, int *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(value, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(value, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

static int opt_apply(mw_collector_options_t *o, const opt_desc_t *d, const char *value, char *err,
                     size_t errlen)
{
    switch (d->type) {
    case OPT_STRING: {
        /* An empty value means "none", which is how --print-config writes an unset file. */
        char **slot = OPT_AT(o, d, char *);
        char *copy = value[0] ? strdup(value) : NULL;
        if (value[0] && !copy) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        free(*slot);
        *slot = copy;
        return 0;
    }
    case OPT_LIST:
        return opt_add_listen(o, value, err, errlen);
    case OPT_FLAG:
    case OPT_ACTION: {
        int v = 1;
        if (value && opt_parse_flag(value, &v) < 0) {
            snprintf(err, errlen, "--%s: expected true or false, not '%s'", d->name, value);
            return -1;
        }
        *OPT_AT(o, d, int) = v;
        return 0;
    }
    case OPT_UINT: {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(value, &end, 10);
        if (errno || end == value || *end != '\0' || value[0] == '-' || v < d->min || v > d->max) {
            snprintf(err, errlen, "--%s: expected an integer in [%llu, %llu], not '%s'", d->name,
                     (unsigned long long)d->min, (unsigned long long)d->max, value);
            return -1;
        }
        *OPT_AT(o, d, uint64_t) = v;
        return 0;
    }
    case OPT_DOUBLE: {
        char *end;
        errno = 0;
        double v = strtod(value, &end);
        if (errno || end == value || *end != '\0' || !(v >= (double)d->min) ||
            !(v <= (double)d->max)) {
            snprintf(err, errlen, "--%s: expected a number in [%g, %g], not '%s'", d->name, d->min,
                     d->max, value);
            return -1;
        }
        *OPT_AT(o, d, double) = v;
        return 0;
    }
    }
    return -1;
}

static int opt_needs_value(const opt_desc_t *d)
{
    return d->type == OPT_STRING || d->type == OPT_LIST || d->type == OPT_UINT ||
           d->type == OPT_DOUBLE;
}

int mw_collector_options_set(mw_collector_options_t *o, const char *name, const char *value,
                             char *err, size_t errlen)
{
    const opt_desc_t *d = opt_find(name, strlen(name));
    if (!d) {
        snprintf(err, errlen, "unknown option '%s'", name);
        return -1;
    }
    if (opt_needs_value(d) && !value) {
        snprintf(err, errlen, "--%s needs a value", d->name);
        return -1;
    }
    return opt_apply(o, d, value, err, errlen);
}

int mw_collector_options_parse(mw_collector_options_t *o, int argc, char **argv, char *err,
                               size_t errlen)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const opt_desc_t *d = NULL;
        const char *value = NULL;
        if (arg[0] == '-' && arg[1] == '-' && arg[2] != '\0') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            d = opt_find(name, eq ? (size_t)(eq - name) : strlen(name));
            if (eq)
                value = eq + 1;
        } else if (arg[0] == '-' && arg[1] != '\0' && arg[2] == '\0') {
            for (size_t k = 0; k < OPT_COUNT; k++)
                if (opt_table[k].short_name == arg[1])
                    d = &opt_table[k];
        } else {
            snprintf(err, errlen, "unexpected argument '%s'", arg);
            return -1;
        }
        if (!d) {
            snprintf(err, errlen, "unknown option '%s'", arg);
            return -1;
        }
        if (opt_needs_value(d) && !value) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "%s needs a value", arg);
                return -1;
            }
            value = argv[++i];
        }
        MW_TRY(opt_apply(o, d, value, err, errlen));
        o->from_cmdline |= 1ull << (d - opt_table);
    }
    return 0;
}

/* ---- INI file ----------------------------------------------------------------------------- */

typedef struct {
    mw_collector_options_t *o;
    mw_collector_options_t
        scratch; /* receives the keys that the command line overrides, to check them */
    FILE *f;
    int line;     /* lines handed to inih so far: the line the handler is looking at */
    int err_line; /* first error found here rather than by inih (0: none) */
    char err[256];
} ini_ctx_t;

__attribute__((format(printf, 2, 3))) static void ini_error(ini_ctx_t *x, const char *fmt, ...)
{
    if (x->err_line)
        return; /* the first error is the one reported */
    x->err_line = x->line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err, sizeof x->err, fmt, ap);
    va_end(ap);
}

/* The longest line inih takes, asked of the linked library rather than assumed: inih hands its
 * line buffer's size to the reader (INI_MAX_LINE, 200 in Debian's libinih 55), so a reader
 * that records it and reads nothing tells the size without parsing anything. A line of the
 * file may hold that size minus 2 characters (room for the newline and the terminating NUL),
 * and --print-config never prints a longer one. */
static char *ini_probe_line(char *str, int num, void *stream)
{
    (void)str;
    *(int *)stream = num;
    return NULL;
}

static int ini_probe_key(void *user, const char *section, const char *name, const char *value)
{
    (void)user;
    (void)section;
    (void)name;
    (void)value;
    return 1;
}

static size_t ini_line_limit(void)
{
    int num = 0;
    (void)ini_parse_stream(ini_probe_line, &num, ini_probe_key, NULL);
    return num > 2 ? (size_t)num - 2 : 0;
}

/* An fgets() for inih that counts lines, so the handler knows the line of a bad key or value
 * (inih only passes line numbers to handlers when built with INI_HANDLER_LINENO, which Debian's
 * is not). It reads one character at a time, so that it knows a line's real length: a line too
 * long for inih's buffer (over num - 2 characters) or holding a NUL byte is reported and
 * dropped whole, instead of being cut into pieces that inih would parse as lines of their own
 * (fgets() cannot tell either case apart from a short line). */
static char *ini_read_line(char *str, int num, void *stream)
{
    ini_ctx_t *x = stream;
    if (num < 3)
        return NULL;
    size_t len = 0, max = (size_t)num - 2;
    int c, bad = 0; /* 1: too long, 2: a NUL byte */
    while ((c = getc(x->f)) != EOF) {
        if (c == '\n')
            break;
        if (c == '\0' && !bad)
            bad = 2;
        if (len < max)
            str[len] = (char)c;
        else if (!bad)
            bad = 1;
        len++;
    }
    if (c == EOF && len == 0)
        return NULL;
    x->line++;
    if (bad) {
        char limit[16];
        snprintf(limit, sizeof limit, "%zu", max);
        ini_error(x, bad == 1 ? "line longer than %s characters" : "a NUL byte in the line%s",
                  bad == 1 ? limit : "");
        len = 0;
    }
    str[len] = '\n';
    str[len + 1] = '\0';
    return str;
}

static int ini_on_key(void *user, const char *section, const char *name, const char *value)
{
    ini_ctx_t *x = user;
    if (strcmp(section, "collector") != 0) {
        if (section[0])
            ini_error(x, "section [%s] is unknown (settings go in [collector])", section);
        else
            ini_error(x, "key '%s' is outside the [collector] section", name);
        return 0;
    }
    const opt_desc_t *d = opt_find(name, strlen(name));
    if (!d || !opt_in_file(d)) {
        ini_error(x, "unknown key '%s'", name);
        return 0;
    }
    int overridden = (x->o->from_cmdline >> (d - opt_table)) & 1;
    char msg[200];
    if (mw_collector_options_set(overridden ? &x->scratch : x->o, name, value, msg, sizeof msg) <
        0) {
        /* The setter's messages name the flag ("--lateness-ms: ..."); in a file, the key. */
        ini_error(x, "%s", msg[0] == '-' && msg[1] == '-' ? msg + 2 : msg);
        return 0;
    }
    return 1;
}

int mw_collector_options_load(mw_collector_options_t *o, const char *path, char *err, size_t errlen)
{
    ini_ctx_t x = {.o = o};
    mw_collector_options_defaults(&x.scratch);
    x.f = fopen(path, "r");
    if (!x.f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = ini_parse_stream(ini_read_line, &x, ini_on_key, &x);
    int read_errno = ferror(x.f) ? (errno ? errno : EIO) : 0; /* e.g. EISDIR */
    fclose(x.f);
    mw_collector_options_free(&x.scratch);
    if (read_errno) {
        snprintf(err, errlen, "%s: %s", path, strerror(read_errno));
        return -1;
    }
    if (rc == -2) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    /* inih returns the line of the first error, ours or its own (a line that is neither a
     * section nor key = value); ours has a message, its own is a syntax error. */
    if (x.err_line && (rc == 0 || rc >= x.err_line)) {
        snprintf(err, errlen, "%s:%d: %s", path, x.err_line, x.err);
        return -1;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s:%d: syntax error (expected '[section]' or 'key = value')", path,
                 rc);
        return -1;
    }
    return 0;
}

/* How --print-config writes `value` after `name` so that inih reads it back unchanged: the
 * separator, or NULL with the reason in why when an INI line cannot hold the value. inih
 * strips blanks around a value, ends a line at its newline, reads a ';' after a blank as the
 * start of a comment, and takes lines of at most max characters; a ';' right after the '='
 * stays part of the value, and '#' only starts a comment at the start of a line. inih has no
 * quoting or escapes, so such values are refused rather than written in a form that would
 * read back as something else. */
static const char *ini_separator(const char *name, const char *value, size_t max, char *why,
                                 size_t whylen)
{
    size_t n = strlen(value);
    if (n == 0)
        return " ="; /* an empty value: "none" for a string, no endpoint for listen */
    if (isspace((unsigned char)value[0]) || isspace((unsigned char)value[n - 1])) {
        snprintf(why, whylen, "%s: a value that starts or ends with a blank", name);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (value[i] == '\n') {
            snprintf(why, whylen, "%s: a value with a line break", name);
            return NULL;
        }
        if (i > 0 && value[i] == ';' && isspace((unsigned char)value[i - 1])) {
            snprintf(why, whylen, "%s: a value with ';' after a blank (a comment in INI)", name);
            return NULL;
        }
    }
    /* A leading ';' must follow the '=' directly; otherwise "name = value" when it fits. */
    const char *sep = value[0] == ';' ? " =" : " = ";
    size_t key = strlen(name);
    if (key + strlen(sep) + n > max)
        sep = "=";
    if (key + 1 + n > max) {
        snprintf(why, whylen, "%s: a value of %zu characters (an INI line holds at most %zu)", name,
                 n, max);
        return NULL;
    }
    return sep;
}

/* Each value a key of the file prints, in order: one per endpoint for listen (so that no line
 * grows with their number), the text of the others. Calls fn(name, value, arg) for each and
 * stops at the first that returns non-zero, which it returns. */
static int opt_each_value(const mw_collector_options_t *o,
                          int (*fn)(const char *, const char *, void *), void *arg)
{
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const opt_desc_t *d = &opt_table[i];
        if (!opt_in_file(d))
            continue;
        char num[40];
        const char *v = num;
        switch (d->type) {
        case OPT_STRING:
            v = *OPT_AT_CONST(o, d, char *);
            v = v ? v : "";
            break;
        case OPT_LIST:
            if (o->n_listen) {
                for (unsigned k = 0; k + 1 < o->n_listen; k++) {
                    int rc = fn(d->name, o->listen[k], arg);
                    if (rc)
                        return rc;
                }
                v = o->listen[o->n_listen - 1];
            } else {
                v = "";
            }
            break;
        case OPT_FLAG:
            v = *OPT_AT_CONST(o, d, int) ? "true" : "false";
            break;
        case OPT_UINT:
            snprintf(num, sizeof num, "%" PRIu64, *OPT_AT_CONST(o, d, uint64_t));
            break;
        case OPT_DOUBLE:
            snprintf(num, sizeof num, "%.17g", *OPT_AT_CONST(o, d, double));
            break;
        case OPT_ACTION:
            continue;
        }
        int rc = fn(d->name, v, arg);
        if (rc)
            return rc;
    }
    return 0;
}
typedef struct {
    FILE *out;
    size_t max;
    char *why;
    size_t whylen;
} print_ctx_t;

static int print_check(const char *name, const char *value, void *arg)
{
    print_ctx_t *c = arg;
    return ini_separator(name, value, c->max, c->why, c->whylen) ? 0 : -1;
}

static int print_line(const char *name, const char *value, void *arg)
{
    print_ctx_t *c = arg;
    char why[200];
    const char *sep = ini_separator(name, value, c->max, why, sizeof why);
    fprintf(c->out, "%s%s%s\n", name, sep ? sep : " =", value);
    return 0;
}

int mw_collector_options_printable(const mw_collector_options_t *o, char *err, size_t errlen)
{
    print_ctx_t c = {NULL, ini_line_limit(), err, errlen};
    return opt_each_value(o, print_check, &c) ? -1 : 0;
}

int mw_collector_options_print(FILE *out, const mw_collector_options_t *o)
{
    char why[200];
    if (mw_collector_options_printable(o, why, sizeof why) < 0)
        return -1;
    print_ctx_t c = {out, ini_line_limit(), NULL, 0};
    fprintf(out, "; mpiwatch-collector settings (--print-config); load with --config FILE\n"
                 "[collector]\n");
    return opt_each_value(o, print_line, &c);
}

int mw_collector_options_check(const mw_collector_options_t *o, char *err, size_t errlen)
{
    if (o->help || o->version || o->print_config)
        return 0;
    if (o->replay && o->n_listen) {
        snprintf(err, errlen, "--replay and --listen exclude each other");
        return -1;
    }
    if (o->replay && o->record) {
        snprintf(err, errlen, "--replay and --record exclude each other");
        return -1;
    }
    if (!o->replay && o->n_listen == 0) {
        snprintf(err, errlen, "--listen ENDPOINT (or --replay FILE) is required");
        return -1;
    }
    int on;
    if (o->rank_detail && *o->rank_detail && opt_parse_flag(o->rank_detail, &on) < 0) {
        snprintf(err, errlen, "--rank-detail: expected on or off, not '%.100s'", o->rank_detail);
        return -1;
    }
    if (o->lateness && *o->lateness && strcasecmp(o->lateness, "no-leap") != 0 &&
        opt_parse_flag(o->lateness, &on) < 0) {
        snprintf(err, errlen, "--lateness: expected on, off or no-leap, not '%.100s'", o->lateness);
        return -1;
    }
    if (o->expect_ranks && *o->expect_ranks && mw_collector_options_expect_ranks(o) == -1) {
        snprintf(err, errlen, "--expect-ranks: expected a number of ranks or any, not '%.100s'",
                 o->expect_ranks);
        return -1;
    }
    if (o->to_s >= 0 && o->to_s < o->from_s) {
        snprintf(err, errlen, "--to must not be before --from");
        return -1;
    }
    /* The metrics page is plain HTTP whatever CURVE does: off loopback only on request. */
    if (o->metrics_bind && *o->metrics_bind) {
        struct sockaddr_storage ss;
        unsigned sslen;
        int loopback;
        if (mw__metrics_bind_parse(o->metrics_bind, 0, &ss, &sslen, &loopback, err, errlen) < 0)
            return -1;
        if (!loopback && !o->allow_insecure) {
            snprintf(err, errlen,
                     "--metrics-bind %.100s is not loopback and the metrics page has no "
                     "authentication: add --allow-insecure to serve it on the network "
                     "(docs/metrics.md)",
                     o->metrics_bind);
            return -1;
        }
    }
    /* An aggregator's parent: endpoints, keys, what it excludes (upstream.c). */
    MW_TRY(mw__upstream_check(o, err, errlen));
    /* Local endpoints, CURVE or --allow-insecure; key files that load (auth.c). */
    return mw__auth_check(o, err, errlen);
}

int mw__metrics_bind_parse(const char *text, unsigned port, struct sockaddr_storage *addr,
                           unsigned *addrlen, int *loopback, char *err, size_t errlen)
{
    char buf[INET6_ADDRSTRLEN + 2];
    const char *a = text && *text ? text : "127.0.0.1";
    size_t n = strlen(a);
    if (n >= sizeof buf) {
        snprintf(err, errlen, "--metrics-bind: '%.60s...' is not an IPv4 or IPv6 address", a);
        return -1;
    }
    memcpy(buf, a, n + 1);
    int bracketed = n >= 2 && buf[0] == '[' && buf[n - 1] == ']'; /* [::1], as in a URL */
    if (bracketed) {
        memmove(buf, buf + 1, n - 2);
        buf[n - 2] = '\0';
    }
    memset(addr, 0, sizeof *addr);
    struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)addr;
    if (!bracketed && inet_pton(AF_INET, buf, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *addrlen = sizeof *v4;
        *loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
        return 0;
    }
    if (inet_pton(AF_INET6, buf, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *addrlen = sizeof *v6;
        const uint8_t *b = v6->sin6_addr.s6_addr;
        *loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr) ||
                    (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr) && b[12] == 127);
        return 0;
    }
    snprintf(err, errlen,
             "--metrics-bind: '%s' is not a numeric IPv4 or IPv6 address (e.g. 127.0.0.1, ::1, "
             "0.0.0.0)",
             a);
    return -1;
}

void mw_collector_options_usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s --listen ENDPOINT [options]\n\n"
            "Receives mpiwatch samples from the ranks of an MPI job, merges them into time\n"
            "windows, shows a live view on stderr and writes an end-of-run report.\n\n"
            "options:\n",
            prog);
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const opt_desc_t *d = &opt_table[i];
        char head[64];
        snprintf(head, sizeof head, "%c%c%c --%s%s%s", d->short_name ? '-' : ' ',
                 d->short_name ? d->short_name : ' ', d->short_name ? ',' : ' ', d->name,
                 d->metavar ? " " : "", d->metavar ? d->metavar : "");
        fprintf(out, "  %-30s", head);
        /* Wrap the help text at 100 columns, under itself. */
        const char *p = d->help;
        int col = 32;
        while (*p) {
            size_t word = strcspn(p, " ");
            if (col > 32 && col + 1 + (int)word > 100) {
                fprintf(out, "\n%32s", "");
                col = 32;
            }
            if (col > 32) {
                fputc(' ', out);
                col++;
            }
            fprintf(out, "%.*s", (int)word, p);
            col += (int)word;
            p += word;
            while (*p == ' ')
                p++;
        }
        fputc('\n', out);
    }
}
