/* mw-region-sink: a stand-in collector for the shim's region and per-function peer tests
 * (tests/shim/regions.sh): what the ranks send, decoded, one JSON line per sample.
 *
 * mw-region-sink DATA NP OUT binds a PULL socket on DATA (the ranks' MPIWATCH_COLLECTOR),
 * decodes every envelope with protobuf-c and writes to OUT:
 *   {"type":"sample","rank":R,"window":W,
 *    "defs":[[ID,"NAME",SOURCE],...] (Sample.region_defs),
 *    "regions":[[ID,COUNT,INCL_NS,EXCL_NS,MPI_NS],...], "dropped":D (regions_dropped),
 *    "peers":[[RANK,"MPI_X" or FN,MESSAGES,BYTES],...] (peer_fn empty: FN 0),
 *    "fn":{"MPI_X":[COUNT,TOTAL_NS],...}}
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
    size_t nr = s->n_region_id;
    if (s->n_region_count != nr || s->n_region_incl_ns != nr || s->n_region_excl_ns != nr ||
        s->n_region_mpi_ns != nr || s->n_peer_messages != s->n_peer_rank ||
        s->n_peer_bytes != s->n_peer_rank || (s->n_peer_fn && s->n_peer_fn != s->n_peer_rank)) {
        fprintf(out, "{\"type\":\"error\",\"rank\":%u,\"why\":\"parallel arrays\"}\n", rank);
        return -1;
    }
    fprintf(out, "{\"type\":\"sample\",\"rank\":%u,\"window\":%llu,\"defs\":[", rank,
            (unsigned long long)s->window);
    for (size_t i = 0; i < s->n_region_defs; i++) {
        fprintf(out, "%s[%u,", i ? "," : "", s->region_defs[i]->id);
        mw_sink_json_string(out, s->region_defs[i]->name);
        fprintf(out, ",%u]", s->region_defs[i]->source);
    }
    fprintf(out, "],\"regions\":[");
    for (size_t i = 0; i < nr; i++)
        fprintf(out, "%s[%u,%llu,%llu,%llu,%llu]", i ? "," : "", s->region_id[i],
                (unsigned long long)s->region_count[i], (unsigned long long)s->region_incl_ns[i],
                (unsigned long long)s->region_excl_ns[i], (unsigned long long)s->region_mpi_ns[i]);
    fprintf(out, "],\"dropped\":%llu,\"peers\":[", (unsigned long long)s->regions_dropped);
    for (size_t i = 0; i < s->n_peer_rank; i++) {
        uint32_t fn = s->n_peer_fn ? s->peer_fn[i] : 0;
        fprintf(out, "%s[%u,", i ? "," : "", s->peer_rank[i]);
        if (fn > 0 && fn < MW_FN_COUNT)
            mw_sink_json_string(out, mw_fn_name(fn));
        else
            fprintf(out, "%u", fn);
        fprintf(out, ",%llu,%llu]", (unsigned long long)s->peer_messages[i],
                (unsigned long long)s->peer_bytes[i]);
    }
    fprintf(out, "],\"fn\":{");
    const char *sep = "";
    for (size_t i = 0; i < s->n_functions; i++) {
        const Mpiwatch__FunctionStat *f = s->functions[i];
        if (f->fn == 0 || f->fn >= MW_FN_COUNT)
            continue;
        fprintf(out, "%s\"%s\":[%llu,%llu]", sep, mw_fn_name(f->fn), (unsigned long long)f->count,
                (unsigned long long)f->total_ns);
        sep = ",";
    }
    fprintf(out, "}}\n");
    return 0;
}

int main(int argc, char **argv)
{
    return mw_sink_main(argc, argv, "mw-region-sink", sample_json);
}
