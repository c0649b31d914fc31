/* options.c: the collector's settings, described once in a table.
 *
 * DESIGN: each setting is one row (long name, type, where it lives in mw_options_t, bounds,
 * help). The command line, and later the INI file and MPIWATCH_* environment variables, all
 * go through mw_options_set(name, value), so a new source of settings is a loop over the same
 * table and `--help` can never disagree with what is parsed.
 */
#include "collector.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum {
    OPT_STRING, /* char *, owned */
    OPT_LIST,   /* the listen endpoints: appended, commas separate several */
    OPT_FLAG,   /* int 0/1 */
    OPT_UINT,   /* uint64_t within [min, max] */
    OPT_ACTION, /* int, command line only (--help, --version) */
} opt_type_t;

typedef struct {
    const char *name;
    char short_name;
    opt_type_t type;
    size_t offset;
    const char *metavar;
    uint64_t min, max;
    const char *help;
} opt_desc_t;

#define OPT_AT(o, d, type) ((type *)((char *)(o) + (d)->offset))

static const opt_desc_t opt_table[] = {
    {"listen", 'l', OPT_LIST, offsetof(mw_options_t, listen), "ENDPOINT", 0, 0,
     "bind the ingest socket to ENDPOINT (tcp://HOST:PORT or ipc://PATH); repeat it or "
     "separate endpoints with commas to bind several"},
    {"summary-json", 0, OPT_STRING, offsetof(mw_options_t, summary_json), "FILE", 0, 0,
     "write the job summary as JSON to FILE at job end and on SIGINT/SIGTERM"},
    {"report", 0, OPT_STRING, offsetof(mw_options_t, report), "FILE", 0, 0,
     "also write the end-of-run report (always printed on stderr) to FILE"},
    {"stats-json", 0, OPT_STRING, offsetof(mw_options_t, stats_json), "FILE", 0, 0,
     "write ingest statistics (accepted, rejected by reason, late, windows) as JSON to FILE"},
    {"exit-after-job", 0, OPT_FLAG, offsetof(mw_options_t, exit_after_job), NULL, 0, 0,
     "exit (status 0) once the first job has ended and its outputs are written"},
    {"lateness-ms", 0, OPT_UINT, offsetof(mw_options_t, lateness_ms), "N", 1, 3600000,
     "close a window N ms after its first sample arrived, even with ranks missing "
     "(default 1000)"},
    {"silence-timeout-ms", 0, OPT_UINT, offsetof(mw_options_t, silence_timeout_ms), "N", 1,
     86400000, "end the job when no live rank has sent anything for N ms (default 10000)"},
    {"quiet", 'q', OPT_FLAG, offsetof(mw_options_t, quiet), NULL, 0, 0, "no live view on stderr"},
    {"verbose", 'v', OPT_FLAG, offsetof(mw_options_t, verbose), NULL, 0, 0,
     "log every rejected message (with its reason) on stderr"},
    {"help", 'h', OPT_ACTION, offsetof(mw_options_t, help), NULL, 0, 0, "print this help and exit"},
    {"version", 'V', OPT_ACTION, offsetof(mw_options_t, version), NULL, 0, 0,
     "print the version and exit"},
};

#define OPT_COUNT (sizeof opt_table / sizeof opt_table[0])

void mw_options_defaults(mw_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->lateness_ms = 1000;
    o->silence_timeout_ms = 10000;
}

void mw_options_free(mw_options_t *o)
{
    for (unsigned i = 0; i < o->n_listen; i++)
        free(o->listen[i]);
    free(o->summary_json);
    free(o->report);
    free(o->stats_json);
    mw_options_defaults(o);
}

static const opt_desc_t *opt_find(const char *name, size_t len)
{
    for (size_t i = 0; i < OPT_COUNT; i++)
        if (strlen(opt_table[i].name) == len && strncmp(opt_table[i].name, name, len) == 0)
            return &opt_table[i];
    return NULL;
}

static int opt_add_listen(mw_options_t *o, const char *value, char *err, size_t errlen)
{
    const char *p = value;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len > 0) {
            if (o->n_listen == MW_MAX_LISTEN) {
                snprintf(err, errlen, "--listen: at most %d endpoints", MW_MAX_LISTEN);
                return -1;
            }
            char *ep = strndup(p, len);
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

static int opt_apply(mw_options_t *o, const opt_desc_t *d, const char *value, char *err,
                     size_t errlen)
{
    switch (d->type) {
    case OPT_STRING: {
        char **slot = OPT_AT(o, d, char *);
        char *copy = strdup(value);
        if (!copy) {
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
    }
    return -1;
}

static int opt_needs_value(const opt_desc_t *d)
{
    return d->type == OPT_STRING || d->type == OPT_LIST || d->type == OPT_UINT;
}

int mw_options_set(mw_options_t *o, const char *name, const char *value, char *err, size_t errlen)
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

int mw_options_parse(mw_options_t *o, int argc, char **argv, char *err, size_t errlen)
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
    }
    return 0;
}

int mw_options_check(const mw_options_t *o, char *err, size_t errlen)
{
    if (o->help || o->version)
        return 0;
    if (o->n_listen == 0) {
        snprintf(err, errlen, "--listen ENDPOINT is required");
        return -1;
    }
    return 0;
}

void mw_options_usage(FILE *out, const char *prog)
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
