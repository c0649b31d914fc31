/* mw_network.h: a cluster's network as a tree of switches and the nodes under them, read from
 * a Slurm topology.conf (topology/tree) or a file of the same shape.
 *
 *   # comment
 *   SwitchName=s0 Nodes=node[01-04],other LinkSpeed=100
 *   SwitchName=s1 Nodes=node[05-08]
 *   SwitchName=top Switches=s[0-1]
 *
 * One switch per line (a line ending in a backslash goes on with the next), keys
 * case-insensitive: SwitchName (required), Nodes and Switches (Slurm hostlist expressions:
 * names, comma lists, ranges in brackets with zero padding `n[01-10,12]`, several brackets in
 * one name multiply), LinkSpeed (kept, not used). A node under two switches, a switch defined
 * twice, a Switches entry naming no switch, a switch under two parents or a cycle are errors.
 *
 * DESIGN: a daemon-grade parser of a file given by a user or an administrator: every size is
 * capped before it is allocated (file, line, names, switches, nodes, the names one hostlist
 * expression may produce: `n[0-999999999]` is refused by counting, never expanded) and every
 * error names its line. Only libc; no I/O beyond reading the one file. Unit test:
 * tests/proto/test_network.c.
 */
#ifndef MW_NETWORK_H
#define MW_NETWORK_H

#include <stddef.h>
#include <stdint.h>

#define MW_NET_MAX_FILE (8u << 20)   /* bytes of the file */
#define MW_NET_MAX_LINE (1u << 20)   /* bytes of one line, continuations joined */
#define MW_NET_MAX_NAME 255u         /* bytes of a switch or node name */
#define MW_NET_MAX_SWITCHES 65536u   /* switches */
#define MW_NET_MAX_NODES (1u << 20)  /* nodes in all (MW_MAX_RANKS: a node holds a rank) */
#define MW_NET_MAX_EXPAND (1u << 18) /* names one hostlist expression may stand for */
#define MW_NET_MAX_DEPTH 32u         /* levels of switches */

typedef struct {
    char *name;
    int32_t parent;      /* the switch above, -1: a root */
    uint32_t level;      /* 0: a root, its children 1, ... */
    uint32_t n_nodes;    /* nodes directly under it */
    uint32_t n_children; /* switches directly under it */
    uint32_t line;       /* where it is defined */
    char *link_speed;    /* LinkSpeed, NULL when absent */
} mw_net_switch_t;

typedef struct {
    char *name;
    uint32_t sw; /* the switch it is under */
} mw_net_node_t;

typedef struct {
    mw_net_switch_t *switches; /* in file order */
    uint32_t n_switches;
    mw_net_node_t *nodes; /* sorted by name (mw_network_find) */
    uint32_t n_nodes;
    uint32_t depth; /* levels of switches: 1 when no switch has another under it */
    char *arena;    /* the names */
    size_t arena_len, arena_cap;
} mw_network_t;

/* Parses `len` bytes of text. Returns 0, or -1 with "LINE N: reason" (or a reason without a
 * line for what concerns the whole file) in err; `net` is then empty. */
int mw_network_parse(mw_network_t *net, const char *text, size_t len, char *err, size_t errlen);
/* Reads and parses the file at `path` (at most MW_NET_MAX_FILE bytes). The error names it. */
int mw_network_read(mw_network_t *net, const char *path, char *err, size_t errlen);
void mw_network_free(mw_network_t *net);

/* The switch node `name` is under, or -1. An exact match first; then, when `name` has a
 * domain (a '.'), its short name (Slurm's node names are usually short host names). */
int32_t mw_network_find(const mw_network_t *net, const char *name);

/* The number of names hostlist expression `expr` (len bytes) stands for, capped at
 * MW_NET_MAX_EXPAND + 1; -1 for a malformed expression (reason in err). No expansion. */
int64_t mw_hostlist_count(const char *expr, size_t len, char *err, size_t errlen);

#endif
