/* rules.c: threshold rules evaluated on closed windows, and their actions (docs/steering.md).
 *
 * DESIGN: a rule file is parsed with inih into an array of rules, each a metric, a comparison,
 * a scope, a persistence (`for`, consecutive windows), a cooldown (windows, or seconds of
 * window time with an `s` suffix, so that replay fires at the same windows as the live run)
 * and one action. Nothing is checked lazily: every error is found at load time and reported
 * with its file and line, so a running collector never meets a bad rule. Evaluation reads the
 * window only (it never changes it, nor the job), so rules cannot alter the outputs.
 *
 * Actions must never stall the loop. `log` is a line; `steer` hands a message to the steering
 * channel (steer.c), which does not block, and so does `capture` (mpiwatch.capture=N@K, with
 * K far enough ahead that every rank traces the same whole windows); `exec` starts a program
 * with posix_spawnp (no shell: the command line is split into words when the file is loaded,
 * and placeholders are replaced inside those words, so substituted text is only ever data) and
 * never waits for it. Text that comes from a peer ({node}, {job}: names the ranks announced)
 * is sanitised first (fire_clean): bytes outside [A-Za-z0-9._:+=@,-] become '_', and so does
 * a leading '-' or '.', so that a job named "--help" or "-rf" can never be read as an option,
 * nor a node named ".." as a parent directory.
 *
 * An action is its process group, not its process (issue 12, defect 7): the program starts
 * in a group of its own (POSIX_SPAWN_SETPGROUP), and every signal goes to the whole group, so
 * what a `sh -c` starts goes with it. The collector's tick reaps the leader with
 * waitpid(WNOHANG) every MW_RULES_REAP_NS and records how it ended as an "action_exit" event;
 * the action keeps its slot while anything of its group still runs (kill(-pgid, 0)), and the
 * group gets SIGTERM at the timeout and SIGKILL MW_RULES_KILL_GRACE_NS later. On Linux the
 * collector is a child subreaper (PR_SET_CHILD_SUBREAPER, set at the first action), so what
 * an action leaves behind becomes the collector's child when its parent ends, and is reaped
 * here (waitpid(-pgid)) instead of lingering as a zombie that still counts in the group. When the
 * rules are freed (the collector exits) every running group gets SIGTERM, then SIGKILL after at
 * most MW_RULES_KILL_GRACE_NS, and the leaders are reaped: nothing is left behind with ppid 1. A
 * rule runs at most `max_running` actions at once and the collector at most
 * MW_RULES_MAX_CHILDREN; a firing beyond that is logged and skipped.
 */
#define _GNU_SOURCE /* environ */
#include "rules.h"
#include "collector.h"
#include "steer.h"
#include "publish.h"
#include "mw_steer_request.h"
#include "mw_bins.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <ini.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

extern char **environ;

/* name, per rank (a scope chooses the ranks), needs `function`, over windows (OVER_W), time
 * steps (OVER_S) or both: a step has exact totals per function and pair but no histograms or
 * per-rank shares (docs/steps.md). */
#define OVER_W 1
#define OVER_S 2
#define OVER_L 4 /* a window's lateness summary (lateness.c), which comes after the window */
#define RULES_METRICS(X)                                                                           \
    X(RANK_FRACTION, "rank_mpi_fraction", 1, 0, OVER_W)                                            \
    X(FN_SHARE, "function_share", 0, 1, OVER_W | OVER_S)                                           \
    X(FN_P50, "function_p50", 0, 1, OVER_W)                                                        \
    X(FN_P99, "function_p99", 0, 1, OVER_W)                                                        \
    X(IMBALANCE, "imbalance", 1, 0, OVER_W)                                                        \
    X(LOAD_IMBALANCE, "load_imbalance", 1, 0, OVER_W)                                              \
    X(BYTES_PER_S, "bytes_per_s", 0, 0, OVER_W | OVER_S)                                           \
    X(MPI_FRACTION, "mpi_fraction", 0, 0, OVER_W | OVER_S)                                         \
    X(STEP_TIME, "step_time", 0, 0, OVER_S)                                                        \
    X(MISSING, "missing_ranks", 0, 0, OVER_W)                                                      \
    X(DROPPED, "dropped", 0, 0, OVER_W)                                                            \
    X(LATENESS_MAX, "lateness_max", 0, 0, OVER_L)                                                  \
    X(DIFF_LATENESS_MAX, "diff_lateness_max", 0, 0, OVER_L)                                        \
    X(LATENESS_SHARE, "lateness_share", 0, 0, OVER_L)

typedef enum {
#define X(id, name, scoped, fn, over) M_##id,
    RULES_METRICS(X)
#undef X
        M_COUNT
} metric_t;

static const struct {
    const char *name;
    int scoped; /* a per-rank metric: the scope chooses the ranks */
    int fn;     /* needs `function` */
    int over;   /* OVER_W, OVER_S or both */
} metric_desc[M_COUNT] = {
#define X(id, name, scoped, fn, over) {name, scoped, fn, over},
    RULES_METRICS(X)
#undef X
};
#undef OVER_W
#undef OVER_S
#undef OVER_L

/* The metrics evaluated on lateness summaries rather than on windows. */
static int metric_lateness(metric_t m)
{
    return m == M_LATENESS_MAX || m == M_DIFF_LATENESS_MAX || m == M_LATENESS_SHARE;
}

typedef enum { OP_GT, OP_GE, OP_LT, OP_LE } op_t;
static const char *const op_names[] = {">", ">=", "<", "<="};

typedef enum { SCOPE_ANY, SCOPE_ALL, SCOPE_RANKS, SCOPE_NODE } scope_t;
typedef enum { ACT_LOG, ACT_EXEC, ACT_STEER, ACT_CAPTURE } action_t;

typedef struct {
    uint32_t lo, hi;
} range_t;

typedef struct {
    range_t *r;
    size_t n;
} ranks_t;

typedef struct {
    char *name;
    int line; /* of its [rule NAME] header */
    int seen_metric, seen_op, seen_threshold, seen_action;
    metric_t metric;
    unsigned fn;
    op_t op;
    double threshold;
    uint32_t for_n;
    uint64_t cooldown; /* windows, or ns when cooldown_is_ns */
    int cooldown_is_ns;
    scope_t scope;
    char *scope_text;
    ranks_t scope_ranks;
    char *node;
    action_t action;
    char **words; /* exec: the command, split when loaded */
    size_t n_words;
    double timeout_s;
    uint32_t max_running;
    char *steer_key, *steer_value;
    ranks_t steer_ranks;
    int has_steer_ranks;
    uint32_t capture;  /* action capture: windows to capture, 0 when not given */
    int capture_range; /* `capture = A..B`: windows firing+A .. firing+B (A may be negative) */
    int64_t capture_from;
    int over_step; /* over = step: evaluated on each time step, not each window */
    /* State. For a step rule, last_index and last_fire are step numbers. */
    uint32_t streak;
    int64_t last_index;        /* window last evaluated, -1 none */
    int64_t last_fire;         /* window of the last firing, -1 none */
    uint64_t last_fire_end_ns; /* step rules: the end of the step that fired */
    uint64_t fired;
    uint32_t running;
} rule_t;

