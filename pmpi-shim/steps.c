/* steps.c: time steps in the shim: mw_step(), MPIWATCH_STEP=fn:N and the period detector.
 *
 * DESIGN: a step mark is a snapshot, taken on the marking thread at the moment the step ends,
 * of that thread's totals in the slot a call ending now would be recorded in (functions and
 * peers so far in the window). The thread is the only writer of its slot, so reading it there
 * needs no lock, and the mark is written into the slot's own mark area inside the same busy
 * bracket as a record, so the sender's hand-over protocol (shim.h) covers it unchanged. The
 * sender ships a window's marks in its sample; the collector gets exact per-step totals by
 * difference: marks S1..Sk in window w with totals T give the segments S1, S2-S1, ..., and
 * T-Sk, which belongs to the next step. Nothing is added to the per-call path of mw_step()
 * users; MPIWATCH_STEP=fn:N costs one byte load per timed call (mw__step_watch) and a call
 * out of line for that one function only.
 *
 * The detector (MPIWATCH_STEP=auto) watches every timed function of the marking thread while
 * it learns: each call appends its id to a ring. Once per window the sender looks for the
 * shortest period p of the last calls (at least four repetitions); when the same p is found
 * twice in a row it picks the function that occurs least often in one period (c times,
 * collectives first) and arms itself as MPIWATCH_STEP=that:c, which also ends the learning
 * cost. The phase of detected steps is arbitrary: a step ends after a call of the anchor.
 */
#include "shim.h"

#include <stdlib.h>
#include <string.h>

#define MW_DETECT_SPAN 1024u   /* calls the detector examines */
#define MW_DETECT_MIN 64u      /* calls before it tries */
#define MW_DETECT_GIVE_UP 600u /* windows of learning before it stops trying */

mw_steps_t mw__steps;
uint8_t mw__step_watch[MW_FN_COUNT];

size_t mw__steps_layout(size_t offset)
{
    unsigned m = mw__g.cfg.step_marks ? mw__g.cfg.step_marks : 16u;
    mw__steps.marks = m;
    /* One snapshot always fits: the function table, or every peer slot. */
    mw__steps.fn_pool =
        m * MW_STEP_POOL_PER_MARK > MW_FN_COUNT ? m * MW_STEP_POOL_PER_MARK : MW_FN_COUNT;
    mw__steps.peer_pool =
        m * MW_STEP_POOL_PER_MARK > mw__g.cfg.peers ? m * MW_STEP_POOL_PER_MARK : mw__g.cfg.peers;
    mw__steps.slot_marks = offset;
    mw__steps.slot_fn = offset + (size_t)m * sizeof(mw_mark_t);
    mw__steps.slot_peer = mw__steps.slot_fn + (size_t)mw__steps.fn_pool * sizeof(mw_markfn_t);
    return mw__steps.slot_peer + (size_t)mw__steps.peer_pool * sizeof(mw_peer_t) - offset;
}

static void watch_only(unsigned keep)
{
    /* Byte stores the wrappers read without ordering: a wrapper that sees a stale flag makes
     * one extra call of mw__step_call(), which checks the mode again. */
    for (unsigned f = 1; f < MW_FN_COUNT; f++)
        if (f != keep)
            mw__step_watch[f] = 0;
}

void mw__steps_init(void)
{
    mw__steps.thread = mw__tls ? mw__tls : mw__thread_attach(0);
    const mw_config_t *c = &mw__g.cfg;
    if (c->step_fn && c->step_every) {
        atomic_store(&mw__steps.fn, c->step_fn);
        atomic_store(&mw__steps.every, c->step_every);
        mw__step_watch[c->step_fn] = 1;
        atomic_store(&mw__steps.mode, MW_STEP_EVERY);
    } else if (c->step_auto) {
        for (unsigned f = 1; f < MW_FN_COUNT; f++) {
            mw_kind_t k = mw_fn_kind(f);
            mw__step_watch[f] = k != MW_KIND_QUERY && k != MW_KIND_SPECIAL;
        }
        atomic_store(&mw__steps.mode, MW_STEP_LEARN);
    }
}

