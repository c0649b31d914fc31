/*
 * compile_table.c: the function table must agree with mpi.h, checked by the compiler.
 *
 * Every row of proto/mpi_functions.def becomes two constant function pointers whose type
 * is built from the row's return type and parameter list, initialised with MPI_<Name> and
 * PMPI_<Name>. If a row's prototype disagrees with mpi.h (a wrong type, a missing parameter,
 * a function mpi.h does not declare) the file does not compile; warnings about incompatible
 * pointer types are errors here. The row's argument list is checked too: it is expanded into
 * a call through the pointer, which only compiles when it names every parameter in order.
 * The BYTES and PEER expressions are compiled against typed stand-ins of their macros, and
 * the Fortran argument indexes against nargs. At run time the program checks that the
 * pointers are set, the kinds are valid and the names unique, and prints the counts.
 *
 * Build: with -DOMPI_OMIT_MPI1_COMPAT_DECLS=0, like every consumer of the table.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* MW_FN_TABLE_DEF, the table of this build, is defined by CMake (proto/function-table.cmake). */

#if defined(__GNUC__)
#pragma GCC diagnostic error "-Wincompatible-pointer-types"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

/* The KIND column's names, as values for the run-time checks. */
enum { SEND, RECV, COLL, WAIT, RMA, IO, QUERY, SPECIAL, OTHER, KIND_COUNT };

/* Type check: a pointer typed from the row, initialised with the real function. */
#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace)                          \
    static ret(*const chk_##name) params = MPI_##name;                                             \
    static ret(*const pchk_##name) params = PMPI_##name;
#include MW_FN_TABLE_DEF
#undef MW_FN

/*
 * Argument check: a function with the row's parameters that calls through the pointer with
 * the row's arguments. Never called; it only has to compile (varargs rows included, since
 * Pcontrol's args list is just "level").
 */
#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace)                          \
    ret call_##name params;                                                                        \
    ret call_##name params                                                                         \
    {                                                                                              \
        return pchk_##name args;                                                                   \
    }
#include MW_FN_TABLE_DEF
#undef MW_FN

/*
 * Column check: the BYTES and PEER expressions are compiled inside a function with the row's
 * parameters, through stand-in macros whose typed helpers accept only what the real macros
 * expect (a count, an MPI_Datatype, int arrays, MPI_Datatype arrays, an MPI_Comm). The
 * Fortran indexes must lie inside the Fortran argument list.
 */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wint-conversion"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif
static long b1(long count, MPI_Datatype type)
{
    return count + (type != MPI_DATATYPE_NULL);
}
static long bip(const void *buf, long c1, MPI_Datatype t1, long c2, MPI_Datatype t2)
{
    return buf == MPI_IN_PLACE ? b1(c2, t2) : b1(c1, t1);
}
static long bv(const int *counts, MPI_Datatype type, MPI_Comm comm)
{
    return counts[0] + (type != MPI_DATATYPE_NULL) + (comm != MPI_COMM_NULL);
}
static long bw(const int *counts, const MPI_Datatype *types, MPI_Comm comm)
{
    return counts[0] + (types[0] != MPI_DATATYPE_NULL) + (comm != MPI_COMM_NULL);
}
static long bn(long count, MPI_Datatype type, MPI_Comm comm)
{
    return count + (type != MPI_DATATYPE_NULL) + (comm != MPI_COMM_NULL);
}
static long pr(int rank, MPI_Comm comm)
{
    return rank + (comm != MPI_COMM_NULL);
}

#define MW_NOBYTES 0L
#define MW_BYTES(c, t) b1((c), (t))
#define MW_BYTES_IP(b, c1, t1, c2, t2) bip((b), (c1), (t1), (c2), (t2))
#define MW_BYTES_V(c, t, comm) bv((c), (t), (comm))
#define MW_BYTES_W(c, t, comm) bw((c), (t), (comm))
#define MW_BYTES_N(c, t, comm) bn((c), (t), (comm))
#define MW_NOPEER 0L
#define MW_PEER(r, comm) pr((r), (comm))
#define MW_NOFORTRAN _Static_assert(1, "")
#define MW_FNOBYTES (-1)
#define MW_FBYTES(ic, it) ((ic) > (it) ? (ic) : (it))
#define MW_FNOPEER (-1)
#define MW_FPEER(ir, ic) ((ir) > (ic) ? (ir) : (ic))
#define MW_FORTRAN(lower, upper, nargs, f08, fbytes, fpeer)                                        \
    _Static_assert((fbytes) < (nargs) && (fpeer) < (nargs) && ((f08) == 0 || (f08) == 1),          \
                   #lower ": Fortran index outside the argument list")
#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace)                          \
    long cols_##name params;                                                                       \
    long cols_##name params                                                                        \
    {                                                                                              \
        fortran;                                                                                   \
        return (long)(bytes) + (long)(peer);                                                       \
    }
#include MW_FN_TABLE_DEF
#undef MW_FN
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

struct row {
    const char *name;
    int kind;
    const void *c, *pc;
};

#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace)                          \
    {#name, kind, (const void *)chk_##name, (const void *)pchk_##name},
static const struct row rows[] = {
#include MW_FN_TABLE_DEF
};
#undef MW_FN

static const char *const kind_names[KIND_COUNT] = {"SEND", "RECV",  "COLL",    "WAIT", "RMA",
                                                   "IO",   "QUERY", "SPECIAL", "OTHER"};

int main(void)
{
    const size_t n = sizeof rows / sizeof rows[0];
    int per_kind[KIND_COUNT] = {0};
    int failures = 0;

    for (size_t i = 0; i < n; i++) {
        if (rows[i].c == NULL || rows[i].pc == NULL) {
            fprintf(stderr, "row %s: null function\n", rows[i].name);
            failures++;
        }
        if (rows[i].kind < 0 || rows[i].kind >= KIND_COUNT) {
            fprintf(stderr, "row %s: bad kind\n", rows[i].name);
            failures++;
        } else {
            per_kind[rows[i].kind]++;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(rows[i].name, rows[j].name) == 0) {
                fprintf(stderr, "row %s: duplicate\n", rows[i].name);
                failures++;
            }
        }
    }
    printf("%zu rows:", n);
    for (int k = 0; k < KIND_COUNT; k++)
        printf(" %s %d", kind_names[k], per_kind[k]);
    printf("\n");
    if (n < 100) {
        fprintf(stderr, "only %zu rows: the table is not the generated one\n", n);
        failures++;
    }
    return failures ? 1 : 0;
}
