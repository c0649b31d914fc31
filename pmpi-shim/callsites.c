/* callsites.c: where the application calls MPI (docs/callsites.md).
 *
 * DESIGN: every timed wrapper stores its own return address (mw__begin, shim.h): the
 * instruction after the application's call. The recording thread adds the call to a small
 * table in its window slot keyed by (return address, function): open addressing, the hash's
 * cell checked inline (record_fast.h), a short probe out of line here, a full table counted as
 * dropped. The sender thread sums the threads' tables of a window and gives each new return
 * address a rank-local site id at once, with what is cheap to know (module and offset from
 * dl_iterate_phdr, a dynamic symbol from dladdr: mw__dw_cheap), so that no call waits for
 * resolution. Resolution with libdw (dwarf.h: function, file, line) runs off the application's
 * threads, a bounded number per sample; a site resolved after its first definition left is
 * defined again, complete, under the same id. Both kinds of definition go with the samples until
 * one carrying them was handed to ZeroMQ, as the communicator definitions do (trace_comm.c).
 */
#include "dwarf.h"
#include "mw_limits.h"
#include "shim.h"

#include <stdlib.h>
#include <string.h>

#define SITE_PROBE 8u   /* cells a slot's table looks at before dropping the call */
#define SITE_HEADER 64u /* bytes before a slot's entries: dropped count, used */
/* Resolution with libdw per sample: at most this many sites, and none started once this much
 * time went into it (shim.h: tests lower them). */
unsigned mw__sites_resolve_max = 64;
uint64_t mw__sites_resolve_ns = 50000000ull;
/* At MPI_Finalize the samples flushed last resolve every site left, within this much in all. */
#define SITES_FINISH_NS 500000000ull
/* Definitions one sample carries at most (the rest go with the next ones): a sample stays far
 * under the sender's backlog (4 MiB) even with 512-byte strings. */
#define SITES_DEFS_PER_SAMPLE 256u
#define SITES_DEF_BYTES_PER_SAMPLE (256u << 10)

typedef struct {
    uint64_t dropped; /* calls with no entry: the probe found no cell */
    uint64_t used;    /* cells taken */
} site_header_t;

/* A site this rank defined: its return address and its CallSiteDef's strings, the cheap ones
 * until libdw resolved it (then function, file and line are libdw's; module and offset stay). */
typedef struct {
    uint64_t ra;
    uint64_t offset;
    char *module, *function, *file;
    uint32_t line;
    int resolved;
} site_def_t;

/* The window's (site, function) totals summed over the threads (sender thread only). */
typedef struct {
    uint64_t ra;
    uint32_t fn;
    uint64_t count, ns, bytes, max_ns;
} acc_site_t;

static struct {
    size_t slot_off; /* offset of the header in a slot; 0: call sites off */
    unsigned cap;    /* entries per slot table (a power of two) */
    /* the window being summed */
    acc_site_t *acc;
    uint32_t *acc_tab; /* cells: entry index + 1 */
    unsigned acc_cap, acc_n;
    uint32_t acc_mask;
    uint64_t acc_dropped;
    int acc_stale; /* the last sample's: cleared before the next merge or sample */
    int alloc_failed;
    /* the rank's sites, by id - 1, and a map from return address to id */
    site_def_t *sites;
    unsigned nsites;
    uint32_t *site_tab;    /* cells: id, 0 empty */
    unsigned sent_upto;    /* definitions [sent_upto, nsites) go with the next sample */
    unsigned resolve_next; /* sites [resolve_next, nsites) are not resolved yet */
    /* Sites resolved after their first definition was handed over, in that order (each once):
     * their complete definitions [upg_sent, nupg) go with the next sample. */
    uint32_t *upg; /* site index */
    unsigned nupg, upg_sent;
    uint64_t finish_by; /* MPI_Finalize: resolving stops then (monotonic ns); 0 before */
    /* the sample's arrays */
    uint32_t *out_id, *out_fn;
    uint64_t *out_count, *out_ns, *out_bytes, *out_max;
    Mpiwatch__CallSiteDef *defs;
    Mpiwatch__CallSiteDef **def_ptrs;
} C;

#define SITE_TAB_CELLS (2u * MW_RANK_MAX_SITES)

size_t mw__sites_layout(size_t offset)
{
    C.slot_off = 0;
    if (!mw__g.cfg.callsites || mw__g.cfg.callsites_max == 0)
        return 0;
    C.slot_off = offset;
    C.cap = mw__g.cfg.callsites_max;
    return SITE_HEADER + (size_t)C.cap * sizeof(mw_site_t);
}

void mw__sites_thread(mw_thread_t *t)
{
    if (!C.slot_off || C.slot_off + SITE_HEADER > UINT32_MAX) {
        t->site_off = 0;
        return;
    }
    t->site_off = (uint32_t)(C.slot_off + SITE_HEADER);
    t->site_mask = C.cap - 1;
}