typedef struct {
    pid_t pid; /* the leader, and the id of the action's process group */
    char rule[64];
    uint64_t deadline_ns, kill_ns; /* SIGTERM at deadline, SIGKILL at kill_ns (0: not yet) */
    uint64_t release_ns;           /* after SIGKILL: the slot is given up then at the latest */
    int timed_out, reaped;         /* reaped: the leader's end is recorded */
} child_t;

struct mw_rules {
    rule_t *r;
    size_t n;
    child_t child[MW_RULES_MAX_CHILDREN];
    unsigned n_child;
    char last_exit[160]; /* detail of the last action_exit event */
};

/* ---- parsing ------------------------------------------------------------------------------ */

typedef struct {
    mw_rules_t *rs;
    FILE *f;
    int line;
    int header_line;    /* line of the last section header */
    int header_pending; /* a header was read and no key of it yet */
    int err_line;
    char err[256];
    rule_t *cur;
    char cur_section[128];
} parse_t;

static void parse_error(parse_t *p, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void parse_error(parse_t *p, int line, const char *fmt, ...)
{
    if (p->err_line)
        return;
    p->err_line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
}

/* fgets() for inih that counts lines and notes section headers (Debian's inih passes no line
 * numbers to handlers, and never calls them for a section without keys). */
static char *parse_read_line(char *str, int num, void *stream)
{
    parse_t *p = stream;
    if (!fgets(str, num, p->f))
        return NULL;
    p->line++;
    const char *s = str + strspn(str, " \t");
    if (*s == '[') {
        if (p->header_pending)
            parse_error(p, p->header_line, "section without keys");
        p->header_line = p->line;
        p->header_pending = 1;
    }
    return str;
}

static void ranks_free(ranks_t *r)
{
    free(r->r);
    r->r = NULL;
    r->n = 0;
}

static int ranks_has(const ranks_t *rk, uint32_t rank)
{
    for (size_t i = 0; i < rk->n; i++)
        if (rank >= rk->r[i].lo && rank <= rk->r[i].hi)
            return 1;
    return 0;
}

static int ranks_add(void *user, uint32_t lo, uint32_t hi)
{
    ranks_t *rk = user;
    range_t *g = realloc(rk->r, (rk->n + 1) * sizeof *g);
    if (!g)
        return -1;
    rk->r = g;
    rk->r[rk->n++] = (range_t){lo, hi};
    return 0;
}

/* "0-3,7" -> ranges, blanks allowed, with the one rank-list parser (proto/). Returns 0, or -1. */
static int ranks_parse(const char *s, ranks_t *out)
{
    ranks_t rk = {0};
    if (mw_rank_list_parse(s, MW_RANKS_BLANKS, MW_MAX_RANKS, ranks_add, &rk) < 0) {
        ranks_free(&rk);
        return -1;
    }
    *out = rk;
    return 0;
}

static const char *const placeholders[] = {"rule",   "rank", "value", "window",  "node",
                                           "metric", "job",  "step",  "function"};

/* Checks that every {NAME} in a word is a known placeholder. Returns 0, or -1 with p's error. */
static int parse_check_placeholders(parse_t *p, const char *w)
{
    for (const char *s = strchr(w, '{'); s; s = strchr(s + 1, '{')) {
        const char *e = strchr(s, '}');
        size_t len = e ? (size_t)(e - s - 1) : 0;
        int ok = 0;
        for (size_t i = 0; e && i < sizeof placeholders / sizeof *placeholders; i++)
            ok |= strlen(placeholders[i]) == len && strncmp(placeholders[i], s + 1, len) == 0;
        if (!ok) {
            parse_error(p, p->line, "unknown placeholder in '%.100s'", w);
            return -1;
        }
    }
    return 0;
}

/* Splits the exec command into words: blanks separate words, single or double quotes group
 * blanks into a word (no escapes, no expansion of any kind). */
static int parse_words(parse_t *p, rule_t *r, const char *s)
{
    size_t cap = 0;
    for (;;) {
        s += strspn(s, " \t");
        if (!*s)
            break;
        size_t len = strlen(s);
        char *w = malloc(len + 1), *o = w;
        if (!w)
            return -1;
        while (*s && *s != ' ' && *s != '\t') {
            if (*s == '\'' || *s == '"') {
                char q = *s++;
                while (*s && *s != q)
                    *o++ = *s++;
                if (*s != q) {
                    free(w);
                    parse_error(p, p->line, "unterminated quote in exec");
                    return -1;
                }
                s++;
            } else {
                *o++ = *s++;
            }
        }
        *o = '\0';
        if (r->n_words + 2 > cap) {
            cap = cap ? 2 * cap : 8;
            char **g = realloc(r->words, cap * sizeof *g);
            if (!g) {
                free(w);
                return -1;
            }
            r->words = g;
        }
        r->words[r->n_words++] = w;
        r->words[r->n_words] = NULL;
        if (parse_check_placeholders(p, w) < 0)
            return -1;
    }
    if (r->n_words == 0)
        parse_error(p, p->line, "exec: empty command");
    return r->n_words ? 0 : -1;
}

static int parse_uint(const char *v, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*v < '0' || *v > '9')
        return -1;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || x > max)
        return -1;
    *out = x;
    return 0;
}

int mw__rules_parse_capture(const char *v, int64_t *from, int64_t *to)
{
    /* [+-]digits..[+-]digits, nothing else: no blanks, both ends, each within
     * MW_CAPTURE_MAX_WINDOWS of the firing, from <= to, at most MW_CAPTURE_MAX_WINDOWS windows. */
    int64_t end[2];
    const char *p = v;
    for (int i = 0; i < 2; i++) {
        int neg = 0;
        if (*p == '-' || *p == '+')
            neg = *p++ == '-';
        if (*p < '0' || *p > '9')
            return -1;
        int64_t x = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            x = x * 10 + (*p - '0');
            if (x > MW_CAPTURE_MAX_WINDOWS)
                return -1;
        }
        end[i] = neg ? -x : x;
        if (i == 0 && (p[0] != '.' || p[1] != '.'))
            return -1;
        if (i == 0)
            p += 2;
    }
    if (*p || end[0] > end[1] || end[1] - end[0] + 1 > MW_CAPTURE_MAX_WINDOWS)
        return -1;
    *from = end[0];
    *to = end[1];
    return 0;
}

static void rule_free(rule_t *r)
{
    free(r->name);
    free(r->scope_text);
    ranks_free(&r->scope_ranks);
    free(r->node);
    for (size_t i = 0; i < r->n_words; i++)
        free(r->words[i]);
    free(r->words);
    free(r->steer_key);
    free(r->steer_value);
    ranks_free(&r->steer_ranks);
}