void mw__step_mark(mw_thread_t *t, uint64_t step, unsigned source)
{
    uint64_t now = mw__now();
    mw__busy_enter(t);
    if (now - t->cw_start >= t->cw_end - t->cw_start)
        mw__window_locate(t, now);
    int64_t closed = atomic_load_explicit(&mw__g.closed_upto, memory_order_relaxed);
    mw_slot_t *s = mw__slot_now(t, closed);
    if (!s) {
        atomic_fetch_add_explicit(&mw__steps.lost, 1, memory_order_relaxed);
        mw__busy_leave(t);
        return;
    }
    unsigned nf = 0, np = s->npeers;
    for (unsigned f = 1; f < MW_FN_COUNT; f++)
        nf += s->fn[f].count != 0;
    mw_mark_t *marks = mw__slot_marks(s);
    unsigned i = s->nmarks;
    uint32_t folded = 0, f0 = s->mark_fn_used, p0 = s->mark_peer_used;
    while (i == mw__steps.marks || f0 + nf > mw__steps.fn_pool || p0 + np > mw__steps.peer_pool) {
        /* Full: this mark replaces the window's last one, whose step's calls then count in
         * this step (the mark says how many were folded), and reuses its pool space. The pools
         * hold one snapshot of any size, so this ends at the first mark at the latest. */
        if (i == 0) {
            atomic_fetch_add_explicit(&mw__steps.lost, 1, memory_order_relaxed);
            mw__busy_leave(t);
            return;
        }
        i--;
        folded += marks[i].folded + 1;
        f0 = marks[i].fn_first;
        p0 = marks[i].peer_first;
    }
    mw_markfn_t *e = mw__slot_mark_fn(s) + f0;
    unsigned k = 0;
    for (unsigned f = 1; f < MW_FN_COUNT; f++)
        if (s->fn[f].count)
            e[k++] = (mw_markfn_t){.fn = f, .s = s->fn[f]};
    mw_peer_t *pp = mw__slot_mark_peer(s) + p0, *tab = mw__slot_peers(s);
    unsigned q = 0;
    for (unsigned j = 0; np && j < mw__g.cfg.peers; j++)
        if (tab[j].key)
            pp[q++] = tab[j];
    marks[i] = (mw_mark_t){.step = step,
                           .end_ns = mw__global_ns(now),
                           .source = source,
                           .folded = folded,
                           .fn_first = f0,
                           .fn_n = k,
                           .peer_first = p0,
                           .peer_n = q};
    s->nmarks = i + 1;
    s->mark_fn_used = f0 + k;
    s->mark_peer_used = p0 + q;
    mw__busy_leave(t);
}

void mw__step_api(mw_thread_t *t, long step)
{
    if (atomic_load_explicit(&mw__steps.mode, memory_order_relaxed) != MW_STEP_API) {
        /* Marks from the application win: MPIWATCH_STEP and the detector stop. */
        atomic_store(&mw__steps.mode, MW_STEP_API);
        watch_only(0);
    }
    if (t != mw__steps.thread || step < 0) {
        atomic_fetch_add_explicit(&mw__steps.lost, 1, memory_order_relaxed);
        return;
    }
    mw__step_mark(t, (uint64_t)step, 1);
}

void mw__step_call(mw_thread_t *t, unsigned fn)
{
    if (t != mw__steps.thread)
        return;
    int mode = atomic_load_explicit(&mw__steps.mode, memory_order_acquire);
    if (mode == MW_STEP_LEARN) {
        uint64_t n = atomic_load_explicit(&mw__steps.seq_n, memory_order_relaxed);
        atomic_store_explicit(&mw__steps.seq[n % MW_DETECT_RING], (uint16_t)fn,
                              memory_order_relaxed);
        atomic_store_explicit(&mw__steps.seq_n, n + 1, memory_order_release);
        return;
    }
    if (mode != MW_STEP_EVERY && mode != MW_STEP_ARMED)
        return;
    if (mode == MW_STEP_ARMED && !mw__steps.seen_armed) {
        mw__steps.seen_armed = 1; /* detected steps are numbered from the arming */
        mw__steps.count = 0;
    }
    if (fn != atomic_load_explicit(&mw__steps.fn, memory_order_relaxed))
        return;
    unsigned every = atomic_load_explicit(&mw__steps.every, memory_order_relaxed);
    if (++mw__steps.count % every == 0)
        mw__step_mark(t, mw__steps.count / every - 1, mode == MW_STEP_EVERY ? 2 : 3);
}

/* ---- the detector (sender thread) --------------------------------------------------------- */

static struct {
    uint64_t last_n;
    unsigned last_p;
    unsigned windows;
    uint16_t x[MW_DETECT_SPAN];
} D;

/* The shortest p such that x is p-periodic with at least four repetitions, or 0. */
static unsigned period_of(const uint16_t *x, unsigned n)
{
    for (unsigned p = 1; p * 4 <= n; p++) {
        unsigned i = p;
        while (i < n && x[i] == x[i - p])
            i++;
        if (i == n)
            return p;
    }
    return 0;
}

