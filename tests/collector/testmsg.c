/* testmsg.c: the envelope builder of testmsg.h.
 *
 * DESIGN: the protobuf-c structs are initialised with their generated INIT macros and point
 * into arrays inside the same tm_msg_t, so a message needs no allocation until it is packed.
 */
#include "testmsg.h"
#include "mw_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t tm_window_of(uint64_t now_ns)
{
    return now_ns / TM_WINDOW_NS;
}

uint32_t tm_bin(uint64_t ns)
{
    uint32_t b = 0;
    while (ns > 1) {
        ns >>= 1;
        b++;
    }
    return b;
}

static void tm_envelope(tm_msg_t *m, const char *job, uint32_t rank)
{
    memset(m, 0, sizeof *m);
    mpiwatch__envelope__init(&m->env);
    snprintf(m->job, sizeof m->job, "%s", job);
    m->env.version = MW_PROTO_VERSION;
    m->env.job = m->job;
    m->env.rank = rank;
}

void tm_hello(tm_msg_t *m, const char *job, uint32_t rank, uint32_t size, uint64_t now_ns)
{
    tm_envelope(m, job, rank);
    Mpiwatch__Hello *h = &m->hello;
    mpiwatch__hello__init(h);
    snprintf(m->host, sizeof m->host, "node%u", rank / 2);
    h->size = size;
    h->host = m->host;
    h->pid = 1000 + rank;
    h->binding = "unbound";
    h->cpuset = "0-1";
    h->pu = h->core = h->package = -1;
    h->mpi_library = "Open MPI v4.1";
    h->clock_error_ns = 500;
    h->window_ns = TM_WINDOW_NS;
    h->subslots = TM_SUBSLOTS;
    h->duration_bins = TM_BINS;
    h->function_count = MW_FN_COUNT - 1;
    static uint64_t table_hash; /* walks every name: once, not per hello */
    if (!table_hash)
        table_hash = mw_fn_table_hash();
    h->function_table_hash = table_hash;
    h->timer = "clock_gettime";
    h->start_ns = now_ns;
    h->program = "testprog";
    m->env.body_case = MPIWATCH__ENVELOPE__BODY_HELLO;
    m->env.hello = h;
}

void tm_sample(tm_msg_t *m, const char *job, uint32_t rank, uint64_t window, uint64_t now_ns)
{
    tm_envelope(m, job, rank);
    Mpiwatch__Sample *s = &m->sample;
    mpiwatch__sample__init(s);
    s->window = window;
    s->sent_ns = now_ns;
    s->functions = m->fsp;
    s->peer_rank = m->peer_rank;
    s->peer_messages = m->peer_messages;
    s->peer_bytes = m->peer_bytes;
    s->occ_fn = m->occ_fn;
    s->occ_sub = m->occ_sub;
    s->occ_ns = m->occ_ns;
    s->density_fn = m->density_fn;
    s->density_sub = m->density_sub;
    s->density_bin = m->density_bin;
    s->density_end = m->density_end;
    s->density_count = m->density_count;
    s->longest = m->callp;
    m->env.body_case = MPIWATCH__ENVELOPE__BODY_SAMPLE;
    m->env.sample = s;
}

void tm_bye(tm_msg_t *m, const char *job, uint32_t rank)
{
    tm_envelope(m, job, rank);
    mpiwatch__bye__init(&m->bye);
    m->env.body_case = MPIWATCH__ENVELOPE__BODY_BYE;
    m->env.bye = &m->bye;
}

Mpiwatch__FunctionStat *tm_add_fn(tm_msg_t *m, uint32_t fn, uint64_t count, uint64_t total_ns,
                                  uint64_t min_ns, uint64_t max_ns, uint64_t bytes)
{
    size_t i = m->sample.n_functions++;
    Mpiwatch__FunctionStat *f = &m->fs[i];
    mpiwatch__function_stat__init(f);
    f->fn = fn;
    f->count = count;
    f->total_ns = total_ns;
    f->min_ns = min_ns;
    f->max_ns = max_ns;
    f->bytes = bytes;
    f->hist_first = tm_bin(max_ns);
    f->hist = m->hist[i];
    f->hist[0] = (uint32_t)count;
    f->n_hist = count ? 1 : 0;
    m->fsp[i] = f;
    return f;
}

