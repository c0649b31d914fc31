/* config.c: the library's settings, read once from MPIWATCH_* environment variables.
 *
 * DESIGN: the library lives inside someone else's program, so its only configuration is the
 * environment; a value that does not parse or is out of range falls back to the default
 * (and says so with MPIWATCH_VERBOSE=1) rather than failing the application.
 */
#include "shim.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned env_uint(const char *name, unsigned def, unsigned lo, unsigned hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || v < lo || v > hi) {
        mw__log("%s=%s is not in [%u, %u]; using %u", name, s, lo, hi, def);
        return def;
    }
    return (unsigned)v;
}

static unsigned pow2_at_least(unsigned v)
{
    unsigned p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

/* MPIWATCH_STEP: "auto" (the period detector), or "FUNCTION:N", every Nth call of a timed
 * MPI function ending a step ("MPI_Allreduce:3"; the "MPI_" prefix may be left out). */
static void step_setting(mw_config_t *cfg)
{
    const char *s = getenv("MPIWATCH_STEP");
    if (!s || !*s)
        return;
    if (strcmp(s, "auto") == 0) {
        cfg->step_auto = 1;
        return;
    }
    char name[96];
    const char *colon = strrchr(s, ':');
    size_t len = colon ? (size_t)(colon - s) : 0;
    char *end = NULL;
    unsigned long n = colon ? strtoul(colon + 1, &end, 10) : 0;
    if (!colon || len == 0 || len + 5 > sizeof name || *end || n == 0 || n > 1000000000ul) {
        mw__log("MPIWATCH_STEP=%s is neither auto nor FUNCTION:N; no steps", s);
        return;
    }
    snprintf(name, sizeof name, "%s%.*s", strncmp(s, "MPI_", 4) == 0 ? "" : "MPI_", (int)len, s);
    unsigned fn = mw_fn_id(name);
    mw_kind_t kind = fn ? mw_fn_kind(fn) : MW_KIND_QUERY;
    if (!fn || kind == MW_KIND_QUERY || kind == MW_KIND_SPECIAL) {
        mw__log("MPIWATCH_STEP: %s is not a timed MPI function; no steps", name);
        return;
    }
    cfg->step_fn = fn;
    cfg->step_every = (unsigned)n;
}

/* MPIWATCH_DORMANT_AFTER (docs/shim.md "Dormant mode"): a duration, N with an optional unit
 * ms, s (the default) or m; "0" or "off": never. Returns ns; `def` when unset or invalid. */
static uint64_t dormant_after(uint64_t def)
{
    const char *s = getenv("MPIWATCH_DORMANT_AFTER");
    if (!s || !*s)
        return def;
    if (strcmp(s, "off") == 0)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-' || v > 86400000ull)
        goto bad;
    uint64_t unit = strcmp(end, "ms") == 0                  ? 1000000ull
                    : strcmp(end, "s") == 0 || *end == '\0' ? 1000000000ull
                    : strcmp(end, "m") == 0                 ? 60000000000ull
                                                            : 0;
    if (!unit || v * unit / unit != v)
        goto bad;
    return v * unit;
bad:
    mw__log("MPIWATCH_DORMANT_AFTER=%s is not a duration (N, Nms, Ns, Nm, off); using the default",
            s);
    return def;
}

/* This node's name for a "{node}" in an endpoint: $SLURMD_NODENAME (two slurmds on one host
 * are two nodes), else the host name; every character outside A-Za-z0-9._- becomes '_', as
 * `mpiwatch run` does when it names the node's aggregator socket (docs/launcher.md). */
static void node_name(char *out, size_t cap)
{
    const char *s = getenv("SLURMD_NODENAME");
    char host[256] = "";
    if (!s || !*s) {
        if (gethostname(host, sizeof host - 1) != 0 || !host[0])
            snprintf(host, sizeof host, "localhost");
        s = host;
    }
    size_t n = 0;
    for (; *s && n + 1 < cap; s++, n++) {
        char ch = *s;
        int ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                 ch == '.' || ch == '_' || ch == '-';
        out[n] = ok ? ch : '_';
    }
    out[n] = 0;
}

/* Copies the endpoint in variable `name` into out with every "{node}" replaced by this node's
 * name. Returns 1 when set, 0 when unset or empty, -1 (logged) when the result does not fit:
 * an endpoint is never cut short, since a shortened path or address may be someone else's. */
static int endpoint_setting(const char *name, char *out, size_t cap)
{
    const char *v = getenv(name);
    out[0] = 0;
    if (!v || !*v)
        return 0;
    char node[128] = "";
    size_t n = 0;
    while (*v) {
        const char *piece = v;
        size_t len = 1;
        if (strncmp(v, "{node}", 6) == 0) {
            if (!node[0])
                node_name(node, sizeof node);
            piece = node;
            len = strlen(node);
            v += 6;
        } else {
            v++;
        }
        if (n + len >= cap) {
            mw__log("%s is longer than %zu bytes; not used", name, cap - 1);
            out[0] = 0;
            return -1;
        }
        memcpy(out + n, piece, len);
        n += len;
    }
    out[n] = 0;
    return 1;
}

mw_fallback_t mw__fallback;

void mw__config_read(mw_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->verbose = (int)env_uint("MPIWATCH_VERBOSE", 0, 0, 9);
    const char *d = getenv("MPIWATCH_DISABLE");
    cfg->disable = d && *d && strcmp(d, "0") != 0;
    /* Without MPIWATCH_COLLECTOR: this user's private ipc:// endpoint, never a shared TCP
     * port another user could bind first (proto/mw_endpoint.c, docs/security.md). When it
     * cannot be had safely the library stays inert, and says why with MPIWATCH_VERBOSE=1. */
    const char *c = getenv("MPIWATCH_COLLECTOR");
    char why[256];
    if (c && *c) {
        if (endpoint_setting("MPIWATCH_COLLECTOR", cfg->collector, sizeof cfg->collector) < 0)
            cfg->disable = 1;
    } else if (!cfg->disable &&
               mw_default_endpoint(cfg->collector, sizeof cfg->collector, why, sizeof why) != 0) {
        cfg->collector[0] = 0;
        cfg->disable = 1;
        mw__log("no MPIWATCH_COLLECTOR and %s; the library stays inert", why);
    }
    endpoint_setting("MPIWATCH_STEER", cfg->steer, sizeof cfg->steer);
    /* The fallback (sender.c): taken only with a collector of its own, and with the same
     * checks as the primary's endpoints (and its CURVE keys: curve.c). */
    mw_fallback_t *fb = &mw__fallback;
    memset(fb, 0, sizeof *fb);
    if (endpoint_setting("MPIWATCH_COLLECTOR_FALLBACK", fb->collector, sizeof fb->collector) > 0)
        endpoint_setting("MPIWATCH_STEER_FALLBACK", fb->steer, sizeof fb->steer);
    fb->after_ns = (uint64_t)env_uint("MPIWATCH_FALLBACK_AFTER", 3, 1, 3600) * 1000000000ull;
    cfg->window_ms = env_uint("MPIWATCH_WINDOW_MS", 100, 1, 60000);
    cfg->subslots = env_uint("MPIWATCH_SUBSLOTS", 10, 1, MW_MAX_SUBSLOTS);
    cfg->longest = env_uint("MPIWATCH_LONGEST", 16, 1, 1024);
    cfg->max_threads = env_uint("MPIWATCH_MAX_THREADS", 64, 1, 4096);
    cfg->rows = env_uint("MPIWATCH_ROWS", 32, 1, 255);
    cfg->peers = pow2_at_least(env_uint("MPIWATCH_PEERS", 256, 1, 1u << 20));
    cfg->sndhwm = env_uint("MPIWATCH_SNDHWM", 64, 1, 100000);
    cfg->linger_ms = env_uint("MPIWATCH_LINGER_MS", 200, 0, 10000);
    cfg->sync_rounds = env_uint("MPIWATCH_SYNC_ROUNDS", 16, 1, 1000);
    cfg->nodes = env_uint("MPIWATCH_NODES", 0, 0, 1u << 20);
    cfg->capture_max = env_uint("MPIWATCH_CAPTURE_MAX", 16384, 1, MW_CAPTURE_MAX_CALLS);
    step_setting(cfg);
    cfg->step_marks = env_uint("MPIWATCH_STEP_MARKS", 16, 1, MW_STEP_MAX_MARKS);
    cfg->region_depth = env_uint("MPIWATCH_REGION_DEPTH", 64, 1, 4096);
    cfg->region_entries = env_uint("MPIWATCH_REGION_ENTRIES", 64, 1, MW_RANK_MAX_REGIONS);
    /* Call sites (docs/callsites.md): on unless MPIWATCH_CALLSITES=off (or 0). */
    const char *cs = getenv("MPIWATCH_CALLSITES");
    cfg->callsites = !(cs && (strcmp(cs, "off") == 0 || strcmp(cs, "0") == 0));
    cfg->callsites_max = pow2_at_least(env_uint("MPIWATCH_CALLSITES_MAX", 64, 1, 4096));
    /* Tracing (docs/trace.md): read here, kept in mw__trace (trace.h). */
    const char *tr = getenv("MPIWATCH_TRACE");
    mw__trace.on = !(tr && (strcmp(tr, "off") == 0 || strcmp(tr, "0") == 0));
    mw__trace.ring_size = pow2_at_least(env_uint("MPIWATCH_TRACE_RING", MW_TRACE_RING_DEFAULT,
                                                 MW_TRACE_RING_MIN, MW_TRACE_RING_MAX));
    cfg->trace_history = env_uint("MPIWATCH_TRACE_HISTORY", 16, 1, 1024);
    cfg->trace_history_mb = env_uint("MPIWATCH_TRACE_HISTORY_MB", 16, 1, 4096);
    const char *tp = getenv("MPIWATCH_TRACE_PLAN");
    if (tp && strlen(tp) < sizeof cfg->trace_plan)
        snprintf(cfg->trace_plan, sizeof cfg->trace_plan, "%s", tp);
    /* Dormant mode (docs/shim.md): MPIWATCH_MODE=dormant|full, MPIWATCH_DORMANT_AFTER. */
    const char *mode = getenv("MPIWATCH_MODE");
    cfg->start_dormant = mode && strcmp(mode, "dormant") == 0;
    if (mode && *mode && !cfg->start_dormant && strcmp(mode, "full") != 0)
        mw__log("MPIWATCH_MODE=%s is neither full nor dormant; full", mode);
    cfg->dormant_after_ns = dormant_after(30000000000ull);
    const char *t = getenv("MPIWATCH_TIMER");
    cfg->timer = !t ? 0 : strcmp(t, "tsc") == 0 ? 1 : strcmp(t, "clock") == 0 ? 2 : 0;
}

void mw__log(const char *fmt, ...)
{
    if (!mw__g.cfg.verbose)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "mpiwatch[%d]: %s\n", mw__g.rank, buf);
}
