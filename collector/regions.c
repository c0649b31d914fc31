/* regions.c: the job-wide tables of code regions and call sites (docs/regions.md, docs/callsites.md
 * "In the collector").
 *
 * Each rank numbers its regions and call sites itself, from 1, and defines each id once
 * (RegionDef, CallSiteDef, repeated until a sample carrying them left the rank). The job knows
 * a region by its name and a call site by (module, offset), so that one name or one line of one
 * binary is one entry whatever rank reports it: job id = position + 1 in JobInfo.regions /
 * JobInfo.sites. A per-rank map turns the rank's ids into job ids as entries arrive.
 *
 * DESIGN: nothing a rank claims is trusted. Definitions and entries are checked one by one and
 * what fails a check is left out and counted by reason (MW_RS_REASONS); the sample itself is only
 * rejected when its parallel arrays disagree in length (as for every other array). Every table
 * is bounded: per rank (MW_RANK_MAX_REGIONS / _SITES definitions), per job (MW_JOB_MAX_REGIONS /
 * _SITES, and the job description's byte budget, charged for every new string), per sample
 * (MW_SAMPLE_MAX_REGION_ENTRIES / _SITE_ENTRIES entries looked at), so one message costs
 * O(its entries) and memory stays bounded whatever ranks send. `gen` moves only when a table
 * grows, so the job description is encoded again only when something new arrived.
 */
#include "regions.h"
#include "ingest.h"
#include "mw_wire.h"

#include <stdlib.h>
#include <string.h>

#define MAP_MAX (1u << 24) /* rank-id map entries of a job */
#define PROBES 8u          /* hash neighbours tried before a name counts as a collision */
#define KIND_SITE (1ull << 31)

/* Bytes of the job description one region / site costs at most (job.c's budget). */
#define INFO_REGION(len) ((uint64_t)(len) + 32u)
#define INFO_SITE(a, b, c) ((uint64_t)(a) + (b) + (c) + 64u)

const char *mw__rs_reason_name(mw_rs_reason_t reason)
{
    static const char *const names[MW_RS_COUNT] = {
#define MW_X(id, name) name,
        MW_RS_REASONS(MW_X)
#undef MW_X
    };
    return (unsigned)reason < MW_RS_COUNT ? names[reason] : "?";
}

int mw__rs_init(mw__rs_t *rs, uint32_t size)
{
    memset(rs, 0, sizeof *rs);
    rs->size = size;
    rs->rank_regions = calloc(size ? size : 1, sizeof *rs->rank_regions);
    rs->rank_sites = calloc(size ? size : 1, sizeof *rs->rank_sites);
    rs->rin = malloc(MW_SAMPLE_MAX_REGION_ENTRIES * sizeof *rs->rin);
    rs->sin = malloc(MW_SAMPLE_MAX_SITE_ENTRIES * sizeof *rs->sin);
    rs->mark = calloc(MW_JOB_MAX_REGIONS + 1, sizeof *rs->mark);
    if (!rs->rank_regions || !rs->rank_sites || !rs->rin || !rs->sin || !rs->mark ||
        mw__index_init(&rs->region_by_name, sizeof(uint32_t), 16, MW_JOB_MAX_REGIONS * 2) < 0 ||
        mw__index_init(&rs->site_by_key, sizeof(uint32_t), 16, MW_JOB_MAX_SITES * 2) < 0 ||
        mw__index_init(&rs->map, sizeof(uint32_t), 64, MAP_MAX) < 0 ||
        mw__index_init(&rs->site_totals, sizeof(mw_site_total_t), 16, MW_JOB_MAX_SITES * 4u) < 0 ||
        mw__index_init(&rs->seen_sites, 1, 64, MW_SAMPLE_MAX_SITE_ENTRIES) < 0) {
        mw__rs_free(rs);
        return -1;
    }
    return 0;
}

