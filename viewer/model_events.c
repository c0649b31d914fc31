/* model_events.c: the job's events: kept in a bounded ring with counts of all, each parsed once
 * when it arrives (rule, value, rank, window), placed on the time axis and worded for the
 * events list. No SDL, no GL (see model_events.h).
 */
#include "model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- job events --------------------------------------------------------------------------- */

/* Copies at most cap - 1 bytes of src, cut at a UTF-8 character boundary, with control
 * characters (which would break a line of the events list) replaced by '?'. */
static void event_copy(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    if (src)
        while (src[n] && n < cap - 1)
            n++;
    if (src && src[n])
        while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
            n--; /* do not end inside a character */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    dst[n] = 0;
}

/* The value of field `name` ("window") in a detail of blank-separated name=value words: a
 * pointer to its first character and its length, or NULL. Only a word's start counts, so
 * "rank=" does not match inside "xrank=". */
static const char *event_field(const char *detail, const char *name, size_t *len)
{
    size_t nl = strlen(name);
    for (const char *p = detail; *p;) {
        if (!strncmp(p, name, nl) && p[nl] == '=') {
            const char *v = p + nl + 1;
            *len = strcspn(v, " ");
            return v;
        }
        p += strcspn(p, " ");
        p += strspn(p, " ");
    }
    return NULL;
}

/* A field as an unsigned integer below 2^53 (exact as a double). */
static int event_u64(const char *detail, const char *name, uint64_t *out)
{
    size_t len = 0;
    const char *v = event_field(detail, name, &len);
    if (!v || len == 0 || len > 16)
        return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return 0;
        x = x * 10 + (uint64_t)(v[i] - '0');
    }
    if (x >= (1ull << 53))
        return 0;
    *out = x;
    return 1;
}

void mw_event_parse(mw_event_t *e, const char *kind, const char *detail, uint64_t real_ns)
{
    memset(e, 0, sizeof *e);
    e->rank = -1;
    event_copy(e->kind_name, sizeof e->kind_name, kind && *kind ? kind : "event");
    event_copy(e->detail, sizeof e->detail, detail ? detail : "");
    e->real_ns = real_ns;
    e->kind = !strcmp(e->kind_name, "rule")          ? MW_EVENT_RULE
              : !strcmp(e->kind_name, "steer")       ? MW_EVENT_STEER
              : !strcmp(e->kind_name, "action_exit") ? MW_EVENT_ACTION_EXIT
                                                     : MW_EVENT_OTHER;
    if (e->kind != MW_EVENT_RULE && e->kind != MW_EVENT_ACTION_EXIT)
        return;
    size_t len = 0;
    const char *v = event_field(e->detail, "rule", &len);
    if (v) {
        if (len >= sizeof e->rule)
            len = sizeof e->rule - 1;
        char tmp[MW_EVENT_NAME];
        memcpy(tmp, v, len);
        tmp[len] = 0;
        event_copy(e->rule, sizeof e->rule, tmp);
    }
    if (e->kind != MW_EVENT_RULE)
        return;
    e->has_window = event_u64(e->detail, "window", &e->window);
    if ((v = event_field(e->detail, "value", &len)) && len > 0 && len < 64) {
        char tmp[64], *end = NULL;
        memcpy(tmp, v, len);
        tmp[len] = 0;
        double x = strtod(tmp, &end);
        if (end == tmp + len && isfinite(x)) {
            e->has_value = 1;
            e->value = x;
        }
    }
    uint64_t r = 0;
    if (event_u64(e->detail, "rank", &r) && r <= UINT32_MAX)
        e->rank = (int64_t)r;
}

void mw_model_add_event(mw_model_t *m, const char *kind, const char *detail, uint64_t real_ns)
{
    mw_event_t e;
    mw_event_parse(&e, kind, detail, real_ns);
    e.seq = ++m->ev_seq;
    /* A rule's steer action publishes right after the firing is recorded: a steering message
     * within 50 ms of the newest event, a rule firing, is taken to be its action. */
    const mw_event_t *prev = m->ev_n ? mw_model_event_at(m, m->ev_n - 1) : NULL;
    if (e.kind == MW_EVENT_STEER && prev && prev->kind == MW_EVENT_RULE &&
        (e.real_ns > prev->real_ns ? e.real_ns - prev->real_ns : prev->real_ns - e.real_ns) <=
            50000000ull)
        e.steer_after = prev->seq;
    m->evc.total++;
    m->evc.by_kind[e.kind]++;
    if (m->ev_n == MW_EVENTS_MAX) {
        m->ev[m->ev_head] = e;
        m->ev_head = (m->ev_head + 1) % MW_EVENTS_MAX;
        m->evc.dropped++;
    } else {
        m->ev[(m->ev_head + m->ev_n) % MW_EVENTS_MAX] = e;
        m->ev_n++;
    }
}

size_t mw_model_event_count(const mw_model_t *m)
{
    return m->ev_n;
}

const mw_event_t *mw_model_event_at(const mw_model_t *m, size_t i)
{
    return i < m->ev_n ? &m->ev[(m->ev_head + i) % MW_EVENTS_MAX] : NULL;
}

void mw_model_event_counts(const mw_model_t *m, mw_event_counts_t *out)
{
    *out = m->evc;
}

int mw_model_event_time(const mw_model_t *m, const mw_event_t *e, double *t, uint64_t *window)
{
    if (!m->grid_set || !m->origin_set)
        return -1;
    uint64_t g;
    if (e->kind == MW_EVENT_RULE && e->has_window && e->window < UINT64_MAX / m->window_ns - 1)
        g = mw_model_window_start(m, e->window + 1);
    else if (e->real_ns)
        g = e->real_ns;
    else
        return -1;
    *t = mw_model_seconds(m, g);
    if (window)
        *window = e->kind == MW_EVENT_RULE && e->has_window ? e->window : mw_model_window_at(m, g);
    return 0;
}

void mw_event_text(const mw_model_t *m, const mw_event_t *e, const mw_event_t *with_steer,
                   char *buf, size_t len)
{
    if (!len)
        return;
    char w[32] = "";
    double t;
    uint64_t k;
    /* Windows are numbered from the run's first (as the topology view counts them): the
     * global index has eleven digits. */
    if (m && mw_model_event_time(m, e, &t, &k) == 0 && k >= m->origin_index)
        snprintf(w, sizeof w, "w %llu  ", (unsigned long long)(k - m->origin_index));
    else if (e->has_window)
        snprintf(w, sizeof w, "w %llu  ", (unsigned long long)e->window);
    char v[32] = "";
    if (e->has_value)
        snprintf(v, sizeof v, " %.3g", e->value);
    switch (e->kind) {
    case MW_EVENT_RULE:
        if (with_steer)
            snprintf(buf, len, "%srule %s%s → steer %s", w, e->rule[0] ? e->rule : "?", v,
                     with_steer->detail);
        else
            snprintf(buf, len, "%srule %s%s", w, e->rule[0] ? e->rule : "?", v);
        break;
    case MW_EVENT_STEER:
        snprintf(buf, len, "%ssteer %s", w, e->detail);
        break;
    default:
        snprintf(buf, len, "%s%s%s%s", w, e->kind_name, e->detail[0] ? ": " : "", e->detail);
        break;
    }
}
