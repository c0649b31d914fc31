/* mw_proto.c: the function table's names and kinds, the decoding arena, and the choice of
 * decoder for each frame.
 *
 * DESIGN: the names and kinds are static arrays expanded from the same X-macro table as the
 * wrappers, so an id means the same function in every component built from one tree; the
 * table hash travels in each hello to catch components built from different trees. A frame is
 * decoded by the hand-written decoder of mw_decode.c when it can answer for it (samples), and
 * by protobuf-c otherwise; both give the same envelope (see mw_decode.c).
 */
#include "mw_proto.h"
#include "mw_fnmap.h"

#include <stdlib.h>
#include <string.h>

static const char *const fn_names[MW_FN_COUNT] = {
    [MW_ID_NONE] = NULL,
#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace)                          \
    [MW_ID_##name] = "MPI_" #name,
#include MW_FN_TABLE_DEF
#undef MW_FN
};

static const unsigned char fn_kinds[MW_FN_COUNT] = {
    [MW_ID_NONE] = MW_KIND_OTHER,
#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace)                          \
    [MW_ID_##name] = MW_KIND_##kind,
#include MW_FN_TABLE_DEF
#undef MW_FN
};

/* The kinds as a hello carries them (Hello.function_kinds: entry i is id i + 1). */
static const uint32_t hello_kinds[MW_FN_COUNT - 1] = {
#define MW_FN(name, ret, kind, params, args, bytes, peer, fortran, trace)                          \
    [MW_ID_##name - 1] = MW_KIND_##kind,
#include MW_FN_TABLE_DEF
#undef MW_FN
};

void mw_hello_set_table(Mpiwatch__Hello *h)
{
    h->function_count = MW_FN_COUNT - 1;
    h->function_table_hash = mw_fn_table_hash();
    h->n_function_names = h->n_function_kinds = MW_FN_COUNT - 1;
    /* protobuf-c's field is char ** but packing only reads it. */
    h->function_names = (char **)(uintptr_t)(fn_names + 1);
    h->function_kinds = (uint32_t *)(uintptr_t)hello_kinds;
}

static const char *const kind_names[MW_KIND_COUNT] = {
    "send", "recv", "collective", "wait", "rma", "io", "query", "other", "special",
};

/* The extras (mw_fnmap.c). */
const char *mw__fn_extra_name(unsigned i);
unsigned mw__fn_extra_kind(unsigned i);
unsigned mw__fn_lookup(const char *name);

const char *mw_fn_name(unsigned id)
{
    if (id > 0 && id < MW_FN_COUNT)
        return fn_names[id];
    return id >= MW_FN_COUNT && id < MW_FN_SPACE ? mw__fn_extra_name(id - MW_FN_COUNT) : NULL;
}

unsigned mw_fn_id(const char *name)
{
    return mw__fn_lookup(name);
}

unsigned mw_fn_end(void)
{
    return MW_FN_COUNT + mw_fn_extra_count();
}

mw_kind_t mw_fn_kind(unsigned id)
{
    if (id < MW_FN_COUNT)
        return (mw_kind_t)fn_kinds[id];
    return id < MW_FN_SPACE ? (mw_kind_t)mw__fn_extra_kind(id - MW_FN_COUNT) : MW_KIND_OTHER;
}

int mw_fn_timed(unsigned id)
{
    /* An extra is timed unless its kind says otherwise: the counted special functions (Init,
     * Finalize, Pcontrol) are in every MPI's table, so never extras. */
    if (id >= MW_FN_COUNT)
        return id < MW_FN_SPACE && mw__fn_extra_name(id - MW_FN_COUNT) &&
               mw_fn_kind(id) != MW_KIND_QUERY;
    if (id == 0 || fn_kinds[id] == MW_KIND_QUERY)
        return 0;
    /* Counted by their hand-written wrappers (pmpi-shim/special.c), never timed. */
    return id != MW_ID_Init && id != MW_ID_Init_thread && id != MW_ID_Finalize &&
           id != MW_ID_Pcontrol;
}

const char *mw_kind_name(mw_kind_t kind)
{
    return (unsigned)kind < MW_KIND_COUNT ? kind_names[kind] : "?";
}

uint64_t mw_fn_table_hash(void)
{
    return mw_fn_names_hash(fn_names + 1, MW_FN_COUNT - 1u);
}

static void *arena_alloc(void *data, size_t size)
{
    mw_arena_t *a = data;
    size_t off = (a->used + 15u) & ~(size_t)15u;
    if (size > a->size || off > a->size - size) {
        a->failed++;
        return NULL;
    }
    a->used = off + size;
    return a->base + off;
}

static void arena_free(void *data, void *ptr)
{
    (void)data; /* everything is released at once by mw_arena_reset() */
    (void)ptr;
}

int mw_arena_init(mw_arena_t *arena, size_t size)
{
    memset(arena, 0, sizeof *arena);
    arena->base = malloc(size);
    if (!arena->base)
        return -1;
    arena->size = size;
    arena->allocator.alloc = arena_alloc;
    arena->allocator.free = arena_free;
    arena->allocator.allocator_data = arena;
    return 0;
}

void mw_arena_reset(mw_arena_t *arena)
{
    arena->used = 0;
    arena->failed = 0;
}

void mw_arena_free(mw_arena_t *arena)
{
    free(arena->base);
    memset(arena, 0, sizeof *arena);
}

Mpiwatch__Envelope *mw__envelope_decode_pbc(mw_arena_t *arena, const void *data, size_t len)
{
    if (len > MW_MAX_MESSAGE_BYTES)
        return NULL;
    mw_arena_reset(arena);
    return mpiwatch__envelope__unpack(&arena->allocator, len, data);
}

/* Whether MPIWATCH_DECODER=protobuf-c asks for protobuf-c only; read once. */
static int decode_pbc_only(void)
{
    static int only = -1;
    if (only < 0) {
        const char *d = getenv("MPIWATCH_DECODER");
        only = d && strcmp(d, "protobuf-c") == 0;
    }
    return only;
}

Mpiwatch__Envelope *mw_envelope_decode(mw_arena_t *arena, const void *data, size_t len)
{
    if (len > MW_MAX_MESSAGE_BYTES)
        return NULL;
    if (!decode_pbc_only()) {
        mw_arena_reset(arena);
        Mpiwatch__Envelope *env = mw__envelope_decode_fast(arena, data, len);
        if (env)
            return env;
    }
    return mw__envelope_decode_pbc(arena, data, len);
}

Mpiwatch__JobInfo *mw_job_info_copy(const Mpiwatch__JobInfo *job)
{
    size_t len = protobuf_c_message_get_packed_size(&job->base);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return NULL;
    protobuf_c_message_pack(&job->base, buf);
    Mpiwatch__JobInfo *copy = mpiwatch__job_info__unpack(NULL, len, buf);
    free(buf);
    return copy;
}
