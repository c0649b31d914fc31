/* signals.h: SIGINT/SIGTERM/SIGHUP for the zmq_poll loops (signals.c). */
#ifndef MW_COLLECTOR_SIGNALS_H
#define MW_COLLECTOR_SIGNALS_H

/* Installs the handlers; returns the pipe's read end to poll, or -1 logged. */
int mw__signals_open(void);
/* Restores the default handlers and closes the pipe. */
void mw__signals_close(void);
/* Empties the pipe; returns 1 once SIGINT or SIGTERM has arrived. */
int mw__signals_read(void);
/* 1 once SIGINT or SIGTERM has arrived (without touching the pipe). */
int mw__signals_stopped(void);
/* 1 when SIGHUP (reload the rules) arrived since the last call; clears it. */
int mw__signals_reload(void);

#endif
