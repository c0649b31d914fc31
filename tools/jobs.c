/* jobs.c: mpiwatch-jobs, reads the registry of running collectors (docs/attach.md).
 *
 *   mpiwatch-jobs [--registry DIR] ls [--json] [--prune]
 *   mpiwatch-jobs [--registry DIR] find [JOB]
 *   mpiwatch-jobs client-key
 *
 * `ls` lists every entry (stale ones marked), `find` picks one running job and prints what a
 * client needs as KEY=VALUE lines for the launcher (tools/mpiwatch.in: ls, view, top, steer),
 * `client-key` prints this user's CURVE client key file, generating it on first use.
 *
 * DESIGN: the registry directory is resolved and checked by the collector's own functions
 * (collector/registry.h), so a directory someone else could write is refused here exactly as
 * the collector refuses to register in it. Entries are files written by this user's
 * collectors, but they are still read as untrusted input: a regular file owned by this user,
 * at most REGISTRY_MAX_ENTRY bytes, parsed with cJSON, every field type-checked and length
 * capped; anything else is listed as unreadable, never used. An entry is stale when its
 * collector is gone: on this host its pid is not a running collector; on another host it has
 * not been rewritten for MW_REGISTRY_STALE_S seconds (collectors rewrite theirs every
 * MW_REGISTRY_REFRESH_S). A job is named by its name, or a unique prefix of it, or the entry's
 * id (HOST.PID). Exit status: 0; 1 when no job matches or the registry cannot be read; 2 for a
 * usage error or an ambiguous name (the candidates listed on stderr).
 */
#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "mw_file.h"
#include "mw_keyfile.h"
#include "registry.h"
#include "mw_version.h"

#define REGISTRY_MAX_ENTRY (64 << 10)
#define REGISTRY_MAX_ENTRIES 4096
#define FIELD_MAX 1024 /* longest string field kept (endpoints, names) */

typedef struct {
    char id[256]; /* the file name without .json: HOST.PID */
    char *job, *program, *host, *state, *server_key;
    char *ep[6]; /* ingest, publish, history, control, steer, metrics */
    double ranks, connected, finished, started, job_started, pid;
    int curve;
    int readable;
    const char *stale; /* NULL: live; else why not */
    time_t mtime;
    cJSON *raw;
} entry_t;

static const char *const ep_names[6] = {"ingest",  "publish", "history",
                                        "control", "steer",   "metrics"};

static const char *prog = "mpiwatch-jobs";

static char *field_str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsString(v) || !v->valuestring || strlen(v->valuestring) > FIELD_MAX)
        return strdup("");
    return strdup(v->valuestring);
}

static double field_num(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 ? v->valuedouble : 0;
}

/* Reads `name` in the directory `dfd`: owned by this user, regular, small. NULL with a reason
 * in why. */
static char *read_entry(int dfd, const char *name, time_t *mtime, const char **why)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    char *buf = NULL;
    *why = "cannot open";
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = "not a regular file";
    } else if (st.st_uid != geteuid()) {
        *why = "owned by another user";
    } else if (st.st_size > REGISTRY_MAX_ENTRY) {
        *why = "too large";
    } else if ((buf = malloc((size_t)st.st_size + 1))) {
        ssize_t n = read(fd, buf, (size_t)st.st_size);
        if (n < 0) {
            free(buf);
            buf = NULL;
            *why = "unreadable";
        } else {
            buf[n] = '\0';
            *mtime = st.st_mtime;
        }
    }
    close(fd);
    return buf;
}

static void safe_host(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '-' || *s == '_'))
            *s = '_';
}

