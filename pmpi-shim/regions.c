/* regions.c: code regions (docs/regions.md): mw_region_begin/end, their Fortran bindings and
 * the -finstrument-functions hooks.
 *
 * DESIGN: every thread keeps a stack of its open regions (MPIWATCH_REGION_DEPTH frames, in a
 * block mapped once at MPI_Init and touched only by threads that use regions). A frame holds
 * the region's id, its start (ticks), the thread's cumulative MPI time at the start (the one
 * add mw__record_tr() does per timed call, t->mpi_ns) and what its directly nested instances
 * took. When an instance ends its inclusive time, exclusive time and exclusive MPI time go
 * into the slot of the window in which it ends, exactly as a call's would (mw__slot_now()),
 * inside the same busy bracket the wrappers use, so the sender collects them with the rest of
 * the slot. A slot's region area is a dense index by region id (u16) and up to
 * MPIWATCH_REGION_ENTRIES entries. Names map to rank-local ids through a process-wide table:
 * look-ups hash the name and probe an open-addressing table without a lock (ids and names are
 * immutable once published), insertions take a mutex. The -finstrument-functions hooks probe an
 * immutable hash set of the selected functions' addresses built at MPI_Init from the symbol
 * tables (dwarf.h); a function that is not selected costs one load and one probe.
 */
#include "mpiwatch.h"
#include "shim.h"

#include "dwarf.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define RT_HASH 4096u      /* name table probes: > 2 x MW_RANK_MAX_REGIONS */
#define SEL_MAX (1u << 16) /* selected function addresses at most */
#define PATTERNS_MAX 64u

_Static_assert(RT_HASH >= 2 * MW_RANK_MAX_REGIONS, "name table load stays under 1/2");
_Static_assert(MW_RANK_MAX_REGIONS < 65535u, "slot index is 16 bits");

/* An open region instance on a thread's stack. */
typedef struct {
    uint32_t id;       /* 0: not in the table (refused name, table full); its data is dropped */
    uint32_t hash;     /* of its name: how an id-0 frame recognises its end */
    uint64_t t0;       /* ticks */
    uint64_t mpi0;     /* the thread's mpi_ns at the start */
    uint64_t child_ns; /* inclusive time of its directly nested instances */
    uint64_t child_mpi;
    int rec; /* recording at its start */
    int pad;
} frame_t;

typedef struct {
    uint32_t depth; /* frames in use */
    uint32_t over;  /* begins beyond the depth not yet ended */
    frame_t f[];
} tstack_t;

/* A slot's region area: header, then cfg.region_entries entries. */
typedef struct {
    uint32_t n;
    uint16_t of[MW_RANK_MAX_REGIONS + 1]; /* entry index + 1 by region id */
} slotreg_t;

typedef struct {
    uint32_t id, pad;
    uint64_t count, incl, excl, mpi;
} regstat_t;

static struct {
    pthread_mutex_t lock;
    _Atomic uint32_t n;              /* ids 1..n are published */
    _Atomic uint32_t probe[RT_HASH]; /* id, 0 empty */
    uint32_t hash[MW_RANK_MAX_REGIONS + 1];
    uint32_t len[MW_RANK_MAX_REGIONS + 1];
    uint8_t source[MW_RANK_MAX_REGIONS + 1];
    char name[MW_RANK_MAX_REGIONS + 1][MW_REGION_NAME_MAX + 1];
} RT = {.lock = PTHREAD_MUTEX_INITIALIZER};

static struct {
    size_t slot_off; /* the region area in a slot; 0 before the layout */
    size_t entries_off;
    unsigned entries, depth;
    unsigned char *stacks; /* max_threads stacks */
    size_t stack_bytes;
    _Atomic uint64_t dropped; /* region events not accounted, since MPI_Init */
} R;

/* The -finstrument-functions selection, immutable once mask is set (MPI_Init) but for the
 * region ids, given at a function's first entry (so that selected functions never called
 * define no region). */
static struct {
    uint64_t *addr;
    char **name;
    _Atomic uint32_t *id; /* 0: not yet; UINT32_MAX: refused (table full) */
    uint64_t mask;        /* table size - 1; 0: nothing selected */
    unsigned n;
} SEL;

