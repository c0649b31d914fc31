/* export_vtk.c: mpiwatch-export --format vtk, a recording as a ParaView time series.
 *
 *   mpiwatch-export --format vtk FILE.mpiw -o DIR [--by window|step] [--from N] [--to N]
 *                   [--every N] [--network FILE] [--node-gap G]
 *
 * writes DIR/JOB_NNNNNN.vtp, one VTK XML PolyData file per merged window (or per time step),
 * and DIR/JOB.pvd, the collection that lists them with their times so that ParaView plays
 * them as an animation. Every file holds the whole picture of one frame in one piece:
 *
 *   points  the ranks (point r = rank r), the corners of the rectangles, the tops of the arcs,
 *           with --network the corners of the switches and the ends of the wires;
 *   verts   one vertex per rank;
 *   lines   one per (source, destination) pair with messages in the frame: straight within a
 *           node, an arc of two segments between nodes; then the network's wires (switch to
 *           node, switch to switch);
 *   polys   one rectangle per node and per package, NUMA node, L3 cache, core and PU: the top
 *           of the box the viewer draws; then one per switch.
 *
 * With --network (a Slurm topology.conf, proto/mw_network.h) the layout groups the nodes under
 * their switches as the viewer does, and the arrays `switch` (points and cells) and
 * `link_class` (links: intra-node, intra-switch, inter-switch) say where each piece sits in the
 * network.
 *
 * The places are the viewer's (viewer/topo_layout.c, library mw_topo_layout: the one layout of
 * the topology), turned so that z is up, and the links are the pairs merged as the viewer
 * merges them (viewer/topo_lines.c): ParaView and the viewer show the same job the same way.
 *
 * A cell array `kind` tells the cells apart (rank, node ... PU, link), so that one Threshold
 * in ParaView shows any subset; the frame's figures are point arrays (per rank) and cell
 * arrays (per link). The format and its arrays are described in docs/export.md.
 *
 * DESIGN: two passes over the file. The first finds the job as it was last described (the
 * placement is final only then) and the first window, which fixes time 0 and the frame
 * numbers; the layout is made once from it. The second writes one frame per kept record as it
 * reads, so the memory is that of the layout plus one frame. Files are ASCII XML, the simplest
 * form every VTK reader takes (the binary forms would save space, not correctness), written
 * the way VTK's own writer lays them out (version 0.1, offsets without a leading 0). Each is
 * written through mw_file.h (a fresh temporary file renamed into place: a symbolic link at a
 * name is replaced, never written through). The frames are not synced one by one (ten times
 * slower on a virtual disk); the file system is synced once before the .pvd is committed,
 * and the .pvd is renamed last: an export that fails or crashes leaves no collection that
 * looks complete or names frames not on disk. Names from the recording appear only as
 * character codes (VTK string arrays) and in escaped comments and attributes, so the files
 * stay valid XML whatever the ranks called their hosts.
 */
#include "export_vtk.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export_out.h"
#include "mw_fnmap_msg.h"
#include "mw_file.h"
#include "mw_recording.h"
#include "mw_limits.h"
#include "topo_layout.h"
#include "topo_lines.h"
#include "mw_window_json.h"

#define MW_VTK_PREFIX_MAX 64 /* characters of the job name kept in the file names */
#define MW_VTK_PER_LINE 12   /* numbers per line in an ASCII array */
#define MW_VTK_ARC_LIFT 0.2f /* height of an arc between nodes per unit of distance */

/* The `kind` of a cell in the VTK files: what it draws (docs/export.md). The hardware kinds are
 * in nesting order: the layout's box type t (MW_TOPO_NODE .. MW_TOPO_PU) is kind t + 1. */
enum {
    KIND_RANK = 0,   /* a vertex: one rank */
    KIND_NODE = 1,   /* a rectangle: one node (or host), then package, L3, core, PU */
    KIND_LINK = 6,   /* a line: messages from one rank to another */
    KIND_NUMA = 7,   /* a rectangle: a NUMA node (box type MW_TOPO_NUMA, a later addition) */
    KIND_SWITCH = 8, /* a rectangle: a network switch (--network) */
    KIND_WIRE = 9,   /* a line: a switch to one of its nodes, or to the switch above it */
};

static unsigned box_kind(const mw_topo_box_t *b)
{
    return b->type == MW_TOPO_NUMA ? KIND_NUMA : (unsigned)b->type + KIND_NODE;
}

/* The wires of a network layout: wire w < n_nodes goes from node w's centre (on its plane)
 * to its switch's bottom, the next ones from a switch's top to the bottom of the switch above
 * it. Returns 0 when wire w does not exist, else 1 with its ends (the layout's frame) and the
 * switch it leads to. */
static int wire_ends(const mw_topo_layout_t *L, size_t w, float a[3], float b[3], int32_t *sw)
{
    const mw_topo_switch_t *s;
    if (w < L->n_nodes) {
        if (L->nodes[w].sw < 0)
            return 0;
        *sw = L->nodes[w].sw;
        s = &L->switches[*sw];
        a[0] = (L->nodes[w].lo[0] + L->nodes[w].hi[0]) / 2;
        a[1] = L->nodes[w].hi[1];
        a[2] = (L->nodes[w].lo[2] + L->nodes[w].hi[2]) / 2;
    } else {
        const mw_topo_switch_t *c = &L->switches[w - L->n_nodes];
        if (c->parent < 0)
            return 0;
        *sw = c->parent;
        s = &L->switches[*sw];
        a[0] = (c->lo[0] + c->hi[0]) / 2;
        a[1] = c->hi[1];
        a[2] = (c->lo[2] + c->hi[2]) / 2;
    }
    b[0] = (s->lo[0] + s->hi[0]) / 2;
    b[1] = s->lo[1];
    b[2] = (s->lo[2] + s->hi[2]) / 2;
    return 1;
}

/* A point of the layout (y up, the viewer's world) in the VTK files' frame (z up, the ground
 * is the x-y plane, the first row of nodes at the top when seen from above): a rotation. */
static void vtk_point(const float p[3], float out[3])
{
    out[0] = p[0];
    out[1] = -p[2];
    out[2] = p[1];
}