void mw__rs_free(mw__rs_t *rs)
{
    for (uint32_t i = 0; i < rs->n_regions; i++)
        free(rs->regions[i].name);
    for (uint32_t i = 0; i < rs->n_sites; i++) {
        free(rs->sites[i].module);
        free(rs->sites[i].function);
        free(rs->sites[i].file);
    }
    free(rs->regions);
    free(rs->sites);
    free(rs->rank_regions);
    free(rs->rank_sites);
    free(rs->rin);
    free(rs->sin);
    free(rs->mark);
    mw__index_free(&rs->region_by_name);
    mw__index_free(&rs->site_by_key);
    mw__index_free(&rs->map);
    mw__index_free(&rs->site_totals);
    mw__index_free(&rs->seen_sites);
    memset(rs, 0, sizeof *rs);
}

int mw__rs_check(const Mpiwatch__Sample *s)
{
    size_t nr = s->n_region_id, ns = s->n_site_id;
    if (s->n_region_count != nr || s->n_region_incl_ns != nr || s->n_region_excl_ns != nr ||
        s->n_region_mpi_ns != nr)
        return MW_REJECT_BAD_FIELD;
    if (s->n_site_fn != ns || s->n_site_count != ns || s->n_site_ns != ns ||
        s->n_site_bytes != ns || s->n_site_max_ns != ns)
        return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < s->n_region_defs; i++)
        if (!s->region_defs[i])
            return MW_REJECT_BAD_FIELD;
    for (size_t i = 0; i < s->n_site_defs; i++)
        if (!s->site_defs[i])
            return MW_REJECT_BAD_FIELD;
    return MW_ACCEPTED;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Valid text of 0..max bytes (min 1 when `nonempty`). */
static int text_ok(const char *s, size_t max, int nonempty)
{
    if (!s)
        return !nonempty;
    size_t n = strnlen(s, max + 1);
    return n <= max && (n || !nonempty) && mw_wire_text_ok((const unsigned char *)s, n);
}

