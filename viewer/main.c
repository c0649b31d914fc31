/* main.c: mpiwatch-viewer's entry point: the command line.
 *
 * DESIGN: parse and check every option before anything opens (exit status 2 on a usage
 * error), then run one of three modes on the same app: the interactive window (app.c), a
 * headless snapshot, or a frame-rate benchmark (snapshot.c). The command line is a contract
 * the launcher and the tests rely on; see usage() for it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "snapshot.h"
#include "mw_limits.h"
#include "mw_steer_request.h"
#include "mw_version.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: mpiwatch-viewer (--connect FEED_ENDPOINT [--history ENDPOINT] |\n"
               "                        --replay FILE.mpiw [--speed X])\n"
               "           [--view timeline|density|ranks|logical|all|topology|matrix|terrain]\n"
               "           [--terrain functions|regions[,METRIC][,heatmap][,log]]\n"
               "           [--size WxH] [--lateness lateness|diff[,strip]] [--no-leap]\n"
               "           [--cache-mb N] [--trace-records N] [--duration-axis log|linear]\n"
               "           [--repr start|end|lines|arcs] [--transfer linear|log] [--omin F]\n"
               "           [--highlight-fn MPI_Name]\n"
               "           [--window N | --step N] [--color messages|bytes|src|dst]\n"
               "           [--camera YAW,PITCH[,DISTANCE]] [--zoom F] [--bundles auto|on|off]\n"
               "           [--periodic] [--no-labels] [--network FILE] [--node-gap G]\n"
               "           [--control ENDPOINT] [--steer KEY=VALUE[:RANKS]]...\n"
               "           [--snapshot OUT.png [--at SECONDS] [--range A:B] [--meta OUT.json]\n"
               "                               [--pick X,Y]]\n"
               "           [--bench-frames N] [--help] [--version]\n"
               "\n"
               "Shows live what the ranks of an MPI job do in MPI: a stacked timeline of the\n"
               "fraction of ranks inside each function, and every call at (time, duration) with\n"
               "opacity scaling.\n"
               "\n"
               "  --connect EP       a collector's live feed (its --publish endpoint)\n"
               "  --history EP       the collector's history endpoint (earlier windows, picking)\n"
               "  --replay FILE      a recording; the whole run, paused, unless --speed is given\n"
               "  --speed X          replay as if live, X times faster than recorded\n"
               "  --view V           plots shown: all (default), timeline, density, ranks (the\n"
               "                     timeline over the per-rank timeline), logical (the\n"
               "                     per-rank timeline over the logical steps and lateness),\n"
               "                     or the 3D topology view or the communication matrix, or\n"
               "                     terrain (the timeline over ranks x functions)\n"
               "  --terrain T        terrain: functions (default) or regions, a metric (time,\n"
               "                     count, bytes; regions: excl, incl, count, mpi), heatmap\n"
               "                     (else 3D) and log (else linear), e.g. regions,incl,heatmap\n"
               "  --lateness L       logical view: cells coloured by lateness (default) or\n"
               "                     diff (differential lateness; the 'd' key switches);\n"
               "                     ,strip: lateness over time per rank above ('o' key)\n"
               "  --no-leap          logical view without the leap merge (codes whose ranks\n"
               "                     communicate rarely; docs/logical.md)\n"
               "  --size WxH         window or snapshot size in pixels (default 1280x800)\n"
               "  --cache-mb N       memory for cached windows (default 256)\n"
               "  --trace-records N  decoded trace records kept (default 1048576, 64 B each)\n"
               "  --duration-axis A  the call view's duration axis, log (default) or linear\n"
               "  --repr R           calls drawn as points by start or end, lines, or arcs\n"
               "  --transfer T       opacity transfer function, linear or log (default log)\n"
               "  --omin F           minimum opacity of a call, 0..1 (default 0.3)\n"
               "  --highlight-fn F   highlight one MPI function, e.g. MPI_Allreduce\n"
               "  --window N         topology, matrix: show the run's N-th window (0 the first;\n"
               "                     default the newest)\n"
               "  --step N           topology, matrix: show time step N instead of a window\n"
               "  --color C          topology lines colored by messages (default), bytes, src\n"
               "                     or dst rank; matrix: messages or bytes per cell\n"
               "  --timeline T       the timeline shows MPI functions (default) or code regions\n"
               "  --rank-color M     topology ranks: mpi (default), or a code region's excl or\n"
               "                     incl time (excl:ID: region ID; default the largest)\n"
               "  --link-fn NAME     topology, matrix: links of one sending function (MPI_Isend)\n"
               "  --camera Y,P[,D]   topology camera: yaw and pitch in degrees, distance\n"
               "  --zoom F           topology: the fitted camera F times closer\n"
               "  --bundles B        topology lines: auto by zoom (default), on (node to node),\n"
               "                     off (rank to rank)\n"
               "  --periodic         topology: wrap-around partners drawn as stubs at the edges\n"
               "  --no-labels        topology: no rank numbers\n"
               "  --network FILE     topology: nodes grouped under their switches (a Slurm\n"
               "                     topology.conf, docs/topology.md)\n"
               "  --node-gap G       topology: world units between node planes (default 4)\n"
               "  --control EP       the collector's steering endpoint (its --control; default\n"
               "                     $MPIWATCH_CONTROL): ':' in the window opens a prompt\n"
               "  --steer K=V[:R]    with --connect: send K=V to ranks R (e.g. 0-3,7; default\n"
               "                     all) once the job is known, print the result (repeatable,\n"
               "                     at most 8; with --snapshot the exit status is 1 when one\n"
               "                     was not sent)\n"
               "  --snapshot PNG     draw once offscreen, write the PNG and exit\n"
               "  --at S             snapshot, bench: the timeline ends at S seconds (30 s shown)\n"
               "  --range A:B        snapshot, bench: the selected range, in seconds\n"
               "  --meta JSON        snapshot: write the layout and the numbers drawn\n"
               "  --pick X,Y         snapshot: click at pixel X,Y first; print the pick as JSON\n"
               "  --bench-frames N   draw N frames back to back and print the frame rate\n"
               "\n"
               "In the window press ? or F1 for the keys and mouse actions.\n");
}

static int parse_double(const char *s, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_options(mw_viewer_options_t *o, int argc, char **argv, int *help, int *version)
{
    enum {
        OPT_CONNECT = 256,
        OPT_HISTORY,
        OPT_REPLAY,
        OPT_SPEED,
        OPT_VIEW,
        OPT_SIZE,
        OPT_CACHE,
        OPT_REPR,
        OPT_TRANSFER,
        OPT_DURAXIS,
        OPT_TRACEREC,
        OPT_LATENESS,
        OPT_NOLEAP,
        OPT_TERRAIN,
        OPT_OMIN,
        OPT_HFN,
        OPT_SNAPSHOT,
        OPT_AT,
        OPT_RANGE,
        OPT_META,
        OPT_PICK,
        OPT_BENCH,
        OPT_WINDOW,
        OPT_STEP,
        OPT_COLOR,
        OPT_TIMELINE,
        OPT_RANK_COLOR,
        OPT_LINK_FN,
        OPT_CAMERA,
        OPT_ZOOM,
        OPT_BUNDLES,
        OPT_PERIODIC,
        OPT_NOLABELS,
        OPT_NETWORK,
        OPT_NODE_GAP,
        OPT_CONTROL,
        OPT_STEER,
        OPT_HELP,
        OPT_VERSION
    };
    static const struct option longopts[] = {
        {"connect", required_argument, NULL, OPT_CONNECT},
        {"history", required_argument, NULL, OPT_HISTORY},
        {"replay", required_argument, NULL, OPT_REPLAY},
        {"speed", required_argument, NULL, OPT_SPEED},
        {"view", required_argument, NULL, OPT_VIEW},
        {"size", required_argument, NULL, OPT_SIZE},
        {"cache-mb", required_argument, NULL, OPT_CACHE},
        {"repr", required_argument, NULL, OPT_REPR},
        {"transfer", required_argument, NULL, OPT_TRANSFER},
        {"omin", required_argument, NULL, OPT_OMIN},
        {"duration-axis", required_argument, NULL, OPT_DURAXIS},
        {"trace-records", required_argument, NULL, OPT_TRACEREC},
        {"lateness", required_argument, NULL, OPT_LATENESS},
        {"no-leap", no_argument, NULL, OPT_NOLEAP},
        {"terrain", required_argument, NULL, OPT_TERRAIN},
        {"highlight-fn", required_argument, NULL, OPT_HFN},
        {"snapshot", required_argument, NULL, OPT_SNAPSHOT},
        {"at", required_argument, NULL, OPT_AT},
        {"range", required_argument, NULL, OPT_RANGE},
        {"meta", required_argument, NULL, OPT_META},
        {"pick", required_argument, NULL, OPT_PICK},
        {"bench-frames", required_argument, NULL, OPT_BENCH},
        {"window", required_argument, NULL, OPT_WINDOW},
        {"step", required_argument, NULL, OPT_STEP},
        {"color", required_argument, NULL, OPT_COLOR},
        {"timeline", required_argument, NULL, OPT_TIMELINE},
        {"rank-color", required_argument, NULL, OPT_RANK_COLOR},
        {"link-fn", required_argument, NULL, OPT_LINK_FN},
        {"camera", required_argument, NULL, OPT_CAMERA},
        {"zoom", required_argument, NULL, OPT_ZOOM},
        {"bundles", required_argument, NULL, OPT_BUNDLES},
        {"periodic", no_argument, NULL, OPT_PERIODIC},
        {"network", required_argument, NULL, OPT_NETWORK},
        {"node-gap", required_argument, NULL, OPT_NODE_GAP},
        {"no-labels", no_argument, NULL, OPT_NOLABELS},
        {"control", required_argument, NULL, OPT_CONTROL},
        {"steer", required_argument, NULL, OPT_STEER},
        {"help", no_argument, NULL, OPT_HELP},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0}};
    int speed_given = 0;
    opterr = 0;
    for (;;) {
        int c = getopt_long(argc, argv, "hV", longopts, NULL);
        if (c == -1)
            break;
        const char *a = optarg;
        switch (c) {
        case OPT_CONNECT:
            o->connect = a;
            break;
        case OPT_HISTORY:
            o->history = a;
            break;
        case OPT_REPLAY:
            o->replay = a;
            break;
        case OPT_SPEED:
            if (parse_double(a, &o->speed) < 0 || !(o->speed > 0) || o->speed > 1e6) {
                fprintf(stderr, "mpiwatch-viewer: --speed %s: expected a number > 0\n", a);
                return -1;
            }
            speed_given = 1;
            break;
        case OPT_VIEW:
            if (!strcmp(a, "all"))
                o->show = MW_SHOW_ALL;
            else if (!strcmp(a, "timeline"))
                o->show = MW_SHOW_TIMELINE;
            else if (!strcmp(a, "density"))
                o->show = MW_SHOW_DENSITY;
            else if (!strcmp(a, "topology"))
                o->show = MW_SHOW_TOPOLOGY;
            else if (!strcmp(a, "matrix"))
                o->show = MW_SHOW_MATRIX;
            else if (!strcmp(a, "ranks"))
                o->show = MW_SHOW_RANKS;
            else if (!strcmp(a, "logical"))
                o->show = MW_SHOW_LOGICAL;
            else if (!strcmp(a, "terrain"))
                o->show = MW_SHOW_TERRAIN;
            else {
                fprintf(stderr,
                        "mpiwatch-viewer: --view %s: expected timeline, density, ranks, logical, "
                        "all, topology, matrix or terrain\n",
                        a);
                return -1;
            }
            break;
        case OPT_SIZE: {
            int w = 0, h = 0;
            char tail = 0;
            if (sscanf(a, "%dx%d%c", &w, &h, &tail) != 2 || w < 320 || h < 240 || w > 16384 ||
                h > 16384) {
                fprintf(stderr,
                        "mpiwatch-viewer: --size %s: expected WxH, 320x240 to 16384x16384\n", a);
                return -1;
            }
            o->width = w;
            o->height = h;
            o->size_given = 1;
            break;
        }
        case OPT_CACHE: {
            double mb = 0;
            if (parse_double(a, &mb) < 0 || mb < 1 || mb > 1048576) {
                fprintf(stderr, "mpiwatch-viewer: --cache-mb %s: expected 1 to 1048576\n", a);
                return -1;
            }
            o->cache_mb = (size_t)mb;
            break;
        }
        case OPT_REPR:
            if (!strcmp(a, "start"))
                o->repr = MW_REPR_START;
            else if (!strcmp(a, "end"))
                o->repr = MW_REPR_END;
            else if (!strcmp(a, "lines"))
                o->repr = MW_REPR_LINES;
            else if (!strcmp(a, "arcs"))
                o->repr = MW_REPR_ARCS;
            else {
                fprintf(stderr, "mpiwatch-viewer: --repr %s: expected start, end, lines or arcs\n",
                        a);
                return -1;
            }
            o->repr_given = 1;
            break;
        case OPT_DURAXIS:
            if (!strcmp(a, "linear") || !strcmp(a, "log")) {
                o->dur_linear = !strcmp(a, "linear");
            } else {
                fprintf(stderr, "mpiwatch-viewer: --duration-axis %s: expected log or linear\n", a);
                return -1;
            }
            break;
        case OPT_NOLEAP:
            o->no_leap = 1;
            break;
        case OPT_TERRAIN: {
            mw_terrain_opts_t to;
            char err[200];
            if (mw_terrain_parse(a, &to, err, sizeof err) < 0) {
                fprintf(stderr, "mpiwatch-viewer: --terrain %s: %s\n", a, err);
                return -1;
            }
            o->terrain = a;
            break;
        }
        case OPT_LATENESS: {
            size_t n = strcspn(a, ",");
            o->lateness_strip = a[n] == ',' && !strcmp(a + n + 1, "strip");
            if (n == 8 && !strncmp(a, "lateness", n))
                o->lateness_diff = 0;
            else if (n == 4 && !strncmp(a, "diff", n))
                o->lateness_diff = 1;
            else
                n = 0;
            if (!n || (a[n] && !o->lateness_strip)) {
                fprintf(stderr,
                        "mpiwatch-viewer: --lateness %s: expected lateness or diff, then "
                        "optionally ,strip\n",
                        a);
                return -1;
            }
            break;
        }
        case OPT_TRACEREC: {
            char *end = NULL;
            unsigned long long v = strtoull(a, &end, 10);
            if (end == a || *end || v < 1024 || v > (1ull << 28)) {
                fprintf(stderr, "mpiwatch-viewer: --trace-records %s: expected 1024 to 2^28\n", a);
                return -1;
            }
            o->trace_records = (size_t)v;
            break;
        }
        case OPT_TRANSFER:
            if (!strcmp(a, "linear"))
                o->transfer = MW_TRANSFER_LINEAR;
            else if (!strcmp(a, "log"))
                o->transfer = MW_TRANSFER_LOG;
            else {
                fprintf(stderr, "mpiwatch-viewer: --transfer %s: expected linear or log\n", a);
                return -1;
            }
            o->transfer_given = 1;
            break;
        case OPT_OMIN: {
            double v = 0;
            if (parse_double(a, &v) < 0 || v < 0 || v > 1) {
                fprintf(stderr, "mpiwatch-viewer: --omin %s: expected 0 to 1\n", a);
                return -1;
            }
            o->o_min = (float)v;
            o->omin_given = 1;
            break;
        }
        case OPT_HFN: {
            unsigned id = mw_fn_id(a);
            if (!id) {
                /* Accept the name without its prefix too ("Allreduce"). */
                char buf[96];
                snprintf(buf, sizeof buf, "MPI_%s", a);
                id = mw_fn_id(buf);
            }
            if (!id) {
                fprintf(stderr, "mpiwatch-viewer: --highlight-fn %s: not an MPI function\n", a);
                return -1;
            }
            o->highlight_fn = id;
            break;
        }
        case OPT_SNAPSHOT:
            o->snapshot = a;
            break;
        case OPT_AT:
            if (parse_double(a, &o->at) < 0 || o->at < 0) {
                fprintf(stderr, "mpiwatch-viewer: --at %s: expected seconds >= 0\n", a);
                return -1;
            }
            o->at_given = 1;
            break;
        case OPT_RANGE: {
            char tail = 0;
            if (sscanf(a, "%lf:%lf%c", &o->range0, &o->range1, &tail) != 2 ||
                !(o->range1 > o->range0) || o->range0 < 0) {
                fprintf(stderr, "mpiwatch-viewer: --range %s: expected A:B seconds, 0 <= A < B\n",
                        a);
                return -1;
            }
            o->range_given = 1;
            break;
        }
        case OPT_META:
            o->meta = a;
            break;
        case OPT_PICK: {
            char tail = 0;
            if (sscanf(a, "%d,%d%c", &o->pick_x, &o->pick_y, &tail) != 2 || o->pick_x < 0 ||
                o->pick_y < 0) {
                fprintf(stderr, "mpiwatch-viewer: --pick %s: expected X,Y pixels\n", a);
                return -1;
            }
            o->pick_given = 1;
            break;
        }
        case OPT_BENCH: {
            double n = 0;
            if (parse_double(a, &n) < 0 || n < 1 || n > 1e7) {
                fprintf(stderr, "mpiwatch-viewer: --bench-frames %s: expected 1 to 10000000\n", a);
                return -1;
            }
            o->bench_frames = (long)n;
            break;
        }
        case OPT_WINDOW:
        case OPT_STEP: {
            double n = 0;
            if (parse_double(a, &n) < 0 || n < 0 || n > 1e15 || n != (double)(uint64_t)n) {
                fprintf(stderr, "mpiwatch-viewer: --%s %s: expected an integer >= 0\n",
                        c == OPT_WINDOW ? "window" : "step", a);
                return -1;
            }
            if (c == OPT_WINDOW) {
                o->window_n = (uint64_t)n;
                o->window_given = 1;
            } else {
                o->step_n = (uint64_t)n;
                o->step_given = 1;
            }
            break;
        }
        case OPT_TIMELINE: /* code regions instead of MPI functions (model_regions.h) */
            if (strcmp(a, "regions") && strcmp(a, "functions")) {
                fprintf(stderr, "mpiwatch-viewer: --timeline %s: expected regions or functions\n",
                        a);
                return -1;
            }
            o->regions.timeline = !strcmp(a, "regions");
            break;
        case OPT_RANK_COLOR: { /* mpi | excl[:REGION_ID] | incl[:REGION_ID] */
            const char *colon = strchr(a, ':');
            size_t len = colon ? (size_t)(colon - a) : strlen(a);
            char *end = NULL;
            unsigned long id = colon ? strtoul(colon + 1, &end, 10) : 0;
            if (colon && (end == colon + 1 || *end || id == 0 || id > MW_JOB_MAX_REGIONS)) {
                fprintf(stderr, "mpiwatch-viewer: --rank-color %s: a region id 1..%u\n", a,
                        MW_JOB_MAX_REGIONS);
                return -1;
            }
            if (len == 3 && !strncmp(a, "mpi", 3) && !colon)
                o->regions.ranks = MW_RANKS_DEFAULT;
            else if (len == 4 && !strncmp(a, "excl", 4))
                o->regions.ranks = MW_RANKS_REGION_EXCL;
            else if (len == 4 && !strncmp(a, "incl", 4))
                o->regions.ranks = MW_RANKS_REGION_INCL;
            else {
                fprintf(stderr,
                        "mpiwatch-viewer: --rank-color %s: expected mpi, excl[:REGION] or "
                        "incl[:REGION]\n",
                        a);
                return -1;
            }
            o->regions.rank_region = (uint32_t)id;
            break;
        }
        case OPT_LINK_FN: {
            unsigned fn = strcmp(a, "all") ? mw_fn_id(a) : 0;
            if (strcmp(a, "all") && !fn) {
                fprintf(stderr, "mpiwatch-viewer: --link-fn %s: not an MPI function name\n", a);
                return -1;
            }
            o->regions.link_fn = fn;
            break;
        }
        case OPT_COLOR: {
            int m = mw_topo_color_of(a);
            if (m < 0) {
                fprintf(stderr,
                        "mpiwatch-viewer: --color %s: expected messages, bytes, src or dst\n", a);
                return -1;
            }
            o->color = (mw_topo_color_t)m;
            break;
        }
        case OPT_CAMERA: {
            char tail = 0;
            float y = 0, p = 0, d = 0;
            int k = sscanf(a, "%f,%f,%f%c", &y, &p, &d, &tail);
            if ((k != 2 && k != 3) || p < 5 || p > 89 || d < 0) {
                fprintf(stderr,
                        "mpiwatch-viewer: --camera %s: expected YAW,PITCH[,DISTANCE], pitch 5 to "
                        "89 degrees\n",
                        a);
                return -1;
            }
            o->cam_yaw = y;
            o->cam_pitch = p;
            o->cam_distance = k == 3 ? d : 0;
            o->camera_given = 1;
            break;
        }
        case OPT_ZOOM: {
            double z = 0;
            if (parse_double(a, &z) < 0 || !(z >= 0.01) || z > 1e4) {
                fprintf(stderr, "mpiwatch-viewer: --zoom %s: expected 0.01 to 10000\n", a);
                return -1;
            }
            o->cam_zoom = (float)z;
            break;
        }
        case OPT_BUNDLES:
            if (!strcmp(a, "auto"))
                o->bundles = -1;
            else if (!strcmp(a, "on"))
                o->bundles = 1;
            else if (!strcmp(a, "off"))
                o->bundles = 0;
            else {
                fprintf(stderr, "mpiwatch-viewer: --bundles %s: expected auto, on or off\n", a);
                return -1;
            }
            break;
        case OPT_PERIODIC:
            o->periodic = 1;
            break;
        case OPT_NOLABELS:
            o->labels = 0;
            break;
        case OPT_NETWORK:
            o->network = a;
            break;
        case OPT_NODE_GAP: {
            char *end;
            double g = strtod(a, &end);
            if (*end || !(g > 0 && g <= 1000)) {
                fprintf(stderr, "mpiwatch-viewer: --node-gap %s: expected a number in (0, 1000]\n",
                        a);
                return -1;
            }
            o->node_gap = (float)g;
            break;
        }
        case OPT_CONTROL:
            o->control = a;
            break;
        case OPT_STEER: {
            /* Checked now, so that a typo is a usage error; sent by the same code later. */
            static mw_steer_request_t rq;
            char why[300];
            if (o->n_steer >= MW_STEER_OPTS_MAX) {
                fprintf(stderr, "mpiwatch-viewer: at most %d --steer\n", MW_STEER_OPTS_MAX);
                return -1;
            }
            if (mw_steer_request_parse_line(&rq, a, ':', why, sizeof why) < 0) {
                fprintf(stderr, "mpiwatch-viewer: --steer %s: %s\n", a, why);
                return -1;
            }
            o->steer[o->n_steer++] = a;
            break;
        }
        case 'h':
        case OPT_HELP:
            *help = 1;
            break;
        case 'V':
        case OPT_VERSION:
            *version = 1;
            break;
        default:
            if (optopt)
                fprintf(stderr, "mpiwatch-viewer: option needs a value or is unknown: %s\n",
                        argv[optind - 1]);
            else
                fprintf(stderr, "mpiwatch-viewer: unknown option %s\n", argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "mpiwatch-viewer: unexpected argument %s\n", argv[optind]);
        return -1;
    }
    if (*help || *version)
        return 0;
    if (!o->connect == !o->replay) {
        fprintf(stderr, "mpiwatch-viewer: give exactly one of --connect and --replay\n");
        return -1;
    }
    if (o->history && !o->connect) {
        fprintf(stderr, "mpiwatch-viewer: --history goes with --connect\n");
        return -1;
    }
    if (o->n_steer && !o->connect) {
        fprintf(stderr, "mpiwatch-viewer: --steer goes with --connect\n");
        return -1;
    }
    if (speed_given && !o->replay) {
        fprintf(stderr, "mpiwatch-viewer: --speed goes with --replay\n");
        return -1;
    }
    if (!o->snapshot && (o->meta || o->pick_given)) {
        fprintf(stderr, "mpiwatch-viewer: --meta and --pick go with --snapshot\n");
        return -1;
    }
    if (!o->snapshot && !o->bench_frames && (o->at_given || o->range_given)) {
        fprintf(stderr, "mpiwatch-viewer: --at and --range go with --snapshot or --bench-frames\n");
        return -1;
    }
    if (o->window_given && o->step_given) {
        fprintf(stderr, "mpiwatch-viewer: --window and --step exclude each other\n");
        return -1;
    }
    if (o->snapshot && o->bench_frames) {
        fprintf(stderr, "mpiwatch-viewer: --snapshot and --bench-frames exclude each other\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    mw_viewer_options_t opt;
    int help = 0, version = 0;
    mw__viewer_options_defaults(&opt);
    if (parse_options(&opt, argc, argv, &help, &version) < 0) {
        fprintf(stderr, "mpiwatch-viewer: try --help\n");
        return 2;
    }
    if (help) {
        usage(stdout);
        return 0;
    }
    if (version) {
        printf("mpiwatch-viewer %s\n", MW_VERSION_FULL);
        return 0;
    }

    const char *driver = getenv("SDL_VIDEODRIVER");
    int offscreen = driver && !strcmp(driver, "offscreen");
    /* A snapshot needs no display: without one, use SDL's offscreen driver (EGL) rather than
     * failing, so the launcher can take snapshots on a cluster's login node. */
    if (opt.snapshot && !driver && !getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) {
        SDL_SetHint(SDL_HINT_VIDEODRIVER, "offscreen");
        offscreen = 1;
    }
    int headless = opt.snapshot || (opt.bench_frames && offscreen);

    static mw_app_t app;
    if (mw__app_init(&app, &opt, headless) < 0) {
        mw__app_cleanup(&app);
        return 1;
    }
    int status;
    if (opt.snapshot)
        status = mw__snapshot_run(&app);
    else if (opt.bench_frames)
        status = mw__bench_run(&app);
    else
        status = mw__app_run(&app);
    mw__app_cleanup(&app);
    return status;
}
