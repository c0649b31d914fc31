/* fortran.c: wrappers of the Fortran MPI entry points, expanded from this build's function table
 * (MW_FN_TABLE_DEF: generated from the mpi.h and Fortran bindings built against).
 *
 * DESIGN: Open MPI's Fortran bindings (mpif.h, `use mpi`: mpi_x_ in libmpi_mpifh; `use
 * mpi_f08`: mpi_x_f08_ in libmpi_usempif08) call PMPI_X in C directly, so the C wrappers never
 * see a Fortran program. MPICH's (mpi_x_ in libmpichfort; all four manglings and pmpi_x_ are
 * one function there) call MPI_X through the PLT, and its mpi_f08 bindings (mpi_x_f08ts_) call
 * the C MPI_X too. Each mpif.h entry point is therefore wrapped in both: at the ABI level
 * every Fortran argument is a pointer, plus one hidden length per CHARACTER argument, so a
 * wrapper only needs the argument count (from the table) to forward the call untouched to
 * pmpi_x_ / pmpi_x_f08_. Those are weak references: they resolve when the program loaded the
 * Fortran bindings, which is the only way the wrappers can be reached. A wrapper marks the
 * thread as inside a call, which the C wrappers check, so a binding that calls MPI_X
 * internally (MPICH's, always) is counted once, under its MPI name. All four name manglings of
 * mpif.h (mpi_x_, mpi_x, mpi_x__, MPI_X) are aliases of one wrapper. The f08 column is 0 for
 * MPICH: its mpi_f08 calls reach the C wrappers.
 */
#include "shim.h"

#ifdef MW_HAVE_FORTRAN

/* The macros below are tables (one line per arity or case) and are left as laid out. */
/* Argument lists of 0..32 forwarded words. */
/* clang-format off */
#define MW_FP_0 void
#define MW_FP_1 void *a0
#define MW_FP_2 void *a0, void *a1
#define MW_FP_3 void *a0, void *a1, void *a2
#define MW_FP_4 void *a0, void *a1, void *a2, void *a3
#define MW_FP_5 void *a0, void *a1, void *a2, void *a3, void *a4
#define MW_FP_6 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5
#define MW_FP_7 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6
#define MW_FP_8 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7
#define MW_FP_9 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8
#define MW_FP_10 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9
#define MW_FP_11 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10
#define MW_FP_12 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11
#define MW_FP_13 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12
#define MW_FP_14 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13
#define MW_FP_15 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14
#define MW_FP_16 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15
#define MW_FP_17 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16
#define MW_FP_18 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17
#define MW_FP_19 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18
#define MW_FP_20 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19
#define MW_FP_21 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20
#define MW_FP_22 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20, void *a21
#define MW_FP_23 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20, void *a21, void *a22
#define MW_FP_24 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20, void *a21, void *a22, void *a23
#define MW_FP_25 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20, void *a21, void *a22, void *a23, void *a24
#define MW_FP_26 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20, void *a21, void *a22, void *a23, void *a24, void *a25
#define MW_FP_27 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20, void *a21, void *a22, void *a23, void *a24, void *a25, void *a26
#define MW_FP_28 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20, void *a21, void *a22, void *a23, void *a24, void *a25, void *a26, void *a27
#define MW_FP_29 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20, void *a21, void *a22, void *a23, void *a24, void *a25, void *a26, void *a27, void *a28
#define MW_FP_30 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20, void *a21, void *a22, void *a23, void *a24, void *a25, void *a26, void *a27, void *a28, void *a29
#define MW_FP_31 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20, void *a21, void *a22, void *a23, void *a24, void *a25, void *a26, void *a27, void *a28, void *a29, void *a30
#define MW_FP_32 void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15, void *a16, void *a17, void *a18, void *a19, void *a20, void *a21, void *a22, void *a23, void *a24, void *a25, void *a26, void *a27, void *a28, void *a29, void *a30, void *a31
#define MW_FA_0 
#define MW_FA_1 a0
#define MW_FA_2 a0, a1
#define MW_FA_3 a0, a1, a2
#define MW_FA_4 a0, a1, a2, a3
#define MW_FA_5 a0, a1, a2, a3, a4
#define MW_FA_6 a0, a1, a2, a3, a4, a5
#define MW_FA_7 a0, a1, a2, a3, a4, a5, a6
#define MW_FA_8 a0, a1, a2, a3, a4, a5, a6, a7
#define MW_FA_9 a0, a1, a2, a3, a4, a5, a6, a7, a8
#define MW_FA_10 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9
#define MW_FA_11 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10
#define MW_FA_12 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11
#define MW_FA_13 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12
#define MW_FA_14 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13
#define MW_FA_15 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14
#define MW_FA_16 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15
#define MW_FA_17 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16
#define MW_FA_18 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17
#define MW_FA_19 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18
#define MW_FA_20 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19
#define MW_FA_21 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20
#define MW_FA_22 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21
#define MW_FA_23 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22
#define MW_FA_24 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23
#define MW_FA_25 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24
#define MW_FA_26 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25
#define MW_FA_27 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26
#define MW_FA_28 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27
#define MW_FA_29 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28
#define MW_FA_30 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29
#define MW_FA_31 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30
#define MW_FA_32 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31

