/* mw_network.c: a Slurm topology.conf read into a tree of switches and nodes (mw_network.h).
 *
 * DESIGN: three steps, each bounded. (1) The text is cut into logical lines (comments dropped,
 * backslash continuations joined, at most MW_NET_MAX_LINE bytes each) and every line into its
 * keys; each switch keeps its name and the byte ranges of its Nodes and Switches expressions.
 * (2) The switches are sorted by name (a name defined twice is an error) and each Switches
 * expression is expanded into parents: a switch under two parents, an unknown switch and a
 * cycle are errors, as is a tree deeper than MW_NET_MAX_DEPTH. (3) The Nodes expressions are
 * expanded and the nodes sorted by name (a node under two switches is an error). A hostlist
 * expression is counted before it is expanded (mw_hostlist_count: the product of its ranges'
 * sizes, saturated), so a claim of 10^9 names costs a multiplication, not gigabytes; the names
 * of the whole file are capped too (MW_NET_MAX_NODES). Names live in one arena, referenced by
 * offset while it grows and turned into pointers at the end.
 */
#include "mw_network.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_GROUPS 8 /* bracket groups in one name */

typedef struct {
    size_t name, speed;           /* arena offsets (speed: SIZE_MAX none) */
    const char *nodes, *children; /* expressions in the line buffer copy (NULL: none) */
    size_t nodes_len, children_len;
    uint32_t line;
    int32_t parent;
    uint32_t level, n_nodes, n_children;
} sw_work_t;

typedef struct {
    mw_network_t *net;
    char *err;
    size_t errlen;
    sw_work_t *sw;
    uint32_t n_sw;
    size_t cap_sw;
    char *exprs; /* every Nodes / Switches expression, copied (the line buffer is reused) */
    size_t exprs_len, exprs_cap;
    size_t *node_name; /* arena offsets */
    uint32_t *node_sw;
    size_t n_nodes, cap_nodes;
} parse_t;

