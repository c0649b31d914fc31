/* main.c: mpiwatch-collector's entry point.
 *
 * DESIGN: parse the command line, then load --config FILE (which leaves the options given on
 * the command line alone, so flags win whatever their order), check the result (exit status 2
 * on any usage or configuration error, before anything starts), set up the collector state,
 * run the socket loop. Exit status 0 after a signal or --exit-after-job, 1 when the collector
 * could not start or its socket failed, 3 when ranks that --expect-ranks announced never said
 * hello (report.c says why). With --record the recording is opened before the
 * loop (a path that cannot be created stops the start, exit status 1) and closed after it;
 * with --replay the recording is read instead of listening (replay.c). Everything else lives
 * in the other files.
 */
#include "collector.h"
#include "record_file.h"
#include "replay.h"
#include "server.h"
#include "rules.h"
#include "report.h"
#include "mw_version.h"

#include <malloc.h>
#include <stdlib.h>

/* Messages of up to MW_MAX_MESSAGE_BYTES (a partial of 12,500 ranks is 2 MB) come and go
 * every window. With glibc's defaults each one is a fresh mmap whose pages the kernel faults
 * in and clears (ZeroMQ's I/O thread: page faults and clear_page were 6% of a root's time at
 * 100,000 ranks, perf), or heap memory trimmed and grown again. Served from the heap and kept
 * up to 64 MiB free, the same memory is reused: the root's CPU at 100,000 ranks x 10
 * windows/s went from 40-50% to 36-39% of a core (docs/scale.md). */
#define MW_MALLOC_MMAP_THRESHOLD (32 << 20)
#define MW_MALLOC_TRIM_THRESHOLD (64 << 20)

int main(int argc, char **argv)
{
    mw_collector_options_t opt;
    char err[256];
    mallopt(M_MMAP_THRESHOLD, MW_MALLOC_MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, MW_MALLOC_TRIM_THRESHOLD);
    mw_collector_options_defaults(&opt);
    if (mw_collector_options_parse(&opt, argc, argv, err, sizeof err) < 0) {
        fprintf(stderr, "mpiwatch-collector: %s (try --help)\n", err);
        mw_collector_options_free(&opt);
        return 2;
    }
    if (opt.config && !opt.help && !opt.version &&
        mw_collector_options_load(&opt, opt.config, err, sizeof err) < 0) {
        fprintf(stderr, "mpiwatch-collector: %s\n", err);
        mw_collector_options_free(&opt);
        return 2;
    }
    /* No --listen: this user's private default endpoint, the one the library uses without
     * MPIWATCH_COLLECTOR (proto/mw_endpoint.c, docs/security.md). */
    if (!opt.replay && opt.n_listen == 0 && !opt.help && !opt.version) {
        char ep[256];
        if (mw_default_endpoint(ep, sizeof ep, err, sizeof err) != 0 ||
            mw_collector_options_set(&opt, "listen", ep, err, sizeof err) != 0) {
            fprintf(stderr, "mpiwatch-collector: no --listen and %s (try --help)\n", err);
            mw_collector_options_free(&opt);
            return 2;
        }
    }
    if (mw_collector_options_check(&opt, err, sizeof err) < 0) {
        fprintf(stderr, "mpiwatch-collector: %s (try --help)\n", err);
        mw_collector_options_free(&opt);
        return 2;
    }
    if (opt.help || opt.version) {
        if (opt.help)
            mw_collector_options_usage(stdout, "mpiwatch-collector");
        else
            printf("mpiwatch-collector %s (protocol %u, %u MPI functions)\n", MW_VERSION_FULL,
                   MW_PROTO_VERSION, (unsigned)MW_FN_COUNT - 1);
        mw_collector_options_free(&opt);
        return 0;
    }
#ifndef MW_HAVE_METRICS
    /* Built with MW_METRICS=OFF (no libmicrohttpd): say so rather than run without it. */
    if (opt.metrics_port) {
        fprintf(stderr, "mpiwatch-collector: --metrics-port: the metrics server is not built in "
                        "(this collector was built with MW_METRICS=OFF)\n");
        mw_collector_options_free(&opt);
        return 2;
    }
#endif
    if (opt.print_config) {
        /* A value that an INI file cannot hold is refused, not printed to read back wrong. */
        if (mw_collector_options_printable(&opt, err, sizeof err) < 0) {
            fprintf(stderr, "mpiwatch-collector: --print-config: %s\n", err);
            mw_collector_options_free(&opt);
            return 2;
        }
        mw_collector_options_print(stdout, &opt);
        mw_collector_options_free(&opt);
        return fflush(stdout) == 0 ? 0 : 1;
    }

    /* Bad rules stop the start like any other configuration error (exit status 2). */
    mw_rules_t *rules = NULL;
    if (opt.rules && !(rules = mw__rules_load(opt.rules, err, sizeof err))) {
        fprintf(stderr, "mpiwatch-collector: %s\n", err);
        mw_collector_options_free(&opt);
        return 2;
    }
    if (opt.verbose)
        mw__log_level = MW_LOG_DEBUG;
    mw_collector_t *c = malloc(sizeof *c); /* large: dense per-function tables */
    int rc = -1;
    if (!c)
        fprintf(stderr, "mpiwatch-collector: out of memory\n");
    else if (mw_collector_init(c, &opt) == 0) {
        c->rules = rules;         /* freed with the collector */
        c->clock = mw__clock_now; /* this loop's clock, for what acts on the time now */
        mw_clock_t now;
        mw__clock_now(&now);
        rules = NULL;
        if (opt.replay)
            rc = mw__replay_run(c);
        else if (!opt.record || (c->record = mw__record_open(opt.record, &opt, &now)))
            rc = mw__server_run(c);
        /* After the loop: the finish on a signal, the last windows and the job's end are in
         * the recording; closing it writes the last index and flushes. */
        mw__record_close(c->record);
        c->record = NULL;
        /* --expect-ranks: ranks that never said hello make the run a failure (status 3). */
        if (rc == 0 && !opt.replay && mw__report_missing(c))
            rc = 3;
        mw_collector_free(c);
    }
    free(c);
    mw__rules_free(rules); /* when the collector could not take them */
    mw_collector_options_free(&opt);
    return rc == 0 || rc == 3 ? rc : 1;
}
