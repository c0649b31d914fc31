/* window_pb.c: the collector's outputs in wire form (merged windows and the job description).
 *
 * DESIGN: a closed window is encoded once, here, and the same bytes go to every consumer (the
 * recording, the live feed, the history ring). The encoder owns its scratch arrays and its
 * output buffer and only grows them, so after the first windows of a job encoding allocates
 * nothing. Arrays are sparse: only functions, occupancy cells, density cells and pairs with
 * data are written, in the order the merge holds them (deterministic for the same input).
 */
#include "collector.h"
#include "window_pb.h"
#include "mw_fnmap.h"
#include "steps.h"

#include <stdlib.h>
#include <string.h>

/* Makes room for n elements of `size` bytes in *arr (capacity *cap). Returns 0, or -1. */
static int pb_reserve(void **arr, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < n)
        c *= 2;
    void *p = realloc(*arr, c * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

#define PB_RESERVE(enc, field, n)                                                                  \
    pb_reserve((void **)&(enc)->field, &(enc)->cap_##field, (n), sizeof *(enc)->field)

void mw__pb_encoder_free(mw_pb_encoder_t *e)
{
    void *arrays[] = {e->fn,       e->fn_ptr,   e->hist,    e->occ_fn,    e->occ_sub,  e->occ_ns,
                      e->d_fn,     e->d_sub,    e->d_bin,   e->d_end,     e->d_count,  e->p_src,
                      e->p_dst,    e->p_msg,    e->p_bytes, e->call,      e->call_ptr, e->rank,
                      e->rank_ptr, e->out,      e->rt,      e->rt_ptr,    e->tr,       e->cd,
                      e->cd_ptr,   e->cd_rank,  e->rs,      e->rs_ptr,    e->ss,       e->ss_ptr,
                      e->rf_rank,  e->rf_fn,    e->rr_rank, e->rr_region, e->fp_src,   e->fp_dst,
                      e->fp_fn,    e->rf_count, e->rf_ns,   e->rf_bytes,  e->rr_count, e->rr_incl,
                      e->rr_excl,  e->rr_mpi,   e->fp_msg,  e->fp_bytes,  e->jr,       e->jr_ptr,
                      e->js,       e->js_ptr};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    memset(e, 0, sizeof *e);
}

/* Packs `msg` into e->out. Returns the length, or 0 when out of memory. */
static size_t pb_pack(mw_pb_encoder_t *e, const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    if (PB_RESERVE(e, out, len ? len : 1) < 0)
        return 0;
    return protobuf_c_message_pack(msg, e->out);
}

static int cmp_region_stat(const void *pa, const void *pb)
{
    const Mpiwatch__RegionStat *a = *(Mpiwatch__RegionStat *const *)pa;
    const Mpiwatch__RegionStat *b = *(Mpiwatch__RegionStat *const *)pb;
    return a->region < b->region ? -1 : a->region > b->region;
}

static int cmp_site_stat(const void *pa, const void *pb)
{
    const Mpiwatch__SiteStat *a = *(Mpiwatch__SiteStat *const *)pa;
    const Mpiwatch__SiteStat *b = *(Mpiwatch__SiteStat *const *)pb;
    if (a->site != b->site)
        return a->site < b->site ? -1 : 1;
    return a->fn < b->fn ? -1 : a->fn > b->fn;
}

/* Window 36..56: regions and sites (in id order), the per-rank detail in rank order (blocks
 * sorted at close), the per-function pairs in the merge's order. */
static int window_pack_rs(mw_pb_encoder_t *e, const mw_window_t *w, Mpiwatch__Window *pw)
{
    uint32_t nr = w->regions.n, ns = w->sites.n;
    if (PB_RESERVE(e, rs, nr) < 0 || PB_RESERVE(e, rs_ptr, nr) < 0 || PB_RESERVE(e, ss, ns) < 0 ||
        PB_RESERVE(e, ss_ptr, ns) < 0)
        return -1;
    for (uint32_t i = 0; i < nr; i++) {
        const mw_region_sum_t *r = MW__INDEX_AT(&w->regions, mw_region_sum_t, i);
        Mpiwatch__RegionStat *o = &e->rs[i];
        mpiwatch__region_stat__init(o);
        o->region = r->region;
        o->count = r->count;
        o->incl_ns = r->incl_ns;
        o->excl_ns = r->excl_ns;
        o->mpi_ns = r->mpi_ns;
        o->ranks = r->ranks;
        e->rs_ptr[i] = o;
    }
    if (nr) /* the array is NULL until a window had regions (qsort's argument is nonnull) */
        qsort(e->rs_ptr, nr, sizeof *e->rs_ptr, cmp_region_stat);
    for (uint32_t i = 0; i < ns; i++) {
        const mw_site_sum_t *t = MW__INDEX_AT(&w->sites, mw_site_sum_t, i);
        Mpiwatch__SiteStat *o = &e->ss[i];
        mpiwatch__site_stat__init(o);
        o->site = t->site;
        o->fn = t->fn;
        o->count = t->count;
        o->ns = t->ns;
        o->bytes = t->bytes;
        o->max_ns = t->max_ns;
        o->ranks = t->ranks;
        o->top_rank = t->top_rank;
        o->top_rank_ns = t->top_rank_ns;
        e->ss_ptr[i] = o;
    }
    if (ns)
        qsort(e->ss_ptr, ns, sizeof *e->ss_ptr, cmp_site_stat);
    pw->n_regions = nr;
    pw->regions = nr ? e->rs_ptr : NULL;
    pw->n_sites = ns;
    pw->sites = ns ? e->ss_ptr : NULL;
    pw->regions_dropped = w->regions_dropped;
    pw->sites_dropped = w->sites_dropped;

    uint32_t nf = w->n_rf, nq = w->n_rr;
    if (PB_RESERVE(e, rf_rank, nf) < 0 || PB_RESERVE(e, rf_fn, nf) < 0 ||
        PB_RESERVE(e, rf_count, nf) < 0 || PB_RESERVE(e, rf_ns, nf) < 0 ||
        PB_RESERVE(e, rf_bytes, nf) < 0 || PB_RESERVE(e, rr_rank, nq) < 0 ||
        PB_RESERVE(e, rr_region, nq) < 0 || PB_RESERVE(e, rr_count, nq) < 0 ||
        PB_RESERVE(e, rr_incl, nq) < 0 || PB_RESERVE(e, rr_excl, nq) < 0 ||
        PB_RESERVE(e, rr_mpi, nq) < 0)
        return -1;
    size_t kf = 0, kq = 0;
    for (uint32_t b = 0; b < w->n_blocks; b++) {
        const mw_rank_block_t *bl = &w->blocks[b];
        for (uint32_t i = 0; i < bl->rf_n; i++, kf++) {
            const mw_rank_fn_entry_t *x = &w->rf[bl->rf_off + i];
            e->rf_rank[kf] = x->rank;
            e->rf_fn[kf] = x->fn;
            e->rf_count[kf] = x->count;
            e->rf_ns[kf] = x->ns;
            e->rf_bytes[kf] = x->bytes;
        }
        for (uint32_t i = 0; i < bl->rr_n; i++, kq++) {
            const mw_rank_region_entry_t *x = &w->rr[bl->rr_off + i];
            e->rr_rank[kq] = x->rank;
            e->rr_region[kq] = x->region;
            e->rr_count[kq] = x->count;
            e->rr_incl[kq] = x->incl_ns;
            e->rr_excl[kq] = x->excl_ns;
            e->rr_mpi[kq] = x->mpi_ns;
        }
    }
    pw->n_rf_rank = pw->n_rf_fn = pw->n_rf_count = pw->n_rf_ns = pw->n_rf_bytes = kf;
    pw->rf_rank = e->rf_rank;
    pw->rf_fn = e->rf_fn;
    pw->rf_count = e->rf_count;
    pw->rf_ns = e->rf_ns;
    pw->rf_bytes = e->rf_bytes;
    pw->n_rr_rank = pw->n_rr_region = pw->n_rr_count = pw->n_rr_incl_ns = pw->n_rr_excl_ns =
        pw->n_rr_mpi_ns = kq;
    pw->rr_rank = e->rr_rank;
    pw->rr_region = e->rr_region;
    pw->rr_count = e->rr_count;
    pw->rr_incl_ns = e->rr_incl;
    pw->rr_excl_ns = e->rr_excl;
    pw->rr_mpi_ns = e->rr_mpi;
    pw->rank_detail_left_out = w->rank_detail_left_out;

    uint32_t np = w->fpairs.n;
    if (PB_RESERVE(e, fp_src, np) < 0 || PB_RESERVE(e, fp_dst, np) < 0 ||
        PB_RESERVE(e, fp_fn, np) < 0 || PB_RESERVE(e, fp_msg, np) < 0 ||
        PB_RESERVE(e, fp_bytes, np) < 0)
        return -1;
    for (uint32_t i = 0; i < np; i++) {
        const mw_fpair_sum_t *p = MW__INDEX_AT(&w->fpairs, mw_fpair_sum_t, i);
        e->fp_src[i] = p->src;
        e->fp_dst[i] = p->dst;
        e->fp_fn[i] = p->fn;
        e->fp_msg[i] = p->messages;
        e->fp_bytes[i] = p->bytes;
    }
    pw->n_fpair_src = pw->n_fpair_dst = pw->n_fpair_fn = pw->n_fpair_messages = pw->n_fpair_bytes =
        np;
    pw->fpair_src = e->fp_src;
    pw->fpair_dst = e->fp_dst;
    pw->fpair_fn = e->fp_fn;
    pw->fpair_messages = e->fp_msg;
    pw->fpair_bytes = e->fp_bytes;
    return 0;
}

size_t mw__window_pack(mw_pb_encoder_t *e, const mw_window_t *w, uint64_t closed_real_ns)
{
    Mpiwatch__Window pw;
    if (mw__window_fill(e, w, closed_real_ns, 0, &pw) < 0)
        return 0;
    return pb_pack(e, &pw.base);
}

int mw__window_fill(mw_pb_encoder_t *e, const mw_window_t *w, uint64_t closed_real_ns, int partial,
                    Mpiwatch__Window *out)
{
    Mpiwatch__Window pw = MPIWATCH__WINDOW__INIT;
    pw.index = w->index;
    pw.window_ns = w->window_ns;
    /* Only off the first grid: 0 means index * window_ns, so a job that never changes its
     * window length encodes exactly as before (docs/recording.md). */
    pw.start_ns = w->start_ns != w->index * w->window_ns ? w->start_ns : 0;
    pw.subslots = w->subslots;
    pw.duration_bins = w->duration_bins;
    pw.ranks_reporting = w->ranks_reporting;
    pw.ranks_missing = w->ranks_missing;
    pw.mpi_time_ns = w->mpi_time_ns;
    pw.occ_total_ns = w->occ_total_ns;
    pw.records_dropped = w->records_dropped;
    pw.samples_dropped = w->samples_dropped;
    pw.calls_late = w->calls_late;
    pw.overflow = w->overflow;
    pw.closed_real_ns = closed_real_ns;
    pw.n_rank_mpi_permille = w->n_rank_pm;
    pw.rank_mpi_permille = w->rank_pm;

    /* Functions with their trimmed histograms. */
    size_t hist_total = (size_t)w->n_fn_used * MW_MAX_DURATION_BINS;
    if (PB_RESERVE(e, fn, w->n_fn_used) < 0 || PB_RESERVE(e, fn_ptr, w->n_fn_used) < 0 ||
        PB_RESERVE(e, hist, hist_total) < 0)
        return -1;
    size_t nf = 0, nh = 0;
    for (uint32_t i = 0; i < w->n_fn_used; i++) {
        uint32_t id = w->fn_used[i];
        const mw_fn_sum_t *f = &w->fn[id];
        /* Occupancy only: the call is still running. A partial keeps whatever its parent must
         * add (a rank may list a function with no calls but time or bytes, or spread). */
        if (f->s.count == 0 && !(partial && (f->s.total_ns || f->s.bytes || f->ranks)))
            continue;
        Mpiwatch__FunctionStat *o = &e->fn[nf];
        mpiwatch__function_stat__init(o);
        o->fn = id;
        o->count = f->s.count;
        o->total_ns = f->s.total_ns;
        o->min_ns = f->s.min_ns;
        o->max_ns = f->s.max_ns;
        o->bytes = f->s.bytes;
        o->rank_sd_ns = f->sd_ns;
        o->rank_max = f->rank_max;
        o->rank_max_ns = f->rank_max_ns;
        if (partial && f->ranks) { /* the exact moments (docs/partial.md), and a reader's view */
            o->spread_ranks = f->ranks;
            o->spread_sum_ns = f->sum_ns;
            o->spread_sq_hi = (uint64_t)(f->sq >> 64);
            o->spread_sq_lo = (uint64_t)f->sq;
            o->spread_mean_ns = (double)f->sum_ns / f->ranks;
            long double m2 = (long double)f->sq - (long double)f->sum_ns * f->sum_ns / f->ranks;
            o->spread_m2 = m2 > 0 ? (double)m2 : 0.0;
        }
        uint32_t lo = 0, hi = MW_MAX_DURATION_BINS;
        while (lo < hi && f->hist[lo] == 0)
            lo++;
        while (hi > lo && f->hist[hi - 1] == 0)
            hi--;
        o->hist_first = lo;
        o->n_hist = hi - lo;
        o->hist = &e->hist[nh];
        for (uint32_t b = lo; b < hi; b++)
            e->hist[nh++] = f->hist[b] > UINT32_MAX ? UINT32_MAX : (uint32_t)f->hist[b];
        e->fn_ptr[nf] = o;
        nf++;
    }
    pw.n_functions = nf;
    pw.functions = e->fn_ptr;

    /* Occupancy: non-zero cells of the used functions. */
    size_t cells = (size_t)w->n_fn_used * w->subslots;
    if (PB_RESERVE(e, occ_fn, cells) < 0 || PB_RESERVE(e, occ_sub, cells) < 0 ||
        PB_RESERVE(e, occ_ns, cells) < 0)
        return -1;
    size_t no = 0;
    for (uint32_t i = 0; i < w->n_fn_used; i++) {
        uint32_t id = w->fn_used[i];
        for (uint32_t s = 0; s < w->subslots; s++) {
            uint64_t ns = w->occ_ns[(size_t)id * w->subslots + s];
            if (!ns)
                continue;
            e->occ_fn[no] = id;
            e->occ_sub[no] = s;
            e->occ_ns[no] = ns;
            no++;
        }
    }
    pw.n_occ_fn = pw.n_occ_sub = pw.n_occ_ns = no;
    pw.occ_fn = e->occ_fn;
    pw.occ_sub = e->occ_sub;
    pw.occ_ns = e->occ_ns;

    uint32_t nd = w->density.n;
    if (PB_RESERVE(e, d_fn, nd) < 0 || PB_RESERVE(e, d_sub, nd) < 0 ||
        PB_RESERVE(e, d_bin, nd) < 0 || PB_RESERVE(e, d_end, nd) < 0 ||
        PB_RESERVE(e, d_count, nd) < 0)
        return -1;
    for (uint32_t i = 0; i < nd; i++) {
        const mw_density_cell_t *d = MW__INDEX_AT(&w->density, mw_density_cell_t, i);
        e->d_fn[i] = d->fn;
        e->d_sub[i] = d->sub;
        e->d_bin[i] = d->bin;
        e->d_end[i] = d->end;
        e->d_count[i] = d->count;
    }
    pw.n_density_fn = pw.n_density_sub = pw.n_density_bin = pw.n_density_end = pw.n_density_count =
        nd;
    pw.density_fn = e->d_fn;
    pw.density_sub = e->d_sub;
    pw.density_bin = e->d_bin;
    pw.density_end = e->d_end;
    pw.density_count = e->d_count;

    uint32_t np = w->pairs.n;
    if (PB_RESERVE(e, p_src, np) < 0 || PB_RESERVE(e, p_dst, np) < 0 ||
        PB_RESERVE(e, p_msg, np) < 0 || PB_RESERVE(e, p_bytes, np) < 0)
        return -1;
    for (uint32_t i = 0; i < np; i++) {
        const mw_pair_sum_t *p = MW__INDEX_AT(&w->pairs, mw_pair_sum_t, i);
        e->p_src[i] = p->src;
        e->p_dst[i] = p->dst;
        e->p_msg[i] = p->messages;
        e->p_bytes[i] = p->bytes;
    }
    pw.n_pair_src = pw.n_pair_dst = pw.n_pair_messages = pw.n_pair_bytes = np;
    pw.pair_src = e->p_src;
    pw.pair_dst = e->p_dst;
    pw.pair_messages = e->p_msg;
    pw.pair_bytes = e->p_bytes;

    if (PB_RESERVE(e, call, w->n_longest) < 0 || PB_RESERVE(e, call_ptr, w->n_longest) < 0)
        return -1;
    for (uint32_t i = 0; i < w->n_longest; i++) {
        const mw_merge_call_t *c = &w->longest[i];
        Mpiwatch__Call *o = &e->call[i];
        mpiwatch__call__init(o);
        o->fn = c->fn;
        o->start_ns = c->start_ns;
        o->duration_ns = c->duration_ns;
        o->bytes = c->bytes;
        o->peer = c->peer;
        o->rank = c->rank;
        e->call_ptr[i] = o;
    }
    pw.n_longest = w->n_longest;
    pw.longest = e->call_ptr;

    /* Traces: each rank's Trace as it arrived, its records untouched (docs/trace.md). */
    if (PB_RESERVE(e, rt, w->n_traces) < 0 || PB_RESERVE(e, rt_ptr, w->n_traces) < 0 ||
        PB_RESERVE(e, tr, w->n_traces) < 0)
        return -1;
    for (uint32_t i = 0; i < w->n_traces; i++) {
        const mw_rank_trace_t *t = &w->traces[i];
        Mpiwatch__Trace *o = &e->tr[i];
        mpiwatch__trace__init(o);
        o->window = t->window;
        o->state = t->state;
        o->left_out = t->left_out;
        o->reason = t->reason;
        o->count = t->count;
        o->encoding = t->encoding;
        o->raw_bytes = t->raw_bytes;
        o->records.len = t->len;
        o->records.data = t->len ? w->tbytes + t->off : NULL;
        o->window_start_ns = t->window_start_ns;
        o->threads = t->threads;
        o->flags = t->flags;
        o->capture = t->capture;
        mpiwatch__rank_trace__init(&e->rt[i]);
        e->rt[i].rank = t->rank;
        e->rt[i].trace = o;
        e->rt_ptr[i] = &e->rt[i];
    }
    pw.n_traces = w->n_traces;
    pw.traces = e->rt_ptr;
    pw.traced_ranks = w->traced_ranks;
    pw.trace_left_out = w->trace_left_out;
    pw.trace_deferred = w->trace_deferred;

    if (PB_RESERVE(e, cd, w->n_comms) < 0 || PB_RESERVE(e, cd_ptr, w->n_comms) < 0 ||
        PB_RESERVE(e, cd_rank, w->n_comms) < 0)
        return -1;
    for (uint32_t i = 0; i < w->n_comms; i++) {
        const mw_comm_def_t *d = &w->comms[i];
        Mpiwatch__CommDef *o = &e->cd[i];
        mpiwatch__comm_def__init(o);
        o->id = d->id;
        o->parent = d->parent;
        o->fn = d->fn;
        o->rank = d->rank;
        o->size = d->size;
        o->flags = d->flags;
        o->created_ns = d->created_ns;
        o->remote_size = d->remote_size;
        e->cd_ptr[i] = o;
        e->cd_rank[i] = d->world_rank;
    }
    pw.n_comms = w->n_comms;
    pw.comms = e->cd_ptr;
    pw.n_comm_world_rank = w->n_comms;
    pw.comm_world_rank = e->cd_rank;

    if (window_pack_rs(e, w, &pw) < 0)
        return -1;
    *out = pw;
    return 0;
}

size_t mw__pb_pack_msg(mw_pb_encoder_t *e, const ProtobufCMessage *msg)
{
    return pb_pack(e, msg);
}

size_t mw__rank_trace_pack(mw_pb_encoder_t *e, uint32_t rank, const Mpiwatch__Trace *t)
{
    Mpiwatch__RankTrace rt = MPIWATCH__RANK_TRACE__INIT;
    rt.rank = rank;
    rt.trace = (Mpiwatch__Trace *)t;
    return pb_pack(e, &rt.base);
}

const char *mw__job_state_name(const mw_job_t *job)
{
    switch (job->ended) {
    case MW_END_NONE:
        return "running";
    case MW_END_COMPLETE:
        return "complete";
    case MW_END_SILENCE:
        return "silence";
    case MW_END_SIGNAL:
        return "signal";
    }
    return "?";
}

/* JobInfo.nodes in wire form. Allocated for one encoding and freed after it rather than kept
 * in the encoder: the job is encoded a few times per job (start, all hellos, end), and its
 * nodes' hardware can be large (thousands of nodes x hundreds of objects), which a scratch
 * grown for the largest job ever seen would keep for the collector's lifetime. */
typedef struct {
    Mpiwatch__NodeTopology *node;
    Mpiwatch__NodeTopology **ptr;
    Mpiwatch__TopoObject *obj;
    Mpiwatch__TopoObject **obj_ptr;
} jobinfo_nodes_t;

static void jobinfo_nodes_free(jobinfo_nodes_t *t)
{
    free(t->node);
    free(t->ptr);
    free(t->obj);
    free(t->obj_ptr);
    memset(t, 0, sizeof *t);
}

static int jobinfo_nodes(jobinfo_nodes_t *t, const mw_job_t *job)
{
    memset(t, 0, sizeof *t);
    size_t total = 0;
    for (uint32_t i = 0; i < job->n_nodes; i++)
        total += job->node_hw[i].n_objects;
    t->node = malloc((job->n_nodes ? job->n_nodes : 1) * sizeof *t->node);
    t->ptr = malloc((job->n_nodes ? job->n_nodes : 1) * sizeof *t->ptr);
    t->obj = malloc((total ? total : 1) * sizeof *t->obj);
    t->obj_ptr = malloc((total ? total : 1) * sizeof *t->obj_ptr);
    if (!t->node || !t->ptr || !t->obj || !t->obj_ptr) {
        jobinfo_nodes_free(t);
        return -1;
    }
    size_t k = 0;
    for (uint32_t i = 0; i < job->n_nodes; i++) {
        const mw_node_hw_t *hw = &job->node_hw[i];
        Mpiwatch__NodeTopology *nt = &t->node[i];
        mpiwatch__node_topology__init(nt);
        nt->node = job->nodes[i];
        nt->n_objects = hw->n_objects;
        nt->objects = t->obj_ptr + k;
        for (uint32_t j = 0; j < hw->n_objects; j++, k++) {
            Mpiwatch__TopoObject *o = &t->obj[k];
            mpiwatch__topo_object__init(o);
            o->type = hw->objects[j].type;
            o->parent = hw->objects[j].parent;
            o->logical = hw->objects[j].logical;
            o->os_index = hw->objects[j].os_index;
            t->obj_ptr[k] = o;
        }
        t->ptr[i] = nt;
    }
    return 0;
}

size_t mw__jobinfo_pack(mw_pb_encoder_t *e, const mw_job_t *job, uint64_t function_table_hash)
{
    Mpiwatch__JobInfo ji = MPIWATCH__JOB_INFO__INIT;
    ji.job = (char *)job->job;
    ji.program = (char *)job->program;
    ji.mpi_library = (char *)job->mpi_library;
    ji.size = job->size;
    ji.window_ns = job->window_ns;
    ji.subslots = job->subslots;
    ji.duration_bins = job->duration_bins;
    ji.n_hosts = job->n_hosts;
    ji.hosts = job->hosts;
    ji.function_table_hash = function_table_hash;
    /* The job's function ids (docs/function-table.md): this build's table, then the extras
     * this process has given ids to (names of other tables its ranks sent). */
    static char *fn_names[MW_FN_SPACE];
    static uint32_t fn_kinds[MW_FN_SPACE];
    uint32_t n_fn = MW_FN_COUNT - 1u + mw_fn_extra_count();
    for (uint32_t id = 1; id <= n_fn; id++) {
        fn_names[id - 1] = (char *)mw_fn_name(id);
        fn_kinds[id - 1] = (uint32_t)mw_fn_kind(id);
    }
    ji.function_count = n_fn;
    ji.n_function_names = n_fn;
    ji.function_names = fn_names;
    ji.n_function_kinds = n_fn;
    ji.function_kinds = fn_kinds;
    ji.state = (char *)mw__job_state_name(job);

    uint32_t n = 0;
    if (PB_RESERVE(e, rank, job->hellos) < 0 || PB_RESERVE(e, rank_ptr, job->hellos) < 0)
        return 0;
    for (uint32_t r = 0; r < job->size && n < job->hellos; r++) {
        const mw_rank_t *k = &job->ranks[r];
        if (!k->said_hello || !k->in_info) /* in_info: within the description's budget (job.c) */
            continue;
        Mpiwatch__RankInfo *o = &e->rank[n];
        mpiwatch__rank_info__init(o);
        o->rank = r;
        o->host = k->host;
        o->pid = k->pid;
        o->pu = k->pu;
        o->core = k->core;
        o->package = k->package;
        o->clock_error_ns = k->clock_error_ns;
        o->node = k->node;
        o->l3 = k->l3;
        o->numa = k->numa;
        o->bound = k->bound;
        o->n_pus = k->pus_n;
        o->pus = k->pus_n ? (uint32_t *)job->pus + k->pus_first : NULL;
        e->rank_ptr[n++] = o;
    }
    ji.n_ranks = n;
    ji.ranks = e->rank_ptr;
    jobinfo_nodes_t nodes;
    if (jobinfo_nodes(&nodes, job) < 0)
        return 0;
    ji.n_nodes = job->n_nodes;
    ji.nodes = nodes.ptr;
    /* The grid, once it has more than its first segment (JobInfo.window_ns says that one). */
    Mpiwatch__GridSegment seg[MW_GRID_MAX_SEGMENTS], *seg_ptr[MW_GRID_MAX_SEGMENTS];
    if (job->grid.n > 1) {
        for (uint32_t i = 0; i < job->grid.n; i++) {
            mpiwatch__grid_segment__init(&seg[i]);
            seg[i].first = job->grid.seg[i].first;
            seg[i].start_ns = job->grid.seg[i].start_ns;
            seg[i].window_ns = job->grid.seg[i].window_ns;
            seg_ptr[i] = &seg[i];
        }
        ji.n_grid = job->grid.n;
        ji.grid = seg_ptr;
    }
    /* The job's regions and call sites (regions.c): entry i has id i + 1. */
    const mw__rs_t *rs = &job->rs;
    if (PB_RESERVE(e, jr, rs->n_regions) < 0 || PB_RESERVE(e, jr_ptr, rs->n_regions) < 0 ||
        PB_RESERVE(e, js, rs->n_sites) < 0 || PB_RESERVE(e, js_ptr, rs->n_sites) < 0) {
        jobinfo_nodes_free(&nodes);
        return 0;
    }
    for (uint32_t i = 0; i < rs->n_regions; i++) {
        Mpiwatch__Region *o = &e->jr[i];
        mpiwatch__region__init(o);
        o->id = i + 1;
        o->name = rs->regions[i].name;
        o->source = rs->regions[i].source;
        e->jr_ptr[i] = o;
    }
    for (uint32_t i = 0; i < rs->n_sites; i++) {
        const mw_site_t *st = &rs->sites[i];
        Mpiwatch__CallSite *o = &e->js[i];
        mpiwatch__call_site__init(o);
        o->id = i + 1;
        o->module = st->module;
        o->offset = st->offset;
        o->function = st->function;
        o->file = st->file;
        o->line = st->line;
        o->first_rank = st->first_rank;
        e->js_ptr[i] = o;
    }
    ji.n_regions = rs->n_regions;
    ji.regions = rs->n_regions ? e->jr_ptr : NULL;
    ji.n_sites = rs->n_sites;
    ji.sites = rs->n_sites ? e->js_ptr : NULL;
    size_t len = pb_pack(e, &ji.base);
    jobinfo_nodes_free(&nodes);
    return len;
}

/* A closed time step (steps.c builds the message; this only encodes it). */
size_t mw__step_pack(mw_pb_encoder_t *e, const Mpiwatch__Step *step)
{
    return pb_pack(e, &step->base);
}

size_t mw__lateness_pack(mw_pb_encoder_t *e, const Mpiwatch__Lateness *l)
{
    return pb_pack(e, &l->base);
}
