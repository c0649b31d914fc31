/* mw_json.c: integers written exactly into cJSON documents (mw_json.h). */
#include "mw_json.h"

#include <inttypes.h>
#include <stdio.h>

int mw_json_add_u64(cJSON *obj, const char *key, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_AddRawToObject(obj, key, buf) ? 0 : -1;
}

int mw_json_add_i64(cJSON *obj, const char *key, int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return cJSON_AddRawToObject(obj, key, buf) ? 0 : -1;
}

cJSON *mw_json_u64(uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_CreateRaw(buf);
}