/* ---- names ------------------------------------------------------------------------------- */

/* The stored length of a name: cut at MW_REGION_NAME_MAX bytes, at a UTF-8 character boundary;
 * trailing bytes of a cut character are left out. */
static size_t name_cut(const char *p, size_t n)
{
    if (n <= MW_REGION_NAME_MAX)
        return n;
    n = MW_REGION_NAME_MAX;
    while (n > 0 && ((unsigned char)p[n] & 0xC0u) == 0x80u)
        n--;
    return n;
}

static uint32_t name_hash(const char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h ? h : 1;
}

/* The id of a name (already cut), 0 when it is not in the table. Lock-free. */
static uint32_t name_find(const char *p, size_t n, uint32_t h)
{
    for (uint32_t i = h & (RT_HASH - 1);; i = (i + 1) & (RT_HASH - 1)) {
        uint32_t id = atomic_load_explicit(&RT.probe[i], memory_order_acquire);
        if (id == 0)
            return 0;
        if (RT.hash[id] == h && RT.len[id] == n && memcmp(RT.name[id], p, n) == 0)
            return id;
    }
}

/* The id of a name, inserted when new; 0 when the table is full. */
static uint32_t name_id(const char *p, size_t n, uint32_t h, unsigned source)
{
    uint32_t id = name_find(p, n, h);
    if (id)
        return id;
    /* A signal handler that names a new region while its thread holds the lock would wait for
     * itself: such a name is refused (dropped) instead. */
    static __thread int holding;
    if (holding)
        return 0;
    holding = 1;
    pthread_mutex_lock(&RT.lock);
    uint32_t i = h & (RT_HASH - 1);
    for (;; i = (i + 1) & (RT_HASH - 1)) {
        id = atomic_load_explicit(&RT.probe[i], memory_order_relaxed);
        if (id == 0)
            break;
        if (RT.hash[id] == h && RT.len[id] == n && memcmp(RT.name[id], p, n) == 0)
            break;
    }
    if (id == 0) {
        uint32_t k = atomic_load_explicit(&RT.n, memory_order_relaxed);
        if (k < MW_RANK_MAX_REGIONS) {
            id = k + 1;
            memcpy(RT.name[id], p, n);
            RT.name[id][n] = 0;
            RT.len[id] = (uint32_t)n;
            RT.hash[id] = h;
            RT.source[id] = (uint8_t)source;
            atomic_store_explicit(&RT.probe[i], id, memory_order_release);
            atomic_store_explicit(&RT.n, id, memory_order_release);
        }
    }
    pthread_mutex_unlock(&RT.lock);
    holding = 0;
    return id;
}

/* ---- the per-thread stack ---------------------------------------------------------------- */

static void drop(void)
{
    atomic_fetch_add_explicit(&R.dropped, 1, memory_order_relaxed);
}

/* The calling thread's state for a region event, or NULL: before MPI_Init, after
 * MPI_Finalize, disabled, a thread beyond max_threads (counted), or inside an MPI call (a
 * user function MPI calls back, counted). Paused recording still keeps the stack. */
static mw_thread_t *region_thread(void)
{
    if (!atomic_load_explicit(&mw__g.active, memory_order_relaxed) || !R.stacks)
        return NULL;
    mw_thread_t *t = mw__tls;
    if (__builtin_expect(t == NULL, 0))
        t = mw__thread_attach(0);
    if (t == NULL || atomic_load_explicit(&t->inflight, memory_order_relaxed) != 0) {
        drop();
        return NULL;
    }
    return t;
}

static tstack_t *stack_of(mw_thread_t *t)
{
    size_t i = (size_t)((unsigned char *)t - mw__g.arena) / mw__g.thread_bytes;
    return (tstack_t *)(R.stacks + i * R.stack_bytes);
}

