/* testmsg.h: building mpiwatch envelopes by hand, for the collector's tests and mw-badinput.
 *
 * A tm_msg_t holds one envelope and all the storage its body points into, so a test fills
 * one on the stack, breaks exactly one field, packs it and checks the collector's verdict.
 * Defaults describe a well-formed message for the current function table and clock.
 */
#ifndef MW_TESTMSG_H
#define MW_TESTMSG_H

#include <stddef.h>
#include <stdint.h>

#include "mw_proto.h"

#define TM_WINDOW_NS 100000000ull /* 100 ms windows */
#define TM_SUBSLOTS 16u
#define TM_BINS 32u
#define TM_MAX 32 /* entries of each repeated field */

typedef struct {
    Mpiwatch__Envelope env;
    Mpiwatch__Hello hello;
    Mpiwatch__Sample sample;
    Mpiwatch__Bye bye;
    char job[64];
    char host[64];
    Mpiwatch__FunctionStat fs[TM_MAX];
    Mpiwatch__FunctionStat *fsp[TM_MAX];
    uint32_t hist[TM_MAX][TM_BINS];
    Mpiwatch__Call calls[TM_MAX];
    Mpiwatch__Call *callp[TM_MAX];
    uint32_t peer_rank[TM_MAX];
    uint64_t peer_messages[TM_MAX], peer_bytes[TM_MAX];
    uint32_t occ_fn[TM_MAX], occ_sub[TM_MAX];
    uint64_t occ_ns[TM_MAX];
    uint32_t density_fn[TM_MAX], density_bin[TM_MAX], density_end[TM_MAX];
    int32_t density_sub[TM_MAX];
    uint64_t density_count[TM_MAX];
    uint32_t total_fn[TM_MAX]; /* running totals (Sample.total_*, Bye.total_*) */
    uint64_t total_calls[TM_MAX], total_ns[TM_MAX], total_bytes[TM_MAX];
    /* Code regions and call sites (Sample fields 30..45). Names and strings are not copied:
     * the caller keeps them alive until the message is packed. */
    Mpiwatch__RegionDef rdef[TM_MAX];
    Mpiwatch__RegionDef *rdefp[TM_MAX];
    uint32_t region_id[TM_MAX];
    uint64_t region_count[TM_MAX], region_incl_ns[TM_MAX], region_excl_ns[TM_MAX],
        region_mpi_ns[TM_MAX];
    Mpiwatch__CallSiteDef sdef[TM_MAX];
    Mpiwatch__CallSiteDef *sdefp[TM_MAX];
    uint32_t site_id[TM_MAX], site_fn[TM_MAX];
    uint64_t site_count[TM_MAX], site_ns[TM_MAX], site_bytes[TM_MAX], site_max_ns[TM_MAX];
    uint32_t peer_fn[TM_MAX];
} tm_msg_t;

/* The window index on the TM_WINDOW_NS grid that contains real time `now_ns`. */
uint64_t tm_window_of(uint64_t now_ns);

/* A valid hello of `rank` in a `size`-rank job, host "node<rank/2>", pid 1000 + rank. */
void tm_hello(tm_msg_t *m, const char *job, uint32_t rank, uint32_t size, uint64_t now_ns);
/* A valid, empty sample of `rank` for `window`, sent at now_ns. */
void tm_sample(tm_msg_t *m, const char *job, uint32_t rank, uint64_t window, uint64_t now_ns);
void tm_bye(tm_msg_t *m, const char *job, uint32_t rank);

/* Adds a function summary: count calls, total ns between min and max; the histogram puts
 * every call in the bin of max_ns. Returns the entry for further changes. */
Mpiwatch__FunctionStat *tm_add_fn(tm_msg_t *m, uint32_t fn, uint64_t count, uint64_t total_ns,
                                  uint64_t min_ns, uint64_t max_ns, uint64_t bytes);
void tm_add_peer(tm_msg_t *m, uint32_t peer, uint64_t messages, uint64_t bytes);
void tm_add_occ(tm_msg_t *m, uint32_t fn, uint32_t sub, uint64_t ns);
void tm_add_density(tm_msg_t *m, uint32_t fn, int32_t sub, uint32_t bin, uint32_t end,
                    uint64_t count);
/* Appends one running total (fn, calls, ns, bytes) to the sample's or, after tm_bye(), the
 * bye's totals: functions in increasing id for a well-formed message. */
void tm_add_total(tm_msg_t *m, uint32_t fn, uint64_t calls, uint64_t ns, uint64_t bytes);
void tm_add_call(tm_msg_t *m, uint32_t fn, uint64_t start_ns, uint64_t duration_ns, uint64_t bytes,
                 int32_t peer);

/* A region the rank names (RegionDef), and one region entry of the window (Sample.region_*). */
void tm_add_region_def(tm_msg_t *m, uint32_t id, const char *name, uint32_t source);
void tm_add_region(tm_msg_t *m, uint32_t id, uint64_t count, uint64_t incl_ns, uint64_t excl_ns,
                   uint64_t mpi_ns);
/* A call site the rank resolved (CallSiteDef), and one (site, function) entry (Sample.site_*). */
void tm_add_site_def(tm_msg_t *m, uint32_t id, const char *module, uint64_t offset,
                     const char *function, const char *file, uint32_t line);
void tm_add_site(tm_msg_t *m, uint32_t id, uint32_t fn, uint64_t count, uint64_t ns, uint64_t bytes,
                 uint64_t max_ns);
/* A peer entry with its sending function (Sample.peer_fn): every peer entry of a sample built
 * with tm_add_peer_fn must come from it (peer_fn parallel to peer_rank). */
void tm_add_peer_fn(tm_msg_t *m, uint32_t peer, uint32_t fn, uint64_t messages, uint64_t bytes);

/* Packs the envelope into a malloc'd buffer; returns its size. */
size_t tm_pack(const tm_msg_t *m, uint8_t **out);

/* log2 bin of a duration (bin b: [2^b, 2^(b+1)) ns). */
uint32_t tm_bin(uint64_t ns);

/* A hand-made encoding, for frames protobuf-c's packer never writes (crafted or unusual
 * input): members appended one by one, each helper writing exactly what its name says. */
typedef struct {
    uint8_t b[65536];
    size_t n;
} tm_enc_t;

void tm_put(tm_enc_t *e, const void *p, size_t n);
void tm_put_varint(tm_enc_t *e, uint64_t v);
/* A key: field << 3 | wire type (0 varint, 1 64-bit, 2 length-delimited, 5 32-bit). */
void tm_put_key(tm_enc_t *e, uint64_t field, unsigned wire);
void tm_put_uint(tm_enc_t *e, uint64_t field, uint64_t v);
void tm_put_ld(tm_enc_t *e, uint64_t field, const void *p, size_t n);
void tm_put_msg(tm_enc_t *e, uint64_t field, const tm_enc_t *inner);
/* The envelope header of a sample or bye: version, job, rank, seq 7. */
void tm_put_head(tm_enc_t *e, const char *job, uint32_t rank);

#endif