static void entry_parse(entry_t *e, const char *text, const char *my_host, time_t now)
{
    cJSON *o = cJSON_Parse(text);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        e->stale = "unreadable (not a JSON object)";
        return;
    }
    e->raw = o;
    e->readable = 1;
    e->job = field_str(o, "job");
    e->program = field_str(o, "program");
    e->host = field_str(o, "host");
    e->state = field_str(o, "state");
    e->server_key = field_str(o, "server_key");
    e->ranks = field_num(o, "ranks");
    e->connected = field_num(o, "ranks_connected");
    e->finished = field_num(o, "ranks_finished");
    e->started = field_num(o, "started");
    e->job_started = field_num(o, "job_started");
    e->pid = field_num(o, "pid");
    e->curve = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "curve"));
    const cJSON *eps = cJSON_GetObjectItemCaseSensitive(o, "endpoints");
    for (int i = 0; i < 6; i++)
        e->ep[i] = field_str(eps, ep_names[i]);
    if (!e->job || !e->program || !e->host || !e->state || !e->server_key) {
        e->stale = "unreadable (out of memory)";
        return;
    }
    if (strcmp(e->host, my_host) == 0) {
        if (!mw_registry_pid_alive((long)e->pid))
            e->stale = "stale: its collector is gone";
    } else if (now - e->mtime > MW_REGISTRY_STALE_S) {
        e->stale = "stale: not refreshed for over a minute";
    }
}

static void entry_free(entry_t *e)
{
    free(e->job);
    free(e->program);
    free(e->host);
    free(e->state);
    free(e->server_key);
    for (int i = 0; i < 6; i++)
        free(e->ep[i]);
    cJSON_Delete(e->raw);
}

static int entry_order(const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    if (x->started != y->started)
        return x->started < y->started ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* This host's name as the collector writes it into an entry. */
static void my_host(char *host, size_t len)
{
    if (gethostname(host, len) != 0 || !host[0])
        snprintf(host, len, "localhost");
    host[len - 1] = '\0';
    safe_host(host);
}

/* Reads every entry of `dir` into *out (sorted by start). Returns the count, or -1. */
static int registry_read(const char *dir, entry_t **out)
{
    char host[256] = "";
    my_host(host, sizeof host);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        fprintf(stderr, "%s: registry %s: %s\n", prog, dir, strerror(errno));
        return -1;
    }
    int lfd = dup(dfd);
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (!d) {
        fprintf(stderr, "%s: registry %s: %s\n", prog, dir, strerror(errno));
        if (lfd >= 0)
            close(lfd);
        close(dfd);
        return -1;
    }
    entry_t *v = NULL;
    int n = 0;
    time_t now = time(NULL);
    struct dirent *de;
    while ((de = readdir(d)) && n < REGISTRY_MAX_ENTRIES) {
        size_t len = strlen(de->d_name), sl = strlen(MW_REGISTRY_SUFFIX);
        if (de->d_name[0] == '.' || len <= sl || len - sl >= sizeof v->id ||
            strcmp(de->d_name + len - sl, MW_REGISTRY_SUFFIX) != 0)
            continue;
        entry_t *nv = realloc(v, (size_t)(n + 1) * sizeof *v);
        if (!nv)
            break;
        v = nv;
        entry_t *e = &v[n++];
        memset(e, 0, sizeof *e);
        memcpy(e->id, de->d_name, len - sl);
        e->id[len - sl] = '\0';
        const char *why = NULL;
        char *text = read_entry(dfd, de->d_name, &e->mtime, &why);
        if (!text)
            e->stale = why;
        else
            entry_parse(e, text, host, now);
        free(text);
    }
    closedir(d);
    close(dfd);
    if (n > 1)
        qsort(v, (size_t)n, sizeof *v, entry_order);
    *out = v;
    return n;
}

static void print_time(FILE *f, double t)
{
    char buf[32] = "-";
    time_t tt = (time_t)t;
    struct tm tm;
    if (t > 0 && localtime_r(&tt, &tm))
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    fputs(buf, f);
}

