/* registry.c: the per-user registry of running collectors (docs/attach.md).
 *
 * DESIGN: a directory of one JSON file per running collector, HOST.PID.json, which the
 * collector writes when its sockets are bound, rewrites when what it says changes (the job's
 * name, program or ranks: at most once a second) and at least every MW_REGISTRY_REFRESH_S
 * seconds (the heartbeat a reader on another host judges an entry by), and removes when it
 * exits (end of the job with --exit-after-job, SIGINT, SIGTERM). An entry holds what a client
 * needs to attach: the bound endpoints, made reachable (a wildcard address becomes the host
 * name), and, with CURVE, the collector's public key (never the secret one), also as
 * HOST.PID.pub beside it so that a client can point MPIWATCH_CURVE_SERVER at it. The name of a
 * file does not change when a new job starts on a long-running collector; the job is inside.
 * Every file is replaced whole (proto/mw_file: a reader never sees half an entry), without
 * fsync: an entry is worth nothing after a crash of its host, and a collector must not wait
 * for a shared file system in its loop. The directory is checked like a key directory
 * (proto/mw_keyfile): owned by this user, not writable by others, no symbolic link, so that
 * nobody else can plant an entry that sends a user's viewer or steering request elsewhere.
 * Nothing here stops the collector: a registry that cannot be used is logged and skipped.
 */
#include "registry.h"
#include "collector.h"
#include "mw_file.h"
#include "mw_keyfile.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define REGISTRY_MIN_GAP_NS 1000000000ull /* rewrites for a change: at most once a second */
#define REGISTRY_PATH 4096

struct mw_registry {
    char dir[REGISTRY_PATH];
    char json[REGISTRY_PATH]; /* the entry */
    char pub[REGISTRY_PATH];  /* its public key file, "" without CURVE */
    char host[256];
    char key_z85[MW_CURVE_Z85_CHARS + 1]; /* "" without CURVE */
    char *ep[5];                          /* ingest, publish, history, control, steer */
    char metrics[320];                    /* the Prometheus page's URL, "" without one */
    time_t started;                       /* wall clock: the collector registered */
    time_t job_started; /* wall clock: the current job's first hello (0: none yet) */
    uint64_t written_ns, changed_ns;
    /* What the entry said last, to see a change. */
    char job[MW_MAX_STRING + 1];
    uint32_t hellos, byes, size;
    int active, ended;
};

static const char *const registry_ep_names[5] = {"ingest", "publish", "history", "control",
                                                 "steer"};

int mw_registry_dir(const char *opt, char *out, size_t outlen, char *err, size_t errlen)
{
    const char *env = getenv(MW_ENV_REGISTRY), *xdg = getenv("XDG_RUNTIME_DIR");
    const char *home = getenv("HOME");
    int n;
    if (opt && *opt) {
        if (strcmp(opt, "off") == 0)
            return 0;
        n = snprintf(out, outlen, "%s", opt);
    } else if (env && *env) {
        if (strcmp(env, "off") == 0)
            return 0;
        n = snprintf(out, outlen, "%s", env);
    } else if (home && *home == '/') {
        n = snprintf(out, outlen, "%s/.mpiwatch/jobs", home);
    } else if (xdg && *xdg == '/') {
        n = snprintf(out, outlen, "%s/mpiwatch/jobs", xdg);
    } else {
        snprintf(err, errlen,
                 "no registry directory: neither $" MW_ENV_REGISTRY ", $XDG_RUNTIME_DIR nor $HOME "
                 "is set");
        return -1;
    }
    if (n < 0 || (size_t)n >= outlen) {
        snprintf(err, errlen, "registry directory path too long");
        return -1;
    }
    return 1;
}

/* The checks of one existing directory (lstat: a symbolic link is refused, not followed). */
static int registry_check_one(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(err, errlen, "registry %s: %s", dir, strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, errlen, "registry %s: a symbolic link (give the directory itself)", dir);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "registry %s: not a directory", dir);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen,
                 "registry %s: owned by uid %u, not by you (uid %u): refusing to use it, since "
                 "its owner could point your clients at any endpoint (docs/attach.md)",
                 dir, (unsigned)st.st_uid, (unsigned)geteuid());
        return -1;
    }
    if (st.st_mode & 022) {
        snprintf(err, errlen,
                 "registry %s: mode %04o lets group or others add entries: refusing to use it "
                 "(chmod 700 it; docs/attach.md)",
                 dir, (unsigned)(st.st_mode & 07777));
        return -1;
    }
    return 0;
}

