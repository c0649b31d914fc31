/* test_network.c: the network file (proto/mw_network.c): Slurm topology.conf syntax (keys in
 * any case, comments, continuations), hostlists with ranges, zero padding and several
 * brackets, the tree of switches (levels, parents, nodes), the lookup of a node's switch (also
 * by short name), and every refusal with its line: unknown keys, a node under two switches, a
 * switch defined twice or under two parents, unknown switches, cycles, bad ranges, names and
 * lines over their caps, and an expression standing for 10^9 names (counted, not expanded).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mw_network.h"

static int parse(mw_network_t *net, const char *text, char *err, size_t errlen)
{
    return mw_network_parse(net, text, strlen(text), err, errlen);
}

static void test_slurm_file(void **state)
{
    (void)state;
    const char *text = "# a fat tree\n"
                       "SwitchName=s0 Nodes=node[01-04],login LinkSpeed=100\n"
                       "switchname=s1 nodes=node[05-07,10] \\\n"
                       "   LinkSpeed=100 # continued\n"
                       "\n"
                       "SwitchName=top Switches=s[0-1]\n";
    mw_network_t net;
    char err[256];
    assert_int_equal(parse(&net, text, err, sizeof err), 0);
    assert_int_equal(net.n_switches, 3);
    assert_int_equal(net.n_nodes, 9);
    assert_int_equal(net.depth, 2);
    assert_string_equal(net.switches[0].name, "s0");
    assert_int_equal(net.switches[0].parent, 2);
    assert_int_equal(net.switches[0].level, 1);
    assert_int_equal(net.switches[0].n_nodes, 5);
    assert_string_equal(net.switches[0].link_speed, "100");
    assert_int_equal(net.switches[1].n_nodes, 4);
    assert_int_equal(net.switches[1].line, 3);
    assert_int_equal(net.switches[2].parent, -1);
    assert_int_equal(net.switches[2].level, 0);
    assert_int_equal(net.switches[2].n_children, 2);
    assert_int_equal(mw_network_find(&net, "node01"), 0);
    assert_int_equal(mw_network_find(&net, "node04"), 0);
    assert_int_equal(mw_network_find(&net, "login"), 0);
    assert_int_equal(mw_network_find(&net, "node05"), 1);
    assert_int_equal(mw_network_find(&net, "node10"), 1);
    assert_int_equal(mw_network_find(&net, "node10.cluster.example"), 1);
    assert_int_equal(mw_network_find(&net, "node08"), -1);
    assert_int_equal(mw_network_find(&net, "node1"), -1);
    assert_int_equal(mw_network_find(&net, "node"), -1);
    assert_int_equal(mw_network_find(&net, "top"), -1);
    mw_network_free(&net);
}

static void test_hostlists(void **state)
{
    (void)state;
    mw_network_t net;
    char err[256];
    /* No padding: 8 9 10; padding from the lower bound; two brackets multiply, the last one
     * turning fastest. */
    assert_int_equal(
        parse(&net, "SwitchName=a Nodes=n[8-10],p[008-010],r[1-2]c[0-1]\n", err, sizeof err), 0);
    assert_int_equal(net.n_nodes, 10);
    const char *want[] = {"n8",   "n9",   "n10",  "p008", "p009",
                          "p010", "r1c0", "r1c1", "r2c0", "r2c1"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(mw_network_find(&net, want[i]), 0);
    assert_int_equal(mw_network_find(&net, "n08"), -1);
    assert_int_equal(mw_network_find(&net, "p8"), -1);
    mw_network_free(&net);
    assert_int_equal(mw_hostlist_count("n[0-999999999]", 14, err, sizeof err),
                     MW_NET_MAX_EXPAND + 1);
    assert_int_equal(mw_hostlist_count("a,b[1-3,7],c[1-2]d[1-5]", 23, err, sizeof err), 15);
    assert_int_equal(mw_hostlist_count("n[3-1]", 6, err, sizeof err), -1);
}

