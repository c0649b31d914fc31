/* export_out.c: where mpiwatch-export writes (export_out.h). */
#include "export_out.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int mw__xout_open(mw__xout_t *o, const char *path)
{
    char err[512] = "";
    memset(o, 0, sizeof *o);
    o->path = path;
    o->f = stdout;
    o->to_stdout = strcmp(path, "-") == 0;
    if (o->to_stdout)
        return 0;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        o->f = fopen(path, "w"); /* a FIFO or a device: written in place */
        if (!o->f) {
            fprintf(stderr, "mpiwatch-export: cannot write %s: %s\n", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    o->af = mw_afile_open(path, err, sizeof err);
    if (!o->af) {
        fprintf(stderr, "mpiwatch-export: %s\n", err);
        o->f = NULL;
        return -1;
    }
    o->f = mw_afile_stream(o->af);
    return 0;
}

int mw__xout_open_reader(const char *input, mw_rec_reader_t **r, mw__xout_t *o, const char *path)
{
    char err[512] = "";
    *r = mw_rec_reader_open(input, err, sizeof err);
    if (!*r) {
        fprintf(stderr, "mpiwatch-export: %s\n", *err ? err : "cannot read the recording");
        return 2;
    }
    if (mw__xout_open(o, path) < 0) {
        mw_rec_reader_close(*r);
        *r = NULL;
        return 1;
    }
    return 0;
}

int mw__xout_close(mw__xout_t *o, int rc)
{
    char err[512] = "";
    if (o->af) {
        /* Commit or drop the temporary file: the target changes only on success. */
        if (rc != 0) {
            mw_afile_abort(o->af);
        } else if (mw_afile_commit(o->af, err, sizeof err) != 0) {
            fprintf(stderr, "mpiwatch-export: %s\n", err);
            rc = 1;
        }
        o->af = NULL;
        o->f = NULL;
        return rc;
    }
    if (!o->f)
        return rc;
    if (fflush(o->f) != 0 || ferror(o->f)) {
        fprintf(stderr, "mpiwatch-export: cannot write %s: %s\n", o->path, strerror(errno));
        rc = 1;
    }
    if (!o->to_stdout && fclose(o->f) != 0 && rc == 0) {
        fprintf(stderr, "mpiwatch-export: cannot write %s: %s\n", o->path, strerror(errno));
        rc = 1;
    }
    o->f = NULL;
    return rc;
}

void mw__xlean_note(mw__xlean_t *l, const mw_rec_reader_t *r, const Mpiwatch__Record *rec)
{
    if (rec->body_case != MPIWATCH__RECORD__BODY_WINDOW || !rec->window ||
        !mw_rec_reader_last_lean(r))
        return;
    if (l->n == 0 || rec->window->index < l->first)
        l->first = rec->window->index;
    if (l->n == 0 || rec->window->index > l->last)
        l->last = rec->window->index;
    l->n++;
}

void mw__xlean_report(const mw__xlean_t *l, const char *input)
{
    if (l->n)
        fprintf(stderr,
                "mpiwatch-export: %s: %llu windows (%llu..%llu) from the coarse tier: lean "
                "copies without per-rank arrays, pairs or traces (the recording keeps those "
                "summed over windows, docs/recording.md \"Tiers\")\n",
                input, (unsigned long long)l->n, (unsigned long long)l->first,
                (unsigned long long)l->last);
}