static int parse_key(parse_t *p, rule_t *r, const char *k, const char *v)
{
    uint64_t u;
    char *end;
    if (strcmp(k, "metric") == 0) {
        for (int i = 0; i < M_COUNT; i++)
            if (strcmp(v, metric_desc[i].name) == 0) {
                r->metric = (metric_t)i;
                r->seen_metric = 1;
                return 0;
            }
        parse_error(p, p->line, "unknown metric '%.100s'", v);
    } else if (strcmp(k, "over") == 0) {
        if (strcmp(v, "window") == 0 || strcmp(v, "step") == 0)
            r->over_step = v[0] == 's';
        else
            parse_error(p, p->line, "over must be 'window' or 'step', not '%.100s'", v);
    } else if (strcmp(k, "function") == 0) {
        r->fn = mw_fn_id(v);
        if (r->fn == 0)
            parse_error(p, p->line, "unknown MPI function '%.100s'", v);
    } else if (strcmp(k, "op") == 0) {
        for (int i = 0; i < 4; i++)
            if (strcmp(v, op_names[i]) == 0) {
                r->op = (op_t)i;
                r->seen_op = 1;
                return 0;
            }
        parse_error(p, p->line, "unknown op '%.100s' (>, >=, <, <=)", v);
    } else if (strcmp(k, "threshold") == 0) {
        errno = 0;
        r->threshold = strtod(v, &end);
        if (errno || end == v || *end || !isfinite(r->threshold))
            parse_error(p, p->line, "threshold '%.100s' is not a number", v);
        r->seen_threshold = 1;
    } else if (strcmp(k, "for") == 0) {
        if (parse_uint(v, 1000000, &u) < 0 || u == 0)
            parse_error(p, p->line, "for '%.100s': expected windows, 1..1000000", v);
        r->for_n = (uint32_t)u;
    } else if (strcmp(k, "cooldown") == 0) {
        size_t len = strlen(v);
        r->cooldown_is_ns = len > 0 && v[len - 1] == 's';
        char num[32];
        snprintf(num, sizeof num, "%.*s", (int)(r->cooldown_is_ns ? len - 1 : len), v);
        if (len >= sizeof num || parse_uint(num, 100000000, &u) < 0)
            parse_error(p, p->line, "cooldown '%.100s': expected windows or seconds (30s)", v);
        r->cooldown = r->cooldown_is_ns ? u * MW_NS_PER_S : u;
    } else if (strcmp(k, "scope") == 0) {
        free(r->scope_text);
        r->scope_text = strdup(v);
        ranks_free(&r->scope_ranks);
        if (strcmp(v, "any") == 0) {
            r->scope = SCOPE_ANY;
        } else if (strcmp(v, "all") == 0) {
            r->scope = SCOPE_ALL;
        } else if (strncmp(v, "node:", 5) == 0 && v[5]) {
            r->scope = SCOPE_NODE;
            free(r->node);
            r->node = strdup(v + 5);
        } else if (ranks_parse(v, &r->scope_ranks) == 0) {
            r->scope = SCOPE_RANKS;
        } else {
            parse_error(p, p->line, "scope '%.100s': expected any, all, node:NAME or ranks (0-3,7)",
                        v);
        }
    } else if (strcmp(k, "action") == 0) {
        r->seen_action = 1;
        if (strcmp(v, "log") == 0)
            r->action = ACT_LOG;
        else if (strcmp(v, "exec") == 0)
            r->action = ACT_EXEC;
        else if (strcmp(v, "steer") == 0)
            r->action = ACT_STEER;
        else if (strcmp(v, "capture") == 0)
            r->action = ACT_CAPTURE;
        else
            parse_error(p, p->line, "unknown action '%.100s' (log, exec, steer, capture)", v);
    } else if (strcmp(k, "exec") == 0) {
        for (size_t i = 0; i < r->n_words; i++)
            free(r->words[i]);
        r->n_words = 0;
        if (parse_words(p, r, v) < 0 && !p->err_line)
            parse_error(p, p->line, "out of memory");
    } else if (strcmp(k, "timeout") == 0) {
        errno = 0;
        r->timeout_s = strtod(v, &end);
        if (errno || end == v || *end || !(r->timeout_s > 0 && r->timeout_s <= 86400))
            parse_error(p, p->line, "timeout '%.100s': expected seconds, (0, 86400]", v);
    } else if (strcmp(k, "max_running") == 0) {
        if (parse_uint(v, MW_RULES_MAX_CHILDREN, &u) < 0 || u == 0)
            parse_error(p, p->line, "max_running '%.100s': expected 1..%u", v,
                        MW_RULES_MAX_CHILDREN);
        r->max_running = (uint32_t)u;
    } else if (strcmp(k, "steer") == 0) {
        const char *eq = strchr(v, '=');
        if (!eq || eq == v) {
            parse_error(p, p->line, "steer '%.100s': expected KEY=VALUE", v);
            return 0;
        }
        free(r->steer_key);
        free(r->steer_value);
        r->steer_key = strndup(v, (size_t)(eq - v));
        r->steer_value = strdup(eq + 1);
    } else if (strcmp(k, "capture") == 0) {
        int64_t from, to;
        r->capture_range = 0;
        if (strstr(v, "..")) {
            if (mw__rules_parse_capture(v, &from, &to) < 0) {
                parse_error(p, p->line,
                            "capture '%.100s': expected a range of windows around the firing, "
                            "FROM..TO (e.g. -5..+3), at most %u windows",
                            v, MW_CAPTURE_MAX_WINDOWS);
                return 0;
            }
            r->capture_range = 1;
            r->capture_from = from;
            r->capture = (uint32_t)(to - from + 1);
            return 0;
        }
        if (parse_uint(v, MW_CAPTURE_MAX_WINDOWS, &u) < 0 || u == 0)
            parse_error(p, p->line,
                        "capture '%.100s': expected windows, 1..%u, or a range FROM..TO", v,
                        MW_CAPTURE_MAX_WINDOWS);
        r->capture = (uint32_t)u;
    } else if (strcmp(k, "ranks") == 0 && strcmp(v, "{rank}") == 0) {
        /* The rank the value comes from (where a lateness maximum occurs): the default. */
        ranks_free(&r->steer_ranks);
        r->has_steer_ranks = 0;
    } else if (strcmp(k, "ranks") == 0) {
        ranks_free(&r->steer_ranks);
        r->has_steer_ranks = 1;
        if (ranks_parse(v, &r->steer_ranks) < 0)
            parse_error(p, p->line, "ranks '%.100s': expected a rank list (0-3,7)", v);
    } else {
        parse_error(p, p->line, "unknown key '%.100s'", k);
    }
    return 0;
}

static int parse_on_key(void *user, const char *section, const char *name, const char *value)
{
    parse_t *p = user;
    if (p->err_line)
        return 1; /* the first error is the one reported; keep inih going */
    /* A header read since the last key starts a new rule, even with the same name (which is
     * then a duplicate). */
    int new_section = p->header_pending || !p->cur || strcmp(section, p->cur_section) != 0;
    p->header_pending = 0;
    if (new_section) {
        p->cur = NULL;
        snprintf(p->cur_section, sizeof p->cur_section, "%s", section);
        if (strncmp(section, "rule ", 5) != 0 || !section[5 + strspn(section + 5, " ")]) {
            parse_error(p, p->header_line ? p->header_line : p->line,
                        "section '[%.100s]': expected '[rule NAME]'", section);
            return 1;
        }
        const char *nm = section + 5 + strspn(section + 5, " ");
        if (strlen(nm) >= sizeof((child_t *)0)->rule) {
            parse_error(p, p->header_line, "rule name longer than 63 characters");
            return 1;
        }
        for (size_t i = 0; i < p->rs->n; i++)
            if (strcmp(p->rs->r[i].name, nm) == 0) {
                parse_error(p, p->header_line, "duplicate rule '%s'", nm);
                return 1;
            }
        rule_t *g = realloc(p->rs->r, (p->rs->n + 1) * sizeof *g);
        if (!g)
            return 0;
        p->rs->r = g;
        rule_t *r = &g[p->rs->n++];
        memset(r, 0, sizeof *r);
        r->name = strdup(nm);
        r->line = p->header_line;
        r->for_n = 1;
        r->timeout_s = 10;
        r->max_running = 1;
        r->last_index = r->last_fire = -1;
        p->cur = r;
    }
    parse_key(p, p->cur, name, value);
    return 1;
}

