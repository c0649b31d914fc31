/* mw_fn_def.h: which MPI function table this build is made of.
 *
 * Every X-macro expansion of the table includes it as
 *     #include "mw_fn_def.h"
 *     #define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace) ...
 *     #include MW_FN_TABLE_DEF
 *     #undef MW_FN
 * so that the build may use a table generated from the mpi.h it compiles against by defining
 * MW_FN_TABLE_DEF (a quoted path) for the whole tree. The default is the checked-in table,
 * proto/mpi_functions.def, which is also the legacy table a receiver always understands
 * (mw_fnmap.h), whatever MW_FN_TABLE_DEF says.
 */
#ifndef MW_FN_DEF_H
#define MW_FN_DEF_H

#ifndef MW_FN_TABLE_DEF
#define MW_FN_TABLE_DEF "mpi_functions.def"
#endif

#endif