static void detect_arm(const uint16_t *cycle, unsigned p)
{
    unsigned best = 0, best_c = 0;
    for (unsigned i = 0; i < p; i++) {
        unsigned f = cycle[i], c = 0;
        for (unsigned j = 0; j < p; j++)
            c += cycle[j] == f;
        int coll = mw_fn_kind(f) == MW_KIND_COLL, best_coll = mw_fn_kind(best) == MW_KIND_COLL;
        if (!best || (coll && !best_coll) || (coll == best_coll && c < best_c)) {
            best = f;
            best_c = c;
        }
    }
    atomic_store(&mw__steps.fn, best);
    atomic_store(&mw__steps.every, best_c);
    atomic_store(&mw__steps.mode, MW_STEP_ARMED);
    watch_only(best);
    mw__log("step detector: period of %u calls, a step ends every %u call(s) of %s", p, best_c,
            mw_fn_name(best));
}

void mw__step_detect_tick(void)
{
    if (atomic_load_explicit(&mw__steps.mode, memory_order_relaxed) != MW_STEP_LEARN)
        return;
    if (++D.windows > MW_DETECT_GIVE_UP) {
        int learn = MW_STEP_LEARN;
        if (atomic_compare_exchange_strong(&mw__steps.mode, &learn, MW_STEP_NONE))
            watch_only(0);
        mw__log("step detector: no period found; giving up");
        return;
    }
    uint64_t n = atomic_load_explicit(&mw__steps.seq_n, memory_order_acquire);
    if (n < MW_DETECT_MIN || n == D.last_n)
        return;
    unsigned len = n < MW_DETECT_SPAN ? (unsigned)n : MW_DETECT_SPAN;
    for (unsigned i = 0; i < len; i++)
        D.x[i] = atomic_load_explicit(&mw__steps.seq[(n - len + i) % MW_DETECT_RING],
                                      memory_order_relaxed);
    /* The application may have overwritten the oldest ids while they were copied. */
    if (atomic_load_explicit(&mw__steps.seq_n, memory_order_acquire) - n > MW_DETECT_RING - len)
        return;
    unsigned p = period_of(D.x, len);
    int confirmed = p && p == D.last_p && n >= D.last_n + p;
    D.last_p = p;
    D.last_n = n;
    if (confirmed && atomic_load(&mw__steps.mode) == MW_STEP_LEARN)
        detect_arm(D.x + len - p, p);
}

/* ---- a window's marks in the sender's accumulator ----------------------------------------- */

int mw__acc_marks_init(mw_acc_marks_t *m)
{
    memset(m, 0, sizeof *m);
    /* The base holds the (peer, function) entries of the slots before: MW_RING peer tables. */
    m->base_cap = MW_RING * mw__g.cfg.peers;
    m->fn_cap = MW_RING * mw__steps.fn_pool + MW_FN_COUNT;
    m->peer_cap = MW_RING * mw__steps.peer_pool + m->base_cap;
    m->fn = calloc(m->fn_cap, sizeof *m->fn);
    m->peer_rank = calloc(m->peer_cap, sizeof *m->peer_rank);
    m->peer_fn = calloc(m->peer_cap, sizeof *m->peer_fn);
    m->peer_messages = calloc(m->peer_cap, sizeof *m->peer_messages);
    m->peer_bytes = calloc(m->peer_cap, sizeof *m->peer_bytes);
    m->base_fn = calloc(MW_FN_COUNT, sizeof *m->base_fn);
    m->base_key = calloc(m->base_cap, sizeof *m->base_key);
    m->base_pm = calloc(m->base_cap, sizeof *m->base_pm);
    m->base_pb = calloc(m->base_cap, sizeof *m->base_pb);
    if (!m->fn || !m->peer_rank || !m->peer_fn || !m->peer_messages || !m->peer_bytes ||
        !m->base_fn || !m->base_key || !m->base_pm || !m->base_pb)
        return -1;
    return 0;
}

void mw__acc_marks_clear(mw_acc_marks_t *m)
{
    if (m->have_base) {
        memset(m->base_fn, 0, MW_FN_COUNT * sizeof *m->base_fn);
        m->base_np = 0;
        m->have_base = 0;
    }
    m->n = m->fn_n = m->peer_n = 0;
}

/* Rare (a slot left behind): a linear search, as marks_add's merge below. */
static void base_peer(mw_acc_marks_t *m, int32_t key, uint64_t messages, uint64_t bytes)
{
    int32_t rank = MW_PEER_KEY_RANK(key);
    if (rank < 0 || rank >= mw__g.size)
        return;
    unsigned i = 0;
    while (i < m->base_np && m->base_key[i] != key)
        i++;
    if (i == m->base_np) {
        if (m->base_np == m->base_cap)
            return; /* cannot happen: the base holds MW_RING peer tables */
        m->base_key[m->base_np++] = key;
        m->base_pm[i] = m->base_pb[i] = 0;
    }
    m->base_pm[i] += messages;
    m->base_pb[i] += bytes;
}