void tm_add_total(tm_msg_t *m, uint32_t fn, uint64_t calls, uint64_t ns, uint64_t bytes)
{
    size_t *n = m->env.body_case == MPIWATCH__ENVELOPE__BODY_BYE ? &m->bye.n_total_fn
                                                                 : &m->sample.n_total_fn;
    size_t i = (*n)++;
    m->total_fn[i] = fn;
    m->total_calls[i] = calls;
    m->total_ns[i] = ns;
    m->total_bytes[i] = bytes;
    if (m->env.body_case == MPIWATCH__ENVELOPE__BODY_BYE) {
        Mpiwatch__Bye *b = &m->bye;
        b->n_total_calls = b->n_total_ns = b->n_total_bytes = b->n_total_fn;
        b->total_fn = m->total_fn;
        b->total_calls = m->total_calls;
        b->total_ns = m->total_ns;
        b->total_bytes = m->total_bytes;
    } else {
        Mpiwatch__Sample *s = &m->sample;
        s->n_total_calls = s->n_total_ns = s->n_total_bytes = s->n_total_fn;
        s->total_fn = m->total_fn;
        s->total_calls = m->total_calls;
        s->total_ns = m->total_ns;
        s->total_bytes = m->total_bytes;
    }
}

void tm_add_peer(tm_msg_t *m, uint32_t peer, uint64_t messages, uint64_t bytes)
{
    size_t i = m->sample.n_peer_rank++;
    m->sample.n_peer_messages++;
    m->sample.n_peer_bytes++;
    m->peer_rank[i] = peer;
    m->peer_messages[i] = messages;
    m->peer_bytes[i] = bytes;
}

void tm_add_occ(tm_msg_t *m, uint32_t fn, uint32_t sub, uint64_t ns)
{
    size_t i = m->sample.n_occ_fn++;
    m->sample.n_occ_sub++;
    m->sample.n_occ_ns++;
    m->occ_fn[i] = fn;
    m->occ_sub[i] = sub;
    m->occ_ns[i] = ns;
}

void tm_add_density(tm_msg_t *m, uint32_t fn, int32_t sub, uint32_t bin, uint32_t end,
                    uint64_t count)
{
    size_t i = m->sample.n_density_fn++;
    m->sample.n_density_sub++;
    m->sample.n_density_bin++;
    m->sample.n_density_end++;
    m->sample.n_density_count++;
    m->density_fn[i] = fn;
    m->density_sub[i] = sub;
    m->density_bin[i] = bin;
    m->density_end[i] = end;
    m->density_count[i] = count;
}

void tm_add_call(tm_msg_t *m, uint32_t fn, uint64_t start_ns, uint64_t duration_ns, uint64_t bytes,
                 int32_t peer)
{
    size_t i = m->sample.n_longest++;
    Mpiwatch__Call *c = &m->calls[i];
    mpiwatch__call__init(c);
    c->fn = fn;
    c->start_ns = start_ns;
    c->duration_ns = duration_ns;
    c->bytes = bytes;
    c->peer = peer;
    m->callp[i] = c;
}

void tm_add_region_def(tm_msg_t *m, uint32_t id, const char *name, uint32_t source)
{
    Mpiwatch__Sample *s = &m->sample;
    size_t i = s->n_region_defs++;
    Mpiwatch__RegionDef *d = &m->rdef[i];
    mpiwatch__region_def__init(d);
    d->id = id;
    d->name = (char *)name;
    d->source = source;
    m->rdefp[i] = d;
    s->region_defs = m->rdefp;
}

void tm_add_region(tm_msg_t *m, uint32_t id, uint64_t count, uint64_t incl_ns, uint64_t excl_ns,
                   uint64_t mpi_ns)
{
    Mpiwatch__Sample *s = &m->sample;
    size_t i = s->n_region_id++;
    s->n_region_count = s->n_region_incl_ns = s->n_region_excl_ns = s->n_region_mpi_ns =
        s->n_region_id;
    m->region_id[i] = id;
    m->region_count[i] = count;
    m->region_incl_ns[i] = incl_ns;
    m->region_excl_ns[i] = excl_ns;
    m->region_mpi_ns[i] = mpi_ns;
    s->region_id = m->region_id;
    s->region_count = m->region_count;
    s->region_incl_ns = m->region_incl_ns;
    s->region_excl_ns = m->region_excl_ns;
    s->region_mpi_ns = m->region_mpi_ns;
}

