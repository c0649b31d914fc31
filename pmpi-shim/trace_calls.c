/* trace_calls.c: the per-thread trace state of the wrappers (docs/trace.md "Records and
 * communicators").
 *
 * DESIGN: each recording thread owns, after its trace ring (trace.h), a block with its request
 * map and its status scratch, so that tracing a call allocates nothing and takes no lock.
 */
#include "shim.h"

size_t mw__tstate_bytes(void)
{
    return 0;
}
