/* registry.h: the per-user registry of running collectors (registry.c, docs/attach.md).
 *
 * Every collector that listens (not a replay) writes one small JSON file into the user's
 * registry directory, so that `mpiwatch ls|view|top|steer` find a running job from another
 * terminal or, with the directory on a shared home, from another host. The directory
 * functions are public: mpiwatch-jobs (tools/jobs.c) resolves and checks the same directory.
 */
#ifndef MW_COLLECTOR_REGISTRY_H
#define MW_COLLECTOR_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

/* Environment variable naming the registry directory (beats the defaults, not --registry). */
#define MW_ENV_REGISTRY "MPIWATCH_REGISTRY"
/* A collector rewrites its entry at least this often, so that a reader on another host can
 * tell a live entry from the one of a collector that died (docs/attach.md). */
#define MW_REGISTRY_REFRESH_S 10
/* An entry of another host not rewritten for this long is reported as stale. */
#define MW_REGISTRY_STALE_S 60
/* Entry files: NAME.json with NAME = HOST.PID; beside it NAME.pub holds the CURVE public key
 * of a collector with CURVE on, readable by every client as MPIWATCH_CURVE_SERVER. */
#define MW_REGISTRY_SUFFIX ".json"

/* The registry directory: `opt` when it is given (--registry; "off" disables the registry),
 * else $MPIWATCH_REGISTRY, else $HOME/.mpiwatch/jobs, else $XDG_RUNTIME_DIR/mpiwatch/jobs.
 * The home directory comes before $XDG_RUNTIME_DIR, which is local to each host: on a cluster
 * the home directory is shared, and a login node (which has a runtime directory) must look
 * where the batch job's collector (which often has none) wrote.
 * Returns 1 with the path in out, 0 when the registry is off, -1 with err. */
int mw_registry_dir(const char *opt, char *out, size_t outlen, char *err, size_t errlen);
/* Checks (with create: first creates, mode 0700, with the missing parents of a default path)
 * that `dir` is a directory, not a symbolic link, owned by this user and neither group- nor
 * world-writable. Returns 0, or -1 with the reason naming the directory in err. */
int mw_registry_check(const char *dir, int create, char *err, size_t errlen);
/* Whether process `pid` on this host is alive and a collector (its command name, where
 * /proc tells it). */
int mw_registry_pid_alive(long pid);

/* The collector's side. */
typedef struct mw_registry mw_registry_t;
struct mw_collector;

/* The endpoints a collector serves, as bound (ZMQ_LAST_ENDPOINT); NULL for those it does
 * not serve. */
typedef struct {
    const char *ingest, *publish, *history, *control, *steer;
    unsigned metrics_port; /* 0: none */
} mw_registry_endpoints_t;

/* Registers the collector: resolves and checks the directory (--registry), removes the
 * stale entries of this host, writes the entry. NULL when the registry is off or cannot be
 * used; the reason is logged (the collector runs on without it: attaching is an extra). */
mw_registry_t *mw__registry_open(struct mw_collector *c, const mw_registry_endpoints_t *ep);
/* Rewrites the entry when the job changed (at most once a second) or the refresh is due.
 * `now_ns` is monotonic time. */
void mw__registry_update(mw_registry_t *r, const struct mw_collector *c, uint64_t now_ns);
/* Milliseconds until mw__registry_update has something to do (-1: never). */
long mw__registry_timeout_ms(const mw_registry_t *r, uint64_t now_ns);
/* Removes the entry and frees. NULL is allowed. */
void mw__registry_close(mw_registry_t *r);

#endif