static void begin_id(mw_thread_t *t, uint32_t id, uint32_t hash)
{
    tstack_t *st = stack_of(t);
    if (st->depth >= R.depth) {
        st->over++;
        drop();
        return;
    }
    if (id == 0)
        drop();
    frame_t *f = &st->f[st->depth++];
    f->id = id;
    f->hash = hash;
    f->rec = atomic_load_explicit(&mw__g.recording, memory_order_relaxed);
    f->mpi0 = t->mpi_ns;
    f->child_ns = f->child_mpi = 0;
    f->t0 = mw__now();
}

/* Adds one ended instance to the slot of the window it ended in. */
static void account(mw_thread_t *t, uint32_t id, uint64_t t1, uint64_t incl, uint64_t excl,
                    uint64_t mpi)
{
    mw__busy_enter(t);
    if (t1 - t->cw_start >= t->cw_end - t->cw_start)
        mw__window_locate(t, t1);
    int64_t closed = atomic_load_explicit(&mw__g.closed_upto, memory_order_relaxed);
    mw_slot_t *s = mw__slot_now(t, closed);
    if (s) {
        slotreg_t *h = (slotreg_t *)((unsigned char *)s + R.slot_off);
        regstat_t *e = (regstat_t *)((unsigned char *)s + R.entries_off);
        unsigned i = h->of[id];
        if (i == 0 && h->n < R.entries) {
            i = ++h->n;
            h->of[id] = (uint16_t)i;
            e[i - 1].id = id;
        }
        if (i) {
            regstat_t *x = &e[i - 1];
            x->count++;
            x->incl += incl;
            x->excl += excl;
            x->mpi += mpi;
        } else {
            drop();
        }
    } else {
        drop();
    }
    mw__busy_leave(t);
}

/* Ends the innermost open region. want: the id the caller names (0 with by_hash: a name
 * not in the table, matched by hash against id-0 frames); any: no name given. */
static void end_top(mw_thread_t *t, int any, uint32_t want, uint32_t hash)
{
    tstack_t *st = stack_of(t);
    if (st->over) {
        st->over--; /* the end of a begin beyond the depth: ignored, as the begin was */
        return;
    }
    if (st->depth == 0) {
        drop();
        return;
    }
    frame_t *f = &st->f[st->depth - 1];
    if (!any && (f->id != want || (want == 0 && f->hash != hash))) {
        drop();
        return;
    }
    uint64_t t1 = mw__now();
    st->depth--;
    uint64_t incl = t1 > f->t0 ? mw__ticks_to_ns(t1 - f->t0) : 0;
    uint64_t mpi = t->mpi_ns - f->mpi0;
    if (st->depth) {
        frame_t *p = &st->f[st->depth - 1];
        p->child_ns += incl;
        p->child_mpi += mpi;
    }
    if (f->id == 0 || !f->rec || !atomic_load_explicit(&mw__g.recording, memory_order_relaxed))
        return;
    uint64_t excl = incl > f->child_ns ? incl - f->child_ns : 0;
    uint64_t xmpi = mpi > f->child_mpi ? mpi - f->child_mpi : 0;
    if (xmpi > excl)
        xmpi = excl; /* MPI time is measured apart: never more than the region's own time */
    account(t, f->id, t1, incl, excl, xmpi);
}

static void region_begin(const char *p, size_t n, unsigned source)
{
    mw_thread_t *t = region_thread();
    if (!t)
        return;
    n = name_cut(p, n);
    uint32_t h = name_hash(p, n);
    begin_id(t, n ? name_id(p, n, h, source) : 0, h);
}

static void region_end(const char *p, size_t n)
{
    mw_thread_t *t = region_thread();
    if (!t)
        return;
    if (!p) {
        end_top(t, 1, 0, 0);
        return;
    }
    n = name_cut(p, n);
    uint32_t h = name_hash(p, n);
    end_top(t, 0, n ? name_find(p, n, h) : 0, h);
}

MW_EXPORT void mw_region_begin(const char *name)
{
    region_begin(name ? name : "", name ? strnlen(name, MW_REGION_NAME_MAX + 1) : 0, 1);
}

MW_EXPORT void mw_region_end(const char *name)
{
    region_end(name, name ? strnlen(name, MW_REGION_NAME_MAX + 1) : 0);
}