/* Each bad file is refused with its line and the reason. */
static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=b,a\n",
         "line 2: node 'a' is already under switch 's0' (line 1)"},
        {"SwitchName=s0 Nodes=a\n\nSwitchName=s0 Nodes=b\n",
         "line 3: switch 's0' is already defined on line 1"},
        {"SwitchName=s0 Nodes=a Speed=3\n", "line 1: unknown key 'Speed'"},
        {"Nodes=a\n", "line 1: no SwitchName"},
        {"SwitchName=s0 Nodes\n", "line 1: 'Nodes' is not KEY=VALUE"},
        {"SwitchName=s0 Nodes=\n", "line 1: Nodes has no value"},
        {"SwitchName=top Switches=s0\n", "line 1: Switches: no switch named 's0'"},
        {"SwitchName=a Switches=b\nSwitchName=b Switches=a\n", "line 1: the switches form a cycle"},
        {"SwitchName=a Switches=c\nSwitchName=b Switches=c\nSwitchName=c Nodes=x\n",
         "line 2: switch 'c' is under two switches (line 1 and this one)"},
        {"SwitchName=a Nodes=n[5-3]\n", "line 1: Nodes: a bad range in [5-3]"},
        {"SwitchName=a Nodes=n[1-2\n", "line 1: Nodes: a '[' without ']'"},
        {"SwitchName=a Nodes=n[x]\n", "line 1: Nodes: a bad range in [x]"},
        {"SwitchName=a Nodes=n,,m\n", "line 1: Nodes: an empty name in a list"},
        {"# only\n# comments\n", "no switch defined"},
        {"\n\nSwitchName=a Nodes=n[0-999999999]\n",
         "line 3: Nodes: the expression stands for more than 262144 names"},
        {"SwitchName=a Nodes=n[0-512]m[0-511]\n",
         "line 1: Nodes: the expression stands for more than 262144 names"},
        {"SwitchName=a Nodes=x[1-2] \\\n  Nodes=y\n", "line 1: Nodes given twice"},
        {"SwitchName=a Nodes=caf\xc3\xa9\n", "line 1: a value with the byte 0xc3"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mw_network_t net;
        char err[256] = "";
        int rc = parse(&net, bad[i].text, err, sizeof err);
        if (rc != -1 || strncmp(err, bad[i].want, strlen(bad[i].want)) != 0)
            fail_msg("case %zu: rc %d, '%s' (want '%s')", i, rc, err, bad[i].want);
        assert_int_equal(net.n_switches, 0);
        assert_null(net.switches);
    }
}

