/* mw_steer_request.c: parsing, checking and encoding of steering requests (mw_steer_request.h).
 *
 * DESIGN: shared by mpiwatch-steer and the viewer so that a request typed in either is read
 * and refused the same way; the key check and the rank-list parser are also the collector's
 * (steer.c, rules.c) and the ranks' (pmpi-shim/steer.c), so the rules cannot drift apart.
 * Everything is checked before anything is encoded; the collector checks everything again (it
 * trusts no client). Only a rank list's syntax is checked here: whether the ranks exist is known to
 * the collector alone.
 */
#include "mw_steer_request.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw_proto.h"

int mw_rank_list_parse(const char *s, unsigned flags, uint64_t limit,
                       int (*add)(void *user, uint32_t lo, uint32_t hi), void *user)
{
    const int blanks = (flags & MW_RANKS_BLANKS) != 0;
    if (limit > (uint64_t)UINT32_MAX + 1)
        limit = (uint64_t)UINT32_MAX + 1;
    for (;;) {
        char *end;
        if (blanks)
            s += strspn(s, " \t");
        if (*s < '0' || *s > '9') /* strtoull would take blanks and signs */
            return -1;
        errno = 0;
        unsigned long long lo = strtoull(s, &end, 10), hi = lo;
        if (errno || lo >= limit)
            return -1;
        s = end;
        if (blanks)
            s += strspn(s, " \t");
        if (*s == '-') {
            s++;
            if (blanks)
                s += strspn(s, " \t");
            if (*s < '0' || *s > '9')
                return -1;
            hi = strtoull(s, &end, 10);
            if (errno || hi >= limit || hi < lo)
                return -1;
            s = end;
            if (blanks)
                s += strspn(s, " \t");
        }
        if (add(user, (uint32_t)lo, (uint32_t)hi) < 0)
            return -1;
        if (*s == '\0')
            return 0;
        if (*s != ',')
            return -1;
        s++;
    }
}

typedef struct {
    uint32_t *out;
    size_t *n;
    size_t max;
} ranks_out_t;

/* Appends lo..hi to the array, refusing more than max ranks in all. */
static int ranks_append(void *user, uint32_t lo, uint32_t hi)
{
    ranks_out_t *o = user;
    if (hi - lo >= o->max || *o->n + (hi - lo) >= o->max)
        return -1;
    for (uint64_t r = lo; r <= hi; r++)
        o->out[(*o->n)++] = (uint32_t)r;
    return 0;
}

int mw_steer_parse_ranks(const char *s, uint32_t *out, size_t *n, size_t max)
{
    ranks_out_t o = {out, n, max};
    *n = 0;
    return mw_rank_list_parse(s, 0, (uint64_t)UINT32_MAX + 1, ranks_append, &o);
}

const char *mw_steer_key_error(const char *k, size_t *at)
{
    size_t n = strlen(k);
    if (at)
        *at = n;
    if (n == 0 || n > MW_STEER_REQ_KEY_MAX)
        return "the key must have 1 to 64 characters";
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-')) {
            if (at)
                *at = i;
            return "the key may only contain A-Z a-z 0-9 . _ -";
        }
    }
    return NULL;
}

int mw_steer_request_set(mw_steer_request_t *rq, const char *kv, char *err, size_t errlen)
{
    const char *eq = strchr(kv, '=');
    if (!eq) {
        snprintf(err, errlen, "expected KEY=VALUE, got '%.200s'", kv);
        return -1;
    }
    size_t kl = (size_t)(eq - kv);
    if (kl > MW_STEER_REQ_KEY_MAX || kl == 0) {
        snprintf(err, errlen, "bad key: the key must have 1 to 64 characters");
        return -1;
    }
    memcpy(rq->key, kv, kl);
    rq->key[kl] = 0;
    const char *why = mw_steer_key_error(rq->key, NULL);
    if (why) {
        snprintf(err, errlen, "bad key '%s': %s", rq->key, why);
        return -1;
    }
    size_t vl = strlen(eq + 1);
    if (vl > MW_STEER_REQ_VALUE_MAX) {
        snprintf(err, errlen, "the value is longer than 1024 bytes");
        return -1;
    }
    memcpy(rq->value, eq + 1, vl + 1);
    return 0;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

int mw_steer_request_parse_line(mw_steer_request_t *rq, const char *line, char sep, char *err,
                                size_t errlen)
{
    size_t len = strlen(line);
    char *s = malloc(len + 1);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(s, line, len + 1);
    char *a = s, *z = s + len;
    if (sep == ' ') {
        while (is_blank(*a))
            a++;
        while (z > a && is_blank(z[-1]))
            *--z = 0;
    }
    rq->n_ranks = 0;
    char *eq = strchr(a, '=');
    char *cut = eq ? strrchr(eq, sep) : NULL;
    if (cut) {
        const char *tail = cut + 1;
        if (strcmp(tail, "all") == 0 ||
            mw_steer_parse_ranks(tail, rq->ranks, &rq->n_ranks, MW_STEER_REQ_RANKS_MAX) == 0) {
            *cut = 0;
            if (sep == ' ')
                while (cut > a && is_blank(cut[-1]))
                    *--cut = 0;
        } else {
            rq->n_ranks = 0;
        }
    }
    int rc = mw_steer_request_set(rq, a, err, errlen);
    free(s);
    return rc;
}

size_t mw_steer_request_pack(const mw_steer_request_t *rq, uint8_t **out)
{
    Mpiwatch__SteerRequest m = MPIWATCH__STEER_REQUEST__INIT;
    m.key = (char *)rq->key;
    m.value = (char *)rq->value;
    m.ranks = (uint32_t *)rq->ranks;
    m.n_ranks = rq->n_ranks;
    size_t len = mpiwatch__steer_request__get_packed_size(&m);
    *out = malloc(len ? len : 1);
    if (!*out)
        return 0;
    return mpiwatch__steer_request__pack(&m, *out);
}

int mw_steer_reply_parse(const void *buf, size_t len, int *ok, uint64_t *seq, char *error,
                         size_t errlen)
{
    Mpiwatch__SteerReply *r = mpiwatch__steer_reply__unpack(NULL, len, buf);
    if (!r)
        return -1;
    *ok = r->ok;
    *seq = r->seq;
    snprintf(error, errlen, "%s", r->error ? r->error : "");
    mpiwatch__steer_reply__free_unpacked(r, NULL);
    return 0;
}

void mw_steer_request_text(const mw_steer_request_t *rq, char *buf, size_t len)
{
    if (!len)
        return;
    size_t at = (size_t)snprintf(buf, len, "%s=%s", rq->key, rq->value);
    if (at >= len || !rq->n_ranks)
        return;
    at += (size_t)snprintf(buf + at, len - at, " ranks ");
    for (size_t i = 0; i < rq->n_ranks && at < len; i++) {
        size_t j = i;
        while (j + 1 < rq->n_ranks && rq->ranks[j + 1] == rq->ranks[j] + 1)
            j++;
        if (j > i + 0)
            at += (size_t)snprintf(buf + at, len - at, "%s%u-%u", i ? "," : "", rq->ranks[i],
                                   rq->ranks[j]);
        else
            at += (size_t)snprintf(buf + at, len - at, "%s%u", i ? "," : "", rq->ranks[i]);
        i = j;
    }
}
