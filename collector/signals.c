/* signals.c: SIGINT/SIGTERM (stop) and SIGHUP (reload the rules) as a byte in a self-pipe, for
 * the loops that wait in zmq_poll (server.c, replay.c).
 *
 * DESIGN: the handler only stores a flag and writes the signal number into a non-blocking
 * pipe (a full pipe already holds a wakeup), so it is async-signal-safe; the loop polls the
 * pipe's read end beside its sockets and calls mw__signals_read() when it is readable.
 * SIGPIPE is ignored: a vanished reader of a report pipe is not fatal.
 */
#define _GNU_SOURCE /* pipe2 */
#include "collector.h"
#include "signals.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static int sig_pipe[2] = {-1, -1};
static volatile sig_atomic_t sig_stop;
static volatile sig_atomic_t sig_reload;

static void signals_on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (sig == SIGHUP)
        sig_reload = 1;
    else
        sig_stop = 1;
    ssize_t n = write(sig_pipe[1], &b, 1);
    (void)n;
    errno = saved;
}

int mw__signals_open(void)
{
    sig_stop = 0;
    sig_reload = 0;
    if (pipe2(sig_pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
        MW_LOG(MW_LOG_ERROR, "pipe2: %s", strerror(errno));
        return -1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = signals_on_signal;
    if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0 ||
        sigaction(SIGHUP, &sa, NULL) < 0) {
        MW_LOG(MW_LOG_ERROR, "sigaction: %s", strerror(errno));
        mw__signals_close();
        return -1;
    }
    sa.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &sa, NULL) < 0) {
        MW_LOG(MW_LOG_ERROR, "sigaction: %s", strerror(errno));
        mw__signals_close();
        return -1;
    }
    return sig_pipe[0];
}

/* After mw__signals_close(): the collector is already stopping (its outputs are written or being
 * written), so a SIGINT/SIGTERM that arrives now only notes the request; with the default
 * action it would kill the process half way through its clean-up and turn a clean exit into
 * status 143. A handler, unlike SIG_IGN, is not inherited across exec. */
static void signals_on_late_signal(int sig)
{
    if (sig != SIGHUP)
        sig_stop = 1;
}

void mw__signals_close(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = signals_on_late_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    for (int i = 0; i < 2; i++) {
        if (sig_pipe[i] >= 0)
            close(sig_pipe[i]);
        sig_pipe[i] = -1;
    }
}

int mw__signals_read(void)
{
    unsigned char buf[64];
    while (read(sig_pipe[0], buf, sizeof buf) > 0)
        ;
    return sig_stop;
}

int mw__signals_reload(void)
{
    int r = sig_reload;
    sig_reload = 0;
    return r;
}

int mw__signals_stopped(void)
{
    return sig_stop;
}