void tm_add_site_def(tm_msg_t *m, uint32_t id, const char *module, uint64_t offset,
                     const char *function, const char *file, uint32_t line)
{
    Mpiwatch__Sample *s = &m->sample;
    size_t i = s->n_site_defs++;
    Mpiwatch__CallSiteDef *d = &m->sdef[i];
    mpiwatch__call_site_def__init(d);
    d->id = id;
    d->address = 0x400000u + offset;
    d->module = (char *)module;
    d->offset = offset;
    d->function = (char *)function;
    d->file = (char *)file;
    d->line = line;
    m->sdefp[i] = d;
    s->site_defs = m->sdefp;
}

void tm_add_site(tm_msg_t *m, uint32_t id, uint32_t fn, uint64_t count, uint64_t ns, uint64_t bytes,
                 uint64_t max_ns)
{
    Mpiwatch__Sample *s = &m->sample;
    size_t i = s->n_site_id++;
    s->n_site_fn = s->n_site_count = s->n_site_ns = s->n_site_bytes = s->n_site_max_ns =
        s->n_site_id;
    m->site_id[i] = id;
    m->site_fn[i] = fn;
    m->site_count[i] = count;
    m->site_ns[i] = ns;
    m->site_bytes[i] = bytes;
    m->site_max_ns[i] = max_ns;
    s->site_id = m->site_id;
    s->site_fn = m->site_fn;
    s->site_count = m->site_count;
    s->site_ns = m->site_ns;
    s->site_bytes = m->site_bytes;
    s->site_max_ns = m->site_max_ns;
}

void tm_add_peer_fn(tm_msg_t *m, uint32_t peer, uint32_t fn, uint64_t messages, uint64_t bytes)
{
    size_t i = m->sample.n_peer_fn++;
    m->peer_fn[i] = fn;
    m->sample.peer_fn = m->peer_fn;
    tm_add_peer(m, peer, messages, bytes);
}

size_t tm_pack(const tm_msg_t *m, uint8_t **out)
{
    size_t n = mpiwatch__envelope__get_packed_size(&m->env);
    *out = malloc(n ? n : 1);
    if (!*out)
        abort();
    return mpiwatch__envelope__pack(&m->env, *out);
}

void tm_put(tm_enc_t *e, const void *p, size_t n)
{
    if (e->n + n > sizeof e->b)
        abort(); /* a test building a frame too large for this helper */
    memcpy(e->b + e->n, p, n);
    e->n += n;
}

void tm_put_varint(tm_enc_t *e, uint64_t v)
{
    uint8_t b[MW_WIRE_VARINT_MAX];
    tm_put(e, b, mw_wire_put_varint(b, v));
}

void tm_put_key(tm_enc_t *e, uint64_t field, unsigned wire)
{
    tm_put_varint(e, field << 3 | wire);
}

void tm_put_uint(tm_enc_t *e, uint64_t field, uint64_t v)
{
    tm_put_key(e, field, 0);
    tm_put_varint(e, v);
}

void tm_put_ld(tm_enc_t *e, uint64_t field, const void *p, size_t n)
{
    tm_put_key(e, field, 2);
    tm_put_varint(e, n);
    tm_put(e, p, n);
}

void tm_put_msg(tm_enc_t *e, uint64_t field, const tm_enc_t *inner)
{
    tm_put_ld(e, field, inner->b, inner->n);
}

void tm_put_head(tm_enc_t *e, const char *job, uint32_t rank)
{
    e->n = 0;
    tm_put_uint(e, 1, MW_PROTO_VERSION);
    tm_put_ld(e, 2, job, strlen(job));
    tm_put_uint(e, 3, rank);
    tm_put_uint(e, 4, 7);
}