int mw_registry_check(const char *dir, int create, char *err, size_t errlen)
{
    if (create) {
        /* Creates the missing components one by one (mode 0700), as mkdir -p would; the
         * existing ones are left as they are (only the last is checked below: a parent such
         * as $XDG_RUNTIME_DIR or the home directory belongs to the system's policy). */
        char path[REGISTRY_PATH];
        if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
            snprintf(err, errlen, "registry directory path too long");
            return -1;
        }
        for (char *p = path + 1;; p++) {
            if (*p != '/' && *p != '\0')
                continue;
            char saved = *p;
            *p = '\0';
            if (mkdir(path, 0700) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "registry %s: cannot create %s: %s", dir, path,
                         strerror(errno));
                return -1;
            }
            *p = saved;
            if (!saved)
                break;
        }
    }
    return registry_check_one(dir, err, errlen);
}

int mw_registry_pid_alive(long pid)
{
    if (pid <= 0 || (pid_t)pid != pid)
        return 0;
    if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
        return 0;
    /* A recycled pid: /proc names the process's command (15 characters at most). */
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1; /* no /proc: trust kill */
    int ok = fgets(comm, sizeof comm, f) != NULL;
    fclose(f);
    return !ok || strncmp(comm, "mpiwatch-collec", 15) == 0;
}

/* Replaces characters that are awkward in a file name. */
static void registry_safe(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '-' || *s == '_'))
            *s = '_';
}

/* An endpoint as a client elsewhere reaches it: a wildcard address becomes the host name. */
static char *registry_reachable(const char *ep, const char *host)
{
    static const char *const wild[] = {"tcp://0.0.0.0:", "tcp://*:", "tcp://[::]:"};
    for (size_t i = 0; i < sizeof wild / sizeof wild[0]; i++) {
        size_t n = strlen(wild[i]);
        if (strncmp(ep, wild[i], n) == 0) {
            size_t len = strlen("tcp://") + strlen(host) + 1 + strlen(ep + n) + 1;
            char *out = malloc(len);
            if (out)
                snprintf(out, len, "tcp://%s:%s", host, ep + n);
            return out;
        }
    }
    return strdup(ep);
}

/* Writes `text` to `path` atomically, mode 0600 (an entry tells where to connect: nobody
 * else's business). */
static int registry_write(const char *path, const char *text, char *err, size_t errlen)
{
    mw_afile_t *a = mw_afile_open(path, err, errlen);
    if (!a)
        return -1;
    FILE *f = mw_afile_stream(a);
    if (fchmod(fileno(f), 0600) != 0 || fputs(text, f) == EOF) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        mw_afile_abort(a);
        return -1;
    }
    return mw_afile_commit_nosync(a, err, errlen);
}

static cJSON *registry_json(const mw_registry_t *r, const mw_collector_t *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *eps = o ? cJSON_AddObjectToObject(o, "endpoints") : NULL;
    if (!eps) {
        cJSON_Delete(o);
        return NULL;
    }
    const mw_job_t *j = &c->job;
    cJSON_AddNumberToObject(o, "version", 1);
    cJSON_AddStringToObject(o, "job", j->active ? j->job : "");
    cJSON_AddStringToObject(o, "program", j->active ? j->program : "");
    cJSON_AddNumberToObject(o, "ranks", j->active ? j->size : 0);
    cJSON_AddNumberToObject(o, "ranks_connected", j->active ? j->hellos : 0);
    cJSON_AddNumberToObject(o, "ranks_finished", j->active ? j->byes : 0);
    cJSON_AddStringToObject(o, "state", !j->active ? "waiting" : j->ended ? "ended" : "running");
    cJSON_AddNumberToObject(o, "started", (double)r->started);
    cJSON_AddNumberToObject(o, "job_started", (double)r->job_started);
    cJSON_AddNumberToObject(o, "refreshed", (double)time(NULL));
    cJSON_AddStringToObject(o, "host", r->host);
    cJSON_AddNumberToObject(o, "pid", (double)getpid());
    cJSON_AddNumberToObject(o, "uid", (double)geteuid());
    for (int i = 0; i < 5; i++)
        if (r->ep[i])
            cJSON_AddStringToObject(eps, registry_ep_names[i], r->ep[i]);
    if (r->metrics[0])
        cJSON_AddStringToObject(eps, "metrics", r->metrics);
    cJSON_AddBoolToObject(o, "curve", r->key_z85[0] != '\0');
    if (r->key_z85[0]) {
        cJSON_AddStringToObject(o, "server_key", r->key_z85);
        cJSON_AddStringToObject(o, "server_pub", r->pub);
    }
    return o;
}