/* Whole-rule checks, reported at the rule's header. */
static void parse_check_rule(parse_t *p, const rule_t *r)
{
    if (!r->name)
        parse_error(p, r->line, "out of memory");
    else if (!r->seen_metric)
        parse_error(p, r->line, "rule '%s': no metric", r->name);
    else if (!r->seen_op)
        parse_error(p, r->line, "rule '%s': no op", r->name);
    else if (!r->seen_threshold)
        parse_error(p, r->line, "rule '%s': no threshold", r->name);
    else if (!r->seen_action)
        parse_error(p, r->line, "rule '%s': no action", r->name);
    else if (metric_desc[r->metric].fn && !r->fn)
        parse_error(p, r->line, "rule '%s': metric %s needs 'function'", r->name,
                    metric_desc[r->metric].name);
    else if (r->over_step && !(metric_desc[r->metric].over & 2))
        parse_error(p, r->line,
                    "rule '%s': metric %s is per window; over = step takes step_time, "
                    "function_share, bytes_per_s or mpi_fraction",
                    r->name, metric_desc[r->metric].name);
    else if (!r->over_step && !(metric_desc[r->metric].over & 5))
        parse_error(p, r->line, "rule '%s': metric %s needs over = step", r->name,
                    metric_desc[r->metric].name);
    else if (r->scope != SCOPE_ANY && !metric_desc[r->metric].scoped)
        parse_error(p, r->line, "rule '%s': metric %s is job-wide and takes no scope", r->name,
                    metric_desc[r->metric].name);
    else if (r->action == ACT_EXEC && !r->n_words)
        parse_error(p, r->line, "rule '%s': action exec needs 'exec'", r->name);
    else if (r->action == ACT_STEER && !r->steer_key)
        parse_error(p, r->line, "rule '%s': action steer needs 'steer = KEY=VALUE'", r->name);
    else if (r->action == ACT_CAPTURE && !r->capture)
        parse_error(p, r->line, "rule '%s': action capture needs 'capture = N' (windows)", r->name);
}

mw_rules_t *mw__rules_load(const char *path, char *err, size_t errlen)
{
    parse_t p;
    memset(&p, 0, sizeof p);
    p.rs = calloc(1, sizeof *p.rs);
    p.f = fopen(path, "r");
    if (!p.rs || !p.f) {
        snprintf(err, errlen, "%s: %s", path, p.rs ? strerror(errno) : "out of memory");
        if (p.f)
            fclose(p.f);
        free(p.rs);
        return NULL;
    }
    int rc = ini_parse_stream(parse_read_line, &p, parse_on_key, &p);
    int read_err = ferror(p.f);
    fclose(p.f);
    if (p.header_pending)
        parse_error(&p, p.header_line, "section without keys");
    /* Whole-rule checks only on a file that parsed: a rule cut short by a syntax error would
     * hide the real problem behind "no op". */
    for (size_t i = 0; rc == 0 && i < p.rs->n; i++)
        parse_check_rule(&p, &p.rs->r[i]);
    if (read_err)
        snprintf(err, errlen, "%s: read error", path);
    else if (p.err_line && (rc <= 0 || rc >= p.err_line))
        snprintf(err, errlen, "%s:%d: %s", path, p.err_line, p.err);
    else if (rc != 0)
        snprintf(err, errlen, "%s:%d: syntax error (expected '[rule NAME]' or 'key = value')", path,
                 rc);
    if (read_err || p.err_line || rc != 0) {
        mw__rules_free(p.rs);
        return NULL;
    }
    return p.rs;
}

static void reap_group(mw_rules_t *rs, mw_collector_t *c, child_t *ch);

/* 1 while anything of the action's group still exists (zombies included). */
static int group_alive(const child_t *ch)
{
    return kill(-ch->pid, 0) == 0 || errno == EPERM;
}

/* The collector is going away: every running action's group gets SIGTERM, SIGKILL when it
 * is still there MW_RULES_KILL_GRACE_NS later, and the leaders are reaped. Bounded: at most
 * the grace plus one second, polled every 10 ms (the collector is exiting; nothing else
 * waits on its loop). */
#define RULES_STOP_POLL_NS 10000000 /* 10 ms */

static void rules_stop_all(mw_rules_t *rs)
{
    if (!rs->n_child)
        return;
    MW_LOG(MW_LOG_INFO, "stopping %u running action(s)", rs->n_child);
    for (unsigned i = 0; i < rs->n_child; i++)
        kill(-rs->child[i].pid, SIGTERM);
    /* Time is counted in polls of RULES_STOP_POLL_NS, not read from a clock (the core reads
     * none; docs/collector.md): the bound is the grace plus one second of polls. */
    uint64_t waited = 0, kill_at = MW_RULES_KILL_GRACE_NS, give_up = kill_at + 1000000000ull;
    int killed = 0;
    for (;;) {
        unsigned left = 0;
        for (unsigned i = 0; i < rs->n_child; i++) {
            child_t *ch = &rs->child[i];
            reap_group(rs, NULL, ch);
            left += !ch->reaped || group_alive(ch);
        }
        if (!left || waited >= give_up)
            break;
        if (!killed && waited >= kill_at) {
            for (unsigned i = 0; i < rs->n_child; i++)
                kill(-rs->child[i].pid, SIGKILL);
            killed = 1;
            MW_LOG(MW_LOG_WARN, "%u action(s) still running after SIGTERM: killed", left);
        }
        nanosleep(&(struct timespec){0, RULES_STOP_POLL_NS}, NULL);
        waited += RULES_STOP_POLL_NS;
    }
    rs->n_child = 0;
}

void mw__rules_free(mw_rules_t *rs)
{
    if (!rs)
        return;
    rules_stop_all(rs);
    for (size_t i = 0; i < rs->n; i++)
        rule_free(&rs->r[i]);
    free(rs->r);
    free(rs);
}

unsigned mw__rules_count(const mw_rules_t *rs)
{
    return rs ? (unsigned)rs->n : 0;
}

uint64_t mw__rules_fired(const mw_rules_t *rs, const char *name)
{
    for (size_t i = 0; rs && i < rs->n; i++)
        if (strcmp(rs->r[i].name, name) == 0)
            return rs->r[i].fired;
    return 0;
}

const char *mw__rules_last_exit(const mw_rules_t *rs)
{
    return rs ? rs->last_exit : "";
}

unsigned mw__rules_running(const mw_rules_t *rs)
{
    return rs ? rs->n_child : 0;
}

/* ---- evaluation --------------------------------------------------------------------------- */

static int rule_cmp(const rule_t *r, double v)
{
    switch (r->op) {
    case OP_GT:
        return v > r->threshold;
    case OP_GE:
        return v >= r->threshold;
    case OP_LT:
        return v < r->threshold;
    default:
        return v <= r->threshold;
    }
}

/* Whether v is further on the firing side than w ("worse"). */
static int rule_worse(const rule_t *r, double v, double w)
{
    return r->op == OP_GT || r->op == OP_GE ? v > w : v < w;
}