/* Appends one mark of slot s, plus the base when there is one. */
static void marks_add(mw_acc_marks_t *m, mw_slot_t *s, const mw_mark_t *x)
{
    unsigned j = m->n;
    uint32_t folded = x->folded, f0 = m->fn_n, p0 = m->peer_n;
    unsigned nf = m->have_base ? MW_FN_COUNT : x->fn_n;
    unsigned np = x->peer_n + (m->have_base ? m->base_np : 0);
    if (j == MW_STEP_MAX_MARKS || f0 + nf > m->fn_cap || p0 + np > m->peer_cap) {
        if (j == 0) {
            atomic_fetch_add_explicit(&mw__steps.lost, 1, memory_order_relaxed);
            return;
        }
        j--;
        folded += m->mark[j].folded + 1;
        f0 = m->mark[j].fn_first;
        p0 = m->mark[j].peer_first;
        if (f0 + nf > m->fn_cap || p0 + np > m->peer_cap) {
            atomic_fetch_add_explicit(&mw__steps.lost, 1, memory_order_relaxed);
            return;
        }
    }
    const mw_markfn_t *sf = mw__slot_mark_fn(s) + x->fn_first;
    const mw_peer_t *sp = mw__slot_mark_peer(s) + x->peer_first;
    unsigned k = 0, q = 0;
    if (!m->have_base) {
        memcpy(m->fn + f0, sf, x->fn_n * sizeof *sf);
        k = x->fn_n;
        for (unsigned i = 0; i < x->peer_n; i++, q++) {
            m->peer_rank[p0 + q] = (uint32_t)MW_PEER_KEY_RANK(sp[i].key);
            m->peer_fn[p0 + q] = MW_PEER_KEY_FN(sp[i].key);
            m->peer_messages[p0 + q] = sp[i].messages;
            m->peer_bytes[p0 + q] = sp[i].bytes;
        }
    } else {
        /* Rare (a slot left behind): add the earlier slots' totals, densely. */
        for (unsigned f = 1; f < MW_FN_COUNT; f++) {
            mw_fnstat_t v = m->base_fn[f];
            for (unsigned i = 0; i < x->fn_n; i++)
                if (sf[i].fn == f)
                    mw__fnstat_add(&v, &sf[i].s);
            if (v.count)
                m->fn[f0 + k++] = (mw_markfn_t){.fn = f, .s = v};
        }
        for (unsigned i = 0; i < m->base_np; i++, q++) {
            m->peer_rank[p0 + q] = (uint32_t)MW_PEER_KEY_RANK(m->base_key[i]);
            m->peer_fn[p0 + q] = MW_PEER_KEY_FN(m->base_key[i]);
            m->peer_messages[p0 + q] = m->base_pm[i];
            m->peer_bytes[p0 + q] = m->base_pb[i];
        }
        for (unsigned i = 0; i < x->peer_n; i++) {
            uint32_t r = (uint32_t)MW_PEER_KEY_RANK(sp[i].key), f = MW_PEER_KEY_FN(sp[i].key);
            unsigned at = 0;
            while (at < q && (m->peer_rank[p0 + at] != r || m->peer_fn[p0 + at] != f))
                at++;
            if (at == q) {
                m->peer_rank[p0 + q] = r;
                m->peer_fn[p0 + q] = f;
                m->peer_messages[p0 + q] = m->peer_bytes[p0 + q] = 0;
                q++;
            }
            m->peer_messages[p0 + at] += sp[i].messages;
            m->peer_bytes[p0 + at] += sp[i].bytes;
        }
    }
    m->mark[j] = *x;
    m->mark[j].folded = folded;
    m->mark[j].fn_first = f0;
    m->mark[j].fn_n = k;
    m->mark[j].peer_first = p0;
    m->mark[j].peer_n = q;
    m->n = j + 1;
    m->fn_n = f0 + k;
    m->peer_n = p0 + q;
}

void mw__acc_marks_merge(mw_acc_marks_t *m, mw_slot_t *s)
{
    mw_mark_t *marks = mw__slot_marks(s);
    for (unsigned i = 0; i < s->nmarks; i++)
        marks_add(m, s, &marks[i]);
    for (unsigned f = 1; f < MW_FN_COUNT; f++)
        mw__fnstat_add(&m->base_fn[f], &s->fn[f]);
    mw_peer_t *p = mw__slot_peers(s);
    for (unsigned i = 0; s->npeers && i < mw__g.cfg.peers; i++)
        if (p[i].key)
            base_peer(m, p[i].key, p[i].messages, p[i].bytes);
    m->have_base = 1;
}
