/* options.h: the collector's settings (options.c): the option table, its
 * command-line parser and the INI file (--config). */
#ifndef MW_COLLECTOR_OPTIONS_H
#define MW_COLLECTOR_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#define MW_MAX_LISTEN 8

typedef struct {
    char *listen[MW_MAX_LISTEN]; /* endpoints the PULL socket binds */
    unsigned n_listen;
    char *summary_json;
    char *report;
    char *stats_json;
    uint64_t lateness_ms;
    uint64_t silence_timeout_ms;
    uint64_t metrics_port; /* --metrics-port: Prometheus HTTP (0: off) */
    char *metrics_bind;    /* --metrics-bind ADDR: its address (NULL: 127.0.0.1) */
    int exit_after_job;
    int quiet;
    int verbose;
    int help;
    int version;
    /* --record-compress N: the zstd level of recorded frames (0: off, < 0: zstd's fast levels;
     * a double only because the option table has no signed type); --record-full-span S:
     * seconds of raw samples kept (0: all); --record-keep-around S: raw samples kept around rule
     * firings and steering; --record-max-gb G: the recording's size limit (0: none). */
    double record_compress;
    uint64_t record_full_span, record_keep_around;
    double record_max_gb;
    /* --record-rank-every D: windows summed into one per-rank frame of the coarse tier. */
    uint64_t record_rank_every;
    char *config;             /* --config FILE: INI file loaded after the command line */
    int print_config;         /* --print-config: print the effective settings as INI and exit */
    char *record;             /* --record FILE.mpiw */
    char *replay;             /* --replay FILE.mpiw: read a recording instead of listening */
    double speed;             /* --speed X: replay pace (1 real time, 0 as fast as possible) */
    double from_s, to_s;      /* --from / --to: replay span in seconds from the recording start
                                 (to_s < 0: to the end) */
    int progress;             /* --progress: replay's progress line on stderr, even in a log */
    int no_progress;          /* --no-progress: never (default: a terminal with --quiet) */
    char *publish;            /* --publish ENDPOINT: PUB socket of merged windows */
    char *rules;              /* --rules FILE: threshold rules and actions (docs/steering.md) */
    char *history;            /* --history ENDPOINT: ROUTER socket answering HistoryRequest */
    char *steer;              /* --steer ENDPOINT: PUB socket of Steer messages to the ranks */
    char *control;            /* --control ENDPOINT: ROUTER socket taking SteerRequests */
    uint64_t history_windows; /* closed windows the history keeps in memory */
    uint64_t history_mb;      /* memory for recent raw samples (rank queries), MiB */
    char *curve_secret;       /* --curve-secret FILE: the collector's key pair (NAME.key) */
    char *curve_clients;      /* --curve-clients FILE_OR_DIR: the public keys allowed in */
    int allow_insecure;       /* --allow-insecure: bind non-local endpoints without CURVE */
    uint64_t trace_budget;    /* --trace-budget: traced calls per second, job-wide (0: no plans) */
    char *lateness;           /* --lateness on|off: the online lateness analysis (NULL: on) */
    char *rank_detail;        /* --rank-detail on|off: Window.rf_* / rr_* (NULL: on) */
    char *registry;           /* --registry DIR|off: the job registry (NULL: default) */
    uint64_t lateness_budget_ms; /* --lateness-budget-ms: longest wait of a window for it */
    char *endpoints_file;        /* --endpoints-file FILE: the bound endpoints, once bound */
    char *expect_ranks;          /* --expect-ranks N|any: ranks the launcher started (NULL) */
    /* Aggregator mode (docs/aggregator.md): set by --upstream, the rest with it. */
    char *upstream;              /* --upstream ENDPOINT: the parent's ingest endpoint */
    char *upstream_steer;        /* --upstream-steer ENDPOINT: the parent's --steer, relayed */
    char *upstream_curve_server; /* --upstream-curve-server FILE: the parent's public key */
    char *upstream_curve_secret; /* --upstream-curve-secret FILE: this aggregator's key pair */
    uint64_t aggregator_id;      /* --aggregator-id N: unique in the job (the node index) */
    uint64_t from_cmdline; /* bit i: row i of the option table was given on the command line */
} mw_collector_options_t;

void mw_collector_options_defaults(mw_collector_options_t *o);
void mw_collector_options_free(mw_collector_options_t *o);
/* Sets option `name` (its long name, without dashes) from a string, as a flag, an INI key or
 * an environment variable would. `value` is NULL for a flag given without one. Returns 0, or
 * -1 with a message in err. */
int mw_collector_options_set(mw_collector_options_t *o, const char *name, const char *value,
                             char *err, size_t errlen);
/* Parses argv. Returns 0, or -1 with a message in err. */
int mw_collector_options_parse(mw_collector_options_t *o, int argc, char **argv, char *err,
                               size_t errlen);
/* Loads the [collector] section of an INI file: every key is the long name of an option and
 * goes through mw_collector_options_set(). Options given on the command line (from_cmdline) keep
 * their value; their keys in the file are still checked. Returns 0, or -1 with "FILE:LINE: message"
 * (or "FILE: message" when it cannot be read) in err. */
int mw_collector_options_load(mw_collector_options_t *o, const char *path, char *err,
                              size_t errlen);
/* Prints every setting that the INI file accepts, as a [collector] section that
 * mw_collector_options_load() reads back to the same settings (one line per listen endpoint).
 * Returns 0, or -1 with nothing printed when a value cannot be written so
 * (mw_collector_options_printable). */
int mw_collector_options_print(FILE *out, const mw_collector_options_t *o);
/* 0 when every value can be written as an INI line that inih reads back unchanged; -1 with
 * the reason in err for a value with a line break, a blank at either end, a ';' after a blank
 * or a line longer than inih takes (docs/collector.md, Configuration). */
int mw_collector_options_printable(const mw_collector_options_t *o, char *err, size_t errlen);
/* Checks what the options need together (an endpoint unless --help, --version or
 * --print-config). */
int mw_collector_options_check(const mw_collector_options_t *o, char *err, size_t errlen);
void mw_collector_options_usage(FILE *out, const char *prog);
/* --expect-ranks: 0 when not given, MW_EXPECT_ANY for "any" (at least one rank, the number
 * unknown), else the number of ranks; -1 for a value mw_collector_options_check refuses. */
#define MW_EXPECT_ANY (-2)
long long mw_collector_options_expect_ranks(const mw_collector_options_t *o);
/* Whether --lateness is on: 0 off, 1 on (the default: with the leap merge), 2 no-leap
 * (docs/lateness.md). */
int mw_collector_options_lateness(const mw_collector_options_t *o);
/* The address of --metrics-bind (NULL or empty: 127.0.0.1): a numeric IPv4 or IPv6 address,
 * the latter optionally in brackets. Fills `addr` (a struct sockaddr_in or sockaddr_in6 with
 * `port`), its length and whether it is loopback (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104).
 * Returns 0, or -1 with a message in err. */
struct sockaddr_storage;
int mw__metrics_bind_parse(const char *text, unsigned port, struct sockaddr_storage *addr,
                           unsigned *addrlen, int *loopback, char *err, size_t errlen);

/* Whether --rank-detail is on (1, the default) or off (0). */
int mw_collector_options_rank_detail(const mw_collector_options_t *o);

#endif
