/* mw-site-sink: a stand-in collector for the shim's call-site tests (tests/shim/callsites.sh):
 * what the ranks send, decoded, one JSON line per sample.
 *
 * mw-site-sink DATA NP OUT binds a PULL socket on DATA (the ranks' MPIWATCH_COLLECTOR),
 * decodes every envelope with protobuf-c and writes to OUT:
 *   {"type":"sample","rank":R,"window":W,
 *    "defs":[[ID,ADDRESS,"MODULE",OFFSET,"FUNCTION","FILE",LINE],...] (Sample.site_defs),
 *    "sites":[[ID,"MPI_X",COUNT,NS,BYTES,MAX_NS],...], "dropped":D (sites_dropped),
 *    "has_site_fields":B (any site field present), "fn":{"MPI_X":COUNT,...}}
 *   {"type":"bye","rank":R}
 * An envelope that does not decode, or a sample whose parallel arrays differ in length, is
 * an error line {"type":"error",...} and makes the exit status 1. It stops when NP byes
 * arrived, or after 120 s (exit status 1).
 */
#include <stdio.h>

#include "mw_proto.h"
#include "sample_sink.h"

static int sample_json(FILE *out, uint32_t rank, const Mpiwatch__Sample *s)
{
    size_t n = s->n_site_id;
    if (s->n_site_fn != n || s->n_site_count != n || s->n_site_ns != n || s->n_site_bytes != n ||
        s->n_site_max_ns != n) {
        fprintf(out, "{\"type\":\"error\",\"rank\":%u,\"why\":\"parallel arrays\"}\n", rank);
        return -1;
    }
    fprintf(out, "{\"type\":\"sample\",\"rank\":%u,\"window\":%llu,\"defs\":[", rank,
            (unsigned long long)s->window);
    for (size_t i = 0; i < s->n_site_defs; i++) {
        const Mpiwatch__CallSiteDef *d = s->site_defs[i];
        fprintf(out, "%s[%u,%llu,", i ? "," : "", d->id, (unsigned long long)d->address);
        mw_sink_json_string(out, d->module);
        fprintf(out, ",%llu,", (unsigned long long)d->offset);
        mw_sink_json_string(out, d->function);
        fputc(',', out);
        mw_sink_json_string(out, d->file);
        fprintf(out, ",%u]", d->line);
    }
    fprintf(out, "],\"sites\":[");
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s[%u,", i ? "," : "", s->site_id[i]);
        if (s->site_fn[i] > 0 && s->site_fn[i] < MW_FN_COUNT)
            mw_sink_json_string(out, mw_fn_name(s->site_fn[i]));
        else
            fprintf(out, "%u", s->site_fn[i]);
        fprintf(out, ",%llu,%llu,%llu,%llu]", (unsigned long long)s->site_count[i],
                (unsigned long long)s->site_ns[i], (unsigned long long)s->site_bytes[i],
                (unsigned long long)s->site_max_ns[i]);
    }
    int any = n || s->n_site_defs || s->sites_dropped;
    fprintf(out, "],\"dropped\":%llu,\"has_site_fields\":%s,\"fn\":{",
            (unsigned long long)s->sites_dropped, any ? "true" : "false");
    const char *sep = "";
    for (size_t i = 0; i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        if (f->fn == 0 || f->fn >= MW_FN_COUNT)
            continue;
        fprintf(out, "%s\"%s\":%llu", sep, mw_fn_name(f->fn), (unsigned long long)f->count);
        sep = ",";
    }
    fprintf(out, "}}\n");
    return 0;
}

int main(int argc, char **argv)
{
    return mw_sink_main(argc, argv, "mw-site-sink", sample_json);
}