static int rule_in_scope(const rule_t *r, const mw_job_t *job, uint32_t rank)
{
    switch (r->scope) {
    case SCOPE_RANKS:
        return ranks_has(&r->scope_ranks, rank);
    case SCOPE_NODE:
        return job->ranks && strcmp(mw__job_node(job, rank), r->node) == 0;
    default:
        return 1;
    }
}

/* The duration under which a fraction q of the calls of fn ended, in seconds: the top of the
 * duration bin (mw_bins.h) that holds the quantile ("at most this"). -1 without calls. */
static double window_quantile(const mw_window_t *w, unsigned fn, double q)
{
    const uint64_t *h = w->fn[fn].hist;
    uint32_t bins =
        w->duration_bins < MW_MAX_DURATION_BINS ? w->duration_bins : MW_MAX_DURATION_BINS;
    uint64_t total = 0, acc = 0;
    for (uint32_t b = 0; b < bins; b++)
        total += h[b];
    if (!total)
        return -1;
    double need = q * (double)total;
    for (uint32_t b = 0; b < bins; b++) {
        acc += h[b];
        if ((double)acc >= need)
            return mw_bin_hi_ns(b, w->duration_bins) / 1e9;
    }
    return mw_bin_lo_ns(bins, w->duration_bins) / 1e9;
}

/* Computes a rule's value on a window and whether its condition holds. *rank is the rank the
 * value comes from (-1: job-wide). Returns 0 when the window has no value for it. */
static int rule_eval(const rule_t *r, const mw_job_t *job, const mw_window_t *w, double *value,
                     int64_t *rank, int *holds)
{
    *rank = -1;
    switch (r->metric) {
    case M_RANK_FRACTION: {
        /* any / a list / a node: the worst rank that satisfies; all: every reporting rank in
         * scope satisfies, and the value is the one closest to the threshold. */
        int have = 0, all = 1;
        double best = 0, least = 0;
        int64_t best_rank = -1, least_rank = -1;
        for (uint32_t i = 0; w->rank_pm && i < w->n_rank_pm; i++) {
            if (w->rank_pm[i] == MW_RANK_PM_NONE || !rule_in_scope(r, job, i))
                continue;
            double v = w->rank_pm[i] / 1000.0;
            if (!have || rule_worse(r, v, best))
                best = v, best_rank = i;
            if (!have || rule_worse(r, least, v))
                least = v, least_rank = i;
            have = 1;
            all &= rule_cmp(r, v);
        }
        if (!have)
            return 0;
        if (r->scope == SCOPE_ALL) {
            *value = least, *rank = least_rank, *holds = all;
        } else {
            *value = best, *rank = best_rank, *holds = rule_cmp(r, best);
        }
        return 1;
    }
    case M_IMBALANCE:
    case M_LOAD_IMBALANCE: {
        /* max / mean over the ranks in scope of their MPI share (imbalance) or of their share
         * outside MPI, the computation (load_imbalance); the rank is the one at the max. */
        double sum = 0, max = 0;
        uint32_t n = 0;
        for (uint32_t i = 0; w->rank_pm && i < w->n_rank_pm; i++) {
            if (w->rank_pm[i] == MW_RANK_PM_NONE || !rule_in_scope(r, job, i))
                continue;
            double pm = w->rank_pm[i] < 1000 ? w->rank_pm[i] : 1000;
            double v = r->metric == M_IMBALANCE ? pm : 1000.0 - pm;
            if (!n || v > max)
                max = v, *rank = i;
            sum += v;
            n++;
        }
        if (!n || sum <= 0)
            return 0;
        *value = max / (sum / n);
        break;
    }
    case M_FN_SHARE:
        if (!w->mpi_time_ns)
            return 0;
        *value = (double)w->fn[r->fn].s.total_ns / (double)w->mpi_time_ns;
        break;
    case M_FN_P50:
    case M_FN_P99:
        *value = window_quantile(w, r->fn, r->metric == M_FN_P50 ? 0.5 : 0.99);
        if (*value < 0)
            return 0;
        break;
    case M_BYTES_PER_S: {
        uint64_t bytes = 0;
        for (uint32_t i = 0; i < w->pairs.n; i++)
            bytes += MW__INDEX_AT(&w->pairs, mw_pair_sum_t, i)->bytes;
        *value = w->window_ns ? (double)bytes / ((double)w->window_ns / 1e9) : 0;
        break;
    }
    case M_MPI_FRACTION:
        if (!w->ranks_reporting || !w->window_ns)
            return 0;
        *value = (double)w->mpi_time_ns / ((double)w->ranks_reporting * (double)w->window_ns);
        break;
    case M_MISSING:
        *value = w->ranks_missing;
        break;
    default:
        *value = (double)(w->samples_dropped + w->records_dropped);
        break;
    }
    *holds = rule_cmp(r, *value);
    return 1;
}

/* A step rule's value on a closed step (collector/steps.c). Returns 0 when the step has no
 * value for it (no duration, no calls of the function). */
static int rule_eval_step(const rule_t *r, const Mpiwatch__Step *st, double *value)
{
    double dur = st->end_ns > st->start_ns ? (double)(st->end_ns - st->start_ns) : 0;
    switch (r->metric) {
    case M_STEP_TIME:
        if (!dur)
            return 0;
        *value = dur / 1e9;
        return 1;
    case M_FN_SHARE:
        if (!st->mpi_time_ns)
            return 0;
        for (size_t i = 0; i < st->n_functions; i++)
            if (st->functions[i]->fn == r->fn) {
                *value = (double)st->functions[i]->total_ns / (double)st->mpi_time_ns;
                return 1;
            }
        *value = 0;
        return 1;
    case M_BYTES_PER_S: {
        if (!dur)
            return 0;
        uint64_t bytes = 0;
        for (size_t i = 0; i < st->n_pair_bytes; i++)
            bytes += st->pair_bytes[i];
        *value = (double)bytes / (dur / 1e9);
        return 1;
    }
    case M_MPI_FRACTION:
        if (!dur || !st->ranks)
            return 0;
        *value = (double)st->mpi_time_ns / ((double)st->ranks * dur);
        return 1;
    default:
        return 0; /* refused when the rules were loaded */
    }
}

/* ---- actions ------------------------------------------------------------------------------ */

typedef struct {
    char rule[64], rank[24], value[32], window[24], metric[32], step[24], function[64];
    char node[MW_MAX_STRING + 1], job[MW_MAX_STRING + 1]; /* from peers: fire_clean()ed */
} fire_t;

/* Copies text a peer chose (a job or node name) into an argv word or environment value that
 * cannot be mistaken for an option, a path step or anything a program parses: bytes outside
 * [A-Za-z0-9._:+=@,-] become '_', and so does a leading '-' or '.'. Names that mpiwatch
 * itself makes (host names, MPIWATCH_JOB values of letters, digits, '-', '_', '.') are
 * unchanged, unless they start with '-' or '.'. */
static void fire_clean(char *out, size_t cap, const char *in)
{
    size_t n = 0;
    for (; in && in[n] && n + 1 < cap; n++) {
        unsigned char ch = (unsigned char)in[n];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 strchr("._:+=@,-", ch) != NULL;
        if (n == 0 && (ch == '-' || ch == '.'))
            ok = 0;
        out[n] = ok ? (char)ch : '_';
    }
    out[n] = '\0';
}