/* The argument before a count is its buffer, which may be Fortran's MPI_IN_PLACE. */
#define MW_FPREV_1 a0
#define MW_FPREV_2 a1
#define MW_FPREV_3 a2
#define MW_FPREV_4 a3
#define MW_FPREV_5 a4
#define MW_FPREV_6 a5
#define MW_FPREV_7 a6
#define MW_FPREV_8 a7
#define MW_FPREV_9 a8
#define MW_FPREV_10 a9
#define MW_FPREV_11 a10
#define MW_FPREV_12 a11
#define MW_FPREV_13 a12
#define MW_FPREV_14 a13
#define MW_FPREV_15 a14
#define MW_FPREV_16 a15
#define MW_FPREV_17 a16
#define MW_FPREV_18 a17
#define MW_FPREV_19 a18
#define MW_FPREV_20 a19
#define MW_FPREV_21 a20
#define MW_FPREV_22 a21
#define MW_FPREV_23 a22
#define MW_FPREV_24 a23
#define MW_FPREV_25 a24
#define MW_FPREV_26 a25
#define MW_FPREV_27 a26
#define MW_FPREV_28 a27
#define MW_FPREV_29 a28
#define MW_FPREV_30 a29
#define MW_FPREV_31 a30
#define MW_FPREV_32 a31

