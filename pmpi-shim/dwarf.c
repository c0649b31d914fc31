/* dwarf.c: symbols and source lines of the running process, through a dlopen'ed libdw (dwarf.h).
 *
 * DESIGN: the library never links libdw: the first call loads libdw.so.1 with dlopen and looks
 * up the few dwfl_* functions it uses; when that fails (no elfutils on the machine), function
 * names come from dladdr and the module and offset from dl_iterate_phdr, and file and line stay
 * unknown. One Dwfl session reports the process's modules from /proc/self/maps once, and again
 * when an address falls in no module it knows (a library loaded since). Everything runs under
 * one mutex: libdw is not thread safe. Nothing here runs on an application's MPI call.
 */
#include "dwarf.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef Dwfl *(*begin_fn)(const Dwfl_Callbacks *);
typedef void (*end_fn)(Dwfl *);
typedef void (*report_begin_fn)(Dwfl *);
typedef int (*report_end_fn)(Dwfl *,
                             int (*)(Dwfl_Module *, void *, const char *, Dwarf_Addr, void *),
                             void *);
typedef int (*proc_report_fn)(Dwfl *, pid_t);
typedef Dwfl_Module *(*addrmodule_fn)(Dwfl *, Dwarf_Addr);
typedef const char *(*module_info_fn)(Dwfl_Module *, void ***, Dwarf_Addr *, Dwarf_Addr *,
                                      Dwarf_Addr *, Dwarf_Addr *, const char **, const char **);
typedef Elf *(*module_getelf_fn)(Dwfl_Module *, GElf_Addr *);
typedef const char *(*addrname_fn)(Dwfl_Module *, GElf_Addr);
typedef Dwfl_Line *(*getsrc_fn)(Dwfl_Module *, Dwarf_Addr);
typedef const char *(*lineinfo_fn)(Dwfl_Line *, Dwarf_Addr *, int *, int *, Dwarf_Word *,
                                   Dwarf_Word *);
typedef int (*getsymtab_fn)(Dwfl_Module *);
typedef const char *(*getsym_info_fn)(Dwfl_Module *, int, GElf_Sym *, GElf_Addr *, GElf_Word *,
                                      Elf **, Dwarf_Addr *);
typedef ptrdiff_t (*getmodules_fn)(
    Dwfl *, int (*)(Dwfl_Module *, void **, const char *, Dwarf_Addr, void *), void *, ptrdiff_t);
typedef int (*find_elf_fn)(Dwfl_Module *, void **, const char *, Dwarf_Addr, char **, Elf **);
typedef int (*find_debuginfo_fn)(Dwfl_Module *, void **, const char *, Dwarf_Addr, const char *,
                                 const char *, GElf_Word, char **);

static struct {
    begin_fn begin;
    end_fn end;
    report_begin_fn report_begin;
    report_end_fn report_end;
    proc_report_fn proc_report;
    addrmodule_fn addrmodule;
    module_info_fn module_info;
    module_getelf_fn module_getelf;
    addrname_fn addrname;
    getsrc_fn getsrc;
    lineinfo_fn lineinfo;
    getsymtab_fn getsymtab;
    getsym_info_fn getsym_info;
    getmodules_fn getmodules;
    find_elf_fn find_elf;
    find_debuginfo_fn find_debuginfo;
} dw;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *handle;   /* libdw.so.1 */
static int load_state; /* 0 not tried, 1 loaded, -1 unavailable */
static Dwfl *session;  /* NULL until the modules are reported */
static Dwfl_Callbacks callbacks;
static char *debuginfo_path; /* NULL: the standard search (.debug, /usr/lib/debug) */