static const char *fire_get(const fire_t *f, const char *name, size_t len)
{
    const char *vals[] = {f->rule,   f->rank, f->value, f->window,  f->node,
                          f->metric, f->job,  f->step,  f->function};
    for (size_t i = 0; i < sizeof placeholders / sizeof *placeholders; i++)
        if (strlen(placeholders[i]) == len && strncmp(placeholders[i], name, len) == 0)
            return vals[i];
    return NULL;
}

/* A word of the command with its placeholders replaced (malloc'd), or NULL. */
static char *fire_expand(const fire_t *f, const char *w)
{
    size_t cap = strlen(w) + 1, n = 0;
    char *out = malloc(cap);
    while (out && *w) {
        const char *add = w, *e;
        size_t len = 1;
        const char *val;
        if (*w == '{' && (e = strchr(w, '}')) && (val = fire_get(f, w + 1, (size_t)(e - w - 1)))) {
            add = val, len = strlen(val);
            w = e + 1;
        } else {
            w++;
        }
        if (n + len + 1 > cap) {
            cap = 2 * (n + len + 1);
            char *g = realloc(out, cap);
            if (!g) {
                free(out);
                return NULL;
            }
            out = g;
        }
        memcpy(out + n, add, len);
        n += len;
    }
    if (out)
        out[n] = '\0';
    return out;
}

#define RULES_ENVS 9 /* MPIWATCH_RULE .. MPIWATCH_FUNCTION */

static void rules_spawn(mw_rules_t *rs, rule_t *r, const fire_t *f, uint64_t now_ns)
{
    if (r->running >= r->max_running || rs->n_child >= MW_RULES_MAX_CHILDREN) {
        MW_LOG(MW_LOG_WARN, "rule '%s': %u program(s) still running, not starting another", r->name,
               r->running);
        return;
    }
#ifdef __linux__
    static int subreaper;
    if (!subreaper && prctl(PR_SET_CHILD_SUBREAPER, 1) == 0)
        subreaper = 1;
#endif
    char **argv = calloc(r->n_words + 1, sizeof *argv);
    char *envs[RULES_ENVS] = {0};
    char **envp = NULL;
    size_t n_env = 0;
    for (char **e = environ; e && *e; e++)
        n_env++;
    envp = calloc(n_env + RULES_ENVS + 1, sizeof *envp);
    int ok = argv && envp;
    for (size_t i = 0; ok && i < r->n_words; i++)
        ok = (argv[i] = fire_expand(f, r->words[i])) != NULL;
    static const char *const env_names[RULES_ENVS] = {
        "MPIWATCH_RULE", "MPIWATCH_RANK",   "MPIWATCH_VALUE", "MPIWATCH_WINDOW",  "MPIWATCH_JOB",
        "MPIWATCH_NODE", "MPIWATCH_METRIC", "MPIWATCH_STEP",  "MPIWATCH_FUNCTION"};
    const char *env_vals[RULES_ENVS] = {f->rule, f->rank,   f->value, f->window,  f->job,
                                        f->node, f->metric, f->step,  f->function};
    size_t k = 0;
    for (int i = 0; ok && i < RULES_ENVS; i++) {
        ok = asprintf(&envs[i], "%s=%s", env_names[i], env_vals[i]) >= 0;
        if (!ok)
            envs[i] = NULL;
    }
    if (ok) {
        /* Ours replace any inherited MPIWATCH_<same> so the program sees one value. */
        for (char **e = environ; e && *e; e++) {
            int mine = 0;
            for (int i = 0; i < RULES_ENVS; i++) {
                size_t len = strlen(env_names[i]);
                mine |= strncmp(*e, env_names[i], len) == 0 && (*e)[len] == '=';
            }
            if (!mine)
                envp[k++] = *e;
        }
        for (int i = 0; i < RULES_ENVS; i++)
            envp[k++] = envs[i];
    }
    pid_t pid = -1;
    int err = ENOMEM;
    if (ok) {
        /* The collector ignores SIGPIPE and catches SIGINT/SIGTERM/SIGHUP: the program starts
         * with default dispositions, an empty mask, stdin from /dev/null, in its own process
         * group (a ^C on the terminal is for the collector, which then finishes on its own). */
        posix_spawnattr_t attr;
        posix_spawn_file_actions_t fa;
        sigset_t def, empty;
        sigemptyset(&def);
        sigaddset(&def, SIGPIPE);
        sigaddset(&def, SIGINT);
        sigaddset(&def, SIGTERM);
        sigaddset(&def, SIGHUP);
        sigemptyset(&empty);
        posix_spawnattr_init(&attr);
        posix_spawnattr_setsigdefault(&attr, &def);
        posix_spawnattr_setsigmask(&attr, &empty);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
                                            POSIX_SPAWN_SETPGROUP);
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        err = posix_spawnp(&pid, argv[0], &fa, &attr, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
    }
    if (err) {
        MW_LOG(MW_LOG_ERROR, "rule '%s': cannot run %s: %s", r->name, r->words[0], strerror(err));
    } else {
        child_t *ch = &rs->child[rs->n_child++];
        memset(ch, 0, sizeof *ch);
        ch->pid = pid;
        snprintf(ch->rule, sizeof ch->rule, "%s", r->name);
        ch->deadline_ns = now_ns + (uint64_t)(r->timeout_s * 1e9);
        r->running++;
        MW_LOG(MW_LOG_DEBUG, "rule '%s': started %s (pid %d)", r->name, argv[0], (int)pid);
    }
    for (size_t i = 0; argv && i < r->n_words; i++)
        free(argv[i]);
    free(argv);
    for (int i = 0; i < RULES_ENVS; i++)
        free(envs[i]);
    free(envp);
}

/* Sends key=value on the steering channel to the rule's `ranks`, else to `rank` (>= 0), else
 * to every rank. */
static void rules_send(mw_collector_t *c, const rule_t *r, const char *key, const char *value,
                       int64_t rank)
{
    uint32_t one = (uint32_t)rank, *list = NULL;
    size_t n = 0;
    if (r->has_steer_ranks) {
        for (size_t i = 0; i < r->steer_ranks.n; i++)
            n += (size_t)(r->steer_ranks.r[i].hi - r->steer_ranks.r[i].lo) + 1;
        list = malloc(n * sizeof *list);
        size_t k = 0;
        for (size_t i = 0; list && i < r->steer_ranks.n; i++)
            for (uint64_t x = r->steer_ranks.r[i].lo; x <= r->steer_ranks.r[i].hi; x++)
                list[k++] = (uint32_t)x;
        if (!list) {
            MW_LOG(MW_LOG_ERROR, "rule '%s': out of memory for its ranks", r->name);
            return;
        }
    }
    const uint32_t *ranks = list ? list : rank >= 0 ? &one : NULL;
    if (!list)
        n = rank >= 0 ? 1 : 0;
    if (mw__steer_send(c, key, value, ranks, n) < 0)
        MW_LOG(MW_LOG_WARN, "rule '%s': steering message %s=%s not sent", r->name, key, value);
    free(list);
}

uint64_t mw__rules_capture_first(uint64_t index, uint64_t window_ns, uint64_t now_real_ns)
{
    if (!window_ns)
        return index + 1;
    uint64_t k = (now_real_ns + MW_RULES_CAPTURE_LEAD_NS) / window_ns + 1;
    return k > index ? k : index + 1;
}

