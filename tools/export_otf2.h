/* export_otf2.h: mpiwatch-export --format otf2, the traced windows of a recording as an OTF2
 * archive (DIR/traces.otf2, DIR/traces.def, DIR/traces/) for Vampir, Score-P's tools and
 * other OTF2 readers. The mapping is described in docs/export.md ("otf2").
 */
#ifndef MW_EXPORT_OTF2_H
#define MW_EXPORT_OTF2_H

/* Runs the export into directory `dir` (made when it does not exist; an archive already there
 * is not overwritten). Returns the exit status: 0 done, 1 a read or write error, 2 the input
 * is missing or not a recording. Messages go to stderr. */
int mw__export_otf2(const char *input, const char *dir);

#endif