/* The caps: a long name, a long line, many switches, a deep chain; 10^9 names refused fast. */
static void test_caps(void **state)
{
    (void)state;
    mw_network_t net;
    char err[256];
    char *t = malloc(MW_NET_MAX_LINE + 64);
    assert_non_null(t);
    snprintf(t, 64, "SwitchName=a Nodes=");
    size_t n = strlen(t);
    memset(t + n, 'x', MW_NET_MAX_NAME + 1);
    t[n + MW_NET_MAX_NAME + 1] = 0;
    assert_int_equal(parse(&net, t, err, sizeof err), -1);
    assert_string_equal(err, "line 1: Nodes: a name over 255 bytes");
    t[n + MW_NET_MAX_NAME] = 0; /* exactly 255: taken */
    assert_int_equal(parse(&net, t, err, sizeof err), 0);
    mw_network_free(&net);
    /* A range whose later names pass the cap: x..x1 is 255 bytes, x..x10 256. */
    snprintf(t, 64, "SwitchName=a Nodes=");
    memset(t + n, 'x', MW_NET_MAX_NAME - 1);
    strcpy(t + n + MW_NET_MAX_NAME - 1, "[1-10]");
    assert_int_equal(parse(&net, t, err, sizeof err), -1);
    assert_string_equal(err, "line 1: Nodes: a name over 255 bytes");
    strcpy(t + n + MW_NET_MAX_NAME - 1, "[1-9]");
    assert_int_equal(parse(&net, t, err, sizeof err), 0);
    assert_int_equal(net.n_nodes, 9);
    mw_network_free(&net);
    memset(t, 'x', MW_NET_MAX_LINE + 8);
    memcpy(t, "SwitchName=", 11);
    t[MW_NET_MAX_LINE + 8] = 0;
    assert_int_equal(parse(&net, t, err, sizeof err), -1);
    assert_string_equal(err, "line 1: a line over 1048576 bytes");
    free(t);

    /* A chain of MW_NET_MAX_DEPTH switches is taken, one more is refused. */
    for (unsigned depth = MW_NET_MAX_DEPTH; depth <= MW_NET_MAX_DEPTH + 1; depth++) {
        char *c = malloc(depth * 48 + 1), *p = c;
        for (unsigned i = 0; i < depth; i++)
            p += i + 1 < depth ? sprintf(p, "SwitchName=s%u Switches=s%u\n", i, i + 1)
                               : sprintf(p, "SwitchName=s%u Nodes=n\n", i);
        int rc = parse(&net, c, err, sizeof err);
        if (depth == MW_NET_MAX_DEPTH) {
            assert_int_equal(rc, 0);
            assert_int_equal(net.depth, MW_NET_MAX_DEPTH);
            assert_int_equal(mw_network_find(&net, "n"), (int)depth - 1);
            mw_network_free(&net);
        } else {
            assert_int_equal(rc, -1);
            assert_non_null(strstr(err, "more than 32 levels of switches"));
        }
        free(c);
    }

    /* 10^9 names: refused by counting, in well under a second. */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(parse(&net, "SwitchName=a Nodes=n[0-999999999]", err, sizeof err), -1);
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_true((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 5e8);
    /* Many small expressions adding up over the nodes' cap. */
    size_t lines = MW_NET_MAX_NODES / MW_NET_MAX_EXPAND + 1;
    char *m = malloc(lines * 64);
    char *p = m;
    for (size_t i = 0; i < lines; i++)
        p += sprintf(p, "SwitchName=s%zu Nodes=s%zun[1-%u]\n", i, i, MW_NET_MAX_EXPAND);
    assert_int_equal(parse(&net, m, err, sizeof err), -1);
    assert_string_equal(err, "line 5: more than 1048576 nodes in all");
    free(m);
    /* The file's size. */
    char *big = calloc(MW_NET_MAX_FILE + 2, 1);
    memset(big, '#', MW_NET_MAX_FILE + 1);
    assert_int_equal(mw_network_parse(&net, big, MW_NET_MAX_FILE + 1, err, sizeof err), -1);
    assert_string_equal(err, "over 8388608 bytes");
    free(big);
}

/* The node cap reached in four lines of 262,144 nodes each: parsed within seconds also under
 * AddressSanitizer (a realloc of the node table for every node made that take minutes there). */
static void test_many_nodes(void **state)
{
    (void)state;
    mw_network_t net;
    char err[256];
    const char *t = "SwitchName=s0 Nodes=a[0-262143]\nSwitchName=s1 Nodes=b[0-262143]\n"
                    "SwitchName=s2 Nodes=c[0-262143]\nSwitchName=s3 Nodes=d[0-262143]\n"
                    "SwitchName=top Switches=s[0-3]\n";
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(parse(&net, t, err, sizeof err), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_int_equal(net.n_nodes, 4u * 262144u);
    mw_network_free(&net);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    if (s > 20)
        fail_msg("1,048,576 nodes took %.1f s to parse", s);
}

static void test_read_file(void **state)
{
    (void)state;
    char path[] = "/tmp/test_network_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("SwitchName=s0 Nodes=h-n[0-3]\nSwitchName=s1 Nodes=h-n[4-7]\nSwitchName=x Nodes=q\n"
          "SwitchName=s1 Nodes=z\n",
          f);
    fclose(f);
    mw_network_t net;
    char err[512];
    assert_int_equal(mw_network_read(&net, path, err, sizeof err), -1);
    char want[512];
    snprintf(want, sizeof want, "%s: line 4: switch 's1' is already defined on line 2", path);
    assert_string_equal(err, want);
    f = fopen(path, "w");
    fputs("SwitchName=s0 Nodes=h-n[0-3]\nSwitchName=s1 Nodes=h-n[4-7]\n", f);
    fclose(f);
    assert_int_equal(mw_network_read(&net, path, err, sizeof err), 0);
    assert_int_equal(mw_network_find(&net, "h-n3"), 0);
    assert_int_equal(mw_network_find(&net, "h-n4"), 1);
    mw_network_free(&net);
    unlink(path);
    assert_int_equal(mw_network_read(&net, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "No such file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_file), cmocka_unit_test(test_hostlists),
        cmocka_unit_test(test_refusals),   cmocka_unit_test(test_caps),
        cmocka_unit_test(test_read_file),  cmocka_unit_test(test_many_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