/* Fortran (docs/regions.md): call mw_region_begin('name'), with the hidden length of the
 * CHARACTER argument; trailing blanks are not part of the name. gfortran's manglings: name_
 * and, with -fsecond-underscore, name__ (plain `mw_region_begin` is the C function). */
static size_t ftrim(const char *p, size_t len)
{
    while (len > 0 && p[len - 1] == ' ')
        len--;
    return len;
}

void mw_region_begin_(const char *name, size_t len);
void mw_region_end_(const char *name, size_t len);
void mw_region_begin__(const char *name, size_t len);
void mw_region_end__(const char *name, size_t len);
void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

MW_EXPORT void mw_region_begin_(const char *name, size_t len)
{
    region_begin(name, name ? ftrim(name, len) : 0, 1);
}

MW_EXPORT void mw_region_end_(const char *name, size_t len)
{
    region_end(name ? name : "", name ? ftrim(name, len) : 0);
}

MW_EXPORT void mw_region_begin__(const char *name, size_t len)
    __attribute__((alias("mw_region_begin_")));
MW_EXPORT void mw_region_end__(const char *name, size_t len)
    __attribute__((alias("mw_region_end_")));

/* ---- -finstrument-functions -------------------------------------------------------------- */

static inline uint64_t sel_hash(uint64_t a)
{
    return (a >> 4) * 0x9E3779B97F4A7C15ull >> 20;
}

/* The region id of a selected function (given at its first entry), 0 for any other;
 * UINT32_MAX when the region table was full. */
static inline __attribute__((no_instrument_function)) uint32_t sel_find(uint64_t a, uint64_t mask)
{
    for (uint64_t i = sel_hash(a) & mask;; i = (i + 1) & mask) {
        if (SEL.addr[i] == a) {
            uint32_t id = atomic_load_explicit(&SEL.id[i], memory_order_acquire);
            if (__builtin_expect(id == 0, 0)) {
                size_t n = name_cut(SEL.name[i], strlen(SEL.name[i]));
                id = name_id(SEL.name[i], n, name_hash(SEL.name[i], n), 2);
                if (id == 0)
                    id = UINT32_MAX;
                atomic_store_explicit(&SEL.id[i], id, memory_order_release);
            }
            return id;
        }
        if (SEL.addr[i] == 0)
            return 0;
    }
}

MW_EXPORT __attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn,
                                                                                void *site)
{
    (void)site;
    /* Acquire: a thread that sees the mask sees the table it was published with (threads of
     * the application may run instrumented code while MPI_Init builds it). */
    uint64_t mask = __atomic_load_n(&SEL.mask, __ATOMIC_ACQUIRE);
    if (__builtin_expect(mask == 0, 1))
        return;
    uint32_t id = sel_find((uint64_t)(uintptr_t)fn, mask);
    if (id == 0)
        return;
    mw_thread_t *t = region_thread();
    if (t)
        begin_id(t, id == UINT32_MAX ? 0 : id, id == UINT32_MAX ? 0 : RT.hash[id]);
}

MW_EXPORT __attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    /* Acquire: a thread that sees the mask sees the table it was published with (threads of
     * the application may run instrumented code while MPI_Init builds it). */
    uint64_t mask = __atomic_load_n(&SEL.mask, __ATOMIC_ACQUIRE);
    if (__builtin_expect(mask == 0, 1))
        return;
    uint32_t id = sel_find((uint64_t)(uintptr_t)fn, mask);
    if (id == 0)
        return;
    mw_thread_t *t = region_thread();
    if (t)
        end_top(t, 0, id == UINT32_MAX ? 0 : id, id == UINT32_MAX ? 0 : RT.hash[id]);
}

typedef struct {
    char buf[1024];
    const char *pat[PATTERNS_MAX];
    unsigned npat;
    uint64_t *addr;
    char **name;
    unsigned n, cap;
    unsigned refused;
} selbuild_t;

