/* mw_trace_match.c: matching sends to receives and grouping collective instances in decoded
 * trace records (mw_trace.h, docs/trace.md "Matching").
 *
 * DESIGN: a message is identified by its channel and its index on that channel, both stamped
 * by the ranks: (communicator, sender's world rank, receiver's world rank, tag, index). A send
 * knows the sender (its part's rank) and the receiver (its peer), a receive the other way
 * round. Every send and receive becomes one key; the keys of all parts are sorted together and
 * each run of equal keys is one message: one send and one receive match; a run with two sends
 * or two receives is a contradiction (a rank stamped one index twice, or the caller passed a
 * window twice): those records are counted as duplicates and matched to nothing, and a single
 * record on the other side of such a run is counted unmatched. Collective records (COLL,
 * ICOLL; not their completions) are sorted by (communicator, instance, rank) the same way.
 * Records still in progress (MW_TF_OPEN) are left out: the call's own record comes later.
 *
 * Only sorting and linear scans: O(n log n) whatever the records say (they come from the
 * network), no hash table, no quadratic path. Index types are 32-bit; more records than that
 * in one part or in all (not possible within MW_TRACE_MAX_RECORDS per window) return -1.
 */
#include "mw_trace.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t comm, seq;
    uint32_t src, dst;
    int32_t tag;
    uint32_t side; /* 0 send, 1 receive */
    uint32_t part, rec;
} match_key_t;

static int key_cmp(const void *a, const void *b)
{
    const match_key_t *x = a, *y = b;
#define CMP(f)                                                                                     \
    if (x->f != y->f)                                                                              \
        return x->f < y->f ? -1 : 1;
    CMP(comm)
    CMP(src)
    CMP(dst)
    CMP(tag)
    CMP(seq)
    CMP(side)
    CMP(part)
    CMP(rec)
    return 0;
}

typedef struct {
    uint64_t comm, seq;
    uint32_t rank, part, rec;
    int32_t root;
    uint16_t fn;
} match_coll_t;

static int coll_cmp(const void *a, const void *b)
{
    const match_coll_t *x = a, *y = b;
    CMP(comm)
    CMP(seq)
    CMP(rank)
    CMP(part)
    CMP(rec)
    return 0;
#undef CMP
}

static int is_coll_member(const mw_trace_rec_t *r)
{
    return (r->kind == MW_TK_COLL || r->kind == MW_TK_ICOLL) && r->comm != 0 &&
           !(r->flags & (MW_TF_OPEN | MW_TF_NOSEQ | MW_TF_PART));
}

void mw_trace_matches_free(mw_trace_matches_t *m)
{
    if (!m)
        return;
    free(m->msgs);
    free(m->colls);
    free(m->coll_members);
    memset(m, 0, sizeof *m);
}