static int fail(parse_t *p, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(parse_t *p, uint32_t line, const char *fmt, ...)
{
    if (!p->err || !p->errlen)
        return -1;
    int n = line ? snprintf(p->err, p->errlen, "line %u: ", line) : 0;
    if (n < 0 || (size_t)n >= p->errlen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int grow(void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *n = realloc(*buf, c * elem);
    if (!n)
        return -1;
    *buf = n;
    *cap = c;
    return 0;
}

static int arena_add(parse_t *p, const char *s, size_t len, size_t *off)
{
    mw_network_t *net = p->net;
    if (grow((void **)&net->arena, &net->arena_cap, net->arena_len + len + 1, 1) < 0)
        return fail(p, 0, "out of memory");
    memcpy(net->arena + net->arena_len, s, len);
    net->arena[net->arena_len + len] = 0;
    *off = net->arena_len;
    net->arena_len += len + 1;
    return 0;
}

static int name_char_ok(unsigned char c)
{
    return c > 0x20 && c < 0x7f && c != ',' && c != '[' && c != ']' && c != '=' && c != '\\';
}

/* ---- hostlists ---------------------------------------------------------------------------- */

typedef struct {
    const char *text; /* the bracket's inside */
    size_t len;
    uint64_t count;
} group_t;

/* A number of at most 18 digits. */
static int parse_num(const char *s, size_t len, uint64_t *v)
{
    if (len == 0 || len > 18)
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    *v = x;
    return 0;
}

/* Range j of a bracket's inside "a-b,c,...": its bounds and width. Returns the next position
 * or (size_t)-1 when malformed. */
static size_t next_range(const char *s, size_t len, size_t pos, uint64_t *lo, uint64_t *hi,
                         int *width)
{
    size_t end = pos;
    while (end < len && s[end] != ',')
        end++;
    const char *dash = memchr(s + pos, '-', end - pos);
    size_t a_len = dash ? (size_t)(dash - (s + pos)) : end - pos;
    if (parse_num(s + pos, a_len, lo) < 0)
        return (size_t)-1;
    *width = (int)a_len;
    if (dash) {
        size_t b0 = (size_t)(dash - s) + 1;
        if (parse_num(s + b0, end - b0, hi) < 0 || *hi < *lo)
            return (size_t)-1;
    } else {
        *hi = *lo;
    }
    return end < len ? end + 1 : end;
}

/* Splits one item (no top-level comma) into its bracket groups; the count of names it stands
 * for, saturated at MW_NET_MAX_EXPAND + 1. Returns -1 when malformed. */
static int64_t item_groups(const char *s, size_t len, group_t *g, int *ng, char *err, size_t errlen)
{
    uint64_t total = 1;
    int n = 0;
    if (len == 0) {
        snprintf(err, errlen, "an empty name in a list");
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ']') {
            snprintf(err, errlen, "a ']' without '['");
            return -1;
        }
        if (c != '[') {
            if (!name_char_ok(c)) {
                snprintf(err, errlen, "a name with the character 0x%02x", c);
                return -1;
            }
            continue;
        }
        const char *close = memchr(s + i, ']', len - i);
        if (!close) {
            snprintf(err, errlen, "a '[' without ']'");
            return -1;
        }
        if (n == MAX_GROUPS) {
            snprintf(err, errlen, "more than %d bracket groups in a name", MAX_GROUPS);
            return -1;
        }
        group_t *gr = &g[n++];
        gr->text = s + i + 1;
        gr->len = (size_t)(close - (s + i + 1));
        gr->count = 0;
        if (gr->len == 0 || memchr(gr->text, '[', gr->len)) {
            snprintf(err, errlen, "an empty or nested bracket");
            return -1;
        }
        for (size_t pos = 0; pos < gr->len;) {
            uint64_t lo, hi;
            int w;
            pos = next_range(gr->text, gr->len, pos, &lo, &hi, &w);
            if (pos == (size_t)-1) {
                snprintf(err, errlen, "a bad range in [%.*s] (numbers a-b with a <= b)",
                         (int)(gr->len > 40 ? 40 : gr->len), gr->text);
                return -1;
            }
            uint64_t k = hi - lo + 1;
            gr->count =
                gr->count + k > MW_NET_MAX_EXPAND ? MW_NET_MAX_EXPAND + 1ull : gr->count + k;
        }
        total =
            total * gr->count > MW_NET_MAX_EXPAND ? MW_NET_MAX_EXPAND + 1ull : total * gr->count;
        i = (size_t)(close - s);
    }
    *ng = n;
    return (int64_t)total;
}

/* Calls fn for every top-level item of expr. */
static int each_item(const char *expr, size_t len, int (*fn)(void *ctx, const char *item, size_t n),
                     void *ctx)
{
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && expr[i] == '[')
            depth++;
        else if (i < len && expr[i] == ']')
            depth--;
        if (i == len || (expr[i] == ',' && depth <= 0)) {
            if (fn(ctx, expr + start, i - start) < 0)
                return -1;
            start = i + 1;
        }
    }
    return 0;
}

typedef struct {
    uint64_t total;
    char *err;
    size_t errlen;
} count_ctx_t;

static int count_item(void *ctx, const char *item, size_t n)
{
    count_ctx_t *c = ctx;
    group_t g[MAX_GROUPS];
    int ng;
    int64_t k = item_groups(item, n, g, &ng, c->err, c->errlen);
    if (k < 0)
        return -1;
    c->total += (uint64_t)k;
    if (c->total > MW_NET_MAX_EXPAND)
        c->total = MW_NET_MAX_EXPAND + 1ull;
    return 0;
}

int64_t mw_hostlist_count(const char *expr, size_t len, char *err, size_t errlen)
{
    count_ctx_t c = {0, err, errlen};
    if (each_item(expr, len, count_item, &c) < 0)
        return -1;
    return (int64_t)c.total;
}

