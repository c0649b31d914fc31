/* export_vtk.h: mpiwatch-export --format vtk, a recording as a ParaView time series.
 *
 * One VTK XML PolyData file (.vtp) per window or per time step, and a .pvd collection that
 * lists them with their times; the layout and the arrays are in docs/export.md ("vtk").
 */
#ifndef MW_EXPORT_VTK_H
#define MW_EXPORT_VTK_H

#include <stdint.h>

typedef struct {
    const char *input; /* FILE.mpiw */
    const char *dir;   /* output directory, made when it does not exist */
    int by_step;       /* one file per Step record instead of per window */
    int have_from, have_to;
    uint64_t from, to;   /* frame numbers kept (window offset or step number), inclusive */
    uint64_t every;      /* keep one frame in `every` (0 or 1: all) */
    const char *network; /* --network: a Slurm topology.conf (NULL: none) */
    double node_gap;     /* --node-gap (<= 0: the layout's default) */
} mw_vtk_opts_t;

/* Runs the export. Returns the exit status: 0 done, 1 nothing to export or a read or write
 * error, 2 the input is missing or not a recording. Messages go to stderr. */
int mw_export_vtk(const mw_vtk_opts_t *o);

#endif
