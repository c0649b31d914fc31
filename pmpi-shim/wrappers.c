/* wrappers.c: the C wrappers of every MPI function, expanded from mpi_functions.def.
 *
 * DESIGN: each wrapper is the same few lines: ask mw__self() whether to record (if not,
 * return PMPI_X directly), take a timestamp, call PMPI_X, take a timestamp, work out bytes and
 * peer from the arguments only if the call succeeded, and hand everything to mw__record().
 * Local queries are only counted. Hand-written wrappers (kind SPECIAL) live in special.c.
 *
 * Tracing (docs/trace.md): the TRACE column picks one of the MW_T_* templates below. A call
 * without a message is the path above (mw__record appends its MW_TK_CALL record). Messages
 * add the communicator, peer, tag and request number when the thread has a trace ring, with
 * no work but that one test when it has none. Calls that are collective over a communicator
 * count its instances when they start, in every state of the library, and register the
 * communicators they create (trace_comm.c). The TRACE rows marked HAND (receives with a
 * status, completions, persistent starts, matched probes) are in trace_calls.c.
 */
#include "shim.h"

#define MW_NOBYTES 0
#define MW_BYTES(c, t) mw__bytes((c), (t))
#define MW_BYTES_IP(sb, sc, st, rc, rt) mw__bytes_ip((sb), (sc), (st), (rc), (rt))
#define MW_BYTES_V(c, t, comm) mw__bytes_v((c), (t), (comm))
#define MW_BYTES_W(c, t, comm) mw__bytes_w((c), (t), (comm))
#define MW_BYTES_N(c, t, comm) mw__bytes_n((c), (t), (comm))
#define MW_NOPEER (-1)
#define MW_PEER(r, comm) mw__peer((r), (comm))

/* The old path: time the call and record it (mw__record appends a MW_TK_CALL record when
 * tracing). */
