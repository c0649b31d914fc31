/* bindgate.c: a test-only LD_PRELOAD library that holds a process right after it binds one
 * ZeroMQ endpoint, until the test lets it go.
 *
 * DESIGN: a subscriber cannot be sure to be connected before a PUB socket's first message
 * (ZeroMQ's "slow joiner"); replay_pace.sh needs exactly that certainty to check that a replay
 * publishes nothing before --from (the windows before it are applied within milliseconds).
 * With MW_GATE_ENDPOINT=EP and MW_GATE_FILE=PATH in the environment, zmq_bind(s, EP) binds and
 * then waits until PATH exists (at most MW_GATE_MAX_S seconds, then it goes on, so a test that
 * failed cannot leave a process hanging). libzmq's I/O threads keep running meanwhile, so the
 * subscriber connects and its subscription is queued; the test makes PATH once it sees the
 * connection. Every other call goes straight to libzmq.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#define MW_GATE_MAX_S 60

int zmq_bind(void *s, const char *ep)
{
    int (*real)(void *, const char *) = (int (*)(void *, const char *))dlsym(RTLD_NEXT, "zmq_bind");
    if (!real) {
        return -1;
    }
    int rc = real(s, ep);
    const char *want = getenv("MW_GATE_ENDPOINT"), *gate = getenv("MW_GATE_FILE");
    if (rc == 0 && want && gate && ep && strcmp(ep, want) == 0) {
        struct timespec step = {0, 10 * 1000 * 1000};
        for (int i = 0; i < MW_GATE_MAX_S * 100 && access(gate, F_OK) != 0; i++) {
            nanosleep(&step, NULL);
        }
    }
    return rc;
}