static char *dup_str(const char *s)
{
    s = s ? s : "";
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

static void refuse(mw__rs_t *rs, uint64_t *refused, mw_rs_reason_t why, uint64_t n)
{
    rs->refused[why] += n;
    if (refused)
        refused[why] += n;
}

static int grow(void **arr, uint32_t *cap, uint32_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    uint32_t c = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, (size_t)c * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

/* The job id of region d->name, added when new and within the caps; 0 with *why set when
 * refused. Names are found by their hash, probing the next keys on a collision; a name is only
 * inserted into the index once it is admitted (the budget charged last: nothing fails after
 * it but memory), so refused names cost nothing. */
static uint32_t region_intern(mw__rs_t *rs, const Mpiwatch__RegionDef *d, mw_rs_charge_fn charge,
                              void *user, mw_rs_reason_t *why)
{
    uint64_t h = hash_str(1469598103934665603ull, d->name);
    for (uint32_t p = 0; p < PROBES; p++) {
        const uint32_t *pos = mw__index_find(&rs->region_by_name, h + p);
        if (pos) {
            if (strcmp(rs->regions[*pos].name, d->name) == 0)
                return *pos + 1;
            continue;
        }
        if (rs->n_regions >= MW_JOB_MAX_REGIONS) {
            *why = MW_RS_JOB_CAP;
            return 0;
        }
        if (grow((void **)&rs->regions, &rs->cap_regions, rs->n_regions, sizeof *rs->regions) < 0) {
            *why = MW_RS_MAP_FULL;
            return 0;
        }
        if (!charge(user, INFO_REGION(strlen(d->name)))) {
            *why = MW_RS_JOB_INFO;
            return 0;
        }
        mw_region_t *r = &rs->regions[rs->n_regions];
        memset(r, 0, sizeof *r);
        int created;
        uint32_t *slot = NULL;
        if (!(r->name = dup_str(d->name)) ||
            !(slot = mw__index_get(&rs->region_by_name, h + p, &created))) {
            free(r->name);
            *why = MW_RS_MAP_FULL;
            return 0;
        }
        r->source = d->source;
        *slot = rs->n_regions++;
        rs->gen++;
        return *slot + 1;
    }
    *why = MW_RS_MAP_FULL;
    return 0;
}

/* A definition of kept site st (same module and offset) that knows more than st: file and line
 * where st has neither, a function where st has none. Each part is taken once (a field is only
 * ever set from empty), so no rank can flip an entry back and forth; any other difference keeps
 * the first. The extra bytes are charged to the job description's budget (all or nothing), and
 * gen moves so that JobInfo is sent again. Returns the reason it was refused or MW_RS_COUNT. */
static mw_rs_reason_t site_upgrade(mw__rs_t *rs, mw_site_t *st, const Mpiwatch__CallSiteDef *d,
                                   mw_rs_charge_fn charge, void *user)
{
    const char *fn = d->function ? d->function : "", *file = d->file ? d->file : "";
    int take_line = st->line == 0 && st->file[0] == '\0' && (d->line != 0 || file[0] != '\0');
    int take_fn = st->function[0] == '\0' && fn[0] != '\0';
    if (!take_line && !take_fn)
        return MW_RS_COUNT;
    char *nfn = NULL, *nfile = NULL;
    if ((take_fn && !(nfn = dup_str(fn))) || (take_line && !(nfile = dup_str(file)))) {
        free(nfn);
        free(nfile);
        return MW_RS_MAP_FULL;
    }
    if (!charge(user, (take_fn ? strlen(fn) : 0) + (take_line ? strlen(file) : 0))) {
        free(nfn);
        free(nfile);
        return MW_RS_JOB_INFO;
    }
    if (take_fn) {
        free(st->function);
        st->function = nfn;
    }
    if (take_line) {
        free(st->file);
        st->file = nfile;
        st->line = d->line;
    }
    rs->gen++;
    return MW_RS_COUNT;
}

static uint32_t site_intern(mw__rs_t *rs, uint32_t rank, const Mpiwatch__CallSiteDef *d,
                            mw_rs_charge_fn charge, void *user, mw_rs_reason_t *why,
                            mw_rs_reason_t *upgrade_refused)
{
    const char *module = d->module ? d->module : "";
    uint64_t h = hash_str(1469598103934665603ull ^ (d->offset * 0x9e3779b97f4a7c15ull), module);
    for (uint32_t p = 0; p < PROBES; p++) {
        const uint32_t *pos = mw__index_find(&rs->site_by_key, h + p);
        if (pos) {
            const mw_site_t *s = &rs->sites[*pos];
            if (s->offset == d->offset && strcmp(s->module, module) == 0) {
                /* the first rank's definition is kept, completed when this one knows more */
                mw_rs_reason_t up = site_upgrade(rs, &rs->sites[*pos], d, charge, user);
                if (up != MW_RS_COUNT)
                    *upgrade_refused = up;
                return *pos + 1;
            }
            continue;
        }
        if (rs->n_sites >= MW_JOB_MAX_SITES) {
            *why = MW_RS_JOB_CAP;
            return 0;
        }
        const char *fn = d->function ? d->function : "", *file = d->file ? d->file : "";
        if (grow((void **)&rs->sites, &rs->cap_sites, rs->n_sites, sizeof *rs->sites) < 0) {
            *why = MW_RS_MAP_FULL;
            return 0;
        }
        if (!charge(user, INFO_SITE(strlen(module), strlen(fn), strlen(file)))) {
            *why = MW_RS_JOB_INFO;
            return 0;
        }
        mw_site_t *s = &rs->sites[rs->n_sites];
        int created;
        uint32_t *slot = NULL;
        s->module = dup_str(module);
        s->function = dup_str(fn);
        s->file = dup_str(file);
        if (!s->module || !s->function || !s->file ||
            !(slot = mw__index_get(&rs->site_by_key, h + p, &created))) {
            free(s->module);
            free(s->function);
            free(s->file);
            *why = MW_RS_MAP_FULL;
            return 0;
        }
        s->offset = d->offset;
        s->line = d->line;
        s->first_rank = rank;
        *slot = rs->n_sites++;
        rs->gen++;
        return *slot + 1;
    }
    *why = MW_RS_MAP_FULL;
    return 0;
}

/* Maps (rank, kind, id) to job id `jid`; a second definition of the id must name the same
 * job entry (DEF_CHANGED otherwise, the first kept). Returns the reason or MW_RS_COUNT. */
static mw_rs_reason_t map_set(mw__rs_t *rs, uint64_t key, uint32_t jid)
{
    int created;
    uint32_t *v = mw__index_get(&rs->map, key, &created);
    if (!v)
        return MW_RS_MAP_FULL;
    if (!created)
        return *v == jid ? MW_RS_COUNT : MW_RS_DEF_CHANGED;
    *v = jid;
    return MW_RS_COUNT;
}

static uint32_t map_get(const mw__rs_t *rs, uint64_t key)
{
    const uint32_t *v = mw__index_find(&rs->map, key);
    return v ? *v : 0;
}

static void apply_defs(mw__rs_t *rs, uint32_t rank, const Mpiwatch__Sample *s,
                       mw_rs_charge_fn charge, void *user, uint64_t *refused)
{
    uint64_t base = (uint64_t)rank << 32;
    for (size_t i = 0; i < s->n_region_defs; i++) {
        const Mpiwatch__RegionDef *d = s->region_defs[i];
        mw_rs_reason_t why = MW_RS_COUNT;
        if (d->id == 0 || d->id > MW_RANK_MAX_REGIONS)
            why = MW_RS_DEF_ID;
        else if (!text_ok(d->name, MW_REGION_NAME_MAX, 1))
            why = MW_RS_DEF_TEXT;
        else if (mw__index_find(&rs->map, base | d->id)) {
            /* Sent again (its first sample may not have reached us, or it did): same name? */
            uint32_t jid = map_get(rs, base | d->id);
            if (jid == 0 || strcmp(rs->regions[jid - 1].name, d->name) != 0)
                why = MW_RS_DEF_CHANGED;
        } else if (rs->rank_regions[rank] >= MW_RANK_MAX_REGIONS) {
            why = MW_RS_DEF_RANK_CAP;
        } else {
            uint32_t jid = region_intern(rs, d, charge, user, &why);
            if (jid) {
                why = map_set(rs, base | d->id, jid);
                if (why == MW_RS_COUNT)
                    rs->rank_regions[rank]++;
            }
        }
        if (why != MW_RS_COUNT)
            refuse(rs, refused, why, 1);
    }
    for (size_t i = 0; i < s->n_site_defs; i++) {
        const Mpiwatch__CallSiteDef *d = s->site_defs[i];
        uint64_t key = base | KIND_SITE | d->id;
        mw_rs_reason_t why = MW_RS_COUNT;
        if (d->id == 0 || d->id > MW_RANK_MAX_SITES)
            why = MW_RS_DEF_ID;
        else if (!text_ok(d->module, MW_SITE_STRING_MAX, 0) ||
                 !text_ok(d->function, MW_SITE_STRING_MAX, 0) ||
                 !text_ok(d->file, MW_SITE_STRING_MAX, 0))
            why = MW_RS_DEF_TEXT;
        else if (mw__index_find(&rs->map, key)) {
            /* Sent again: the same (module, offset)? Its function, file and line may be the
             * resolved ones this time (docs/callsites.md): they complete the kept entry. */
            uint32_t jid = map_get(rs, key);
            mw_site_t *st = jid ? &rs->sites[jid - 1] : NULL;
            if (!st || st->offset != d->offset || strcmp(st->module, d->module ? d->module : ""))
                why = MW_RS_DEF_CHANGED;
            else
                why = site_upgrade(rs, st, d, charge, user);
        } else if (rs->rank_sites[rank] >= MW_RANK_MAX_SITES) {
            why = MW_RS_DEF_RANK_CAP;
        } else {
            mw_rs_reason_t up = MW_RS_COUNT;
            uint32_t jid = site_intern(rs, rank, d, charge, user, &why, &up);
            if (jid) {
                why = map_set(rs, key, jid);
                if (why == MW_RS_COUNT)
                    rs->rank_sites[rank]++;
            }
            if (up != MW_RS_COUNT)
                refuse(rs, refused, up, 1);
        }
        if (why != MW_RS_COUNT)
            refuse(rs, refused, why, 1);
    }
}

void mw__rs_apply(mw__rs_t *rs, uint32_t rank, const Mpiwatch__Sample *s, mw_rs_charge_fn charge,
                  void *user, mw_rs_in_t *out, uint64_t *refused)
{
    memset(out, 0, sizeof *out);
    if (rank >= rs->size)
        return;
    apply_defs(rs, rank, s, charge, user, refused);
    rs->regions_dropped = mw__rs_sat_add(rs->regions_dropped, s->regions_dropped);
    rs->sites_dropped = mw__rs_sat_add(rs->sites_dropped, s->sites_dropped);
    uint64_t base = (uint64_t)rank << 32;

    /* Regions: a job id seen twice in this sample is a duplicate (mark per sample). */
    if (++rs->mark_gen == 0) {
        memset(rs->mark, 0, (MW_JOB_MAX_REGIONS + 1) * sizeof *rs->mark);
        rs->mark_gen = 1;
    }
    size_t nr = s->n_region_id;
    if (nr > MW_SAMPLE_MAX_REGION_ENTRIES) {
        refuse(rs, refused, MW_RS_ENTRIES_CAP, nr - MW_SAMPLE_MAX_REGION_ENTRIES);
        nr = MW_SAMPLE_MAX_REGION_ENTRIES;
    }
    for (size_t i = 0; i < nr; i++) {
        uint32_t id = s->region_id[i];
        uint32_t jid = id && id <= MW_RANK_MAX_REGIONS ? map_get(rs, base | id) : 0;
        if (!jid) {
            refuse(rs, refused, MW_RS_UNDEFINED, 1);
            continue;
        }
        if (s->region_count[i] > MW_RS_VALUE_MAX || s->region_incl_ns[i] > MW_RS_VALUE_MAX ||
            s->region_excl_ns[i] > MW_RS_VALUE_MAX || s->region_mpi_ns[i] > MW_RS_VALUE_MAX) {
            refuse(rs, refused, MW_RS_VALUE, 1);
            continue;
        }
        if (rs->mark[jid] == rs->mark_gen) {
            refuse(rs, refused, MW_RS_DUPLICATE, 1);
            continue;
        }
        rs->mark[jid] = rs->mark_gen;
        mw_region_in_t *e = &rs->rin[out->n_regions++];
        *e = (mw_region_in_t){.region = jid,
                              .count = s->region_count[i],
                              .incl_ns = s->region_incl_ns[i],
                              .excl_ns = s->region_excl_ns[i],
                              .mpi_ns = s->region_mpi_ns[i]};
        mw_region_t *r = &rs->regions[jid - 1];
        r->count = mw__rs_sat_add(r->count, e->count);
        r->incl_ns = mw__rs_sat_add(r->incl_ns, e->incl_ns);
        r->excl_ns = mw__rs_sat_add(r->excl_ns, e->excl_ns);
        r->mpi_ns = mw__rs_sat_add(r->mpi_ns, e->mpi_ns);
    }

    /* Sites: (site, fn) seen twice in this sample is a duplicate. */
    mw__index_clear(&rs->seen_sites);
    size_t ns = s->n_site_id;
    if (ns > MW_SAMPLE_MAX_SITE_ENTRIES) {
        refuse(rs, refused, MW_RS_ENTRIES_CAP, ns - MW_SAMPLE_MAX_SITE_ENTRIES);
        ns = MW_SAMPLE_MAX_SITE_ENTRIES;
    }
    for (size_t i = 0; i < ns; i++) {
        uint32_t id = s->site_id[i], fn = s->site_fn[i];
        uint32_t jid = id && id <= MW_RANK_MAX_SITES ? map_get(rs, base | KIND_SITE | id) : 0;
        if (!jid) {
            refuse(rs, refused, MW_RS_UNDEFINED, 1);
            continue;
        }
        if (fn == 0 || fn >= mw_fn_end()) {
            refuse(rs, refused, MW_RS_FN_RANGE, 1);
            continue;
        }
        if (s->site_count[i] > MW_RS_VALUE_MAX || s->site_ns[i] > MW_RS_VALUE_MAX ||
            s->site_bytes[i] > MW_RS_VALUE_MAX || s->site_max_ns[i] > MW_RS_VALUE_MAX) {
            refuse(rs, refused, MW_RS_VALUE, 1);
            continue;
        }
        uint64_t key = (uint64_t)jid << 32 | fn;
        int created;
        if (!mw__index_get(&rs->seen_sites, key, &created) || !created) {
            refuse(rs, refused, MW_RS_DUPLICATE, 1);
            continue;
        }
        mw_site_in_t *e = &rs->sin[out->n_sites++];
        *e = (mw_site_in_t){.site = jid,
                            .fn = fn,
                            .count = s->site_count[i],
                            .ns = s->site_ns[i],
                            .bytes = s->site_bytes[i],
                            .max_ns = s->site_max_ns[i]};
        mw_site_total_t *t = mw__index_get(&rs->site_totals, key, &created);
        if (!t)
            continue; /* the job totals are full: the window still has it */
        t->site = jid;
        t->fn = fn;
        t->count = mw__rs_sat_add(t->count, e->count);
        t->ns = mw__rs_sat_add(t->ns, e->ns);
        t->bytes = mw__rs_sat_add(t->bytes, e->bytes);
        if (e->max_ns > t->max_ns)
            t->max_ns = e->max_ns;
    }
    out->regions = rs->rin;
    out->sites = rs->sin;
}

uint32_t mw__rs_define_region(mw__rs_t *rs, const Mpiwatch__Region *r, mw_rs_charge_fn charge,
                              void *user, mw_rs_reason_t *why)
{
    *why = MW_RS_COUNT;
    if (!text_ok(r->name, MW_REGION_NAME_MAX, 1)) {
        *why = MW_RS_DEF_TEXT;
        return 0;
    }
    Mpiwatch__RegionDef d = MPIWATCH__REGION_DEF__INIT;
    d.name = r->name;
    d.source = r->source;
    return region_intern(rs, &d, charge, user, why);
}

uint32_t mw__rs_define_site(mw__rs_t *rs, const Mpiwatch__CallSite *cs, mw_rs_charge_fn charge,
                            void *user, mw_rs_reason_t *why)
{
    *why = MW_RS_COUNT;
    if (!text_ok(cs->module, MW_SITE_STRING_MAX, 0) ||
        !text_ok(cs->function, MW_SITE_STRING_MAX, 0) ||
        !text_ok(cs->file, MW_SITE_STRING_MAX, 0) || cs->first_rank >= rs->size) {
        *why = MW_RS_DEF_TEXT;
        return 0;
    }
    Mpiwatch__CallSiteDef d = MPIWATCH__CALL_SITE_DEF__INIT;
    d.module = cs->module;
    d.offset = cs->offset;
    d.function = cs->function;
    d.file = cs->file;
    d.line = cs->line;
    mw_rs_reason_t up = MW_RS_COUNT;
    return site_intern(rs, cs->first_rank, &d, charge, user, why, &up);
}