/* Text from an entry, without control characters (a job name comes from a rank). */
static void print_clean(FILE *f, const char *s, int width)
{
    int n = 0;
    for (; s && *s; s++, n++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
    for (; n < width; n++)
        fputc(' ', f);
}

static void print_table(FILE *f, const entry_t *v, int n)
{
    fprintf(f, "%-28s %-16s %-7s %-19s %-16s %s\n", "JOB", "PROGRAM", "RANKS", "STARTED", "HOST",
            "STATE");
    for (int i = 0; i < n; i++) {
        const entry_t *e = &v[i];
        if (!e->readable) {
            fprintf(f, "%-28s (%s)\n", e->id, e->stale);
            continue;
        }
        print_clean(f, e->job[0] ? e->job : "(no job yet)", 28);
        fputc(' ', f);
        print_clean(f, e->program[0] ? e->program : "-", 16);
        char ranks[32];
        snprintf(ranks, sizeof ranks, "%.0f/%.0f", e->connected, e->ranks);
        fprintf(f, " %-7s ", ranks);
        print_time(f, e->job_started > 0 ? e->job_started : e->started);
        fputc(' ', f);
        print_clean(f, e->host, 16);
        fprintf(f, " %s%s\n", e->stale ? e->stale : e->state, e->curve ? ", curve" : "");
        fprintf(f, "    id %s, pid %.0f", e->id, e->pid);
        for (int k = 0; k < 6; k++)
            if (e->ep[k][0])
                fprintf(f, ", %s %s", ep_names[k], e->ep[k]);
        fputc('\n', f);
    }
}

static int cmd_ls(const char *dir, int json, int prune)
{
    entry_t *v = NULL;
    int n = registry_read(dir, &v);
    if (n < 0)
        return 1;
    int rc = 0;
    if (prune) {
        for (int i = 0; i < n; i++) {
            if (!v[i].stale)
                continue;
            char path[4400];
            const char *ext[2] = {MW_REGISTRY_SUFFIX, ".pub"};
            for (int k = 0; k < 2; k++) {
                snprintf(path, sizeof path, "%s/%s%s", dir, v[i].id, ext[k]);
                if (unlink(path) != 0 && errno != ENOENT) {
                    fprintf(stderr, "%s: cannot remove %s: %s\n", prog, path, strerror(errno));
                    rc = 1;
                } else if (k == 0) {
                    fprintf(stderr, "%s: removed %s (%s)\n", prog, v[i].id, v[i].stale);
                }
            }
        }
    }
    if (json) {
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; arr && i < n; i++) {
            if (prune && v[i].stale)
                continue;
            cJSON *o = v[i].raw ? cJSON_Duplicate(v[i].raw, 1) : cJSON_CreateObject();
            if (!o)
                continue;
            cJSON_AddStringToObject(o, "id", v[i].id);
            cJSON_AddBoolToObject(o, "stale", v[i].stale != NULL);
            if (v[i].stale)
                cJSON_AddStringToObject(o, "stale_reason", v[i].stale);
            cJSON_AddItemToArray(arr, o);
        }
        char *text = arr ? cJSON_Print(arr) : NULL;
        if (text)
            printf("%s\n", text);
        else
            rc = 1;
        free(text);
        cJSON_Delete(arr);
    } else {
        int shown = 0;
        entry_t *keep = v;
        if (prune) {
            keep = malloc((size_t)(n ? n : 1) * sizeof *v);
            for (int i = 0; keep && i < n; i++)
                if (!v[i].stale)
                    keep[shown++] = v[i];
        } else {
            shown = n;
        }
        if (!keep)
            rc = 1;
        else if (shown == 0)
            fprintf(stderr, "%s: no running job in %s\n", prog, dir);
        else
            print_table(stdout, keep, shown);
        if (keep != v)
            free(keep);
    }
    for (int i = 0; i < n; i++)
        entry_free(&v[i]);
    free(v);
    return rc;
}

/* Prints one KEY=VALUE line; a value with a line break is left out (never happens for a
 * collector's own entry, but the file is read as untrusted). */
static void kv(const char *key, const char *value)
{
    if (value && !strpbrk(value, "\n\r"))
        printf("%s=%s\n", key, value);
}

