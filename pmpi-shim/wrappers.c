/* wrappers.c: the C wrappers of every MPI function, expanded from mpi_functions.def.
 *
 * DESIGN: each wrapper is the same few lines: ask mw__self() whether to record (if not,
 * return PMPI_X directly), take a timestamp, call PMPI_X, take a timestamp, work out bytes and
 * peer from the arguments only if the call succeeded, and hand everything to mw__record().
 * Local queries are only counted. Hand-written wrappers (kind SPECIAL) live in special.c.
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

#define MW_WRAP_TIMED(name, ret, params, args, bytes, peer)                                        \
    MW_EXPORT ret MPI_##name params                                                                \
    {                                                                                              \
        mw_thread_t *mw_t = mw__self(MW_ID_##name);                                                \
        if (!mw_t)                                                                                 \
            return PMPI_##name args;                                                               \
        uint64_t mw_t0 = mw__begin(mw_t, MW_ID_##name);                                            \
        ret mw_rc = PMPI_##name args;                                                              \
        uint64_t mw_t1 = mw__now();                                                                \
        uint64_t mw_b = 0;                                                                         \
        int mw_p = -1;                                                                             \
        if (mw_rc == MPI_SUCCESS) {                                                                \
            mw_b = (uint64_t)(bytes);                                                              \
            mw_p = (peer);                                                                         \
        }                                                                                          \
        mw__record(mw_t, MW_ID_##name, mw_t0, mw_t1, mw_b, mw_p);                                  \
        MW_STEP_HOOK(mw_t, MW_ID_##name);                                                          \
        MW_STEER_HOOK(mw_t);                                                                       \
        return mw_rc;                                                                              \
    }

#define MW_WRAP_COUNTED(name, ret, params, args, bytes, peer)                                      \
    MW_EXPORT ret MPI_##name params                                                                \
    {                                                                                              \
        mw_thread_t *mw_t = mw__self(MW_ID_##name);                                                \
        if (mw_t)                                                                                  \
            mw__count(mw_t, MW_ID_##name);                                                         \
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
#define MW_WRAP_SPECIAL(name, ret, params, args, bytes, peer)

#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran)                                 \
    MW_WRAP_##kind(name, ret, params, args, bytes, peer)
#include "mpi_functions.def"
#undef MW_FN