static void sel_symbol(const char *name, uint64_t address, void *ctx)
{
    selbuild_t *b = ctx;
    if (!name || !*name || !address)
        return;
    unsigned j = 0;
    while (j < b->npat && fnmatch(b->pat[j], name, 0) != 0)
        j++;
    if (j == b->npat)
        return;
    if (b->n == SEL_MAX) {
        b->refused++;
        return;
    }
    if (b->n == b->cap) {
        unsigned cap = b->cap ? 2 * b->cap : 256;
        uint64_t *a = realloc(b->addr, cap * sizeof *a);
        if (a)
            b->addr = a;
        char **d = a ? realloc(b->name, cap * sizeof *d) : NULL;
        if (d)
            b->name = d;
        if (!a || !d) {
            b->refused++;
            return;
        }
        b->cap = cap;
    }
    b->name[b->n] = strdup(name);
    if (!b->name[b->n]) {
        b->refused++;
        return;
    }
    b->addr[b->n++] = address;
}

/* MPIWATCH_REGIONS: the functions whose -finstrument-functions hooks open regions. */
static void select_functions(void)
{
    const char *s = getenv("MPIWATCH_REGIONS");
    if (!s || !*s)
        return;
    selbuild_t *b = calloc(1, sizeof *b);
    if (!b)
        return;
    snprintf(b->buf, sizeof b->buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(b->buf, ",", &save); tok && b->npat < PATTERNS_MAX;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        size_t l = strlen(tok);
        while (l > 0 && tok[l - 1] == ' ')
            tok[--l] = 0;
        if (l)
            b->pat[b->npat++] = tok;
    }
    long nsym = b->npat ? mw__dw_symbols(sel_symbol, b) : 0;
    if (nsym < 0)
        mw__log("MPIWATCH_REGIONS: no symbol table (libdw cannot be loaded); no function regions");
    if (b->n) {
        uint64_t size = 1;
        while (size < 2u * b->n)
            size <<= 1;
        uint64_t *addr = calloc(size, sizeof *addr);
        char **name = calloc(size, sizeof *name);
        _Atomic uint32_t *id = calloc(size, sizeof *id);
        if (addr && name && id) {
            for (unsigned i = 0; i < b->n; i++) {
                uint64_t j = sel_hash(b->addr[i]) & (size - 1);
                while (addr[j] && addr[j] != b->addr[i])
                    j = (j + 1) & (size - 1);
                if (addr[j])
                    continue; /* an alias of a function already selected: the first name */
                addr[j] = b->addr[i];
                name[j] = b->name[i];
                b->name[i] = NULL; /* kept for the process's life */
            }
            SEL.addr = addr;
            SEL.name = name;
            SEL.id = id;
            SEL.n = b->n;
            /* published (release) before recording starts (mw__set_state) */
            __atomic_store_n(&SEL.mask, size - 1, __ATOMIC_RELEASE);
        } else {
            free(addr);
            free(name);
            free((void *)id);
        }
    }
    mw__log("MPIWATCH_REGIONS=%s: %u functions selected of %ld symbols (%u refused)", s, b->n, nsym,
            b->refused);
    for (unsigned i = 0; i < b->n; i++)
        free(b->name[i]);
    free(b->addr);
    free(b->name);
    free(b);
}

/* ---- init, slots, the sender's side ------------------------------------------------------ */

size_t mw__regions_layout(size_t offset)
{
    R.entries = mw__g.cfg.region_entries;
    R.depth = mw__g.cfg.region_depth;
    R.slot_off = offset;
    R.entries_off = offset + ((sizeof(slotreg_t) + 63u) & ~(size_t)63u);
    return R.entries_off - offset + (size_t)R.entries * sizeof(regstat_t);
}

void mw__regions_init(void)
{
    R.stack_bytes = (sizeof(tstack_t) + (size_t)R.depth * sizeof(frame_t) + 63u) & ~(size_t)63u;
    void *p = mmap(NULL, R.stack_bytes * mw__g.cfg.max_threads, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        mw__log("cannot map the region stacks; regions are off");
        return;
    }
    R.stacks = p;
    select_functions();
}