/* Corner c (0..3, counter-clockwise seen from above) of the top of a box from lo to hi, in
 * the VTK frame. */
static void vtk_corner_of(const float lo[3], const float hi[3], int c, float out[3])
{
    out[0] = (c == 1 || c == 2) ? hi[0] : lo[0];
    out[1] = (c >= 2) ? -lo[2] : -hi[2];
    out[2] = hi[1];
}

static void vtk_corner(const mw_topo_box_t *b, int c, float out[3])
{
    vtk_corner_of(b->lo, b->hi, c, out);
}

typedef struct {
    const mw_vtk_opts_t *o;
    Mpiwatch__JobInfo *job; /* copy of the last job description, or NULL */
    uint64_t windows, steps;
    int have_first;
    uint64_t first_index; /* the first window: frame 0 ... */
    uint64_t origin_ns;   /* ... and time 0 (its start), or the first step's start */
    int have_step_origin;
    uint64_t step_origin_ns;

    mw_topo_layout_t lay;
    const char **node_name; /* [lay.n_nodes]: names (pointers into the job, or static text) */
    mw_network_t net;       /* --network */
    int have_net;
    int32_t *rank_bound; /* [lay.n_ranks]: RankInfo.bound, -1 unknown */
    char prefix[MW_VTK_PREFIX_MAX + 1];
    mw_afile_t *pvd; /* the collection, written through mw_file.h */
    char *pvd_path;

    uint64_t *recv_b, *recv_m; /* [n_ranks]: the frame's figures per rank (sent: in lines) */
    mw_topo_lines_t lines;     /* the frame's pairs, merged: its links */

    uint64_t frames, seen;
    int have_last;
    uint64_t last_frame;
    uint64_t out_of_order, bad_pairs, malformed;
} mw_vtk_t;

static void vtk_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void vtk_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mpiwatch-export: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- text --------------------------------------------------------------------------------- */

/* Text inside an XML comment: UTF-8 kept, control characters and bytes that are not UTF-8
 * replaced, and no "--" (which would end the comment) nor a '-' before the closing "-->". */
static void xml_comment_text(FILE *f, const char *s)
{
    char prev = 0;
    for (s = s ? s : ""; *s;) {
        int n = mw_utf8_seq(s);
        unsigned char c = (unsigned char)*s;
        if (n == 0) {
            fputs("\xef\xbf\xbd", f);
            s++;
            prev = 0;
            continue;
        }
        if (c < 0x20 || c == 0x7f)
            fputc('?', f);
        else if (c == '-' && (prev == '-' || s[1] == 0))
            fputc('_', f);
        else
            fwrite(s, 1, (size_t)n, f);
        prev = (char)c;
        s += n;
    }
}