static int cmd_find(const char *dir, const char *name)
{
    entry_t *v = NULL;
    int n = registry_read(dir, &v);
    if (n < 0)
        return 1;
    int *hit = calloc((size_t)(n ? n : 1), sizeof *hit), nhit = 0;
    if (!hit) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 1;
    }
    /* Exact names and ids first, then unique prefixes of a name. */
    for (int pass = 0; pass < 2 && nhit == 0; pass++)
        for (int i = 0; i < n; i++) {
            const entry_t *e = &v[i];
            if (!e->readable || e->stale)
                continue;
            int ok = !name || (pass == 0 ? strcmp(e->job, name) == 0 || strcmp(e->id, name) == 0
                                         : strncmp(e->job, name, strlen(name)) == 0);
            if (ok)
                hit[nhit++] = i;
        }
    int rc = 0;
    if (nhit == 1) {
        const entry_t *e = &v[hit[0]];
        char pid[32], pub[4400];
        snprintf(pid, sizeof pid, "%.0f", e->pid);
        kv("id", e->id);
        kv("job", e->job);
        kv("program", e->program);
        kv("host", e->host);
        kv("pid", pid);
        /* An ipc:// socket of another host is a path that means nothing here. */
        char host[256] = "";
        my_host(host, sizeof host);
        int remote = strcmp(host, e->host) != 0, dropped = 0;
        for (int k = 0; k < 6; k++) {
            if (remote && strncmp(e->ep[k], "ipc://", 6) == 0)
                dropped++;
            else if (e->ep[k][0])
                kv(ep_names[k], e->ep[k]);
        }
        if (dropped)
            fprintf(stderr,
                    "%s: job %s runs on %s, whose local (ipc://) endpoints cannot be reached "
                    "from here: its collector needs tcp:// ones (docs/attach.md)\n",
                    prog, e->job, e->host);
        kv("curve", e->curve ? "1" : "0");
        if (e->curve) {
            /* The key file beside the entry, as this host sees the directory. */
            snprintf(pub, sizeof pub, "%s/%s.pub", dir, e->id);
            uint8_t key[MW_CURVE_KEY_BYTES], want[MW_CURVE_KEY_BYTES];
            char err[512];
            if (mw_keyfile_read_public(pub, key, err, sizeof err) != 0) {
                fprintf(stderr, "%s: %s\n", prog, err);
                rc = 1;
            } else if (strlen(e->server_key) != MW_CURVE_Z85_CHARS ||
                       !zmq_z85_decode(want, e->server_key) || memcmp(key, want, sizeof key)) {
                fprintf(stderr, "%s: %s does not hold the key of the entry %s\n", prog, pub, e->id);
                rc = 1;
            } else {
                kv("server_pub", pub);
            }
        }
    } else {
        if (nhit == 0 && name)
            fprintf(stderr, "%s: no running job named '%s' in %s\n", prog, name, dir);
        else if (nhit == 0)
            fprintf(stderr, "%s: no running job in %s\n", prog, dir);
        else
            fprintf(stderr, "%s: %d running jobs%s%s%s: name one (a unique prefix will do)\n", prog,
                    nhit, name ? " match '" : "", name ? name : "", name ? "'" : "");
        int shown = 0;
        for (int i = 0; i < n; i++) {
            int in = 0;
            for (int k = 0; k < nhit; k++)
                in |= hit[k] == i;
            if (nhit == 0 ? (v[i].readable && !v[i].stale) : in)
                v[shown++] = v[i]; /* a shallow move: the moved ones are freed below */
            else
                entry_free(&v[i]);
        }
        if (shown)
            print_table(stderr, v, shown);
        n = shown;
        rc = nhit > 1 ? 2 : 1;
    }
    free(hit);
    for (int i = 0; i < n; i++)
        entry_free(&v[i]);
    free(v);
    return rc;
}

