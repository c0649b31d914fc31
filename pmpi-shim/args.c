/* args.c: bytes and peers of a call, from its arguments, evaluated after a successful call.
 *
 * DESIGN: bytes are count x type size (MPI_Type_size is a local lookup); a destination rank
 * is translated to its rank in MPI_COMM_WORLD through the communicator's group, cached per
 * communicator so that the translation costs one group lookup. The cache is filled the first
 * time a communicator carries a send (a cold path that takes a mutex) and an entry is
 * forgotten when the application frees the communicator. Evaluating after the call means an
 * invalid argument has already been reported by MPI itself, as the application expects.
 */
#include "shim.h"

#include <pthread.h>

#define MW_COMMS 128

typedef struct {
    _Atomic int state; /* 0 free, 1 ready */
    MPI_Comm comm;
    MPI_Group group;
} comm_entry_t;

static comm_entry_t comms[MW_COMMS];
static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Group world_group = MPI_GROUP_NULL;

uint64_t mw__bytes(MPI_Aint count, MPI_Datatype type)
{
    int size = 0;
    /* A Fortran handle that names no datatype converts to a null pointer in Open MPI, and
     * MPI_Type_size would hand that to the fatal error handler. */
    if (count <= 0 || !type || type == MPI_DATATYPE_NULL ||
        PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

uint64_t mw__bytes_ip(const void *sendbuf, int scount, MPI_Datatype stype, int rcount,
                      MPI_Datatype rtype)
{
    if (sendbuf == MPI_IN_PLACE)
        return mw__bytes(rcount, rtype);
    return mw__bytes(scount, stype);
}

static int comm_size_of(MPI_Comm comm)
{
    int inter = 0, n = 0;
    if (comm == MPI_COMM_NULL)
        return 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        PMPI_Comm_remote_size(comm, &n);
    else
        PMPI_Comm_size(comm, &n);
    return n;
}

uint64_t mw__bytes_v(const int counts[], MPI_Datatype type, MPI_Comm comm)
{
    int n = comm_size_of(comm);
    uint64_t sum = 0;
    if (!counts)
        return 0;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0)
            sum += (uint64_t)counts[i];
    return mw__bytes((MPI_Aint)sum, type);
}

uint64_t mw__bytes_w(const int counts[], const MPI_Datatype types[], MPI_Comm comm)
{
    int n = comm_size_of(comm);
    uint64_t sum = 0;
    if (!counts || !types)
        return 0;
    for (int i = 0; i < n; i++)
        sum += mw__bytes(counts[i], types[i]);
    return sum;
}

uint64_t mw__bytes_n(int count, MPI_Datatype type, MPI_Comm comm)
{
    return mw__bytes(count, type) * (uint64_t)comm_size_of(comm);
}

/* The communicator of this thread's last send, so a loop of sends skips the scan. */
static __thread comm_entry_t *last_entry __attribute__((tls_model("initial-exec")));

static comm_entry_t *comm_lookup(MPI_Comm comm)
{
    comm_entry_t *e = last_entry;
    if (e && atomic_load_explicit(&e->state, memory_order_acquire) == 1 && e->comm == comm)
        return e;
    for (int i = 0; i < MW_COMMS; i++)
        if (atomic_load_explicit(&comms[i].state, memory_order_acquire) == 1 &&
            comms[i].comm == comm)
            return &comms[i];
    return NULL;
}

static comm_entry_t *comm_insert(MPI_Comm comm)
{
    comm_entry_t *e = NULL;
    pthread_mutex_lock(&comms_lock);
    e = comm_lookup(comm);
    if (!e) {
        for (int i = 0; i < MW_COMMS && !e; i++)
            if (atomic_load_explicit(&comms[i].state, memory_order_relaxed) == 0)
                e = &comms[i];
        if (e) {
            int inter = 0;
            PMPI_Comm_test_inter(comm, &inter);
            int rc =
                inter ? PMPI_Comm_remote_group(comm, &e->group) : PMPI_Comm_group(comm, &e->group);
            if (rc == MPI_SUCCESS) {
                e->comm = comm;
                atomic_store_explicit(&e->state, 1, memory_order_release);
            } else {
                e = NULL;
            }
        }
    }
    pthread_mutex_unlock(&comms_lock);
    return e;
}

int mw__peer(int rank, MPI_Comm comm)
{
    if (rank < 0 || comm == MPI_COMM_NULL)
        return -1; /* MPI_PROC_NULL, MPI_ANY_SOURCE, ... */
    if (comm == MPI_COMM_WORLD)
        return rank < mw__g.size ? rank : -1;
    comm_entry_t *e = comm_lookup(comm);
    if (!e)
        e = comm_insert(comm);
    if (!e)
        return -1;
    last_entry = e;
    if (world_group == MPI_GROUP_NULL) {
        pthread_mutex_lock(&comms_lock);
        if (world_group == MPI_GROUP_NULL)
            PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
        pthread_mutex_unlock(&comms_lock);
    }
    int out = MPI_UNDEFINED;
    if (PMPI_Group_translate_ranks(e->group, 1, &rank, world_group, &out) != MPI_SUCCESS ||
        out == MPI_UNDEFINED || out < 0)
        return -1;
    return out;
}

void mw__comm_forget(MPI_Comm comm)
{
    pthread_mutex_lock(&comms_lock);
    comm_entry_t *e = comm_lookup(comm);
    if (e) {
        atomic_store_explicit(&e->state, 0, memory_order_release);
        PMPI_Group_free(&e->group);
    }
    pthread_mutex_unlock(&comms_lock);
}

/* Open MPI's Fortran MPI_IN_PLACE is the address of this common block; with it the count and
 * type next to the buffer are ignored by MPI and may be anything. */
extern char mpi_fortran_in_place_ __attribute__((weak));
/* MPICH's (libmpichfort) is the address this pointer holds once MPI_Init ran (docs/mpich.md). */
extern void *MPIR_F_MPI_IN_PLACE __attribute__((weak));

uint64_t mw__fbytes(const void *buf, const MPI_Fint *count, const MPI_Fint *type)
{
    if (!count || !type || (&mpi_fortran_in_place_ && buf == &mpi_fortran_in_place_) ||
        (&MPIR_F_MPI_IN_PLACE && MPIR_F_MPI_IN_PLACE && buf == MPIR_F_MPI_IN_PLACE))
        return 0;
    return mw__bytes(*count, PMPI_Type_f2c(*type));
}

int mw__fpeer(const MPI_Fint *rank, const MPI_Fint *comm)
{
    if (!rank || !comm)
        return -1;
    return mw__peer(*rank, PMPI_Comm_f2c(*comm));
}