void mw__regions_slot_reset(mw_slot_t *s)
{
    if (!R.slot_off)
        return;
    slotreg_t *h = (slotreg_t *)((unsigned char *)s + R.slot_off);
    if (!h->n)
        return;
    regstat_t *e = (regstat_t *)((unsigned char *)s + R.entries_off);
    for (unsigned i = 0; i < h->n; i++)
        h->of[e[i].id] = 0;
    memset(e, 0, h->n * sizeof *e);
    h->n = 0;
}

/* The sender's accumulator of one window, dense by id, and the sample's arrays. */
static struct {
    uint64_t count[MW_RANK_MAX_REGIONS + 1], incl[MW_RANK_MAX_REGIONS + 1],
        excl[MW_RANK_MAX_REGIONS + 1], mpi[MW_RANK_MAX_REGIONS + 1];
    uint32_t list[MW_RANK_MAX_REGIONS];
    unsigned n;
    uint64_t w_count[MW_RANK_MAX_REGIONS], w_incl[MW_RANK_MAX_REGIONS], w_excl[MW_RANK_MAX_REGIONS],
        w_mpi[MW_RANK_MAX_REGIONS];
    uint64_t dropped_seen;
    Mpiwatch__RegionDef def[MW_RANK_MAX_REGIONS];
    Mpiwatch__RegionDef *defp[MW_RANK_MAX_REGIONS];
    unsigned defs_built, defs_sent;
} A;

void mw__regions_merge(mw_slot_t *s)
{
    if (!R.slot_off)
        return;
    slotreg_t *h = (slotreg_t *)((unsigned char *)s + R.slot_off);
    regstat_t *e = (regstat_t *)((unsigned char *)s + R.entries_off);
    for (unsigned i = 0; i < h->n && i < R.entries; i++) {
        uint32_t id = e[i].id;
        if (id == 0 || id > MW_RANK_MAX_REGIONS)
            continue;
        if (!A.count[id])
            A.list[A.n++] = id;
        A.count[id] += e[i].count;
        A.incl[id] += e[i].incl;
        A.excl[id] += e[i].excl;
        A.mpi[id] += e[i].mpi;
    }
}

int64_t mw__regions_sample(Mpiwatch__Sample *smp)
{
    int64_t from = -1;
    uint32_t n = atomic_load_explicit(&RT.n, memory_order_acquire);
    for (; A.defs_built < n; A.defs_built++) {
        Mpiwatch__RegionDef *d = &A.def[A.defs_built];
        uint32_t id = A.defs_built + 1;
        mpiwatch__region_def__init(d);
        d->id = id;
        d->name = RT.name[id];
        d->source = RT.source[id];
        A.defp[A.defs_built] = d;
    }
    if (A.defs_sent < A.defs_built) {
        from = A.defs_sent;
        smp->n_region_defs = A.defs_built - A.defs_sent;
        smp->region_defs = A.defp + A.defs_sent;
        A.defs_sent = A.defs_built;
    }
    for (unsigned i = 0; i < A.n; i++) {
        uint32_t id = A.list[i];
        A.w_count[i] = A.count[id];
        A.w_incl[i] = A.incl[id];
        A.w_excl[i] = A.excl[id];
        A.w_mpi[i] = A.mpi[id];
        A.count[id] = A.incl[id] = A.excl[id] = A.mpi[id] = 0;
    }
    smp->n_region_id = smp->n_region_count = smp->n_region_incl_ns = smp->n_region_excl_ns =
        smp->n_region_mpi_ns = A.n;
    smp->region_id = A.list;
    smp->region_count = A.w_count;
    smp->region_incl_ns = A.w_incl;
    smp->region_excl_ns = A.w_excl;
    smp->region_mpi_ns = A.w_mpi;
    A.n = 0; /* the arrays stay valid until the next window is merged */
    uint64_t d = atomic_load_explicit(&R.dropped, memory_order_relaxed);
    smp->regions_dropped = d - A.dropped_seen;
    A.dropped_seen = d;
    return from;
}

void mw__regions_defs_lost(int64_t from)
{
    if (from >= 0 && (unsigned)from < A.defs_sent)
        A.defs_sent = (unsigned)from;
}
