/* window_pb.h: closed windows and the job description in wire form, encoded
 * once for every output that takes bytes (window_pb.c). */
#ifndef MW_COLLECTOR_WINDOW_PB_H
#define MW_COLLECTOR_WINDOW_PB_H

#include <stddef.h>
#include <stdint.h>
#include "job.h"
#include "merge.h"
#include "mw_proto.h"

/* Scratch of the wire encoders (window_pb.c): grown, never shrunk, reused for every window. */
typedef struct {
    Mpiwatch__FunctionStat *fn;
    Mpiwatch__FunctionStat **fn_ptr;
    uint32_t *hist;
    uint32_t *occ_fn, *occ_sub;
    uint64_t *occ_ns;
    uint32_t *d_fn, *d_bin, *d_end;
    int32_t *d_sub;
    uint64_t *d_count;
    uint32_t *p_src, *p_dst;
    uint64_t *p_msg, *p_bytes;
    Mpiwatch__Call *call;
    Mpiwatch__Call **call_ptr;
    Mpiwatch__RankInfo *rank;
    Mpiwatch__RankInfo **rank_ptr;
    Mpiwatch__RankTrace *rt;
    Mpiwatch__RankTrace **rt_ptr;
    Mpiwatch__Trace *tr;
    Mpiwatch__CommDef *cd;
    Mpiwatch__CommDef **cd_ptr;
    uint32_t *cd_rank;
    /* Regions, call sites, per-rank detail, per-function pairs (Window 36..56), and the job's
     * region and site tables (JobInfo 15, 16). */
    Mpiwatch__RegionStat *rs;
    Mpiwatch__RegionStat **rs_ptr;
    Mpiwatch__SiteStat *ss;
    Mpiwatch__SiteStat **ss_ptr;
    uint32_t *rf_rank, *rf_fn, *rr_rank, *rr_region, *fp_src, *fp_dst, *fp_fn;
    uint64_t *rf_count, *rf_ns, *rf_bytes, *rr_count, *rr_incl, *rr_excl, *rr_mpi, *fp_msg,
        *fp_bytes;
    Mpiwatch__Region *jr;
    Mpiwatch__Region **jr_ptr;
    Mpiwatch__CallSite *js;
    Mpiwatch__CallSite **js_ptr;
    size_t cap_rs, cap_rs_ptr, cap_ss, cap_ss_ptr, cap_rf_rank, cap_rf_fn, cap_rr_rank,
        cap_rr_region, cap_fp_src, cap_fp_dst, cap_fp_fn, cap_rf_count, cap_rf_ns, cap_rf_bytes,
        cap_rr_count, cap_rr_incl, cap_rr_excl, cap_rr_mpi, cap_fp_msg, cap_fp_bytes, cap_jr,
        cap_jr_ptr, cap_js, cap_js_ptr;
    uint8_t *out; /* the last encoding */
    size_t cap_fn, cap_fn_ptr, cap_hist, cap_occ_fn, cap_occ_sub, cap_occ_ns, cap_d_fn, cap_d_bin,
        cap_d_end, cap_d_sub, cap_d_count, cap_p_src, cap_p_dst, cap_p_msg, cap_p_bytes, cap_call,
        cap_call_ptr, cap_rank, cap_rank_ptr, cap_out, cap_rt, cap_rt_ptr, cap_tr, cap_cd,
        cap_cd_ptr, cap_cd_rank;
} mw_pb_encoder_t;

/* Encodes a closed window as a Mpiwatch__Window into e->out. Returns its length, or 0 when
 * out of memory. */
size_t mw__window_pack(mw_pb_encoder_t *e, const mw_window_t *w, uint64_t closed_real_ns);
/* Fills *pw with the window mw__window_pack encodes (its arrays in e's scratch, valid until the
 * encoder's next use), without packing it; `partial` adds what a parent needs to merge it
 * exactly (FunctionStat 12..17, functions with time but no calls: partial.c). Returns 0, or -1
 * when out of memory. */
int mw__window_fill(mw_pb_encoder_t *e, const mw_window_t *w, uint64_t closed_real_ns, int partial,
                    Mpiwatch__Window *pw);
/* Encodes the job as a Mpiwatch__JobInfo into e->out. Returns its length, or 0. */
size_t mw__jobinfo_pack(mw_pb_encoder_t *e, const mw_job_t *job, uint64_t function_table_hash);
/* Encodes one rank's trace as received as a Mpiwatch__RankTrace into e->out. Returns its
 * length, or 0. */
size_t mw__rank_trace_pack(mw_pb_encoder_t *e, uint32_t rank, const Mpiwatch__Trace *t);
/* Encodes a closed step as a Mpiwatch__Step into e->out. Returns its length, or 0. */
size_t mw__step_pack(mw_pb_encoder_t *e, const Mpiwatch__Step *step);
/* A lateness batch (lateness.c). */
size_t mw__lateness_pack(mw_pb_encoder_t *e, const Mpiwatch__Lateness *l);
/* Packs any message into e->out (partial.c). Returns its length, or 0. */
size_t mw__pb_pack_msg(mw_pb_encoder_t *e, const ProtobufCMessage *msg);
void mw__pb_encoder_free(mw_pb_encoder_t *e);

#endif