/* Expands an item (already counted) name by name into fn. */
typedef int (*name_fn)(void *ctx, const char *name, size_t len);

static int expand_item(const char *s, size_t len, name_fn fn, void *ctx, char *err, size_t errlen)
{
    group_t g[MAX_GROUPS];
    int ng;
    int64_t total = item_groups(s, len, g, &ng, err, errlen);
    if (total < 0)
        return -1;
    uint64_t idx[MAX_GROUPS] = {0};
    char name[MW_NET_MAX_NAME + 1];
    for (int64_t k = 0; k < total; k++) {
        size_t o = 0;
        int gi = 0;
        for (size_t i = 0; i < len; i++) {
            if (s[i] != '[') {
                if (o >= MW_NET_MAX_NAME)
                    goto too_long;
                name[o++] = s[i];
                continue;
            }
            /* The idx[gi]-th value of group gi. */
            uint64_t want = idx[gi], lo = 0, hi = 0;
            int w = 1;
            for (size_t pos = 0; pos < g[gi].len;) {
                pos = next_range(g[gi].text, g[gi].len, pos, &lo, &hi, &w);
                if (want <= hi - lo)
                    break;
                want -= hi - lo + 1;
            }
            char num[48];
            int nn = snprintf(num, sizeof num, "%0*llu", w, (unsigned long long)(lo + want));
            if (nn < 0 || o + (size_t)nn > MW_NET_MAX_NAME)
                goto too_long;
            memcpy(name + o, num, (size_t)nn);
            o += (size_t)nn;
            i = (size_t)((const char *)memchr(s + i, ']', len - i) - s);
            gi++;
        }
        if (fn(ctx, name, o) < 0)
            return -1;
        /* The odometer: the last group turns fastest, as Slurm lists them. */
        for (int j = ng - 1; j >= 0; j--) {
            if (++idx[j] < g[j].count)
                break;
            idx[j] = 0;
        }
    }
    return 0;
too_long:
    snprintf(err, errlen, "a name over %u bytes", MW_NET_MAX_NAME);
    return -1;
}

typedef struct {
    name_fn fn;
    void *ctx;
    char *err;
    size_t errlen;
} expand_ctx_t;

static int expand_one(void *ctx, const char *item, size_t n)
{
    expand_ctx_t *e = ctx;
    return expand_item(item, n, e->fn, e->ctx, e->err, e->errlen);
}

/* Counts, refuses over MW_NET_MAX_EXPAND, then expands. */
static int expand(parse_t *p, uint32_t line, const char *key, const char *expr, size_t len,
                  name_fn fn, void *ctx)
{
    char why[160];
    int64_t k = mw_hostlist_count(expr, len, why, sizeof why);
    if (k < 0)
        return fail(p, line, "%s: %s", key, why);
    if (k > MW_NET_MAX_EXPAND)
        return fail(p, line, "%s: the expression stands for more than %u names", key,
                    MW_NET_MAX_EXPAND);
    expand_ctx_t e = {fn, ctx, why, sizeof why};
    if (each_item(expr, len, expand_one, &e) < 0)
        return p->err && p->err[0] ? -1 : fail(p, line, "%s: %s", key, why);
    return 0;
}

/* ---- lines -------------------------------------------------------------------------------- */

static int keep_expr(parse_t *p, const char *s, size_t len, const char **out)
{
    /* Offsets while the buffer grows: fixed into pointers once every line is read. */
    if (grow((void **)&p->exprs, &p->exprs_cap, p->exprs_len + len + 1, 1) < 0)
        return fail(p, 0, "out of memory");
    memcpy(p->exprs + p->exprs_len, s, len);
    p->exprs[p->exprs_len + len] = 0;
    *out = (const char *)(uintptr_t)(p->exprs_len + 1); /* +1: 0 means none */
    p->exprs_len += len + 1;
    return 0;
}