static site_header_t *header(mw_slot_t *s)
{
    return (site_header_t *)((unsigned char *)s + C.slot_off);
}

static mw_site_t *entries(mw_slot_t *s)
{
    return (mw_site_t *)((unsigned char *)s + C.slot_off + SITE_HEADER);
}

/* The home cell held another key: probe on (the recording thread, inside its busy mark). */
void mw__site_slow(mw_thread_t *t, mw_slot_t *s, unsigned fn, uint64_t d, uint64_t bytes)
{
    mw_site_t *tab = (mw_site_t *)((unsigned char *)s + t->site_off);
    site_header_t *h = (site_header_t *)((unsigned char *)tab - SITE_HEADER);
    uint64_t ra = t->ra;
    uint32_t i = mw__site_hash(ra, fn);
    for (unsigned p = 0; ra && p < SITE_PROBE && p <= t->site_mask; p++, i++) {
        mw_site_t *e = &tab[i & t->site_mask];
        if (e->ra == 0) {
            e->ra = ra;
            e->fn = fn;
            h->used++;
        } else if (e->ra != ra || e->fn != fn) {
            continue;
        }
        e->count++;
        e->ns += d;
        e->bytes += bytes;
        if (d > e->max_ns)
            e->max_ns = d;
        return;
    }
    h->dropped++;
}

void mw__sites_slot_reset(mw_slot_t *s)
{
    if (!C.slot_off)
        return;
    site_header_t *h = header(s);
    if (h->used)
        memset(entries(s), 0, (size_t)C.cap * sizeof(mw_site_t));
    h->used = h->dropped = 0;
}

static int acc_alloc(void)
{
    if (C.acc || C.alloc_failed)
        return C.acc != NULL;
    size_t cap = (size_t)mw__g.cfg.max_threads * C.cap;
    if (cap > MW_SAMPLE_MAX_SITE_ENTRIES)
        cap = MW_SAMPLE_MAX_SITE_ENTRIES;
    size_t cells = 2;
    while (cells < 2 * cap)
        cells <<= 1;
    C.acc_cap = (unsigned)cap;
    C.acc_mask = (uint32_t)(cells - 1);
    C.acc = calloc(cap, sizeof *C.acc);
    C.acc_tab = calloc(cells, sizeof *C.acc_tab);
    C.sites = calloc(MW_RANK_MAX_SITES, sizeof *C.sites);
    C.site_tab = calloc(SITE_TAB_CELLS, sizeof *C.site_tab);
    C.out_id = calloc(cap, sizeof *C.out_id);
    C.out_fn = calloc(cap, sizeof *C.out_fn);
    C.out_count = calloc(cap, sizeof *C.out_count);
    C.out_ns = calloc(cap, sizeof *C.out_ns);
    C.out_bytes = calloc(cap, sizeof *C.out_bytes);
    C.out_max = calloc(cap, sizeof *C.out_max);
    C.upg = calloc(MW_RANK_MAX_SITES, sizeof *C.upg);
    C.defs = calloc(MW_RANK_MAX_SITES, sizeof *C.defs);
    C.def_ptrs = calloc(MW_RANK_MAX_SITES, sizeof *C.def_ptrs);
    if (!C.acc || !C.acc_tab || !C.sites || !C.site_tab || !C.out_id || !C.out_fn || !C.out_count ||
        !C.out_ns || !C.out_bytes || !C.out_max || !C.upg || !C.defs || !C.def_ptrs) {
        mw__sites_close();
        C.alloc_failed = 1;
        mw__log("call sites: no memory for the sender's tables; call sites are not sent");
        return 0;
    }
    return 1;
}

static void acc_clear(void)
{
    for (unsigned i = 0; i < C.acc_n; i++) {
        uint32_t h = mw__site_hash(C.acc[i].ra, C.acc[i].fn) & C.acc_mask;
        while (C.acc_tab[h])
            C.acc_tab[h] = 0, h = (h + 1) & C.acc_mask;
    }
    C.acc_n = 0;
    C.acc_dropped = 0;
    C.acc_stale = 0;
}

static void acc_add(const mw_site_t *e)
{
    uint32_t h = mw__site_hash(e->ra, e->fn) & C.acc_mask;
    while (C.acc_tab[h]) {
        acc_site_t *a = &C.acc[C.acc_tab[h] - 1];
        if (a->ra == e->ra && a->fn == e->fn) {
            a->count += e->count;
            a->ns += e->ns;
            a->bytes += e->bytes;
            if (e->max_ns > a->max_ns)
                a->max_ns = e->max_ns;
            return;
        }
        h = (h + 1) & C.acc_mask;
    }
    if (C.acc_n >= C.acc_cap) {
        C.acc_dropped += e->count;
        return;
    }
    C.acc[C.acc_n] = (acc_site_t){e->ra, e->fn, e->count, e->ns, e->bytes, e->max_ns};
    C.acc_tab[h] = ++C.acc_n;
}

