/* export_coarse.h: mpiwatch-export --format coarse (export_coarse.c): the recording's coarse
 * tier, the per-rank content summed over windows (RecordRanks), as JSON lines
 * (docs/recording.md "Tiers", docs/export.md). */
#ifndef MW_EXPORT_COARSE_H
#define MW_EXPORT_COARSE_H

/* Writes every RecordRanks of `input` to `output` ("-": stdout). Returns the exit status (0,
 * 1 on a read or write error, 2 when the input is not a recording). */
int mw__export_coarse(const char *input, const char *output);

#endif