/* One logical line: keys separated by blanks. */
static int parse_line(parse_t *p, char *s, size_t len, uint32_t line)
{
    size_t i = 0;
    sw_work_t w;
    memset(&w, 0, sizeof w);
    w.speed = SIZE_MAX;
    w.line = line;
    w.parent = -1;
    int have_name = 0, any = 0;
    const char *name = NULL;
    size_t name_len = 0;
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i >= len)
            break;
        size_t t0 = i;
        while (i < len && s[i] != ' ' && s[i] != '\t')
            i++;
        const char *tok = s + t0;
        size_t tl = i - t0;
        const char *eq = memchr(tok, '=', tl);
        if (!eq)
            return fail(p, line, "'%.*s' is not KEY=VALUE", (int)(tl > 40 ? 40 : tl), tok);
        size_t kl = (size_t)(eq - tok), vl = tl - kl - 1;
        const char *val = eq + 1;
        any = 1;
        if (vl == 0)
            return fail(p, line, "%.*s has no value", (int)(kl > 40 ? 40 : kl), tok);
        for (size_t j = 0; j < vl; j++)
            if ((unsigned char)val[j] < 0x21 || (unsigned char)val[j] > 0x7e)
                return fail(p, line, "a value with the byte 0x%02x (names are ASCII)",
                            (unsigned char)val[j]);
#define KEY(k) (kl == sizeof k - 1 && strncasecmp(tok, k, kl) == 0)
        if (KEY("SwitchName")) {
            if (have_name)
                return fail(p, line, "SwitchName given twice");
            if (vl > MW_NET_MAX_NAME)
                return fail(p, line, "a switch name over %u bytes", MW_NET_MAX_NAME);
            for (size_t j = 0; j < vl; j++)
                if (!name_char_ok((unsigned char)val[j]))
                    return fail(p, line, "SwitchName: one name, without ',', '[' or ']'");
            have_name = 1;
            name = val;
            name_len = vl;
        } else if (KEY("Nodes")) {
            if (w.nodes)
                return fail(p, line, "Nodes given twice");
            if (keep_expr(p, val, vl, &w.nodes) < 0)
                return -1;
            w.nodes_len = vl;
        } else if (KEY("Switches")) {
            if (w.children)
                return fail(p, line, "Switches given twice");
            if (keep_expr(p, val, vl, &w.children) < 0)
                return -1;
            w.children_len = vl;
        } else if (KEY("LinkSpeed")) {
            if (vl > MW_NET_MAX_NAME)
                return fail(p, line, "LinkSpeed over %u bytes", MW_NET_MAX_NAME);
            if (arena_add(p, val, vl, &w.speed) < 0)
                return -1;
        } else {
            return fail(p, line,
                        "unknown key '%.*s' (SwitchName, Nodes, Switches, LinkSpeed: a "
                        "topology/tree file)",
                        (int)(kl > 40 ? 40 : kl), tok);
        }
#undef KEY
    }
    if (!any)
        return 0;
    if (!have_name)
        return fail(p, line, "no SwitchName");
    if (p->n_sw >= MW_NET_MAX_SWITCHES)
        return fail(p, line, "more than %u switches", MW_NET_MAX_SWITCHES);
    if (arena_add(p, name, name_len, &w.name) < 0)
        return -1;
    if (grow((void **)&p->sw, &p->cap_sw, p->n_sw + 1, sizeof *p->sw) < 0)
        return fail(p, 0, "out of memory");
    p->sw[p->n_sw++] = w;
    return 0;
}