/* a + b into out; -1 when it does not fit. */
static int join(char *out, size_t len, const char *a, const char *b)
{
    int n = snprintf(out, len, "%s%s", a, b);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* This user's CURVE client key: $MPIWATCH_CLIENT_KEY, else ~/.mpiwatch/client.key, generated on
 * first use; its public key is also put into ~/.mpiwatch/clients/, the directory a collector
 * started by mpiwatch (or with --curve-clients ~/.mpiwatch/clients) trusts (docs/security.md). */
static int cmd_client_key(void)
{
    const char *env = getenv("MPIWATCH_CLIENT_KEY"), *home = getenv("HOME");
    char key[4096], base[4096], clients[4096], pub[4200], err[512];
    if (env && *env) {
        snprintf(key, sizeof key, "%s", env);
        printf("%s\n", key);
        return 0;
    }
    if (!home || *home != '/') {
        fprintf(stderr, "%s: $HOME is not set: set MPIWATCH_CLIENT_KEY\n", prog);
        return 1;
    }
    if (join(base, sizeof base, home, "/.mpiwatch")) {
        fprintf(stderr, "%s: $HOME is too long\n", prog);
        return 1;
    }
    if (mw_registry_check(base, 1, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 1;
    }
    if (join(key, sizeof key, base, "/client.key") ||
        join(clients, sizeof clients, base, "/clients") ||
        join(pub, sizeof pub, clients, "/client.pub") ||
        join(base, sizeof base, home, "/.mpiwatch/client")) {
        fprintf(stderr, "%s: $HOME is too long\n", prog);
        return 1;
    }
    if (access(key, F_OK) != 0) {
        if (mw_keyfile_generate(base, 0, NULL, err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s\n", prog, err);
            return 1;
        }
        fprintf(stderr, "%s: generated your client key %s\n", prog, key);
    }
    mw_keypair_t pair;
    if (mw_keyfile_read_pair(key, &pair, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 1;
    }
    char z85[MW_CURVE_Z85_CHARS + 1];
    zmq_z85_encode(z85, pair.public_key, MW_CURVE_KEY_BYTES);
    mw_keyfile_wipe(&pair, sizeof pair);
    uint8_t have[MW_CURVE_KEY_BYTES];
    if (mw_registry_check(clients, 1, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 1;
    }
    if (mw_keyfile_read_public(pub, have, err, sizeof err) != 0) {
        char text[4200];
        if (snprintf(text, sizeof text, "# the public key of %s\n[curve]\npublic-key = %s\n", key,
                     z85) >= (int)sizeof text)
            text[0] = '\0';
        if (mw_file_write_atomic(pub, text, strlen(text), err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s\n", prog, err);
            return 1;
        }
    }
    printf("%s\n", key);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s [--registry DIR] ls [--json] [--prune]\n"
            "       %s [--registry DIR] find [JOB]\n"
            "       %s client-key\n"
            "The running mpiwatch collectors of this user (docs/attach.md).\n"
            "  ls          list them (stale entries marked); --prune removes the stale ones\n"
            "  find JOB    print the endpoints of one running job as KEY=VALUE lines; JOB is\n"
            "              its name, a unique prefix of it, or HOST.PID; without JOB the only\n"
            "              running one (exit status 2 when several match, 1 when none)\n"
            "  client-key  print this user's CURVE client key file, generated on first use\n"
            "  --registry  the registry directory (default $MPIWATCH_REGISTRY, else\n"
            "              ~/.mpiwatch/jobs, else $XDG_RUNTIME_DIR/mpiwatch/jobs)\n",
            prog, prog, prog);
    fputs("\n  -h, --help         print this help and exit\n"
          "      --version      print the version and exit\n",
          f);
}

int main(int argc, char **argv)
{
    const char *reg_opt = NULL, *cmd = NULL, *name = NULL;
    int json = 0, prune = 0, i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--registry") == 0 && i + 1 < argc)
            reg_opt = argv[++i];
        else if (strncmp(argv[i], "--registry=", 11) == 0)
            reg_opt = argv[i] + 11;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("mpiwatch-jobs %s\n", MW_VERSION_FULL);
            return 0;
        } else if (!cmd && argv[i][0] != '-')
            cmd = argv[i];
        else if (cmd && strcmp(argv[i], "--json") == 0 && strcmp(cmd, "ls") == 0)
            json = 1;
        else if (cmd && strcmp(argv[i], "--prune") == 0 && strcmp(cmd, "ls") == 0)
            prune = 1;
        else if (cmd && strcmp(cmd, "find") == 0 && !name && argv[i][0] != '-')
            name = argv[i];
        else {
            fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!cmd || (strcmp(cmd, "ls") && strcmp(cmd, "find") && strcmp(cmd, "client-key"))) {
        usage(stderr);
        return 2;
    }
    if (strcmp(cmd, "client-key") == 0)
        return cmd_client_key();
    char dir[4096], err[512];
    int on = mw_registry_dir(reg_opt, dir, sizeof dir, err, sizeof err);
    if (on == 0) {
        fprintf(stderr, "%s: the registry is off\n", prog);
        return 1;
    }
    struct stat st;
    if (on > 0 && lstat(dir, &st) != 0 && errno == ENOENT) {
        /* No collector registered yet: an empty list (ls), nothing to find (find). */
        fprintf(stderr, "%s: no running job (%s does not exist yet)\n", prog, dir);
        if (strcmp(cmd, "ls") == 0 && json)
            printf("[]\n");
        return strcmp(cmd, "ls") == 0 ? 0 : 1;
    }
    if (on < 0 || mw_registry_check(dir, 0, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 1;
    }
    return strcmp(cmd, "ls") == 0 ? cmd_ls(dir, json, prune) : cmd_find(dir, name);
}