void mw__sites_merge(mw_slot_t *s)
{
    if (!C.slot_off || !acc_alloc())
        return;
    if (C.acc_stale)
        acc_clear();
    site_header_t *h = header(s);
    C.acc_dropped += h->dropped;
    if (!h->used)
        return;
    mw_site_t *e = entries(s);
    for (unsigned i = 0; i < C.cap; i++)
        if (e[i].ra && e[i].count)
            acc_add(&e[i]);
}

/* A copy of at most MW_SITE_STRING_MAX - 1 bytes that is valid UTF-8 (protobuf strings): a byte
 * that starts no valid sequence becomes '?'. */
static char *utf8_copy(const char *src)
{
    size_t n = strnlen(src, MW_SITE_STRING_MAX - 1);
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)src[i];
        size_t len = c < 0x80             ? 1
                     : (c & 0xE0) == 0xC0 ? 2
                     : (c & 0xF0) == 0xE0 ? 3
                     : (c & 0xF8) == 0xF0 ? 4
                                          : 0;
        int ok = len > 0 && i + len <= n && !(len == 2 && c < 0xC2);
        for (size_t j = 1; ok && j < len; j++)
            ok = ((unsigned char)src[i + j] & 0xC0) == 0x80;
        if (!ok) {
            d[o++] = '?';
            i++;
            continue;
        }
        memcpy(d + o, src + i, len);
        o += len;
        i += len;
    }
    d[o] = '\0';
    return d;
}

/* Sets *dst to a valid copy of src; 0 on success (*dst unchanged otherwise). */
static int set_str(char **dst, const char *src)
{
    char *d = utf8_copy(src);
    if (!d)
        return -1;
    free(*dst);
    *dst = d;
    return 0;
}

/* The id of return address ra, numbered at once when it is new, with its cheap definition
 * (module, offset, dynamic symbol); 0 when it has none: the rank's table is full (or no
 * memory). */
static uint32_t site_id(uint64_t ra)
{
    uint32_t h = (uint32_t)((ra * 0x9E3779B97F4A7C15ull) >> 40) & (SITE_TAB_CELLS - 1);
    while (C.site_tab[h]) {
        if (C.sites[C.site_tab[h] - 1].ra == ra)
            return C.site_tab[h];
        h = (h + 1) & (SITE_TAB_CELLS - 1);
    }
    if (C.nsites >= MW_RANK_MAX_SITES)
        return 0;
    mw_dw_site_t r;
    mw__dw_cheap(ra, &r);
    site_def_t *d = &C.sites[C.nsites];
    memset(d, 0, sizeof *d);
    d->ra = ra;
    d->offset = r.offset;
    if (set_str(&d->module, r.module) || set_str(&d->function, r.function) ||
        set_str(&d->file, "")) {
        free(d->module), free(d->function), free(d->file);
        memset(d, 0, sizeof *d);
        return 0;
    }
    C.site_tab[h] = ++C.nsites;
    return C.nsites;
}

/* Resolves the sites not resolved yet, in id order, within the budget: libdw's function (when
 * it names one), file and line replace the cheap ones. A site whose first definition already
 * left, and that libdw told more about, is queued to be defined again. */
static void resolve_some(void)
{
    uint64_t t_start = mw__monotonic_ns();
    unsigned max = C.finish_by ? MW_RANK_MAX_SITES : mw__sites_resolve_max;
    for (unsigned n = 0; C.resolve_next < C.nsites && n < max; n++) {
        uint64_t now = mw__monotonic_ns();
        if (C.finish_by ? now >= C.finish_by : now - t_start >= mw__sites_resolve_ns)
            break;
        unsigned i = C.resolve_next++;
        site_def_t *d = &C.sites[i];
        mw_dw_site_t r;
        mw__dw_resolve(d->ra, &r);
        d->resolved = 1;
        int more = 0;
        if (r.function[0] && strcmp(r.function, d->function) != 0 &&
            !set_str(&d->function, r.function))
            more = 1;
        if ((r.file[0] || r.line) && !set_str(&d->file, r.file)) {
            d->line = r.line;
            more = 1;
        }
        if (more && i < C.sent_upto)
            C.upg[C.nupg++] = i;
    }
}