/* Cuts the text into logical lines. */
static int parse_lines(parse_t *p, const char *text, size_t len)
{
    char *buf = malloc(MW_NET_MAX_LINE + 1);
    if (!buf)
        return fail(p, 0, "out of memory");
    size_t bl = 0, pos = 0;
    uint32_t line = 0, start = 0;
    int rc = 0;
    while (pos < len && rc == 0) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        line++;
        if (!bl)
            start = line;
        size_t l = end - pos;
        const char *s = text + pos;
        pos = end + 1;
        if (memchr(s, 0, l)) {
            rc = fail(p, line, "a NUL byte (not a text file)");
            break;
        }
        const char *hash = memchr(s, '#', l);
        if (hash)
            l = (size_t)(hash - s);
        while (l && (s[l - 1] == '\r' || s[l - 1] == ' ' || s[l - 1] == '\t'))
            l--;
        int cont = l && s[l - 1] == '\\';
        if (cont)
            l--;
        if (bl + l + 1 > MW_NET_MAX_LINE) {
            rc = fail(p, start, "a line over %u bytes", MW_NET_MAX_LINE);
            break;
        }
        memcpy(buf + bl, s, l);
        bl += l;
        buf[bl++] = ' ';
        if (cont && pos < len)
            continue;
        rc = parse_line(p, buf, bl, start);
        bl = 0;
    }
    free(buf);
    return rc;
}

/* ---- the tree ----------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    uint32_t idx;
} by_name_t;

static int cmp_by_name(const void *a, const void *b)
{
    return strcmp(((const by_name_t *)a)->name, ((const by_name_t *)b)->name);
}

static int find_sorted(const by_name_t *v, size_t n, const char *name, size_t len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(v[mid].name, name, len);
        if (c == 0 && v[mid].name[len])
            c = 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n && strncmp(v[lo].name, name, len) == 0 && !v[lo].name[len])
        return (int)v[lo].idx;
    return -1;
}

typedef struct {
    parse_t *p;
    const by_name_t *sorted;
    uint32_t self;
} child_ctx_t;

static int add_child(void *ctx, const char *name, size_t len)
{
    child_ctx_t *c = ctx;
    parse_t *p = c->p;
    sw_work_t *me = &p->sw[c->self];
    int k = find_sorted(c->sorted, p->n_sw, name, len);
    if (k < 0)
        return fail(p, me->line, "Switches: no switch named '%.*s'", (int)len, name);
    if ((uint32_t)k == c->self)
        return fail(p, me->line, "Switches: the switch is under itself");
    if (p->sw[k].parent >= 0) {
        if ((uint32_t)p->sw[k].parent == c->self)
            return fail(p, me->line, "Switches: '%.*s' listed twice", (int)len, name);
        return fail(p, me->line, "switch '%.*s' is under two switches (line %u and this one)",
                    (int)len, name, p->sw[p->sw[k].parent].line);
    }
    p->sw[k].parent = (int32_t)c->self;
    me->n_children++;
    return 0;
}

typedef struct {
    parse_t *p;
    uint32_t self;
} node_ctx_t;

static int add_node(void *ctx, const char *name, size_t len)
{
    node_ctx_t *c = ctx;
    parse_t *p = c->p;
    if (p->n_nodes >= MW_NET_MAX_NODES)
        return fail(p, p->sw[c->self].line, "more than %u nodes in all", MW_NET_MAX_NODES);
    size_t was = p->cap_nodes;
    if (grow((void **)&p->node_name, &p->cap_nodes, p->n_nodes + 1, sizeof *p->node_name) < 0)
        return fail(p, 0, "out of memory");
    if (p->cap_nodes != was || !p->node_sw) { /* node_sw follows node_name's capacity */
        void *ns = realloc(p->node_sw, p->cap_nodes * sizeof *p->node_sw);
        if (!ns)
            return fail(p, 0, "out of memory");
        p->node_sw = ns;
    }
    if (arena_add(p, name, len, &p->node_name[p->n_nodes]) < 0)
        return -1;
    p->node_sw[p->n_nodes++] = c->self;
    p->sw[c->self].n_nodes++;
    return 0;
}

