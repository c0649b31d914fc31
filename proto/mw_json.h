/* mw_json.h: JSON helpers shared by every writer of JSON (mw_json.c): integers written exactly.
 *
 * cJSON stores numbers as doubles, which lose digits past 2^53 (nanosecond timestamps, byte
 * totals). These helpers write such integers as raw number text instead. A library of its
 * own because it needs cJSON: the collector, the viewer and the tools link it, never the shim.
 */
#ifndef MW_JSON_H
#define MW_JSON_H

#include <stdint.h>

#include <cJSON.h>

/* obj[key] = v, written exactly. Returns 0, or -1 when out of memory. */
int mw_json_add_u64(cJSON *obj, const char *key, uint64_t v);
int mw_json_add_i64(cJSON *obj, const char *key, int64_t v);
/* A raw number item holding v exactly (NULL when out of memory), e.g. for an array. */
cJSON *mw_json_u64(uint64_t v);

#endif