/* A firing at window `index` (for a step rule: the window its step ended in, and `step`;
 * for a lateness rule: the logical step of the maximum; otherwise step is -1). `fn` is the
 * function where the value occurs (lateness rules), 0 none. */
static void rules_fire(mw_rules_t *rs, rule_t *r, mw_collector_t *c, uint64_t index,
                       uint64_t window_ns, int64_t step, double value, int64_t rank, unsigned fn)
{
    fire_t f;
    const char *fname = fn && fn < MW_FN_SPACE ? mw_fn_name(fn) : NULL;
    snprintf(f.function, sizeof f.function, "%s", fname ? fname : "");
    snprintf(f.rule, sizeof f.rule, "%s", r->name);
    if (rank >= 0)
        snprintf(f.rank, sizeof f.rank, "%lld", (long long)rank);
    else
        snprintf(f.rank, sizeof f.rank, "-1");
    snprintf(f.value, sizeof f.value, "%.6g", value);
    snprintf(f.window, sizeof f.window, "%llu", (unsigned long long)index);
    snprintf(f.step, sizeof f.step, "%lld", (long long)step);
    snprintf(f.metric, sizeof f.metric, "%s", metric_desc[r->metric].name);
    fire_clean(f.node, sizeof f.node,
               rank >= 0 && c->job.ranks ? mw__job_node(&c->job, (uint32_t)rank) : "");
    fire_clean(f.job, sizeof f.job, c->job.job);
    r->fired++;
    char detail[512];
    snprintf(detail, sizeof detail,
             "rule=%s metric=%s scope=%.100s value=%s window=%s rank=%s%s%.100s%s%s%s%s", r->name,
             f.metric, r->scope_text ? r->scope_text : "any", f.value, f.window, f.rank,
             f.node[0] ? " node=" : "", f.node, step >= 0 ? " step=" : "", step >= 0 ? f.step : "",
             f.function[0] ? " function=" : "", f.function);
    MW_LOG(MW_LOG_WARN, "rule fired: %s", detail);
    mw__publish_event(c, "rule", detail);
    switch (r->action) {
    case ACT_LOG:
        break;
    case ACT_EXEC:
        rules_spawn(rs, r, &f, c->now.mono_ns);
        break;
    case ACT_STEER:
        /* The rule's own `ranks`, else the rank the value came from, else every rank. */
        rules_send(c, r, r->steer_key, r->steer_value, rank);
        break;
    case ACT_CAPTURE: {
        /* Every rank captures the same windows: K, chosen so that the message reaches them
         * before K starts (see mw__rules_capture_first). Without `ranks`, all ranks. */
        char arg[48];
        uint64_t k =
            c->job.grid.n > 1
                ? mw_grid_index(&c->job.grid, c->now.real_ns + MW_RULES_CAPTURE_LEAD_NS) + 1
                : mw__rules_capture_first(index, window_ns, c->now.real_ns);
        if (k <= index)
            k = index + 1;
        uint32_t n = r->capture;
        if (r->capture_range) {
            /* A range around the firing: K = firing + FROM, in the past when FROM < 0; the
             * ranks answer those windows from their flight recorder (docs/trace.md). Windows
             * before the job's first are not asked for. */
            int64_t first = (int64_t)index + r->capture_from;
            if (first < 0 && (uint64_t)-first >= n) {
                MW_LOG(MW_LOG_INFO, "rule '%s': no capture, its windows are before the job's",
                       r->name);
                break;
            }
            if (first < 0) {
                n -= (uint32_t)-first;
                first = 0;
            }
            k = (uint64_t)first;
        }
        snprintf(arg, sizeof arg, "%" PRIu32 "@%" PRIu64, n, k);
        char wl[128];
        MW_LOG(MW_LOG_INFO, "rule '%s': capture of windows %s", r->name,
               mw__job_windows_label(&c->job, k, k + n - 1, wl, sizeof wl));
        rules_send(c, r, "mpiwatch.capture", arg, -1);
        break;
    }
    }
}

/* Persistence: counts the windows (or steps) in a row, by index, in which the condition held;
 * a false one or a gap in the indices (no data) starts again. Returns 1 when it has held for
 * `for` of them. */
static int rule_persist(rule_t *r, uint64_t index, int holds)
{
    if (r->last_index >= 0 && (uint64_t)r->last_index + 1 != index)
        r->streak = 0;
    r->last_index = (int64_t)index;
    if (!holds) {
        r->streak = 0;
        return 0;
    }
    if (r->streak < UINT32_MAX)
        r->streak++;
    return r->streak >= r->for_n;
}

void mw__rules_window(mw_rules_t *rs, mw_collector_t *c, const mw_window_t *w)
{
    for (size_t i = 0; rs && i < rs->n; i++) {
        rule_t *r = &rs->r[i];
        double value = 0;
        int64_t rank = -1;
        int holds = 0;
        if (r->over_step || metric_lateness(r->metric))
            continue;
        if (!rule_eval(r, &c->job, w, &value, &rank, &holds))
            holds = 0;
        if (!rule_persist(r, w->index, holds))
            continue;
        if (r->last_fire >= 0) {
            uint64_t cd = r->cooldown;
            if (r->cooldown_is_ns && c->job.grid.n > 1) {
                /* Window time on the job's grid: blocked while this window starts less than
                 * `cooldown` after the end of the window that fired (the lengths can differ). */
                if (mw_grid_span(&c->job.grid, (uint64_t)r->last_fire + 1, w->index) < cd)
                    continue;
            } else {
                if (r->cooldown_is_ns)
                    cd = w->window_ns ? (cd + w->window_ns - 1) / w->window_ns : 0;
                if (w->index - (uint64_t)r->last_fire <= cd)
                    continue; /* in cooldown: the condition keeps counting */
            }
        }
        r->last_fire = (int64_t)w->index;
        r->streak = 0;
        rules_fire(rs, r, c, w->index, w->window_ns, -1, value, rank, 0);
    }
}

void mw__rules_step(mw_rules_t *rs, mw_collector_t *c, const Mpiwatch__Step *st)
{
    for (size_t i = 0; rs && i < rs->n; i++) {
        rule_t *r = &rs->r[i];
        double value = 0;
        if (!r->over_step)
            continue;
        /* A step that did not close (folded into another, or none) breaks the run. */
        if (!rule_persist(r, st->step, rule_eval_step(r, st, &value) && rule_cmp(r, value)))
            continue;
        if (r->last_fire >= 0) {
            /* In steps, or in time: blocked while this step ends less than `cooldown` after
             * the end of the step that fired. */
            if (r->cooldown_is_ns ? st->end_ns < r->last_fire_end_ns + r->cooldown
                                  : st->step - (uint64_t)r->last_fire <= r->cooldown)
                continue;
        }
        r->last_fire = (int64_t)st->step;
        r->last_fire_end_ns = st->end_ns;
        r->streak = 0;
        const mw_grid_t *g = &c->job.grid;
        uint64_t k = g->n ? mw_grid_index(g, st->end_ns)
                          : (c->job.window_ns ? st->end_ns / c->job.window_ns : 0);
        rules_fire(rs, r, c, k, g->n ? mw_grid_len(g, k) : c->job.window_ns, (int64_t)st->step,
                   value, -1, 0);
    }
}