static int build(parse_t *p)
{
    mw_network_t *net = p->net;
    if (p->n_sw == 0)
        return fail(p, 0, "no switch defined (SwitchName=...)");
    /* Expressions: offsets into pointers. */
    for (uint32_t i = 0; i < p->n_sw; i++) {
        if (p->sw[i].nodes)
            p->sw[i].nodes = p->exprs + ((uintptr_t)p->sw[i].nodes - 1);
        if (p->sw[i].children)
            p->sw[i].children = p->exprs + ((uintptr_t)p->sw[i].children - 1);
    }
    by_name_t *sorted = malloc(p->n_sw * sizeof *sorted);
    if (!sorted)
        return fail(p, 0, "out of memory");
    for (uint32_t i = 0; i < p->n_sw; i++) {
        sorted[i].name = net->arena + p->sw[i].name;
        sorted[i].idx = i;
    }
    qsort(sorted, p->n_sw, sizeof *sorted, cmp_by_name);
    int rc = 0;
    for (uint32_t i = 1; i < p->n_sw && rc == 0; i++)
        if (strcmp(sorted[i - 1].name, sorted[i].name) == 0) {
            uint32_t a = sorted[i - 1].idx, b = sorted[i].idx;
            uint32_t first = a < b ? a : b, second = a < b ? b : a;
            rc = fail(p, p->sw[second].line, "switch '%s' is already defined on line %u",
                      sorted[i].name, p->sw[first].line);
        }
    for (uint32_t i = 0; i < p->n_sw && rc == 0; i++) {
        if (!p->sw[i].children)
            continue;
        child_ctx_t c = {p, sorted, i};
        rc = expand(p, p->sw[i].line, "Switches", p->sw[i].children, p->sw[i].children_len,
                    add_child, &c);
    }
    free(sorted);
    if (rc < 0)
        return -1;
    /* Levels: walk up from every switch; a walk longer than the switches is a cycle. */
    net->depth = 1;
    for (uint32_t i = 0; i < p->n_sw; i++) {
        uint32_t steps = 0;
        int32_t k = p->sw[i].parent;
        while (k >= 0) {
            if (++steps > p->n_sw)
                return fail(p, p->sw[i].line, "the switches form a cycle");
            k = p->sw[k].parent;
        }
        if (steps + 1 > MW_NET_MAX_DEPTH)
            return fail(p, p->sw[i].line, "more than %u levels of switches", MW_NET_MAX_DEPTH);
        p->sw[i].level = steps;
        if (steps + 1 > net->depth)
            net->depth = steps + 1;
    }
    for (uint32_t i = 0; i < p->n_sw; i++) {
        if (!p->sw[i].nodes)
            continue;
        node_ctx_t c = {p, i};
        if (expand(p, p->sw[i].line, "Nodes", p->sw[i].nodes, p->sw[i].nodes_len, add_node, &c) < 0)
            return -1;
    }
    /* The public arrays, names as pointers. */
    net->switches = calloc(p->n_sw, sizeof *net->switches);
    net->nodes = calloc(p->n_nodes ? p->n_nodes : 1, sizeof *net->nodes);
    if (!net->switches || !net->nodes)
        return fail(p, 0, "out of memory");
    net->n_switches = p->n_sw;
    for (uint32_t i = 0; i < p->n_sw; i++) {
        mw_net_switch_t *s = &net->switches[i];
        s->name = net->arena + p->sw[i].name;
        s->parent = p->sw[i].parent;
        s->level = p->sw[i].level;
        s->n_nodes = p->sw[i].n_nodes;
        s->n_children = p->sw[i].n_children;
        s->line = p->sw[i].line;
        s->link_speed = p->sw[i].speed == SIZE_MAX ? NULL : net->arena + p->sw[i].speed;
    }
    net->n_nodes = (uint32_t)p->n_nodes;
    for (size_t i = 0; i < p->n_nodes; i++) {
        net->nodes[i].name = net->arena + p->node_name[i];
        net->nodes[i].sw = p->node_sw[i];
    }
    /* Sorted by name, stable for the error's lines: ties keep file order. */
    by_name_t *byn = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof *byn);
    if (!byn)
        return fail(p, 0, "out of memory");
    for (size_t i = 0; i < p->n_nodes; i++) {
        byn[i].name = net->nodes[i].name;
        byn[i].idx = (uint32_t)i;
    }
    qsort(byn, p->n_nodes, sizeof *byn, cmp_by_name);
    for (size_t i = 1; i < p->n_nodes; i++)
        if (strcmp(byn[i - 1].name, byn[i].name) == 0) {
            uint32_t a = net->nodes[byn[i - 1].idx].sw, b = net->nodes[byn[i].idx].sw;
            uint32_t first = a < b ? a : b, second = a < b ? b : a;
            int r = a == b ? fail(p, p->sw[a].line, "node '%s' listed twice", byn[i].name)
                           : fail(p, p->sw[second].line,
                                  "node '%s' is already under switch '%s' (line %u)", byn[i].name,
                                  net->switches[first].name, p->sw[first].line);
            free(byn);
            return r;
        }
    mw_net_node_t *sortedn = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof *sortedn);
    if (!sortedn) {
        free(byn);
        return fail(p, 0, "out of memory");
    }
    for (size_t i = 0; i < p->n_nodes; i++)
        sortedn[i] = net->nodes[byn[i].idx];
    free(byn);
    free(net->nodes);
    net->nodes = sortedn;
    return 0;
}

