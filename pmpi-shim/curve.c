/* curve.c: the rank's sockets as CURVE clients (MPIWATCH_CURVE_SERVER, MPIWATCH_CURVE_KEY;
 * docs/security.md).
 *
 * DESIGN: the keys are read once, when the sender starts at the end of MPI_Init, on the
 * application's thread (mw__curve_load, through the key-file module every component shares,
 * proto/mw_keyfile.c): the collector's public key from the .pub file and the rank's key pair from
 * its .key file, which must not be readable by group or others. Neither variable set: CURVE is
 * off and nothing changes. A missing, malformed or too open file, or only one of the two
 * variables: one log line (MPIWATCH_VERBOSE) and the sender does not start, so the rank stays
 * inert and the application runs exactly as without the library. The sender thread then makes
 * each of its sockets (the PUSH to the collector, the steering SUB) a CURVE client just before
 * it connects (mw__curve_client). The secret key stays in this process's memory for the run:
 * libzmq keeps its own copy in the socket options anyway.
 *
 * The fallback collector (MPIWATCH_COLLECTOR_FALLBACK, sender.c) is reached with the same keys,
 * or with the server key of MPIWATCH_CURVE_SERVER_FALLBACK when it is set: that file goes
 * through the same checks as the primary's, with the rank's own MPIWATCH_CURVE_KEY, and a
 * refused file only takes the fallback away (the primary keeps working).
 */
#include "shim.h"

#include <stdlib.h>
#include <string.h>

#include "mw_keyfile.h"

#define MW_ENV_CURVE_SERVER_FALLBACK "MPIWATCH_CURVE_SERVER_FALLBACK"

typedef struct {
    int state; /* 0 not loaded, 1 keys loaded (CURVE on), 2 CURVE off, -1 refused */
    mw_curve_client_t keys;
} curve_t;

/* C: the primary's keys, F: the fallback's; A: the ones mw__curve_client applies. */
static curve_t C, F, *A = &C;

int mw__curve_load(void)
{
    if (C.state)
        return C.state < 0 ? -1 : 0;
    char err[512];
    int rc = mw_curve_client_load(NULL, NULL, &C.keys, err, sizeof err);
    if (rc < 0) {
        mw__log("CURVE: %s; monitoring stays off", err);
        C.state = -1;
        return -1;
    }
    C.state = rc > 0 ? 1 : 2;
    F = C;
    const char *fb = getenv(MW_ENV_CURVE_SERVER_FALLBACK);
    if (fb && *fb) {
        rc = mw_curve_client_load(fb, NULL, &F.keys, err, sizeof err);
        F.state = rc > 0 ? 1 : -1;
        if (rc <= 0)
            mw__log("CURVE (fallback): %s; no fallback", rc < 0 ? err : "no key pair");
    }
    return 0;
}

int mw__curve_use_fallback(void)
{
    if (F.state < 0)
        return -1;
    A = &F;
    return 0;
}

int mw__curve_client(void *sock)
{
    if (A->state == 2)
        return 0;
    if (A->state != 1)
        return -1; /* refused (logged once by mw__curve_load), or never loaded */
    char err[256];
    if (mw_curve_client_apply(sock, &A->keys, err, sizeof err) != 0) {
        mw__log("CURVE: %s", err);
        return -1;
    }
    return 0;
}