static void copy(char *dst, size_t cap, const char *src)
{
    if (!src)
        src = "";
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Loads libdw and its functions (lock held). */
static int load(void)
{
    if (load_state)
        return load_state > 0;
    load_state = -1;
    handle = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        return 0;
    struct {
        void **slot;
        const char *name;
    } syms[] = {
        {(void **)&dw.begin, "dwfl_begin"},
        {(void **)&dw.end, "dwfl_end"},
        {(void **)&dw.report_begin, "dwfl_report_begin"},
        {(void **)&dw.report_end, "dwfl_report_end"},
        {(void **)&dw.proc_report, "dwfl_linux_proc_report"},
        {(void **)&dw.addrmodule, "dwfl_addrmodule"},
        {(void **)&dw.module_info, "dwfl_module_info"},
        {(void **)&dw.module_getelf, "dwfl_module_getelf"},
        {(void **)&dw.addrname, "dwfl_module_addrname"},
        {(void **)&dw.getsrc, "dwfl_module_getsrc"},
        {(void **)&dw.lineinfo, "dwfl_lineinfo"},
        {(void **)&dw.getsymtab, "dwfl_module_getsymtab"},
        {(void **)&dw.getsym_info, "dwfl_module_getsym_info"},
        {(void **)&dw.getmodules, "dwfl_getmodules"},
        {(void **)&dw.find_elf, "dwfl_linux_proc_find_elf"},
        {(void **)&dw.find_debuginfo, "dwfl_standard_find_debuginfo"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        *syms[i].slot = dlsym(handle, syms[i].name);
        if (!*syms[i].slot) {
            dlclose(handle);
            handle = NULL;
            memset(&dw, 0, sizeof dw);
            return 0;
        }
    }
    callbacks.find_elf = dw.find_elf;
    callbacks.find_debuginfo = dw.find_debuginfo;
    callbacks.debuginfo_path = &debuginfo_path;
    load_state = 1;
    return 1;
}

/* Reports the process's modules, anew (lock held, libdw loaded). Returns 0 or -1. */
static int report(void)
{
    if (!session) {
        session = dw.begin(&callbacks);
        if (!session)
            return -1;
    }
    dw.report_begin(session);
    int rc = dw.proc_report(session, getpid());
    if (dw.report_end(session, NULL, NULL) != 0 || rc != 0)
        return -1;
    return 0;
}

/* ---- without libdw: dladdr and dl_iterate_phdr ---------------------------------------------- */

typedef struct {
    uintptr_t addr;
    int found;
    uintptr_t bias;
    char name[512];
} phdr_find_t;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    phdr_find_t *f = ctx;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
        if (f->addr >= lo && f->addr - lo < (uintptr_t)ph->p_memsz) {
            f->found = 1;
            f->bias = (uintptr_t)info->dlpi_addr;
            copy(f->name, sizeof f->name, info->dlpi_name);
            return 1;
        }
    }
    return 0;
}

static void resolve_fallback(uint64_t addr, mw_dw_site_t *out)
{
    phdr_find_t f = {.addr = (uintptr_t)addr};
    dl_iterate_phdr(phdr_cb, &f);
    if (f.found) {
        out->offset = addr - f.bias;
        if (f.name[0])
            copy(out->module, sizeof out->module, f.name);
        else { /* the main program has no name in the list */
            ssize_t n = readlink("/proc/self/exe", out->module, sizeof out->module - 1);
            out->module[n > 0 ? n : 0] = '\0';
        }
    } else
        out->offset = addr;
    Dl_info di;
    if (dladdr((void *)(uintptr_t)addr, &di) && di.dli_sname)
        copy(out->function, sizeof out->function, di.dli_sname);
}

/* The real path of a module the dynamic loader names `name` ("" for the main program), as the
 * kernel names its mapping in /proc/self/maps; a few recent ones are kept (lock held). */
static void module_path(const char *name, uintptr_t bias, char *out, size_t cap)
{
    static struct {
        uintptr_t bias;
        char name[512], path[512];
    } cache[8];
    static unsigned next;
    for (unsigned i = 0; i < 8; i++)
        if (cache[i].path[0] && cache[i].bias == bias && strcmp(cache[i].name, name) == 0) {
            copy(out, cap, cache[i].path);
            return;
        }
    char buf[PATH_MAX];
    if (!name[0]) { /* the main program has no name in the list */
        ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = '\0';
    } else if (!realpath(name, buf)) {
        snprintf(buf, sizeof buf, "%s", name);
    }
    copy(out, cap, buf);
    unsigned i = next++ % 8;
    cache[i].bias = bias;
    copy(cache[i].name, sizeof cache[i].name, name);
    copy(cache[i].path, sizeof cache[i].path, buf);
}

