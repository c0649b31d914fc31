/* mw-layout-dump.c: the viewer's topology layout of a recording, as JSON, for layout_same.sh.
 *
 *   mw-layout-dump FILE.mpiw
 *
 * Reads the recording's last job description (the one a replay in the viewer shows once it has
 * read the whole file, and the one mpiwatch-export --format vtk lays out), checks it as the
 * viewer does (mw_topo_job_check), lays it out with the viewer's library (mw_topo_layout) and
 * prints the positions in the viewer's world (y up), with %.9g so that every float is exact:
 *
 *   {"nodes": N, "by_host": 0|1, "fallback": 0|1, "lo": [x, y, z], "hi": [x, y, z],
 *    "ranks": [[x, y, z, node], ...], "boxes": [[type, node, lox, loy, loz, hix, hiy, hiz], ...]}
 *
 * Exit status 0, 1 when the file cannot be read, holds no job or the viewer would refuse it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mw_recording.h"
#include "topo_layout.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mw-layout-dump FILE.mpiw\n");
        return 2;
    }
    char err[512] = "";
    mw_rec_reader_t *r = mw_rec_reader_open(argv[1], err, sizeof err);
    if (!r) {
        fprintf(stderr, "mw-layout-dump: %s\n", err);
        return 1;
    }
    Mpiwatch__JobInfo *job = NULL;
    const Mpiwatch__Record *rec;
    int n;
    while ((n = mw_rec_reader_next(r, &rec, NULL, err, sizeof err)) == 1) {
        if (rec->body_case != MPIWATCH__RECORD__BODY_JOB || !rec->job)
            continue;
        if (job)
            mpiwatch__job_info__free_unpacked(job, NULL);
        if (!(job = mw_job_info_copy(rec->job))) {
            fprintf(stderr, "mw-layout-dump: out of memory\n");
            return 1;
        }
    }
    mw_rec_reader_close(r);
    if (n < 0 || !job) {
        fprintf(stderr, "mw-layout-dump: %s\n", n < 0 ? err : "no job description");
        return 1;
    }
    if (mw_topo_job_check(job, err, sizeof err) < 0) {
        fprintf(stderr, "mw-layout-dump: the viewer refuses the job: %s\n", err);
        return 1;
    }
    mw_topo_layout_t L;
    if (mw_topo_layout(&L, job) != 0) {
        fprintf(stderr, "mw-layout-dump: no layout\n");
        return 1;
    }
    printf("{\"nodes\": %zu, \"by_host\": %d, \"fallback\": %d,\n", L.n_nodes, L.by_host,
           L.fallback);
    printf(" \"lo\": [%.9g, %.9g, %.9g], \"hi\": [%.9g, %.9g, %.9g],\n \"ranks\": [", L.lo[0],
           L.lo[1], L.lo[2], L.hi[0], L.hi[1], L.hi[2]);
    for (uint32_t i = 0; i < L.n_ranks; i++) {
        const mw_topo_rank_t *p = &L.ranks[i];
        printf("%s\n  [%.9g, %.9g, %.9g, %d]", i ? "," : "", p->pos[0], p->pos[1], p->pos[2],
               (int)p->node);
    }
    printf("],\n \"boxes\": [");
    for (size_t i = 0; i < L.n_boxes; i++) {
        const mw_topo_box_t *b = &L.boxes[i];
        printf("%s\n  [%d, %u, %.9g, %.9g, %.9g, %.9g, %.9g, %.9g]", i ? "," : "", b->type,
               (unsigned)b->node, b->lo[0], b->lo[1], b->lo[2], b->hi[0], b->hi[1], b->hi[2]);
    }
    printf("]}\n");
    mw_topo_layout_free(&L);
    mpiwatch__job_info__free_unpacked(job, NULL);
    return 0;
}
