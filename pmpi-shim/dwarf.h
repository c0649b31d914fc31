/* dwarf.h: symbols and source lines of the running process, through elfutils' libdw.
 *
 * DESIGN: libdw is loaded with dlopen("libdw.so.1") the first time it is needed, so that
 * libmpiwatch.so does not link it (a rank that never asks for call sites or -finstrument-functions
 * regions never maps it) and a machine without it only loses file and line (function names
 * then come from dladdr, the module and offset from dl_iterate_phdr). libdw is not thread safe:
 * every function here takes one internal mutex, and none is ever called from a wrapper's hot
 * path: call sites are resolved on the sender thread, region filters at MPI_Init.
 */
#ifndef MW_DWARF_H
#define MW_DWARF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char module[512];   /* path of the executable or library holding the address, "" unknown */
    uint64_t offset;    /* address minus the module's load bias */
    char function[512]; /* enclosing function's symbol, "" unknown */
    char file[512];     /* source file, "" unknown */
    unsigned line;      /* 0 unknown */
} mw_dw_site_t;

/* Resolves a return address (the instruction after a call): the line is the call's, looked up
 * at address - 1. Always fills `out` with what is known; returns 1 when a source line was
 * found, 0 otherwise. Loads libdw and reports the process's modules on first use (and again
 * when an address falls in no known module: a library loaded since). */
int mw__dw_resolve(uint64_t return_address, mw_dw_site_t *out);

/* What is known of a return address without libdw, in microseconds: the module (its real
 * path, as /proc/self/maps and so libdw name it; the program's for the main executable) and the
 * offset from its load bias through dl_iterate_phdr, the function from dladdr when a dynamic
 * symbol covers it; file "" and line 0. Never loads libdw. Returns 1 when a module holds the
 * address, 0 otherwise (then offset = the address, module ""). */
int mw__dw_cheap(uint64_t return_address, mw_dw_site_t *out);

/* Calls fn(name, address, ctx) for every function symbol (STT_FUNC, defined, non-zero address)
 * of every module mapped in the process, with the address it has in this process. Returns the
 * number of symbols visited, or -1 when libdw cannot be loaded. */
typedef void (*mw_dw_sym_fn)(const char *name, uint64_t address, void *ctx);
long mw__dw_symbols(mw_dw_sym_fn fn, void *ctx);

/* Releases libdw's state (MPI_Finalize, after the sender thread has stopped). */
void mw__dw_close(void);

#endif