void mw__rules_lateness(mw_rules_t *rs, mw_collector_t *c, const Mpiwatch__Lateness *b)
{
    for (size_t j = 0; rs && j < b->n_windows; j++) {
        const Mpiwatch__LatenessSummary *s = b->windows[j];
        if (!s)
            continue;
        for (size_t i = 0; i < rs->n; i++) {
            rule_t *r = &rs->r[i];
            if (!metric_lateness(r->metric))
                continue;
            /* The value, and where it occurs: the rank, function and step of the maximum
             * (lateness_share: of the largest differential lateness, where the delay
             * starts). Lateness in seconds. */
            double value;
            uint32_t rank = s->diff_rank, fn = s->diff_fn;
            uint64_t step = s->diff_step;
            if (r->metric == M_LATENESS_MAX) {
                value = (double)s->lateness_max_ns / 1e9;
                rank = s->lateness_rank, fn = s->lateness_fn, step = s->lateness_step;
            } else if (r->metric == M_DIFF_LATENESS_MAX) {
                value = (double)s->diff_max_ns / 1e9;
            } else {
                value = s->lateness_share;
            }
            /* A window without events has no value: it breaks a run like a missing one. */
            if (!rule_persist(r, s->key, s->events > 0 && rule_cmp(r, value)))
                continue;
            if (r->last_fire >= 0) {
                uint64_t cd = r->cooldown;
                if (r->cooldown_is_ns)
                    cd = s->window_ns ? (cd + s->window_ns - 1) / s->window_ns : 0;
                if (s->key - (uint64_t)r->last_fire <= cd)
                    continue;
            }
            r->last_fire = (int64_t)s->key;
            r->streak = 0;
            rules_fire(rs, r, c, s->key, s->window_ns, (int64_t)step, value,
                       c->job.size == 0 || rank < c->job.size ? (int64_t)rank : -1, fn);
        }
    }
}

/* ---- programs ----------------------------------------------------------------------------- */

/* Records the end of an action's leader as an "action_exit" event. */
static void child_exit(mw_rules_t *rs, mw_collector_t *c, const child_t *ch, pid_t got, int st)
{
    char detail[160];
    if (got < 0)
        snprintf(detail, sizeof detail, "rule=%s pid=%d status=unknown (%s)", ch->rule,
                 (int)ch->pid, strerror(errno));
    else if (WIFEXITED(st))
        snprintf(detail, sizeof detail, "rule=%s pid=%d status=exit %d%s", ch->rule, (int)ch->pid,
                 WEXITSTATUS(st), ch->timed_out ? " timeout" : "");
    else
        snprintf(detail, sizeof detail, "rule=%s pid=%d status=signal %d%s", ch->rule, (int)ch->pid,
                 WIFSIGNALED(st) ? WTERMSIG(st) : 0, ch->timed_out ? " timeout" : "");
    MW_LOG(got > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? MW_LOG_INFO : MW_LOG_WARN,
           "action_exit: %s", detail);
    if (c)
        mw__publish_event(c, "action_exit", detail);
    memcpy(rs->last_exit, detail, sizeof detail);
}

/* Reaps what of the action's group has ended and is ours (the leader, and what it left
 * behind once reparented to the collector); the leader's end is recorded. Bounded by the
 * processes that ended. */
static void reap_group(mw_rules_t *rs, mw_collector_t *c, child_t *ch)
{
    for (;;) {
        int st = 0;
        pid_t p = waitpid(-ch->pid, &st, WNOHANG);
        if (p > 0) {
            if (p == ch->pid && !ch->reaped) {
                child_exit(rs, c, ch, p, st);
                ch->reaped = 1;
            }
            continue;
        }
        if (p < 0 && !ch->reaped) { /* the leader is not ours any more (cannot happen) */
            child_exit(rs, c, ch, p, 0);
            ch->reaped = 1;
        }
        return;
    }
}

void mw__rules_tick(mw_rules_t *rs, mw_collector_t *c, uint64_t now_ns)
{
    if (!rs)
        return;
    for (unsigned i = 0; i < rs->n_child;) {
        child_t *ch = &rs->child[i];
        reap_group(rs, c, ch);
        /* The group outlives its leader while a process it started still runs; the pid
         * cannot be reused while that group exists. */
        if (ch->reaped && (!group_alive(ch) || (ch->release_ns && now_ns >= ch->release_ns))) {
            for (size_t k = 0; k < rs->n; k++)
                if (strcmp(rs->r[k].name, ch->rule) == 0 && rs->r[k].running)
                    rs->r[k].running--;
            rs->child[i] = rs->child[--rs->n_child];
            continue;
        }
        if (!ch->kill_ns && now_ns >= ch->deadline_ns) {
            MW_LOG(MW_LOG_WARN, "rule '%s': action (process group %d) timed out, terminating it",
                   ch->rule, (int)ch->pid);
            kill(-ch->pid, SIGTERM);
            ch->timed_out = 1;
            ch->kill_ns = now_ns + MW_RULES_KILL_GRACE_NS;
        } else if (ch->kill_ns && !ch->release_ns && now_ns >= ch->kill_ns) {
            kill(-ch->pid, SIGKILL);
            /* Once; a group that still shows after that is zombies nobody reaps (not ours
             * once their parent is gone): its slot is released a grace later. */
            ch->release_ns = now_ns + MW_RULES_KILL_GRACE_NS;
        }
        i++;
    }
}

uint64_t mw__rules_next_ns(const mw_rules_t *rs, uint64_t now_ns)
{
    if (!rs || !rs->n_child)
        return UINT64_MAX;
    uint64_t next = now_ns + MW_RULES_REAP_NS;
    for (unsigned i = 0; i < rs->n_child; i++) {
        const child_t *ch = &rs->child[i];
        uint64_t d = ch->release_ns ? ch->release_ns : ch->kill_ns ? ch->kill_ns : ch->deadline_ns;
        if (d < next)
            next = d;
    }
    return next;
}

int mw__rules_reload(mw_collector_t *c)
{
    if (!c->opt->rules)
        return 0;
    char err[320];
    mw_rules_t *n = mw__rules_load(c->opt->rules, err, sizeof err);
    if (!n) {
        MW_LOG(MW_LOG_ERROR, "SIGHUP: keeping the current rules: %s", err);
        return -1;
    }
    mw_rules_t *o = c->rules;
    if (o) {
        /* Same name, same state (its counts are of windows or of steps: only when it still
         * counts the same thing); running programs stay tracked. */
        for (size_t i = 0; i < n->n; i++)
            for (size_t k = 0; k < o->n; k++)
                if (strcmp(n->r[i].name, o->r[k].name) == 0) {
                    if (n->r[i].over_step == o->r[k].over_step) {
                        n->r[i].streak = o->r[k].streak;
                        n->r[i].last_index = o->r[k].last_index;
                        n->r[i].last_fire = o->r[k].last_fire;
                        n->r[i].last_fire_end_ns = o->r[k].last_fire_end_ns;
                    }
                    n->r[i].fired = o->r[k].fired;
                    n->r[i].running = o->r[k].running;
                }
        memcpy(n->child, o->child, sizeof n->child);
        memcpy(n->last_exit, o->last_exit, sizeof n->last_exit);
        n->n_child = o->n_child;
        o->n_child = 0; /* the new set tracks them: freeing the old one must not stop them */
        mw__rules_free(o);
    }
    c->rules = n;
    MW_LOG(MW_LOG_INFO, "SIGHUP: %u rule(s) loaded from %s", (unsigned)n->n, c->opt->rules);
    return 0;
}
