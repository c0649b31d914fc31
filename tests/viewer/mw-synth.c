/* mw-synth: writes a synthetic recording with exactly known content (synth.h).
 *
 *   mw-synth [--pattern stack|outlier|picking|terrain] [--ranks N] [--windows W] [--hosts H]
 *            [--subslots S] [--cluster-calls N] [--functions N] [--job NAME] FILE.mpiw
 *
 * Prints one JSON object on stdout describing what was written (fractions, long calls with
 * rank, host, start and duration, the window span, the origin of the time axis) so that the
 * snapshot scripts take their expected numbers from here rather than stating them again.
 * Exit status 0 when written, 1 on a failure, 2 on a usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

static int parse_u(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end || v == 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"pattern", required_argument, NULL, 'p'},
                                             {"ranks", required_argument, NULL, 'r'},
                                             {"windows", required_argument, NULL, 'w'},
                                             {"hosts", required_argument, NULL, 'H'},
                                             {"subslots", required_argument, NULL, 's'},
                                             {"cluster-calls", required_argument, NULL, 'c'},
                                             {"job", required_argument, NULL, 'j'},
                                             {"functions", required_argument, NULL, 'f'},
                                             {NULL, 0, NULL, 0}};
    sy_options_t o;
    sy_defaults(&o);
    int opt;
    unsigned long long v;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int bad = 0;
        switch (opt) {
        case 'p': {
            int p = sy_pattern_of(optarg);
            bad = p < 0;
            o.pattern = (sy_pattern_t)(p < 0 ? 0 : p);
            break;
        }
        case 'r':
            bad = parse_u(optarg, 1u << 20, &v) < 0;
            o.ranks = (uint32_t)v;
            break;
        case 'w':
            bad = parse_u(optarg, 100000, &v) < 0;
            o.windows = (uint32_t)v;
            break;
        case 'H':
            bad = parse_u(optarg, 4096, &v) < 0;
            o.hosts = (uint32_t)v;
            break;
        case 's':
            bad = parse_u(optarg, 64, &v) < 0;
            o.subslots = (uint32_t)v;
            break;
        case 'c':
            bad = parse_u(optarg, 1ull << 40, &v) < 0;
            o.cluster_calls = v;
            break;
        case 'j':
            o.job = optarg;
            break;
        case 'f':
            bad = parse_u(optarg, 40, &v) < 0;
            o.functions = (uint32_t)v;
            break;
        default:
            bad = 1;
        }
        if (bad) {
            fprintf(stderr, "mw-synth: bad option or value (%s)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: mw-synth [--pattern stack|outlier|picking|terrain] [--ranks N] "
                        "[--windows W] [--hosts H] [--subslots S] [--cluster-calls N] "
                        "[--functions N] "
                        "[--job NAME] FILE.mpiw\n");
        return 2;
    }
    if (o.hosts > o.ranks)
        o.hosts = o.ranks;
    return sy_write(&o, argv[optind], stdout) == 0 ? 0 : 1;
}