/* ---- the interface ------------------------------------------------------------------------- */

int mw__dw_cheap(uint64_t return_address, mw_dw_site_t *out)
{
    memset(out, 0, sizeof *out);
    out->offset = return_address;
    if (!return_address)
        return 0;
    phdr_find_t f = {.addr = (uintptr_t)return_address};
    dl_iterate_phdr(phdr_cb, &f);
    if (f.found) {
        out->offset = return_address - f.bias;
        pthread_mutex_lock(&lock);
        module_path(f.name, f.bias, out->module, sizeof out->module);
        pthread_mutex_unlock(&lock);
    }
    Dl_info di;
    if (dladdr((void *)(uintptr_t)return_address, &di) && di.dli_sname)
        copy(out->function, sizeof out->function, di.dli_sname);
    return f.found;
}

int mw__dw_resolve(uint64_t return_address, mw_dw_site_t *out)
{
    memset(out, 0, sizeof *out);
    if (!return_address)
        return 0;
    /* The call instruction ends at the return address: address - 1 lies inside it. */
    uint64_t pc = return_address - 1;
    int found_line = 0;
    pthread_mutex_lock(&lock);
    Dwfl_Module *mod = NULL;
    if (load()) {
        if (session || report() == 0)
            mod = dw.addrmodule(session, pc);
        if (!mod && report() == 0) /* a library loaded since the last report */
            mod = dw.addrmodule(session, pc);
    }
    if (!mod) {
        resolve_fallback(return_address, out);
        pthread_mutex_unlock(&lock);
        return 0;
    }
    const char *name = dw.module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    copy(out->module, sizeof out->module, name);
    GElf_Addr bias = 0;
    if (dw.module_getelf(mod, &bias))
        out->offset = return_address - bias;
    else {
        Dwarf_Addr start = 0;
        dw.module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
        out->offset = return_address - start;
    }
    copy(out->function, sizeof out->function, dw.addrname(mod, pc));
    Dwfl_Line *line = dw.getsrc(mod, pc);
    if (line) {
        int lineno = 0;
        const char *file = dw.lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
        if (file && lineno > 0) {
            copy(out->file, sizeof out->file, file);
            out->line = (unsigned)lineno;
            found_line = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    if (!out->function[0]) { /* no symbol table libdw could read: the dynamic symbols */
        Dl_info di;
        if (dladdr((void *)(uintptr_t)return_address, &di) && di.dli_sname)
            copy(out->function, sizeof out->function, di.dli_sname);
    }
    return found_line;
}

typedef struct {
    mw_dw_sym_fn fn;
    void *ctx;
    long n;
} sym_walk_t;

static int module_syms(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
                       void *arg)
{
    (void)userdata;
    (void)name;
    sym_walk_t *w = arg;
    /* libelf maps the files it reads, and a re-report sees those mappings as more modules of
     * the same file: only modules the dynamic loader loaded are real. */
    phdr_find_t f = {.addr = (uintptr_t)start};
    dl_iterate_phdr(phdr_cb, &f);
    if (!f.found)
        return DWARF_CB_OK;
    int n = dw.getsymtab(mod);
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr = 0;
        GElf_Word shndx = 0;
        const char *s = dw.getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
        if (!s || !s[0] || GELF_ST_TYPE(sym.st_info) != STT_FUNC || shndx == SHN_UNDEF || addr == 0)
            continue;
        w->fn(s, addr, w->ctx);
        w->n++;
    }
    return DWARF_CB_OK;
}

long mw__dw_symbols(mw_dw_sym_fn fn, void *ctx)
{
    sym_walk_t w = {fn, ctx, 0};
    pthread_mutex_lock(&lock);
    if (!load() || report() != 0) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    dw.getmodules(session, module_syms, &w, 0);
    pthread_mutex_unlock(&lock);
    return w.n;
}

void mw__dw_close(void)
{
    pthread_mutex_lock(&lock);
    if (session)
        dw.end(session);
    session = NULL;
    /* libdw stays mapped (load_state stays 1): a handle closed under a library that may still
     * run its destructors is not worth the risk, and a later call reuses it. */
    pthread_mutex_unlock(&lock);
}