void mw_network_free(mw_network_t *net)
{
    if (!net)
        return;
    free(net->switches);
    free(net->nodes);
    free(net->arena);
    memset(net, 0, sizeof *net);
}

int mw_network_parse(mw_network_t *net, const char *text, size_t len, char *err, size_t errlen)
{
    memset(net, 0, sizeof *net);
    if (err && errlen)
        err[0] = 0;
    parse_t p;
    memset(&p, 0, sizeof p);
    p.net = net;
    p.err = err;
    p.errlen = errlen;
    int rc = -1;
    if (len > MW_NET_MAX_FILE)
        fail(&p, 0, "over %u bytes", MW_NET_MAX_FILE);
    else if (parse_lines(&p, text, len) == 0 && build(&p) == 0)
        rc = 0;
    free(p.sw);
    free(p.exprs);
    free(p.node_name);
    free(p.node_sw);
    if (rc < 0)
        mw_network_free(net);
    return rc;
}

int mw_network_read(mw_network_t *net, const char *path, char *err, size_t errlen)
{
    memset(net, 0, sizeof *net);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *buf = malloc(MW_NET_MAX_FILE + 1);
    size_t n = buf ? fread(buf, 1, MW_NET_MAX_FILE + 1, f) : 0;
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
        free(buf);
        return -1;
    }
    char why[400];
    int rc;
    if (n > MW_NET_MAX_FILE) {
        snprintf(why, sizeof why, "over %u bytes", MW_NET_MAX_FILE);
        rc = -1;
    } else {
        rc = mw_network_parse(net, buf, n, why, sizeof why);
    }
    free(buf);
    if (rc < 0)
        snprintf(err, errlen, "%s: %s", path, why);
    return rc;
}

static int find_exact(const mw_network_t *net, const char *name, size_t len)
{
    size_t lo = 0, hi = net->n_nodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(net->nodes[mid].name, name, len);
        if (c == 0 && net->nodes[mid].name[len])
            c = 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < net->n_nodes && strncmp(net->nodes[lo].name, name, len) == 0 &&
        !net->nodes[lo].name[len])
        return (int)net->nodes[lo].sw;
    return -1;
}

int32_t mw_network_find(const mw_network_t *net, const char *name)
{
    if (!net || !name || !net->n_nodes)
        return -1;
    size_t len = strnlen(name, MW_NET_MAX_NAME + 1);
    if (len > MW_NET_MAX_NAME)
        return -1;
    int k = find_exact(net, name, len);
    const char *dot = memchr(name, '.', len);
    if (k < 0 && dot && dot > name)
        k = find_exact(net, name, (size_t)(dot - name));
    return k;
}
