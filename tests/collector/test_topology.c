/* test_topology.c: the placement fields of a hello in the collector (docs/topology.md).
 *
 * Validation: each crafted defect of the new hello fields (node name, L3 and NUMA indices,
 * PU count, the node's hardware: size, types, parents, name) is rejected as bad_field and
 * counted, and leaves no job behind. Assembly: nodes in order of first hello, the first
 * description of a node kept (also from a repeated hello, never replaced), a hello without a
 * node placed on its host, per-rank placement; and both outputs: the JobInfo encoding (decoded
 * back) and the summary's placement keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "fixture.h"

#define JOB "job-topo"
#define MAX_OBJ 8

/* A node description: package > L3 > core > 2 PUs (os indices base, base + 1). */
typedef struct {
    Mpiwatch__NodeTopology t;
    Mpiwatch__TopoObject o[MAX_OBJ];
    Mpiwatch__TopoObject *p[MAX_OBJ];
    char name[64];
} topo_t;

static void topo_make(topo_t *t, const char *name, uint32_t base)
{
    static const int parent[] = {-1, 0, 1, 2, 2};
    static const uint32_t type[] = {1, 2, 3, 4, 4};
    mpiwatch__node_topology__init(&t->t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->t.node = t->name;
    for (unsigned i = 0; i < 5; i++) {
        mpiwatch__topo_object__init(&t->o[i]);
        t->o[i].type = type[i];
        t->o[i].parent = parent[i];
        t->o[i].logical = i < 3 ? 0 : i - 3;
        t->o[i].os_index = i < 3 ? 0 : base + i - 3;
        t->p[i] = &t->o[i];
    }
    t->t.n_objects = 5;
    t->t.objects = t->p;
}

static void expect(fx_t *f, const tm_msg_t *m, mw_reject_t want)
{
    uint64_t before = want ? f->c->stats.rejected[want] : f->c->stats.accepted;
    assert_string_equal(mw__reject_name(fx_feed(f, m)), mw__reject_name(want));
    assert_int_equal(want ? f->c->stats.rejected[want] : f->c->stats.accepted, before + 1);
}

static void test_bad_placement(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    tm_msg_t m;
    topo_t t;
    static uint32_t many[MW_MAX_PUS + 1];
    static Mpiwatch__TopoObject *huge[MW_MAX_TOPO_OBJECTS + 1];
    Mpiwatch__TopoObject pu;
    mpiwatch__topo_object__init(&pu);
    pu.type = 4;
    pu.parent = -1;
    for (size_t i = 0; i <= MW_MAX_TOPO_OBJECTS; i++)
        huge[i] = &pu;
    char bad_utf8[] = "node\xff";
    unsigned cases = 0;
    for (int c = 0;; c++) {
        tm_hello(&m, JOB, 0, 2, f->now.real_ns);
        topo_make(&t, "node0", 0);
        m.hello.node = "node0";
        m.hello.topology = &t.t;
        const char *what = NULL;
        switch (c) {
        case 0:
            what = "node not UTF-8";
            m.hello.node = bad_utf8;
            break;
        case 1:
            what = "l3 < -1";
            m.hello.l3 = -2;
            break;
        case 2:
            what = "numa < -1";
            m.hello.numa = -5;
            break;
        case 3:
            what = "too many PUs";
            m.hello.n_pus = MW_MAX_PUS + 1;
            m.hello.pus = many;
            break;
        case 4:
            what = "object type 0";
            t.o[2].type = 0;
            break;
        case 5:
            what = "object type 6"; /* 5, a NUMA node, is taken */
            t.o[4].type = 6;
            break;
        case 6:
            what = "parent forward";
            t.o[1].parent = 3;
            break;
        case 7:
            what = "parent itself";
            t.o[2].parent = 2;
            break;
        case 8:
            what = "parent < -1";
            t.o[0].parent = -2;
            break;
        case 9:
            what = "inside a PU";
            t.o[4].parent = 3;
            break;
        case 10:
            what = "another node's hardware";
            snprintf(t.name, sizeof t.name, "node9");
            break;
        case 11:
            what = "too many objects";
            t.t.n_objects = MW_MAX_TOPO_OBJECTS + 1;
            t.t.objects = huge;
            break;
        case 12:
            what = "topology node not UTF-8";
            t.t.node = bad_utf8;
            break;
        default:
            break;
        }
        if (!what)
            break;
        print_message("hello: %s\n", what);
        expect(f, &m, MW_REJECT_BAD_FIELD);
        assert_false(f->c->job.active);
        cases++;
    }
    assert_int_equal(f->c->stats.rejected[MW_REJECT_BAD_FIELD], cases);
    /* The limits themselves are accepted, and so is a hello of an older sender (no node). */
    tm_hello(&m, JOB, 0, 2, f->now.real_ns);
    m.hello.n_pus = MW_MAX_PUS;
    m.hello.pus = many;
    m.hello.l3 = m.hello.numa = -1;
    t.t.n_objects = MW_MAX_TOPO_OBJECTS;
    t.t.objects = huge;
    t.t.node = "";
    m.hello.topology = &t.t;
    expect(f, &m, MW_ACCEPTED);
    fx_free(f);
}

/* Three ranks on two nodes; rank 1 (node a) says hello first without hardware, rank 0 then
 * describes node a, rank 2 describes node b twice (the second, different, is ignored). */
static fx_t *three_ranks(void)
{
    fx_t *f = fx_new();
    tm_msg_t m;
    topo_t ta, tb, tb2;
    static uint32_t pus1[] = {3}, pus0[] = {0, 1}, pus2[] = {10, 11};
    topo_make(&ta, "host-n0", 0);
    topo_make(&tb, "", 10);
    topo_make(&tb2, "host-n1", 20);
    tb2.t.n_objects = 3;

    tm_hello(&m, JOB, 1, 3, f->now.real_ns);
    m.hello.node = "host-n0";
    m.hello.pu = 3;
    m.hello.l3 = 0;
    m.hello.numa = 0;
    m.hello.n_pus = 1;
    m.hello.pus = pus1;
    expect(f, &m, MW_ACCEPTED);

    tm_hello(&m, JOB, 0, 3, f->now.real_ns);
    m.hello.node = "host-n0";
    m.hello.pu = 0;
    m.hello.core = 0;
    m.hello.package = 0;
    m.hello.l3 = 0;
    m.hello.numa = -1;
    m.hello.bound = 1;
    m.hello.n_pus = 2;
    m.hello.pus = pus0;
    m.hello.topology = &ta.t;
    expect(f, &m, MW_ACCEPTED);

    tm_hello(&m, JOB, 2, 3, f->now.real_ns);
    m.hello.node = "host-n1";
    m.hello.pu = 10;
    m.hello.bound = 1;
    m.hello.n_pus = 2;
    m.hello.pus = pus2;
    m.hello.topology = &tb.t;
    expect(f, &m, MW_ACCEPTED);
    m.hello.topology = &tb2.t; /* the same rank again, with another description */
    expect(f, &m, MW_ACCEPTED);
    return f;
}

static void test_job_nodes(void **state)
{
    (void)state;
    fx_t *f = three_ranks();
    const mw_job_t *j = &f->c->job;
    assert_int_equal(j->n_nodes, 2);
    assert_string_equal(j->nodes[0], "host-n0"); /* order of first hello: rank 1's */
    assert_string_equal(j->nodes[1], "host-n1");
    assert_int_equal(j->node_hw[0].n_objects, 5);
    assert_int_equal(j->node_hw[0].objects[4].os_index, 1);
    assert_int_equal(j->node_hw[1].n_objects, 5); /* the first description stays */
    assert_int_equal(j->node_hw[1].objects[3].os_index, 10);
    assert_int_equal(j->ranks[0].node, 0);
    assert_int_equal(j->ranks[1].node, 0);
    assert_int_equal(j->ranks[2].node, 1);
    assert_string_equal(mw__job_node(j, 2), "host-n1");
    assert_int_equal(j->ranks[0].pus_n, 2);
    assert_int_equal(j->pus[j->ranks[0].pus_first + 1], 1);
    assert_int_equal(j->ranks[0].bound, 1);
    assert_int_equal(j->ranks[1].bound, 0);
    assert_int_equal(j->ranks[0].numa, -1);

    /* A hello without a node (an older library) is placed on its host. */
    fx_t *g = fx_new();
    tm_msg_t m;
    tm_hello(&m, JOB, 0, 1, g->now.real_ns);
    expect(g, &m, MW_ACCEPTED);
    assert_int_equal(g->c->job.n_nodes, 1);
    assert_string_equal(g->c->job.nodes[0], "node0");
    fx_free(g);
    fx_free(f);
}

static void test_jobinfo_nodes(void **state)
{
    (void)state;
    fx_t *f = three_ranks();
    size_t len = mw__jobinfo_pack(&f->c->enc, &f->c->job, mw_fn_table_hash());
    assert_true(len > 0);
    Mpiwatch__JobInfo *ji = mpiwatch__job_info__unpack(NULL, len, f->c->enc.out);
    assert_non_null(ji);
    assert_int_equal(ji->n_nodes, 2);
    assert_string_equal(ji->nodes[0]->node, "host-n0");
    assert_int_equal(ji->nodes[0]->n_objects, 5);
    assert_int_equal(ji->nodes[0]->objects[2]->type, 3);
    assert_int_equal(ji->nodes[0]->objects[2]->parent, 1);
    assert_int_equal(ji->nodes[1]->objects[4]->os_index, 11);
    assert_int_equal(ji->n_ranks, 3);
    const Mpiwatch__RankInfo *r0 = ji->ranks[0], *r2 = ji->ranks[2];
    assert_int_equal(r0->rank, 0);
    assert_int_equal(r0->node, 0);
    assert_true(r0->bound);
    assert_int_equal(r0->n_pus, 2);
    assert_int_equal(r0->pus[1], 1);
    assert_int_equal(r0->numa, -1);
    assert_int_equal(r2->node, 1);
    assert_int_equal(r2->pus[0], 10);
    mpiwatch__job_info__free_unpacked(ji, NULL);
    fx_free(f);
}

static void test_summary_placement(void **state)
{
    (void)state;
    fx_t *f = three_ranks();
    char *text = mw_summary_json(f->c);
    assert_non_null(text);
    cJSON *s = cJSON_Parse(text);
    assert_non_null(s);
    cJSON *nodes = cJSON_GetObjectItem(s, "nodes");
    assert_int_equal(cJSON_GetArraySize(nodes), 2);
    cJSON *n0 = cJSON_GetArrayItem(nodes, 0);
    assert_string_equal(cJSON_GetObjectItem(n0, "name")->valuestring, "host-n0");
    assert_int_equal(cJSON_GetObjectItem(n0, "pus")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(n0, "cores")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(n0, "l3")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(n0, "packages")->valueint, 1);
    cJSON *ranks = cJSON_GetObjectItem(n0, "ranks");
    assert_int_equal(cJSON_GetArraySize(ranks), 2);
    assert_int_equal(cJSON_GetArrayItem(ranks, 0)->valueint, 0);
    assert_int_equal(cJSON_GetArrayItem(ranks, 1)->valueint, 1);
    cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "per_rank"), 0);
    assert_string_equal(cJSON_GetObjectItem(r0, "node")->valuestring, "host-n0");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r0, "bound")));
    assert_int_equal(cJSON_GetObjectItem(r0, "pu")->valueint, 0);
    assert_int_equal(cJSON_GetObjectItem(r0, "l3")->valueint, 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r0, "pus")), 2);
    cJSON *r1 = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "per_rank"), 1);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(r1, "bound")));
    assert_int_equal(cJSON_GetObjectItem(r1, "core")->valueint, -1);
    cJSON_Delete(s);
    free(text);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_placement),
        cmocka_unit_test(test_job_nodes),
        cmocka_unit_test(test_jobinfo_nodes),
        cmocka_unit_test(test_summary_placement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