static void registry_write_entry(mw_registry_t *r, const mw_collector_t *c, uint64_t now_ns)
{
    const mw_job_t *j = &c->job;
    if (j->active && (!r->active || strcmp(r->job, j->job) != 0))
        r->job_started = time(NULL);
    snprintf(r->job, sizeof r->job, "%s", j->active ? j->job : "");
    r->active = j->active;
    r->ended = j->active && j->ended;
    r->hellos = j->active ? j->hellos : 0;
    r->byes = j->active ? j->byes : 0;
    r->size = j->active ? j->size : 0;
    r->written_ns = now_ns;
    cJSON *o = registry_json(r, c);
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    char err[512];
    if (!text)
        MW_LOG(MW_LOG_WARN, "registry: out of memory");
    else if (registry_write(r->json, text, err, sizeof err) != 0)
        MW_LOG(MW_LOG_WARN, "registry: %s", err);
    free(text);
}

/* Removes the entries of collectors of this host that are gone (killed without a chance to
 * clean up): `mpiwatch ls --prune` does the same for every host. */
static void registry_prune_local(const mw_registry_t *r)
{
    char pattern[300];
    snprintf(pattern, sizeof pattern, "%s.", r->host);
    size_t plen = strlen(pattern);
    char err[512];
    int dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    /* fdopendir would own dfd; a second descriptor keeps unlinkat simple. */
    int lfd = dup(dfd);
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (!d) {
        if (lfd >= 0)
            close(lfd);
        close(dfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *name = e->d_name;
        if (strncmp(name, pattern, plen) != 0)
            continue;
        char *end = NULL;
        long pid = strtol(name + plen, &end, 10);
        if (end == name + plen || (strcmp(end, ".json") != 0 && strcmp(end, ".pub") != 0))
            continue;
        if (pid == (long)getpid() || mw_registry_pid_alive(pid))
            continue;
        if (unlinkat(dfd, name, 0) == 0)
            MW_LOG(MW_LOG_INFO, "registry: removed %s (its collector, pid %ld, is gone)", name,
                   pid);
        else {
            snprintf(err, sizeof err, "%s", strerror(errno));
            MW_LOG(MW_LOG_WARN, "registry: cannot remove %s: %s", name, err);
        }
    }
    closedir(d);
    close(dfd);
}

mw_registry_t *mw__registry_open(mw_collector_t *c, const mw_registry_endpoints_t *ep)
{
    char err[512];
    mw_registry_t *r = calloc(1, sizeof *r);
    if (!r) {
        MW_LOG(MW_LOG_WARN, "registry: out of memory");
        return NULL;
    }
    int on = mw_registry_dir(c->opt->registry, r->dir, sizeof r->dir, err, sizeof err);
    if (on <= 0) {
        if (on < 0)
            MW_LOG(MW_LOG_WARN,
                   "%s; not registering this collector (mpiwatch ls will not "
                   "list it)",
                   err);
        free(r);
        return NULL;
    }
    if (mw_registry_check(r->dir, 1, err, sizeof err) != 0) {
        MW_LOG(MW_LOG_ERROR, "%s; not registering this collector (mpiwatch ls will not list it)",
               err);
        free(r);
        return NULL;
    }
    if (gethostname(r->host, sizeof r->host) != 0 || !r->host[0])
        snprintf(r->host, sizeof r->host, "localhost");
    r->host[sizeof r->host - 1] = '\0';
    char safe[sizeof r->host];
    snprintf(safe, sizeof safe, "%s", r->host);
    registry_safe(safe);
    snprintf(r->host, sizeof r->host, "%s", safe);
    int n = snprintf(r->json, sizeof r->json, "%s/%s.%ld.json", r->dir, safe, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof r->json) {
        MW_LOG(MW_LOG_WARN, "registry: path too long; not registering");
        free(r);
        return NULL;
    }
    const char *eps[5] = {ep->ingest, ep->publish, ep->history, ep->control, ep->steer};
    for (int i = 0; i < 5; i++)
        if (eps[i] && !(r->ep[i] = registry_reachable(eps[i], r->host)))
            goto fail;
    if (ep->metrics_port) {
        /* --metrics-bind: loopback by default; a wildcard address is reached by host name. */
        const char *b =
            c->opt->metrics_bind && *c->opt->metrics_bind ? c->opt->metrics_bind : "127.0.0.1";
        if (strcmp(b, "0.0.0.0") == 0 || strcmp(b, "::") == 0 || strcmp(b, "[::]") == 0)
            b = r->host;
        int v6 = strchr(b, ':') && b[0] != '[';
        snprintf(r->metrics, sizeof r->metrics, "http://%s%s%s:%u/metrics", v6 ? "[" : "", b,
                 v6 ? "]" : "", ep->metrics_port);
    }
    if (c->opt->curve_secret) {
        mw_keypair_t pair;
        if (mw_keyfile_read_pair(c->opt->curve_secret, &pair, err, sizeof err) != 0 ||
            !zmq_z85_encode(r->key_z85, pair.public_key, MW_CURVE_KEY_BYTES)) {
            MW_LOG(MW_LOG_WARN, "registry: the public key: %s", err);
            r->key_z85[0] = '\0';
        }
        mw_keyfile_wipe(&pair, sizeof pair);
        int len = snprintf(r->pub, sizeof r->pub, "%s/%s.%ld.pub", r->dir, safe, (long)getpid());
        if (r->key_z85[0] && len > 0 && (size_t)len < sizeof r->pub) {
            char text[256];
            snprintf(text, sizeof text,
                     "# the public key of mpiwatch-collector pid %ld (registry entry)\n"
                     "[curve]\npublic-key = %s\n",
                     (long)getpid(), r->key_z85);
            if (registry_write(r->pub, text, err, sizeof err) != 0) {
                MW_LOG(MW_LOG_WARN, "registry: %s", err);
                r->pub[0] = '\0';
            }
        }
    }
    registry_prune_local(r);
    r->started = time(NULL);
    mw_clock_t now;
    mw__clock_now(&now);
    registry_write_entry(r, c, now.mono_ns);
    MW_LOG(MW_LOG_INFO, "registered in %s (mpiwatch ls)", r->json);
    return r;
fail:
    MW_LOG(MW_LOG_WARN, "registry: out of memory");
    mw__registry_close(r);
    return NULL;
}

static int registry_changed(const mw_registry_t *r, const mw_collector_t *c)
{
    const mw_job_t *j = &c->job;
    if (!j->active)
        return r->active;
    return !r->active || (j->ended != 0) != r->ended || j->hellos != r->hellos ||
           j->byes != r->byes || j->size != r->size || strcmp(j->job, r->job) != 0;
}

void mw__registry_update(mw_registry_t *r, const mw_collector_t *c, uint64_t now_ns)
{
    if (!r)
        return;
    uint64_t since = now_ns - r->written_ns;
    if (since >= (uint64_t)MW_REGISTRY_REFRESH_S * 1000000000ull ||
        (since >= REGISTRY_MIN_GAP_NS && registry_changed(r, c))) {
        registry_write_entry(r, c, now_ns);
        r->changed_ns = 0;
    } else if (!r->changed_ns && registry_changed(r, c)) {
        r->changed_ns = now_ns; /* written when the gap has passed: the timeout asks for it */
    }
}

long mw__registry_timeout_ms(const mw_registry_t *r, uint64_t now_ns)
{
    if (!r)
        return -1;
    uint64_t due =
        r->written_ns +
        (r->changed_ns ? REGISTRY_MIN_GAP_NS : (uint64_t)MW_REGISTRY_REFRESH_S * 1000000000ull);
    return now_ns >= due ? 0 : (long)((due - now_ns + 999999) / 1000000);
}

void mw__registry_close(mw_registry_t *r)
{
    if (!r)
        return;
    if (r->json[0] && unlink(r->json) != 0 && errno != ENOENT)
        MW_LOG(MW_LOG_WARN, "registry: cannot remove %s: %s", r->json, strerror(errno));
    if (r->pub[0] && unlink(r->pub) != 0 && errno != ENOENT)
        MW_LOG(MW_LOG_WARN, "registry: cannot remove %s: %s", r->pub, strerror(errno));
    for (int i = 0; i < 5; i++)
        free(r->ep[i]);
    free(r);
}