#define MW_FNOBYTES 0
#define MW_FBYTES(ic, it)                                                                          \
    mw__fbytes(MW_FPREV_##ic, (const MPI_Fint *)a##ic, (const MPI_Fint *)a##it)
#define MW_FNOPEER (-1)
#define MW_FPEER(ir, icomm) mw__fpeer((const MPI_Fint *)a##ir, (const MPI_Fint *)a##icomm)

/* The row's Fortran column becomes a selector: YES with its fields, or NO. */
#define MW_F_MW_FORTRAN(lower, UPPER, n, f08, fb, fp) YES, lower, UPPER, n, f08, fb, fp
#define MW_F_MW_NOFORTRAN NO, x, x, 0, 0, 0, 0
#define MW_FSEL(...) MW_FSEL2(__VA_ARGS__)
#define MW_FSEL2(name, kind, sel, lower, UPPER, n, f08, fb, fp)                                   \
    MW_FGEN_##sel(name, kind, lower, UPPER, n, f08, fb, fp)
#define MW_FGEN_NO(...)
#define MW_FGEN_YES(name, kind, lower, UPPER, n, f08, fb, fp)                                     \
    MW_FK_##kind(name, lower, UPPER, n, f08, fb, fp)
#define MW_FALL(gen, name, lower, UPPER, n, f08, fb, fp)                                           \
    gen(name, mpi_##lower##_, pmpi_##lower##_, n, fb, fp)                                          \
    MW_FALIASES(mpi_##lower##_, n, mpi_##lower, mpi_##lower##__, MPI_##UPPER)                      \
    MW_F08_##f08(gen, name, lower, n, fb, fp)
#define MW_F08_0(...)
#define MW_F08_1(gen, name, lower, n, fb, fp)                                                      \
    gen(name, mpi_##lower##_f08_, pmpi_##lower##_f08_, n, fb, fp)

#define MW_FALIASES(target, n, a1, a2, a3)                                                         \
    MW_EXPORT void a1(MW_FP_##n) __attribute__((alias(#target)));                                  \
    MW_EXPORT void a2(MW_FP_##n) __attribute__((alias(#target)));                                  \
    MW_EXPORT void a3(MW_FP_##n) __attribute__((alias(#target)));

#define MW_FTIMED(name, sym, psym, n, fb, fp)                                                      \
    extern void psym(MW_FP_##n) __attribute__((weak));                                             \
    MW_EXPORT void sym(MW_FP_##n);                                                                 \
    void sym(MW_FP_##n)                                                                            \
    {                                                                                              \
        mw_thread_t *mw_t = mw__self(MW_ID_##name);                                                \
        if (!mw_t) {                                                                               \
            mw_thread_t *mw_d = atomic_load_explicit(&mw__g.dormant, memory_order_relaxed)         \
                                    ? mw__dormant_enter(MW_ID_##name)                              \
                                    : NULL;                                                        \
            if (psym)                                                                              \
                psym(MW_FA_##n);                                                                   \
            if (mw_d) /* dormant mode: counted, with the bytes full mode records (shim.h) */       \
                mw__dormant_leave(mw_d, MW_ID_##name, (uint64_t)(fb));                             \
            return;                                                                                \
        }                                                                                          \
        uint64_t mw_t0 = mw__begin(mw_t, MW_ID_##name);                                            \
        if (psym)                                                                                  \
            psym(MW_FA_##n);                                                                       \
        uint64_t mw_t1 = mw__now();                                                                \
        uint64_t mw_b = (uint64_t)(fb);                                                            \
        int mw_p = (fp);                                                                           \
        mw__record(mw_t, MW_ID_##name, mw_t0, mw_t1, mw_b, mw_p);                                  \
        MW_STEP_HOOK(mw_t, MW_ID_##name);                                                          \
    }

#define MW_FCOUNTED(name, sym, psym, n, fb, fp)                                                    \
    extern void psym(MW_FP_##n) __attribute__((weak));                                             \
    MW_EXPORT void sym(MW_FP_##n);                                                                 \
    void sym(MW_FP_##n)                                                                            \
    {                                                                                              \
        mw_thread_t *mw_t = mw__self(MW_ID_##name);                                                \
        mw_thread_t *mw_d = NULL;                                                                  \
        if (mw_t) {                                                                                \
            mw__count(mw_t, MW_ID_##name);                                                         \
            atomic_store_explicit(&mw_t->inflight, MW_INFLIGHT_NESTED, memory_order_relaxed);      \
        } else if (atomic_load_explicit(&mw__g.dormant, memory_order_relaxed)) {                   \
            mw_d = mw__dormant_enter(MW_ID_##name);                                                \
        }                                                                                          \
        if (psym)                                                                                  \
            psym(MW_FA_##n);                                                                       \
        if (mw_t)                                                                                  \
            atomic_store_explicit(&mw_t->inflight, 0, memory_order_relaxed);                       \
        if (mw_d)                                                                                  \
            mw__dormant_leave(mw_d, MW_ID_##name, 0);                                              \
    }

#define MW_FK_SEND(...) MW_FALL(MW_FTIMED, __VA_ARGS__)
#define MW_FK_RECV(...) MW_FALL(MW_FTIMED, __VA_ARGS__)
#define MW_FK_COLL(...) MW_FALL(MW_FTIMED, __VA_ARGS__)
#define MW_FK_WAIT(...) MW_FALL(MW_FTIMED, __VA_ARGS__)
#define MW_FK_RMA(...) MW_FALL(MW_FTIMED, __VA_ARGS__)
#define MW_FK_IO(...) MW_FALL(MW_FTIMED, __VA_ARGS__)
#define MW_FK_OTHER(...) MW_FALL(MW_FTIMED, __VA_ARGS__)
#define MW_FK_QUERY(...) MW_FALL(MW_FCOUNTED, __VA_ARGS__)
#define MW_FK_SPECIAL(...) /* special.c */

#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace)                         \
    MW_FSEL(name, kind, MW_F_##fortran)
#include MW_FN_TABLE_DEF
#undef MW_FN
/* clang-format on */

#endif /* MW_HAVE_FORTRAN */