/* Fills C.defs[k] with site i's definition. */
static size_t put_def(unsigned k, unsigned i)
{
    const site_def_t *d = &C.sites[i];
    Mpiwatch__CallSiteDef *m = &C.defs[k];
    mpiwatch__call_site_def__init(m);
    m->id = i + 1;
    m->address = d->ra;
    m->module = d->module;
    m->offset = d->offset;
    m->function = d->function;
    m->file = d->file;
    m->line = d->line;
    C.def_ptrs[k] = m;
    return 32 + strlen(d->module) + strlen(d->function) + strlen(d->file);
}

int64_t mw__sites_sample(Mpiwatch__Sample *smp)
{
    if (!C.slot_off || !acc_alloc())
        return -1;
    if (C.acc_stale)
        acc_clear(); /* nothing was merged since the last sample */
    uint64_t dropped = C.acc_dropped;
    for (unsigned i = 0; i < C.acc_n; i++)
        C.out_id[i] = site_id(C.acc[i].ra);
    resolve_some();
    /* The first definitions not handed over yet, in id order, then the complete ones of sites
     * resolved since their first left, as many as one sample may carry. */
    unsigned from = C.sent_upto, upto = from, k = 0;
    size_t def_bytes = 0;
    while (upto < C.nsites && k < SITES_DEFS_PER_SAMPLE && def_bytes < SITES_DEF_BYTES_PER_SAMPLE)
        def_bytes += put_def(k++, upto++);
    unsigned ufrom = C.upg_sent, uupto = ufrom;
    while (uupto < C.nupg && k < SITES_DEFS_PER_SAMPLE && def_bytes < SITES_DEF_BYTES_PER_SAMPLE)
        def_bytes += put_def(k++, C.upg[uupto++]);
    /* Entries of sites whose first definition was not carried so far (more new sites than one
     * sample carries, or it was lost): their calls are counted as dropped, so that every
     * entry's definition came first. */
    unsigned n = 0;
    for (unsigned i = 0; i < C.acc_n; i++) {
        const acc_site_t *a = &C.acc[i];
        uint32_t id = C.out_id[i];
        if (!id || id > upto) {
            dropped += a->count;
            continue;
        }
        C.out_id[n] = id;
        C.out_fn[n] = a->fn;
        C.out_count[n] = a->count;
        C.out_ns[n] = a->ns;
        C.out_bytes[n] = a->bytes;
        C.out_max[n] = a->max_ns;
        n++;
    }
    C.acc_stale = 1;
    smp->n_site_id = smp->n_site_fn = smp->n_site_count = smp->n_site_ns = smp->n_site_bytes =
        smp->n_site_max_ns = n;
    smp->site_id = C.out_id;
    smp->site_fn = C.out_fn;
    smp->site_count = C.out_count;
    smp->site_ns = C.out_ns;
    smp->site_bytes = C.out_bytes;
    smp->site_max_ns = C.out_max;
    smp->sites_dropped = dropped;
    if (k == 0)
        return -1;
    smp->n_site_defs = k;
    smp->site_defs = C.def_ptrs;
    C.sent_upto = upto;
    C.upg_sent = uupto;
    /* Where each queue stood, + 1 (0: this sample carried none of it). */
    return (int64_t)(uupto > ufrom ? ufrom + 1 : 0) << 32 | (upto > from ? from + 1 : 0);
}

void mw__sites_finish(void)
{
    C.finish_by = mw__monotonic_ns() + SITES_FINISH_NS;
}

void mw__sites_defs_lost(int64_t token)
{
    if (token < 0)
        return;
    uint64_t from = (uint64_t)token & 0xFFFFFFFFu, ufrom = (uint64_t)token >> 32;
    if (from && from - 1 < C.sent_upto)
        C.sent_upto = (unsigned)(from - 1);
    if (ufrom && ufrom - 1 < C.upg_sent)
        C.upg_sent = (unsigned)(ufrom - 1);
}

void mw__sites_close(void)
{
    if (C.sites)
        for (unsigned i = 0; i < C.nsites; i++) {
            free(C.sites[i].module);
            free(C.sites[i].function);
            free(C.sites[i].file);
        }
    free(C.acc);
    free(C.acc_tab);
    free(C.sites);
    free(C.site_tab);
    free(C.out_id);
    free(C.out_fn);
    free(C.out_count);
    free(C.out_ns);
    free(C.out_bytes);
    free(C.out_max);
    free(C.upg);
    free(C.defs);
    free(C.def_ptrs);
    C.acc = NULL;
    C.acc_tab = NULL;
    C.sites = NULL;
    C.site_tab = NULL;
    C.out_id = C.out_fn = NULL;
    C.out_count = C.out_ns = C.out_bytes = C.out_max = NULL;
    C.upg = NULL;
    C.defs = NULL;
    C.def_ptrs = NULL;
    C.acc_n = C.nsites = C.sent_upto = C.resolve_next = C.nupg = C.upg_sent = 0;
    C.finish_by = 0;
    C.acc_stale = 0;
    mw__dw_close();
}