#define MW_BODY(name, args, by, pr)                                                                \
    mw_thread_t *mw_t = mw__self(MW_ID_##name);                                                    \
    if (!mw_t)                                                                                     \
        MW_DORMANT_CALL(name, args, PMPI_##name args); /* dormant: counted (shim.h) */             \
    uint64_t mw_t0 = mw__begin(mw_t, MW_ID_##name);                                                \
    __typeof__(PMPI_##name args) mw_rc = PMPI_##name args;                                         \
    uint64_t mw_t1 = mw__now();                                                                    \
    uint64_t mw_b = 0;                                                                             \
    int mw_p = -1;                                                                                 \
    if (mw_rc == MPI_SUCCESS) {                                                                    \
        mw_b = (uint64_t)(by);                                                                     \
        mw_p = (pr);                                                                               \
    }

#define MW_TAIL(name)                                                                              \
    MW_STEP_HOOK(mw_t, MW_ID_##name);                                                              \
    MW_STEER_HOOK(mw_t);                                                                           \
    return mw_rc;

/* CALL: no message. */
#define MW_T_CALL(name, ret, params, args, by, pr, c, p, tg, h)                                    \
    MW_DORMANT_DEF(name, ret, params, PMPI_##name args, by)                                        \
    MW_EXPORT ret MPI_##name params                                                                \
    {                                                                                              \
        MW_BODY(name, args, by, pr)                                                                \
        mw__record(mw_t, MW_ID_##name, mw_t0, mw_t1, mw_b, mw_p);                                  \
        MW_TAIL(name)                                                                              \
    }

/* Point-to-point: the old path; with tracing (the thread has a ring) the record also gets the
 * communicator, peer, tag and, for non-blocking and persistent calls, the request number. The
 * ring is tested once (mw__record_tr tests the same value). */
#define MW_T_P2P(name, ret, params, args, by, pr, tkind, c, p, tg, h, extra)                       \
    MW_DORMANT_DEF(name, ret, params, PMPI_##name args, by)                                        \
    MW_EXPORT ret MPI_##name params                                                                \
    {                                                                                              \
        MW_BODY(name, args, by, pr)                                                                \
        struct mw_tring *mw_r = mw_t->tring;                                                       \
        mw_trec_t mw_x = {.bytes = mw_b, .peer = mw_p, .kind = MW_TK_CALL};                        \
        if (mw_r && mw_rc == MPI_SUCCESS) {                                                        \
            mw_x.comm = mw__comm_index(c);                                                         \
            mw_x.kind = (tkind);                                                                   \
            mw_x.peer = mw__tr_rank(mw_x.comm, (p), &mw_x.flags);                                  \
            mw_x.tag = mw__tr_tag(tg);                                                             \
            extra;                                                                                 \
        }                                                                                          \
        mw__record_tr(mw_t, MW_ID_##name, mw_t0, mw_t1, mw_b, mw_p, mw_r, &mw_x, NULL, 0);         \
        MW_TAIL(name)                                                                              \
    }

#define MW_T_SEND(name, ret, params, args, by, pr, c, p, tg, h)                                    \
    MW_T_P2P(name, ret, params, args, by, pr, MW_TK_SEND, c, p, tg, h, (void)0)
#define MW_T_ISEND(name, ret, params, args, by, pr, c, p, tg, h)                                   \
    MW_T_P2P(name, ret, params, args, by, pr, MW_TK_ISEND, c, p, tg, h,                            \
             mw_x.req =                                                                            \
                 mw__req_post(mw_r, *(h), MW_TK_ISEND, mw_x.comm, mw_x.peer, mw_x.tag, mw_b, 0))
#define MW_T_IRECV(name, ret, params, args, by, pr, c, p, tg, h)                                   \
    MW_T_P2P(name, ret, params, args, by, pr, MW_TK_IRECV, c, p, tg, h,                            \
             mw_x.req =                                                                            \
                 mw__req_post(mw_r, *(h), MW_TK_IRECV, mw_x.comm, mw_x.peer, mw_x.tag, 0, 0))
/* Persistent inits send nothing: a MW_TK_CALL record; MPI_Start posts the request. */
#define MW_T_PSEND(name, ret, params, args, by, pr, c, p, tg, h)                                   \
    MW_T_P2P(name, ret, params, args, by, pr, MW_TK_CALL, c, p, tg, h,                             \
             mw__req_post(mw_r, *(h), MW_TK_ISEND, mw_x.comm, mw_x.peer, mw_x.tag,                 \
                          mw__bytes(count, datatype), 1);                                          \
             mw_x.peer = mw_p; mw_x.tag = 0; mw_x.flags = 0; mw_x.comm = 0)
#define MW_T_PRECV(name, ret, params, args, by, pr, c, p, tg, h)                                   \
    MW_T_P2P(name, ret, params, args, by, pr, MW_TK_CALL, c, p, tg, h,                             \
             mw__req_post(mw_r, *(h), MW_TK_IRECV, mw_x.comm, mw_x.peer, mw_x.tag, 0, 1);          \
             mw_x.peer = mw_p; mw_x.tag = 0; mw_x.flags = 0; mw_x.comm = 0)

/* Collective over a communicator: with tracing on, its instance is counted when the call
 * starts, whatever the state of the library (paused, nested, a thread without a slot), so
 * that every member numbers it the same; then the old path, whose record gets the
 * communicator, the root's world rank and the instance. pre: before the call; post(ok): after
 * it, in every state (communicator creation). Without tracing: the old path and this one
 * branch. */
#define MW_T_COLLECTIVE(name, ret, params, args, by, pr, tkind, c, root, h, extra, post)           \
    MW_DORMANT_DEF(name, ret, params, PMPI_##name args, by)                                        \
    MW_EXPORT ret MPI_##name params                                                                \
    {                                                                                              \
        if (__builtin_expect(mw__trace.on, 1)) {                                                   \
            uint32_t mw_ci = mw__comm_index(c);                                                    \
            uint64_t mw_in = mw__coll_start(mw_ci);                                                \
            mw_thread_t *mw_t = mw__self(MW_ID_##name);                                            \
            if (!mw_t) {                                                                           \
                __typeof__(PMPI_##name args) mw_rc =                                               \
                    atomic_load_explicit(&mw__g.dormant, memory_order_relaxed)                     \
                        ? mw__dormant_##name args /* counted (shim.h) */                           \
                        : PMPI_##name args;                                                        \
                post;                                                                              \
                return mw_rc;                                                                      \
            }                                                                                      \
            uint64_t mw_t0 = mw__begin(mw_t, MW_ID_##name);                                        \
            __typeof__(PMPI_##name args) mw_rc = PMPI_##name args;                                 \
            uint64_t mw_t1 = mw__now();                                                            \
            uint64_t mw_b = 0;                                                                     \
            int mw_p = -1;                                                                         \
            if (mw_rc == MPI_SUCCESS) {                                                            \
                mw_b = (uint64_t)(by);                                                             \
                mw_p = (pr);                                                                       \
            }                                                                                      \
            post;                                                                                  \
            int mw_root = (root);                                                                  \
            mw_trec_t mw_x = {.bytes = mw_b,                                                       \
                              .peer = mw_root >= 0 ? mw__comm_peer(mw_ci, mw_root) : -1,           \
                              .tag = (int32_t)mw_in,                                               \
                              .comm = mw_ci,                                                       \
                              .kind = (tkind)};                                                    \
            if (mw_t->tring && mw_rc == MPI_SUCCESS) {                                             \
                extra;                                                                             \
            }                                                                                      \
            mw__record_tr(mw_t, MW_ID_##name, mw_t0, mw_t1, mw_b, mw_p, mw_t->tring, &mw_x, NULL,  \
                          0);                                                                      \
            MW_TAIL(name)                                                                          \
        }                                                                                          \
        MW_BODY(name, args, by, pr)                                                                \
        mw__record(mw_t, MW_ID_##name, mw_t0, mw_t1, mw_b, mw_p);                                  \
        MW_TAIL(name)                                                                              \
    }

#define MW_T_COLL(name, ret, params, args, by, pr, c, p, tg, h)                                    \
    MW_T_COLLECTIVE(name, ret, params, args, by, pr, MW_TK_COLL, c, p, h, (void)0, (void)0)
#define MW_T_ICOLL(name, ret, params, args, by, pr, c, p, tg, h)                                   \
    MW_T_COLLECTIVE(name, ret, params, args, by, pr, MW_TK_ICOLL, c, p, h,                         \
                    mw_x.req = mw__req_post(mw_t->tring, *(h), MW_TK_ICOLL, mw_ci, mw_x.peer,      \
                                            mw_x.tag, mw_b, 0),                                    \
                    (void)0)
#define MW_T_CCOLL(name, ret, params, args, by, pr, c, p, tg, h)                                   \
    MW_T_COLLECTIVE(name, ret, params, args, by, pr, MW_TK_COLL, c, MW_NOROOT, h, (void)0, (void)0)
/* Creating calls register the new communicator (trace_comm.c) in every state. */
#define MW_T_MADE(name, ret, params, args, by, pr, c, tg, h, made)                                 \
    MW_T_COLLECTIVE(name, ret, params, args, by, pr, MW_TK_COLL, c, MW_NOROOT, h, (void)0,         \
                    if (mw_rc == MPI_SUCCESS && (h))                                               \
                        mw__comm_created(mw_ci, mw_in, *(h), MW_ID_##name, (made), (tg)))
#define MW_T_CREATE(name, ret, params, args, by, pr, c, p, tg, h)                                  \
    MW_T_MADE(name, ret, params, args, by, pr, c, tg, h, MW_MADE_CREATE)
/* MPI_Comm_idup: an ICOLL post, whose request (the row's `request` parameter) its Wait/Test
 * completes. */
#define MW_T_ICREATE(name, ret, params, args, by, pr, c, p, tg, h)                                 \
    MW_T_COLLECTIVE(                                                                               \
        name, ret, params, args, by, pr, MW_TK_ICOLL, c, MW_NOROOT, h,                             \
        mw_x.req = mw__req_post(mw_t->tring, *request, MW_TK_ICOLL, mw_ci, -1, mw_x.tag, 0, 0),    \
        if (mw_rc == MPI_SUCCESS && (h))                                                           \
            mw__comm_created(mw_ci, mw_in, *(h), MW_ID_##name, MW_MADE_IDUP, (tg)))
#define MW_T_XCREATE(name, ret, params, args, by, pr, c, p, tg, h)                                 \
    MW_T_MADE(name, ret, params, args, by, pr, c, tg, h, MW_MADE_INTER)
#define MW_T_EXTERN(name, ret, params, args, by, pr, c, p, tg, h)                                  \
    MW_T_MADE(name, ret, params, args, by, pr, c, tg, h, MW_MADE_EXTERN)
/* MPI_Comm_create_group is collective over the group only: nothing is counted on comm. */
#define MW_T_GCREATE(name, ret, params, args, by, pr, c, p, tg, h)                                 \
    MW_DORMANT_DEF(name, ret, params, PMPI_##name args, by)                                        \
    MW_EXPORT ret MPI_##name params                                                                \
    {                                                                                              \
        if (__builtin_expect(mw__trace.on, 1) && !mw__self(MW_ID_##name)) {                        \
            /* not recording: the communicator is registered all the same */                       \
            __typeof__(PMPI_##name args) mw_rc =                                                   \
                atomic_load_explicit(&mw__g.dormant, memory_order_relaxed)                         \
                    ? mw__dormant_##name args /* counted (shim.h) */                               \
                    : PMPI_##name args;                                                            \
            if (mw_rc == MPI_SUCCESS && (h))                                                       \
                mw__comm_created(0, 0, *(h), MW_ID_##name, MW_MADE_GROUP, (tg));                   \
            return mw_rc;                                                                          \
        }                                                                                          \
        MW_BODY(name, args, by, pr)                                                                \
        if (mw__trace.on && mw_rc == MPI_SUCCESS && (h))                                           \
            mw__comm_created(0, 0, *(h), MW_ID_##name, MW_MADE_GROUP, (tg));                       \
        mw__record(mw_t, MW_ID_##name, mw_t0, mw_t1, mw_b, mw_p);                                  \
        MW_TAIL(name)                                                                              \
    }
/* Hand-written in trace_calls.c. */
#define MW_T_HAND(name, ret, params, args, by, pr, c, p, tg, h)

#define MW_WRAP_TIMED(name, ret, params, args, by, pr, tk, c, p, tg, h)                            \
    MW_T_##tk(name, ret, params, args, by, pr, c, p, tg, h)

#define MW_WRAP_COUNTED(name, ret, params, args, by, pr, tk, c, p, tg, h)                          \
    MW_EXPORT ret MPI_##name params                                                                \
    {                                                                                              \
        mw_thread_t *mw_t = mw__self(MW_ID_##name);                                                \
        if (mw_t)                                                                                  \
            mw__count(mw_t, MW_ID_##name);                                                         \
        else if (__builtin_expect(atomic_load_explicit(&mw__g.dormant, memory_order_relaxed), 0))  \
            mw__dormant_count(MW_ID_##name);                                                       \
        return PMPI_##name args;                                                                   \
    }

#define MW_WRAP_SEND MW_WRAP_TIMED
#define MW_WRAP_RECV MW_WRAP_TIMED
#define MW_WRAP_COLL MW_WRAP_TIMED
#define MW_WRAP_WAIT MW_WRAP_TIMED
#define MW_WRAP_RMA MW_WRAP_TIMED
#define MW_WRAP_IO MW_WRAP_TIMED
#define MW_WRAP_OTHER MW_WRAP_TIMED
#define MW_WRAP_QUERY MW_WRAP_COUNTED
#define MW_WRAP_SPECIAL(name, ret, params, args, by, pr, tk, c, p, tg, h)

/* The TRACE column MW_TR(TK, comm, pr, tag, handle) is spread into five arguments. */
#define MW_TR(tk, c, p, tg, h) tk, c, p, tg, h
#define MW_SEL(name, ret, kind, params, args, by, pr, ...)                                         \
    MW_SEL2(name, ret, kind, params, args, by, pr, __VA_ARGS__)
#define MW_SEL2(name, ret, kind, params, args, by, pr, tk, c, p, tg, h)                            \
    MW_WRAP_##kind(name, ret, params, args, by, pr, tk, c, p, tg, h)
#define MW_FN(name, ret, kind, params, args, by, pr, fortran, trace)                               \
    MW_SEL(name, ret, kind, params, args, by, pr, trace)
#include MW_FN_TABLE_DEF
#undef MW_FN