int mw_trace_match(const mw_trace_part_t *parts, size_t nparts, mw_trace_matches_t *out)
{
    memset(out, 0, sizeof *out);
    if (nparts > UINT32_MAX)
        return -1;
    size_t nkeys = 0, ncoll = 0;
    for (size_t p = 0; p < nparts; p++) {
        if (parts[p].n > UINT32_MAX || (parts[p].n && !parts[p].recs))
            return -1;
        for (size_t i = 0; i < parts[p].n; i++) {
            const mw_trace_rec_t *r = &parts[p].recs[i];
            if (r->flags & MW_TF_OPEN)
                continue;
            nkeys += mw_trace_is_send(r) || mw_trace_is_recv(r);
            ncoll += is_coll_member(r);
        }
    }
    if (ncoll > UINT32_MAX / 2)
        return -1;

    match_key_t *keys = malloc((nkeys ? nkeys : 1) * sizeof *keys);
    match_coll_t *ck = malloc((ncoll ? ncoll : 1) * sizeof *ck);
    if (!keys || !ck)
        goto fail;
    size_t k = 0, c = 0;
    for (size_t p = 0; p < nparts; p++) {
        const mw_trace_part_t *pt = &parts[p];
        for (size_t i = 0; i < pt->n; i++) {
            const mw_trace_rec_t *r = &pt->recs[i];
            if (r->flags & MW_TF_OPEN)
                continue;
            if (mw_trace_is_send(r))
                keys[k++] = (match_key_t){.comm = r->comm,
                                          .seq = r->seq,
                                          .src = pt->rank,
                                          .dst = (uint32_t)r->peer,
                                          .tag = r->tag,
                                          .side = 0,
                                          .part = (uint32_t)p,
                                          .rec = (uint32_t)i};
            else if (mw_trace_is_recv(r))
                keys[k++] = (match_key_t){.comm = r->comm,
                                          .seq = r->seq,
                                          .src = (uint32_t)r->peer,
                                          .dst = pt->rank,
                                          .tag = r->tag,
                                          .side = 1,
                                          .part = (uint32_t)p,
                                          .rec = (uint32_t)i};
            if (is_coll_member(r))
                ck[c++] = (match_coll_t){.comm = r->comm,
                                         .seq = r->seq,
                                         .rank = pt->rank,
                                         .part = (uint32_t)p,
                                         .rec = (uint32_t)i,
                                         .root = r->peer,
                                         .fn = r->fn};
        }
    }

    /* messages: runs of equal (comm, src, dst, tag, seq), sends before receives */
    qsort(keys, nkeys, sizeof *keys, key_cmp);
    size_t nmsg_max = 0;
    for (size_t i = 0; i < nkeys;) {
        size_t j = i;
        while (j < nkeys && keys[j].comm == keys[i].comm && keys[j].src == keys[i].src &&
               keys[j].dst == keys[i].dst && keys[j].tag == keys[i].tag &&
               keys[j].seq == keys[i].seq)
            j++;
        size_t s = 0;
        while (i + s < j && keys[i + s].side == 0)
            s++;
        size_t r = (j - i) - s;
        if (s == 1 && r == 1) {
            keys[i].side = 2; /* marks a match for the second pass */
            nmsg_max++;
        } else {
            out->duplicates += (s > 1 ? s : 0) + (r > 1 ? r : 0);
            out->sends_unmatched += s == 1;
            out->recvs_unmatched += r == 1;
        }
        i = j;
    }
    out->msgs = malloc((nmsg_max ? nmsg_max : 1) * sizeof *out->msgs);
    if (!out->msgs)
        goto fail;
    for (size_t i = 0; i < nkeys; i++)
        if (keys[i].side == 2)
            out->msgs[out->nmsgs++] = (mw_trace_match_t){.send_part = keys[i].part,
                                                         .send_rec = keys[i].rec,
                                                         .recv_part = keys[i + 1].part,
                                                         .recv_rec = keys[i + 1].rec};

    /* collectives: runs of equal (comm, seq) */
    qsort(ck, ncoll, sizeof *ck, coll_cmp);
    size_t ngroups = 0;
    for (size_t i = 0; i < ncoll; i++)
        ngroups += i == 0 || ck[i].comm != ck[i - 1].comm || ck[i].seq != ck[i - 1].seq;
    out->colls = malloc((ngroups ? ngroups : 1) * sizeof *out->colls);
    out->coll_members = malloc((ncoll ? 2 * ncoll : 1) * sizeof *out->coll_members);
    if (!out->colls || !out->coll_members)
        goto fail;
    for (size_t i = 0; i < ncoll;) {
        size_t j = i;
        uint8_t consistent = 1;
        while (j < ncoll && ck[j].comm == ck[i].comm && ck[j].seq == ck[i].seq) {
            if (ck[j].fn != ck[i].fn || ck[j].root != ck[i].root ||
                (j > i && ck[j].rank == ck[j - 1].rank))
                consistent = 0; /* another function or root, or one rank twice */
            out->coll_members[2 * j] = ck[j].part;
            out->coll_members[2 * j + 1] = ck[j].rec;
            j++;
        }
        out->colls[out->ncolls++] = (mw_trace_coll_t){.comm = ck[i].comm,
                                                      .seq = ck[i].seq,
                                                      .first = (uint32_t)i,
                                                      .n = (uint32_t)(j - i),
                                                      .fn = ck[i].fn,
                                                      .consistent = consistent};
        out->coll_inconsistent += !consistent;
        i = j;
    }
    free(keys);
    free(ck);
    return 0;
fail:
    free(keys);
    free(ck);
    mw_trace_matches_free(out);
    return -1;
}
