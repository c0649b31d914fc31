/* fx_json.h: reading the collector's JSON outputs in cmocka tests (test_loss.c,
 * test_aggstate.c): a number or an item that must be there, and a function's figure. */
#ifndef MW_TEST_FX_JSON_H
#define MW_TEST_FX_JSON_H

#include <cJSON.h>
#include <stdint.h>

#include "fixture.h"
#include "mw_proto.h"

static inline uint64_t u64(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v))
        fail_msg("'%s' is not a number", key);
    return (uint64_t)v->valuedouble;
}

static inline const cJSON *item(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        fail_msg("no key '%s'", key);
    return v;
}

/* The figure of fixture function i in a {"MPI_X": {"count", "time_ns", "bytes"}} object (0 if
 * absent). */
static inline uint64_t fn_figure(const cJSON *fns, int i, const char *key)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(fns, mw_fn_name(fx_fn(i)));
    return o ? u64(o, key) : 0;
}

#endif