/* An XML attribute value (between double quotes). */
static void xml_attr(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* The file name prefix: the job's name with every character that is not a letter, a digit,
 * '.', '_' or '-' replaced by '_' (no leading '.'), cut to MW_VTK_PREFIX_MAX; "job" without. */
static void make_prefix(char *out, const char *job)
{
    size_t n = 0;
    for (const char *s = job ? job : ""; *s && n < MW_VTK_PREFIX_MAX; s++) {
        char c = *s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-' || (c == '.' && n > 0);
        out[n++] = ok ? c : '_';
    }
    out[n] = 0;
    if (n == 0)
        strcpy(out, "job");
}

static char *path_join(const char *dir, const char *name, const char *suffix)
{
    size_t len = strlen(dir) + strlen(name) + strlen(suffix) + 2;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/%s%s", dir, name, suffix);
    return p;
}

/* ---- ASCII arrays ------------------------------------------------------------------------- */

/* Opens a data array. `name` NULL: none (the points). */
static void arr_begin(FILE *f, const char *elem, const char *type, const char *name, int comps,
                      size_t tuples)
{
    fprintf(f, "        <%s type=\"%s\"", elem, type);
    if (name)
        fprintf(f, " Name=\"%s\"", name);
    if (comps > 1)
        fprintf(f, " NumberOfComponents=\"%d\"", comps);
    if (tuples != (size_t)-1)
        fprintf(f, " NumberOfTuples=\"%zu\"", tuples);
    fputs(" format=\"ascii\">\n", f);
}

static void arr_end(FILE *f, const char *elem, size_t written)
{
    if (written % MW_VTK_PER_LINE)
        fputc('\n', f);
    fprintf(f, "        </%s>\n", elem);
}

/* The separator before value i of an array: an indent at the start of a line, else a space. */
static void sep(FILE *f, size_t i)
{
    if (i % MW_VTK_PER_LINE == 0)
        fputs("          ", f);
    else
        fputc(' ', f);
}

static void put_u64(FILE *f, size_t *i, uint64_t v)
{
    sep(f, *i);
    fprintf(f, "%" PRIu64, v);
    if (++*i % MW_VTK_PER_LINE == 0)
        fputc('\n', f);
}

static void put_i64(FILE *f, size_t *i, int64_t v)
{
    sep(f, *i);
    fprintf(f, "%" PRId64, v);
    if (++*i % MW_VTK_PER_LINE == 0)
        fputc('\n', f);
}

static void put_f(FILE *f, size_t *i, double v)
{
    sep(f, *i);
    fprintf(f, "%.9g", v);
    if (++*i % MW_VTK_PER_LINE == 0)
        fputc('\n', f);
}

/* A VTK string array as VTK's XML writer stores it in ASCII: the bytes of each string as
 * numbers, each string ended by a 0. */
static void string_array(FILE *f, const char *name, const char *const *s, size_t n)
{
    arr_begin(f, "Array", "String", name, 1, n);
    size_t k = 0;
    for (size_t j = 0; j < n; j++) {
        for (const char *c = s[j] ? s[j] : ""; *c; c++)
            put_u64(f, &k, (unsigned char)*c);
        put_u64(f, &k, 0);
    }
    arr_end(f, "Array", k);
}

static void field_f64(FILE *f, const char *name, double v)
{
    size_t k = 0;
    arr_begin(f, "DataArray", "Float64", name, 1, 1);
    put_f(f, &k, v);
    arr_end(f, "DataArray", k);
}

static void field_i64(FILE *f, const char *name, int64_t v)
{
    size_t k = 0;
    arr_begin(f, "DataArray", "Int64", name, 1, 1);
    put_i64(f, &k, v);
    arr_end(f, "DataArray", k);
}

/* ---- one frame ---------------------------------------------------------------------------- */

/* What a frame shows besides its links: the FieldData values. */
typedef struct {
    const char *what; /* "window" or "step" */
    uint64_t number;  /* window index or step number */
    double time;      /* TimeValue */
    double start_s, end_s;
    double mpi_time_s;
    int64_t ranks_reporting, ranks_missing; /* -1: not written */
} mw_vtk_frame_t;

/* Merges the pairs of a frame into its links (each (source, destination) once, as the viewer
 * draws them) and fills the per-rank sums. Pair arrays of different lengths are cut to the
 * shortest and counted. Returns the number of links, or -1 when out of memory. */
static long collect_links(mw_vtk_t *v, size_t n_src, size_t n_dst, size_t n_msg, size_t n_bytes,
                          mw_pairs_t p)
{
    if (p.n != n_src || p.n != n_dst || p.n != n_msg || p.n != n_bytes)
        v->malformed++;
    if (mw_topo_lines(&v->lines, &v->lay, p) < 0)
        return -1;
    v->bad_pairs += v->lines.dropped;
    size_t r = v->lay.n_ranks;
    memset(v->recv_b, 0, r * sizeof *v->recv_b);
    memset(v->recv_m, 0, r * sizeof *v->recv_m);
    for (size_t i = 0; i < v->lines.n_lines; i++) {
        const mw_topo_line_t *l = &v->lines.lines[i];
        v->recv_b[l->dst] += l->bytes;
        v->recv_m[l->dst] += l->messages;
    }
    return (long)v->lines.n_lines;
}

/* Writes one .vtp file. Returns 0, or -1 with a message printed. */
static int write_frame(mw_vtk_t *v, const char *path, const mw_vtk_frame_t *fr, size_t n_links)
{
    const mw_topo_layout_t *lay = &v->lay;
    const mw_topo_line_t *ln = v->lines.lines;
    size_t nr = lay->n_ranks, nb = lay->n_boxes, n_arcs = 0, ns = lay->n_switches, nwire = 0;
    for (size_t i = 0; i < n_links; i++)
        n_arcs += ln[i].inter;
    /* The network: each switch a rectangle (4 points) after the boxes, each wire a line (2
     * points) after the links; their points come after the arc tops. */
    size_t wires_all = lay->network ? lay->n_nodes + ns : 0;
    for (size_t w = 0; w < wires_all; w++) {
        float a[3], b[3];
        int32_t s;
        nwire += (size_t)wire_ends(lay, w, a, b, &s);
    }
    size_t n_points = nr + 4 * nb + n_arcs + 4 * ns + 2 * nwire,
           n_cells = nr + n_links + nwire + nb + ns;

    char err[512];
    mw_afile_t *af = mw_afile_open(path, err, sizeof err);
    if (!af) {
        vtk_warn("%s", err);
        return -1;
    }
    FILE *f = mw_afile_stream(af);
    fputs("<?xml version=\"1.0\"?>\n<!-- mpiwatch-export: job \"", f);
    xml_comment_text(f, v->job ? v->job->job : "");
    fprintf(f, "\", %s %" PRIu64 " -->\n", fr->what, fr->number);
    fputs("<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
          "  <PolyData>\n    <FieldData>\n",
          f);
    field_f64(f, "TimeValue", fr->time);
    field_i64(f, fr->what, (int64_t)fr->number);
    field_f64(f, "start_s", fr->start_s);
    field_f64(f, "end_s", fr->end_s);
    field_f64(f, "mpi_time_s", fr->mpi_time_s);
    if (fr->ranks_reporting >= 0)
        field_i64(f, "ranks_reporting", fr->ranks_reporting);
    if (fr->ranks_missing >= 0)
        field_i64(f, "ranks_missing", fr->ranks_missing);
    const char *job_name = v->job && v->job->job ? v->job->job : "";
    string_array(f, "job", &job_name, 1);
    if (lay->n_nodes)
        string_array(f, "node_name", v->node_name, lay->n_nodes);
    field_i64(f, "links_intra_node", (int64_t)v->lines.by_class[MW_LINK_INTRA_NODE]);
    field_i64(f, "links_intra_switch", (int64_t)v->lines.by_class[MW_LINK_INTRA_SWITCH]);
    field_i64(f, "links_inter_switch", (int64_t)v->lines.by_class[MW_LINK_INTER_SWITCH]);
    if (ns) {
        const char **sn = malloc(ns * sizeof *sn);
        if (sn) {
            for (size_t s = 0; s < ns; s++)
                sn[s] = lay->switches[s].name;
            string_array(f, "switch_name", sn, ns);
            free(sn);
        }
        size_t q = 0;
        arr_begin(f, "DataArray", "Int32", "switch_parent", 1, ns);
        for (size_t s = 0; s < ns; s++)
            put_i64(f, &q, lay->switches[s].parent);
        arr_end(f, "DataArray", q);
        q = 0;
        arr_begin(f, "DataArray", "Int32", "switch_level", 1, ns);
        for (size_t s = 0; s < ns; s++)
            put_i64(f, &q, lay->switches[s].level);
        arr_end(f, "DataArray", q);
    }
    fprintf(f,
            "    </FieldData>\n    <Piece NumberOfPoints=\"%zu\" NumberOfVerts=\"%zu\" "
            "NumberOfLines=\"%zu\" NumberOfStrips=\"0\" NumberOfPolys=\"%zu\">\n",
            n_points, nr, n_links + nwire, nb + ns);

    /* Point data: the rank, the plane, the rank's figures (0 on the other points). */
    fputs("      <PointData Scalars=\"bytes_sent\">\n", f);
    size_t k = 0;
    arr_begin(f, "DataArray", "Int32", "rank", 1, (size_t)-1);
    for (size_t i = 0; i < n_points; i++)
        put_i64(f, &k, i < nr ? (int64_t)i : -1);
    arr_end(f, "DataArray", k);
    k = 0;
    arr_begin(f, "DataArray", "Int32", "node", 1, (size_t)-1);
    for (size_t i = 0; i < nr; i++)
        put_i64(f, &k, lay->ranks[i].node);
    for (size_t b = 0; b < nb; b++)
        for (int c = 0; c < 4; c++)
            put_i64(f, &k, lay->boxes[b].node);
    for (size_t i = 0; i < n_links; i++)
        if (ln[i].inter)
            put_i64(f, &k, -1);
    for (size_t i = 0; i < 4 * ns + 2 * nwire; i++)
        put_i64(f, &k, -1);
    arr_end(f, "DataArray", k);
    /* The switch of every point: a rank's node's, a box corner's node's, a switch's own, a
     * wire's upper end's; -1 on arc tops and without a network. */
    k = 0;
    arr_begin(f, "DataArray", "Int32", "switch", 1, (size_t)-1);
    for (size_t i = 0; i < nr; i++) {
        int32_t g = lay->ranks[i].node;
        put_i64(f, &k, g >= 0 && (size_t)g < lay->n_nodes ? lay->nodes[g].sw : -1);
    }
    for (size_t b = 0; b < nb; b++)
        for (int c = 0; c < 4; c++)
            put_i64(f, &k,
                    lay->boxes[b].node < lay->n_nodes ? lay->nodes[lay->boxes[b].node].sw : -1);
    for (size_t i = 0; i < n_arcs; i++)
        put_i64(f, &k, -1);
    for (size_t s = 0; s < ns; s++)
        for (int c = 0; c < 4; c++)
            put_i64(f, &k, (int64_t)s);
    for (size_t w = 0; w < wires_all; w++) {
        float a[3], b[3];
        int32_t s;
        if (wire_ends(lay, w, a, b, &s)) {
            put_i64(f, &k, s);
            put_i64(f, &k, s);
        }
    }
    arr_end(f, "DataArray", k);
    const struct {
        const char *name;
        const uint64_t *val;
    } per_rank[4] = {
        {"bytes_sent", v->lines.rank_bytes},
        {"bytes_received", v->recv_b},
        {"messages_sent", v->lines.rank_messages},
        {"messages_received", v->recv_m},
    };
    for (int a = 0; a < 4; a++) {
        k = 0;
        arr_begin(f, "DataArray", "UInt64", per_rank[a].name, 1, (size_t)-1);
        for (size_t i = 0; i < n_points; i++)
            put_u64(f, &k, i < nr ? per_rank[a].val[i] : 0);
        arr_end(f, "DataArray", k);
    }
    fputs("      </PointData>\n", f);

    /* Cell data, in VTK's cell order: verts (ranks), lines (links, then wires), polys (boxes,
     * then switches). Wires and switches hold -1 (or 0) where an array does not apply. */
    fputs("      <CellData Scalars=\"kind\">\n", f);
    k = 0;
    arr_begin(f, "DataArray", "UInt8", "kind", 1, (size_t)-1);
    for (size_t i = 0; i < nr; i++)
        put_u64(f, &k, KIND_RANK);
    for (size_t i = 0; i < n_links; i++)
        put_u64(f, &k, KIND_LINK);
    for (size_t i = 0; i < nwire; i++)
        put_u64(f, &k, KIND_WIRE);
    for (size_t b = 0; b < nb; b++)
        put_u64(f, &k, box_kind(&lay->boxes[b]));
    for (size_t i = 0; i < ns; i++)
        put_u64(f, &k, KIND_SWITCH);
    arr_end(f, "DataArray", k);
    k = 0;
    arr_begin(f, "DataArray", "Int32", "node", 1, (size_t)-1);
    for (size_t i = 0; i < nr; i++)
        put_i64(f, &k, lay->ranks[i].node);
    for (size_t i = 0; i < n_links; i++)
        put_i64(f, &k, lay->ranks[ln[i].src].node);
    for (size_t w = 0; w < wires_all; w++) {
        float a[3], b[3];
        int32_t sw;
        if (wire_ends(lay, w, a, b, &sw))
            put_i64(f, &k, w < lay->n_nodes ? (int64_t)w : -1);
    }
    for (size_t b = 0; b < nb; b++)
        put_i64(f, &k, lay->boxes[b].node);
    for (size_t i = 0; i < ns; i++)
        put_i64(f, &k, -1);
    arr_end(f, "DataArray", k);
    /* The switch of a cell: a rank's, a box's or a link sender's node's; a wire's upper end;
     * a switch's own index (into switch_name); -1 without a network. */
    k = 0;
    arr_begin(f, "DataArray", "Int32", "switch", 1, (size_t)-1);
    for (size_t i = 0; i < nr; i++) {
        int32_t g = lay->ranks[i].node;
        put_i64(f, &k, g >= 0 && (size_t)g < lay->n_nodes ? lay->nodes[g].sw : -1);
    }
    for (size_t i = 0; i < n_links; i++) {
        int32_t g = lay->ranks[ln[i].src].node;
        put_i64(f, &k, g >= 0 && (size_t)g < lay->n_nodes ? lay->nodes[g].sw : -1);
    }
    for (size_t w = 0; w < wires_all; w++) {
        float a[3], b[3];
        int32_t sw;
        if (wire_ends(lay, w, a, b, &sw))
            put_i64(f, &k, sw);
    }
    for (size_t b = 0; b < nb; b++)
        put_i64(f, &k, lay->boxes[b].node < lay->n_nodes ? lay->nodes[lay->boxes[b].node].sw : -1);
    for (size_t i = 0; i < ns; i++)
        put_i64(f, &k, (int64_t)i);
    arr_end(f, "DataArray", k);
    size_t others = nwire + nb + ns; /* cells after the links */
    k = 0;
    arr_begin(f, "DataArray", "Int32", "rank", 1, (size_t)-1);
    for (size_t i = 0; i < n_cells; i++)
        put_i64(f, &k, i < nr ? (int64_t)i : -1);
    arr_end(f, "DataArray", k);
    for (int a = 0; a < 2; a++) { /* src, dst */
        k = 0;
        arr_begin(f, "DataArray", "Int32", a ? "dst" : "src", 1, (size_t)-1);
        for (size_t i = 0; i < nr; i++)
            put_i64(f, &k, -1);
        for (size_t i = 0; i < n_links; i++)
            put_i64(f, &k, a ? ln[i].dst : ln[i].src);
        for (size_t b = 0; b < others; b++)
            put_i64(f, &k, -1);
        arr_end(f, "DataArray", k);
    }
    for (int a = 0; a < 2; a++) { /* messages, bytes */
        k = 0;
        arr_begin(f, "DataArray", "UInt64", a ? "bytes" : "messages", 1, (size_t)-1);
        for (size_t i = 0; i < nr; i++)
            put_u64(f, &k, 0);
        for (size_t i = 0; i < n_links; i++)
            put_u64(f, &k, a ? ln[i].bytes : ln[i].messages);
        for (size_t b = 0; b < others; b++)
            put_u64(f, &k, 0);
        arr_end(f, "DataArray", k);
    }
    k = 0;
    arr_begin(f, "DataArray", "Int8", "intra", 1, (size_t)-1);
    for (size_t i = 0; i < nr; i++)
        put_i64(f, &k, -1);
    for (size_t i = 0; i < n_links; i++)
        put_i64(f, &k, !ln[i].inter);
    for (size_t b = 0; b < others; b++)
        put_i64(f, &k, -1);
    arr_end(f, "DataArray", k);
    /* A link's class: 0 intra-node, 1 intra-switch (without a network: between nodes), 2
     * inter-switch; -1 for other cells. */
    k = 0;
    arr_begin(f, "DataArray", "Int8", "link_class", 1, (size_t)-1);
    for (size_t i = 0; i < nr; i++)
        put_i64(f, &k, -1);
    for (size_t i = 0; i < n_links; i++)
        put_i64(f, &k, ln[i].cls);
    for (size_t b = 0; b < others; b++)
        put_i64(f, &k, -1);
    arr_end(f, "DataArray", k);
    for (int a = 0; a < 2; a++) { /* logical, os_index */
        k = 0;
        arr_begin(f, "DataArray", "Int32", a ? "os_index" : "logical", 1, (size_t)-1);
        for (size_t i = 0; i < nr + n_links + nwire; i++)
            put_i64(f, &k, -1);
        for (size_t b = 0; b < nb; b++)
            put_i64(f, &k,
                    a                                    ? lay->boxes[b].os_index
                    : lay->boxes[b].type == MW_TOPO_NODE ? -1
                                                         : (int64_t)lay->boxes[b].logical);
        for (size_t i = 0; i < ns; i++)
            put_i64(f, &k, -1);
        arr_end(f, "DataArray", k);
    }
    k = 0;
    arr_begin(f, "DataArray", "UInt32", "ranks", 1, (size_t)-1);
    for (size_t i = 0; i < nr; i++)
        put_u64(f, &k, 1);
    for (size_t i = 0; i < n_links + nwire; i++)
        put_u64(f, &k, 0);
    for (size_t b = 0; b < nb; b++)
        put_u64(f, &k, lay->boxes[b].ranks);
    for (size_t i = 0; i < ns; i++)
        put_u64(f, &k, 0);
    arr_end(f, "DataArray", k);
    k = 0;
    arr_begin(f, "DataArray", "Int32", "bound", 1, (size_t)-1);
    for (size_t i = 0; i < nr; i++)
        put_i64(f, &k, v->rank_bound[i]);
    for (size_t i = 0; i < n_links + nwire; i++)
        put_i64(f, &k, 0);
    for (size_t b = 0; b < nb; b++)
        put_i64(f, &k, lay->boxes[b].bound);
    for (size_t i = 0; i < ns; i++)
        put_i64(f, &k, 0);
    arr_end(f, "DataArray", k);
    fputs("      </CellData>\n", f);

    /* Points: ranks, corners, arc tops. */
    fputs("      <Points>\n", f);
    k = 0;
    arr_begin(f, "DataArray", "Float32", "Points", 3, (size_t)-1);
    for (size_t i = 0; i < nr; i++) {
        float q[3];
        vtk_point(lay->ranks[i].pos, q);
        put_f(f, &k, q[0]);
        put_f(f, &k, q[1]);
        put_f(f, &k, q[2]);
    }
    for (size_t b = 0; b < nb; b++)
        for (int c = 0; c < 4; c++) {
            float q[3];
            vtk_corner(&lay->boxes[b], c, q);
            put_f(f, &k, q[0]);
            put_f(f, &k, q[1]);
            put_f(f, &k, q[2]);
        }
    for (size_t i = 0; i < n_links; i++) {
        if (!ln[i].inter)
            continue;
        float a[3], b[3];
        vtk_point(lay->ranks[ln[i].src].pos, a);
        vtk_point(lay->ranks[ln[i].dst].pos, b);
        float dx = a[0] - b[0], dy = a[1] - b[1];
        float dist = (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
        put_f(f, &k, (a[0] + b[0]) / 2);
        put_f(f, &k, (a[1] + b[1]) / 2);
        put_f(f, &k, (a[2] > b[2] ? a[2] : b[2]) + MW_VTK_ARC_LIFT * dist);
    }
    for (size_t i = 0; i < ns; i++)
        for (int c = 0; c < 4; c++) {
            float q[3];
            vtk_corner_of(lay->switches[i].lo, lay->switches[i].hi, c, q);
            put_f(f, &k, q[0]);
            put_f(f, &k, q[1]);
            put_f(f, &k, q[2]);
        }
    for (size_t w = 0; w < wires_all; w++) {
        float a[3], b[3], q[3];
        int32_t sw;
        if (!wire_ends(lay, w, a, b, &sw))
            continue;
        vtk_point(a, q);
        put_f(f, &k, q[0]);
        put_f(f, &k, q[1]);
        put_f(f, &k, q[2]);
        vtk_point(b, q);
        put_f(f, &k, q[0]);
        put_f(f, &k, q[1]);
        put_f(f, &k, q[2]);
    }
    arr_end(f, "DataArray", k);
    fputs("      </Points>\n", f);

    /* Cells: connectivity and end offsets of verts, lines, strips (none), polys. */
    fputs("      <Verts>\n", f);
    k = 0;
    arr_begin(f, "DataArray", "Int64", "connectivity", 1, (size_t)-1);
    for (size_t i = 0; i < nr; i++)
        put_u64(f, &k, i);
    arr_end(f, "DataArray", k);
    k = 0;
    arr_begin(f, "DataArray", "Int64", "offsets", 1, (size_t)-1);
    for (size_t i = 0; i < nr; i++)
        put_u64(f, &k, i + 1);
    arr_end(f, "DataArray", k);
    fputs("      </Verts>\n      <Lines>\n", f);
    k = 0;
    arr_begin(f, "DataArray", "Int64", "connectivity", 1, (size_t)-1);
    uint64_t mid = nr + 4 * nb; /* the arc tops, in link order */
    for (size_t i = 0; i < n_links; i++) {
        put_u64(f, &k, ln[i].src);
        if (ln[i].inter)
            put_u64(f, &k, mid++);
        put_u64(f, &k, ln[i].dst);
    }
    uint64_t wire_pt = nr + 4 * nb + n_arcs + 4 * ns; /* the wires' ends */
    for (size_t i = 0; i < nwire; i++) {
        put_u64(f, &k, wire_pt++);
        put_u64(f, &k, wire_pt++);
    }
    arr_end(f, "DataArray", k);
    k = 0;
    arr_begin(f, "DataArray", "Int64", "offsets", 1, (size_t)-1);
    uint64_t end = 0;
    for (size_t i = 0; i < n_links; i++) {
        end += ln[i].inter ? 3 : 2;
        put_u64(f, &k, end);
    }
    for (size_t i = 0; i < nwire; i++) {
        end += 2;
        put_u64(f, &k, end);
    }
    arr_end(f, "DataArray", k);
    fputs("      </Lines>\n      <Strips>\n", f);
    arr_begin(f, "DataArray", "Int64", "connectivity", 1, (size_t)-1);
    arr_end(f, "DataArray", 0);
    arr_begin(f, "DataArray", "Int64", "offsets", 1, (size_t)-1);
    arr_end(f, "DataArray", 0);
    fputs("      </Strips>\n      <Polys>\n", f);
    k = 0;
    arr_begin(f, "DataArray", "Int64", "connectivity", 1, (size_t)-1);
    for (size_t b = 0; b < nb; b++)
        for (int c = 0; c < 4; c++)
            put_u64(f, &k, nr + 4 * b + (size_t)c);
    for (size_t i = 0; i < ns; i++)
        for (int c = 0; c < 4; c++)
            put_u64(f, &k, nr + 4 * nb + n_arcs + 4 * i + (size_t)c);
    arr_end(f, "DataArray", k);
    k = 0;
    arr_begin(f, "DataArray", "Int64", "offsets", 1, (size_t)-1);
    for (size_t b = 0; b < nb + ns; b++)
        put_u64(f, &k, 4 * (b + 1));
    arr_end(f, "DataArray", k);
    fputs("      </Polys>\n    </Piece>\n  </PolyData>\n</VTKFile>\n", f);

    /* Not synced one by one: export_vtk syncs the file system once before the .pvd. */
    if (mw_afile_commit_nosync(af, err, sizeof err) != 0) {
        vtk_warn("%s", err);
        return -1;
    }
    return 0;
}

/* ---- frames ------------------------------------------------------------------------------- */

/* Whether frame `number` is written: in --from/--to, after the last one written (the
 * collection's times must grow), and one in --every. */
static int keep_frame(mw_vtk_t *v, uint64_t number)
{
    const mw_vtk_opts_t *o = v->o;
    if ((o->have_from && number < o->from) || (o->have_to && number > o->to))
        return 0;
    if (v->have_last && number <= v->last_frame) {
        v->out_of_order++;
        return 0;
    }
    if (o->every > 1 && v->seen++ % o->every != 0)
        return 0;
    return 1;
}

/* Writes one frame and its line in the collection. Returns 0, or -1. */
static int emit_frame(mw_vtk_t *v, const mw_vtk_frame_t *fr, uint64_t number, size_t n_links)
{
    char name[MW_VTK_PREFIX_MAX + 32];
    snprintf(name, sizeof name, "%s_%06" PRIu64 ".vtp", v->prefix, number);
    char *path = path_join(v->o->dir, name, "");
    if (!path) {
        vtk_warn("out of memory");
        return -1;
    }
    int rc = write_frame(v, path, fr, n_links);
    free(path);
    if (rc < 0)
        return -1;
    FILE *pvd = mw_afile_stream(v->pvd);
    fprintf(pvd, "    <DataSet timestep=\"%.9g\" group=\"\" part=\"0\" file=\"", fr->time);
    xml_attr(pvd, name);
    fputs("\"/>\n", pvd);
    v->have_last = 1;
    v->last_frame = number;
    v->frames++;
    return 0;
}

static double seconds_since(uint64_t t, uint64_t origin)
{
    return t >= origin ? (double)(t - origin) * 1e-9 : -(double)(origin - t) * 1e-9;
}

/* The start of a window on the global grid, 0 when that overflows (as mw_window_json.c does). */
static uint64_t window_start(const Mpiwatch__Window *w)
{
    uint64_t s;
    if (w->start_ns) /* its own start: the grid changed (docs/recording.md) */
        return w->start_ns;
    return __builtin_mul_overflow(w->index, w->window_ns, &s) ? 0 : s;
}

static int do_window(mw_vtk_t *v, const Mpiwatch__Window *w)
{
    if (w->index < v->first_index) {
        v->out_of_order++;
        return 0;
    }
    uint64_t number = w->index - v->first_index;
    if (!keep_frame(v, number))
        return 0;
    long n = collect_links(v, w->n_pair_src, w->n_pair_dst, w->n_pair_messages, w->n_pair_bytes,
                           mw_pairs_of_window(w));
    if (n < 0) {
        vtk_warn("out of memory");
        return -1;
    }
    uint64_t start = window_start(w);
    mw_vtk_frame_t fr = {
        .what = "window",
        .number = w->index,
        .time = seconds_since(start, v->origin_ns),
        .start_s = seconds_since(start, v->origin_ns),
        .end_s = seconds_since(start + w->window_ns, v->origin_ns),
        .mpi_time_s = (double)w->mpi_time_ns * 1e-9,
        .ranks_reporting = w->ranks_reporting,
        .ranks_missing = w->ranks_missing,
    };
    return emit_frame(v, &fr, number, (size_t)n);
}

static int do_step(mw_vtk_t *v, const Mpiwatch__Step *s)
{
    if (!keep_frame(v, s->step))
        return 0;
    long n = collect_links(v, s->n_pair_src, s->n_pair_dst, s->n_pair_messages, s->n_pair_bytes,
                           mw_pairs_of_step(s));
    if (n < 0) {
        vtk_warn("out of memory");
        return -1;
    }
    uint64_t origin = v->have_first ? v->origin_ns : v->step_origin_ns;
    mw_vtk_frame_t fr = {
        .what = "step",
        .number = s->step,
        .time = (double)s->step,
        .start_s = seconds_since(s->start_ns, origin),
        .end_s = seconds_since(s->end_ns, origin),
        .mpi_time_s = (double)s->mpi_time_ns * 1e-9,
        .ranks_reporting = s->ranks,
        .ranks_missing = -1,
    };
    return emit_frame(v, &fr, s->step, (size_t)n);
}

/* ---- the two passes ----------------------------------------------------------------------- */

/* Reads every record of the recording and hands it to `fn` (which returns 0, or an exit
 * status to stop with). Returns 0, or the exit status; a torn tail is reported when
 * `warn_tail`. */
static int each_record(mw_vtk_t *v, int (*fn)(mw_vtk_t *, const Mpiwatch__Record *), int warn_tail)
{
    char err[512] = "";
    mw_rec_reader_t *r = mw_rec_reader_open(v->o->input, err, sizeof err);
    if (!r) {
        vtk_warn("%s", *err ? err : "cannot read the recording");
        return 2;
    }
    int rc = 0;
    uint64_t records = 0;
    mw__xlean_t lean = {0};
    mw_fnmap_t fnmap = {0}; /* the job's function ids -> this build's */
    mw_fnmap_keep_t keep = {0};
    for (;;) {
        const Mpiwatch__Record *rec;
        int n = mw_rec_reader_next(r, &rec, NULL, err, sizeof err);
        if (n == 0)
            break;
        if (n < 0) {
            vtk_warn("%s: %s", v->o->input, err);
            rc = 1;
            break;
        }
        records++;
        mw__xlean_note(&lean, r, rec);
        /* The job's function ids -> this build's (docs/function-table.md). */
        mw_fnmap_keep_clear(&keep);
        mw_fnmap_record(&fnmap, (Mpiwatch__Record *)rec, &keep, err, sizeof err);
        if ((rc = fn(v, rec)) != 0)
            break;
    }
    if (rc == 0 && warn_tail)
        mw__xlean_report(&lean, v->o->input);
    if (rc == 0 && warn_tail && mw_rec_reader_truncated(r))
        fprintf(stderr,
                "mpiwatch-export: warning: %s ends with an incomplete or corrupt frame "
                "(a collector stopped while writing?): exported the %" PRIu64
                " complete records before it\n",
                v->o->input, records);
    mw_fnmap_free(&fnmap);
    mw_fnmap_keep_free(&keep);
    mw_rec_reader_close(r);
    return rc;
}

/* Pass 1: the last job description, the first window, how many windows and steps. */
static int scan_record(mw_vtk_t *v, const Mpiwatch__Record *rec)
{
    if (rec->body_case == MPIWATCH__RECORD__BODY_JOB && rec->job) {
        Mpiwatch__JobInfo *copy = mw_job_info_copy(rec->job);
        if (!copy) {
            vtk_warn("out of memory");
            return 1;
        }
        if (v->job)
            mpiwatch__job_info__free_unpacked(v->job, NULL);
        v->job = copy;
    } else if (rec->body_case == MPIWATCH__RECORD__BODY_WINDOW && rec->window) {
        if (!v->have_first) {
            v->have_first = 1;
            v->first_index = rec->window->index;
            v->origin_ns = window_start(rec->window);
        }
        v->windows++;
    } else if (rec->body_case == MPIWATCH__RECORD__BODY_STEP && rec->step) {
        if (!v->have_step_origin) {
            v->have_step_origin = 1;
            v->step_origin_ns = rec->step->start_ns;
        }
        v->steps++;
    }
    return 0;
}

static int scan(mw_vtk_t *v)
{
    return each_record(v, scan_record, 1);
}

/* Pass 2: the frames. */
static int frame_record(mw_vtk_t *v, const Mpiwatch__Record *rec)
{
    if (!v->o->by_step && rec->body_case == MPIWATCH__RECORD__BODY_WINDOW && rec->window)
        return do_window(v, rec->window) < 0 ? 1 : 0;
    if (v->o->by_step && rec->body_case == MPIWATCH__RECORD__BODY_STEP && rec->step)
        return do_step(v, rec->step) < 0 ? 1 : 0;
    return 0;
}

static int write_frames(mw_vtk_t *v)
{
    return each_record(v, frame_record, 0);
}

/* The output directory: made when missing (its parent must exist). */
static int make_dir(const char *dir)
{
    struct stat st;
    if (mkdir(dir, 0777) == 0 || (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)))
        return 0;
    vtk_warn("cannot make the directory %s: %s", dir,
             errno == EEXIST ? "a file is in the way" : strerror(errno));
    return -1;
}

static void vtk_free(mw_vtk_t *v)
{
    mw_afile_abort(v->pvd); /* NULL once committed */
    free(v->pvd_path);
    free(v->recv_b);
    free(v->recv_m);
    free(v->node_name);
    free(v->rank_bound);
    mw_topo_lines_free(&v->lines);
    mw_topo_layout_free(&v->lay);
    mw_network_free(&v->net);
    if (v->job)
        mpiwatch__job_info__free_unpacked(v->job, NULL);
}

/* The places of the job's nodes, hardware and ranks: the viewer's layout (mw_topo_layout), the
 * names of its planes and the ranks' binding flags. A job description the viewer would refuse
 * (mw_topo_job_check) is still laid out, with a warning: the layout is safe for any input
 * (no recursion, linear), and an export shows what the file holds. Returns 0, or -1 with a
 * message printed. */
static int layout(mw_vtk_t *v)
{
    char why[256];
    if (v->job && mw_topo_job_check(v->job, why, sizeof why) < 0)
        vtk_warn("warning: the viewer would refuse the job description (%s)", why);
    mw_topo_layout_opts_t lo = {v->have_net ? &v->net : NULL, (float)v->o->node_gap};
    int rc = mw_topo_layout_ex(&v->lay, v->job, &lo);
    if (rc == -2) {
        vtk_warn("the job claims %" PRIu32 " ranks, more than %u: not laid out", v->job->size,
                 (unsigned)MW_MAX_RANKS);
        return -1;
    }
    const mw_topo_layout_t *L = &v->lay;
    v->node_name = calloc(L->n_nodes ? L->n_nodes : 1, sizeof *v->node_name);
    v->rank_bound = malloc((L->n_ranks ? L->n_ranks : 1) * sizeof *v->rank_bound);
    if (rc < 0 || !v->node_name || !v->rank_bound) {
        vtk_warn("out of memory");
        return -1;
    }
    for (size_t g = 0; g < L->n_nodes; g++) {
        int32_t s = L->nodes[g].source;
        const char *name = "(unplaced ranks)";
        if (s >= 0 && L->by_host)
            name = v->job->hosts[s];
        else if (s >= 0)
            name = v->job->nodes[s] ? v->job->nodes[s]->node : NULL;
        v->node_name[g] = name ? name : "";
    }
    for (uint32_t r = 0; r < L->n_ranks; r++)
        v->rank_bound[r] = -1;
    for (size_t i = 0; v->job && i < v->job->n_ranks; i++) {
        const Mpiwatch__RankInfo *ri = v->job->ranks[i];
        if (ri && ri->rank < L->n_ranks)
            v->rank_bound[ri->rank] = ri->bound;
    }
    return 0;
}

int mw_export_vtk(const mw_vtk_opts_t *o)
{
    mw_vtk_t v;
    memset(&v, 0, sizeof v);
    v.o = o;
    if (o->network) {
        char why[512];
        if (mw_network_read(&v.net, o->network, why, sizeof why) < 0) {
            vtk_warn("--network %s", why);
            return 2;
        }
        v.have_net = 1;
    }
    int rc = scan(&v);
    if (rc) {
        vtk_free(&v);
        return rc;
    }
    if (!o->by_step && v.windows == 0) {
        vtk_warn("%s holds no windows: nothing to export", o->input);
        vtk_free(&v);
        return 1;
    }
    if (o->by_step && v.steps == 0) {
        vtk_warn("%s holds no time steps (the job did not mark any, or the collector that "
                 "recorded it did not close steps): use --by window",
                 o->input);
        vtk_free(&v);
        return 1;
    }
    if (layout(&v) < 0) {
        vtk_free(&v);
        return 1;
    }
    size_t nr = v.lay.n_ranks ? v.lay.n_ranks : 1;
    v.recv_b = calloc(nr, sizeof *v.recv_b);
    v.recv_m = calloc(nr, sizeof *v.recv_m);
    make_prefix(v.prefix, v.job ? v.job->job : NULL);
    v.pvd_path = path_join(o->dir, v.prefix, ".pvd");
    if (!v.recv_b || !v.recv_m || !v.pvd_path) {
        vtk_warn("out of memory");
        vtk_free(&v);
        return 1;
    }
    if (make_dir(o->dir) < 0) {
        vtk_free(&v);
        return 1;
    }
    char err[512];
    v.pvd = mw_afile_open(v.pvd_path, err, sizeof err);
    if (!v.pvd) {
        vtk_warn("%s", err);
        vtk_free(&v);
        return 1;
    }
    FILE *pvd = mw_afile_stream(v.pvd);
    fputs("<?xml version=\"1.0\"?>\n<!-- mpiwatch-export: job \"", pvd);
    xml_comment_text(pvd, v.job ? v.job->job : "");
    fprintf(pvd, "\", one file per %s -->\n", o->by_step ? "time step" : "window");
    fputs("<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
          "  <Collection>\n",
          pvd);

    rc = write_frames(&v);
    if (rc == 0 && v.frames == 0) {
        vtk_warn("no %s of %s is in the range asked for (--from/--to)",
                 o->by_step ? "time step" : "window", o->input);
        rc = 1;
    }
    if (rc == 0) {
        fputs("  </Collection>\n</VTKFile>\n", pvd);
        /* The frames are on disk before the collection that lists them is renamed in place,
         * so a crash never leaves a .pvd naming empty frames. */
        int committed = -1;
        if (mw_file_sync_fs(o->dir, err, sizeof err) == 0)
            committed = mw_afile_commit(v.pvd, err, sizeof err);
        else
            mw_afile_abort(v.pvd);
        v.pvd = NULL;
        if (committed != 0) {
            vtk_warn("%s", err);
            rc = 1;
        }
    }
    if (v.lay.big_nodes)
        vtk_warn("warning: %" PRIu32 " node(s) listed more than %u hardware objects: their "
                 "ranks are on a grid",
                 v.lay.big_nodes, (unsigned)MW_MAX_TOPO_OBJECTS);
    if (v.bad_pairs || v.malformed)
        vtk_warn("warning: %" PRIu64 " pair(s) named ranks the job does not have and %" PRIu64
                 " frame(s) had pair arrays of different lengths: left out",
                 v.bad_pairs, v.malformed);
    if (v.out_of_order)
        vtk_warn("warning: %" PRIu64 " %s(s) came out of order or twice (several jobs in one "
                 "recording?): left out",
                 v.out_of_order, o->by_step ? "step" : "window");
    vtk_free(&v);
    return rc;
}
