/* view_topology.c: the 3D topology view: node planes, hardware boxes, ranks and their lines.
 *
 * DESIGN: everything comes from the model's topology modules (topo.h: the shared layout, lines,
 * colours, curves, camera, picking); the view receives what it draws (an mw_view_ctx_t: the
 * model, the screen layout, the batch, the text) and its own state (mw_topo_gl_t, view_topo.h),
 * never the whole application. The view keeps three instance buffers and refills each
 * only when what it shows changed: the boxes (planes and hardware, per job layout), the rank
 * markers (per layout and per window or step, for their metric colors) and the line curves (per
 * window or step, color mode, bundling, periodic option). A frame is then a handful of
 * instanced draws whatever the job's size: unit cubes (30 vertices: no bottom face) and their
 * 12 edges for boxes and markers, and one 17-vertex line strip per curve, which the vertex
 * shader bends with the formula of mw_topo_curve_point(). Inter-node curves are dashed in the
 * fragment shader, and every curve is dim where it leaves its sender and full where it arrives,
 * on top of the receiver's marker, so direction reads at both ends. The overlays (labels, color
 * legends, line style key, details) are 2D and drawn with the batch and text after the 3D
 * pass, with depth testing off.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

#define PLAY_STEP_NS 600000000ull /* playing: the next window or step after this */
#define BUNDLE_MIN_PX 150.0f      /* auto bundles: a node's cell narrower than this on screen */
#define LABEL_MIN_PX 9.0f         /* rank labels once a marker is this wide */
#define LABELS_MAX 1500
#define MW_RANK_PM_NONE_VIEW 65535u /* Window.rank_mpi_permille of a rank without its sample */
#define LINE_BUDGET 2000 /* rank lines in view above which auto mode shows node bundles */
/* Node bundles drawn at most: a 100,000-rank job on 400 nodes with random partners has ~150,000
 * node pairs, which llvmpipe draws at under 1 frame/s and which cover the scene in one blur.
 * Above this, the heaviest are drawn (the info line says how many were left out). */
#define BUNDLE_DRAW_MAX 2000
/* Far from a large job (more than AGG_RANKS ranks, a marker narrower than AGG_MAX_PX), the rank
 * markers are aggregated: every node plane is cut into AGG_GRID x AGG_GRID cells and each cell
 * with ranks gets one marker in the colour of its largest value (a hot rank is never averaged
 * away), instead of a point per rank: 6,400 markers for 100,000 ranks on 400 nodes. */
#define AGG_RANKS 32768u
#define AGG_MAX_PX 2.0f
#define AGG_GRID 4
#define LINE_VERTEX_FLOATS 8 /* a curve's segment end: position, rgb, inter, t along it */
#define PICK_RADIUS_PX 6
/* Level of detail: PU boxes once a PU spans this many pixels (cores: CORE_MIN_PX), box outlines
 * from EDGE_MIN_PX, rank markers as cubes from CUBE_MIN_PX (else one point each). */
#define PU_MIN_PX 8.0f
#define CORE_MIN_PX 5.0f
#define EDGE_MIN_PX 10.0f
#define CUBE_MIN_PX 4.0f

static const char *box_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec4 a_corner;\n" /* xyz in the unit cube, w: face shade */
    "layout(location = 1) in vec3 a_lo;\n"
    "layout(location = 2) in vec3 a_hi;\n"
    "layout(location = 3) in vec4 a_color;\n"
    "uniform mat4 u_mvp;\n"
    "out vec4 v_color;\n"
    "void main() {\n"
    "    gl_Position = u_mvp * vec4(mix(a_lo, a_hi, a_corner.xyz), 1.0);\n"
    "    v_color = vec4(a_color.rgb * a_corner.w, a_color.a);\n"
    "}\n";

static const char *box_fs = "#version 330 core\n"
                            "in vec4 v_color;\n"
                            "out vec4 o;\n"
                            "void main() { o = v_color; }\n";

/* Curves arrive as line segments whose points the CPU computed (mw_topo_curve_point, the
 * formula picking uses): llvmpipe runs an instanced draw instance by instance, at about 10 us
 * each, which made a few thousand instanced curves cost more than a frame. */
static const char *line_vs = "#version 330 core\n"
                             "layout(location = 0) in vec3 a_p;\n"
                             "layout(location = 1) in vec4 a_color;\n" /* rgb, inter */
                             "layout(location = 2) in float a_t;\n"
                             "uniform mat4 u_mvp;\n"
                             "out vec3 v_rgb;\n"
                             "out float v_t;\n"
                             "flat out float v_inter;\n"
                             "void main() {\n"
                             "    gl_Position = u_mvp * vec4(a_p, 1.0);\n"
                             "    v_t = a_t;\n"
                             "    v_rgb = a_color.rgb;\n"
                             "    v_inter = a_color.a;\n"
                             "}\n";

/* Inter-node curves: 14 dashes along the whole line, 62% drawn. The first third of a line is
 * dimmed: the sender's end. */
static const char *line_fs = "#version 330 core\n"
                             "in vec3 v_rgb;\n"
                             "in float v_t;\n"
                             "flat in float v_inter;\n"
                             "uniform float u_alpha;\n"
                             "out vec4 o;\n"
                             "void main() {\n"
                             "    if (v_inter > 1.5 && fract(v_t * 36.0) > 0.4) discard;\n"
                             "    if (v_inter > 0.5 && v_inter < 1.5 && fract(v_t * 14.0) > 0.62)"
                             " discard;\n"
                             "    float k = mix(0.35, 1.0, smoothstep(0.0, 0.35, v_t));\n"
                             "    o = vec4(v_rgb * k, u_alpha);\n"
                             "}\n";

/* A unit cube without its bottom: 5 faces, 30 vertices of (x, y, z, shade); then its 12 edges
 * (24 vertices, shade 0.55: a darker outline of the box's color). */
static void cube_vertices(float *v)
{
    static const float face[5][4][3] = {
        {{0, 1, 0}, {1, 1, 0}, {1, 1, 1}, {0, 1, 1}}, /* top */
        {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}, {1, 0, 1}}, /* +x */
        {{0, 0, 0}, {0, 1, 0}, {0, 1, 1}, {0, 0, 1}}, /* -x */
        {{0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}}, /* +z: towards the default eye */
        {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}}, /* -z */
    };
    static const float shade[5] = {1.0f, 0.72f, 0.6f, 0.82f, 0.55f};
    static const int tri[6] = {0, 1, 2, 0, 2, 3};
    int k = 0;
    for (int f = 0; f < 5; f++)
        for (int i = 0; i < 6; i++) {
            const float *p = face[f][tri[i]];
            v[k++] = p[0];
            v[k++] = p[1];
            v[k++] = p[2];
            v[k++] = shade[f];
        }
    static const int edge[12][2][3] = {
        {{0, 0, 0}, {1, 0, 0}}, {{0, 0, 1}, {1, 0, 1}}, {{0, 1, 0}, {1, 1, 0}},
        {{0, 1, 1}, {1, 1, 1}}, {{0, 0, 0}, {0, 0, 1}}, {{1, 0, 0}, {1, 0, 1}},
        {{0, 1, 0}, {0, 1, 1}}, {{1, 1, 0}, {1, 1, 1}}, {{0, 0, 0}, {0, 1, 0}},
        {{1, 0, 0}, {1, 1, 0}}, {{0, 0, 1}, {0, 1, 1}}, {{1, 0, 1}, {1, 1, 1}},
    };
    for (int e = 0; e < 12; e++)
        for (int j = 0; j < 2; j++) {
            v[k++] = (float)edge[e][j][0];
            v[k++] = (float)edge[e][j][1];
            v[k++] = (float)edge[e][j][2];
            v[k++] = 1.45f; /* brighter edges: the boxes' outlines */
        }
}

#define CUBE_TRI_VERTS 30
#define CUBE_EDGE_VERTS 24

/* A VAO of the cube (per vertex) and an instance buffer of (lo, hi, rgba). */
static void instance_vao(GLuint vao, GLuint cube, GLuint inst)
{
    glBindVertexArray(vao);
    glBindBuffer(GL_ARRAY_BUFFER, cube);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, 4 * sizeof(float), (const void *)0);
    glBindBuffer(GL_ARRAY_BUFFER, inst);
    const int stride = 10 * sizeof(float);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, stride, (const void *)0);
    glVertexAttribDivisor(1, 1);
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(2, 3, GL_FLOAT, GL_FALSE, stride, (const void *)(3 * sizeof(float)));
    glVertexAttribDivisor(2, 1);
    glEnableVertexAttribArray(3);
    glVertexAttribPointer(3, 4, GL_FLOAT, GL_FALSE, stride, (const void *)(6 * sizeof(float)));
    glVertexAttribDivisor(3, 1);
    glBindVertexArray(0);
}

int mw__topo_init(mw_topo_gl_t *t, const mw_viewer_options_t *opt)
{
    t->opt.window_given = opt->window_given;
    t->opt.window_n = opt->window_n;
    t->opt.step_given = opt->step_given;
    t->opt.step_n = opt->step_n;
    t->opt.camera_given = opt->camera_given;
    t->opt.cam_yaw = opt->cam_yaw;
    t->opt.cam_pitch = opt->cam_pitch;
    t->opt.cam_distance = opt->cam_distance;
    t->opt.cam_zoom = opt->cam_zoom;
    if (!(t->rx = calloc(1, sizeof *t->rx)))
        return -1;
    t->prog_box = mw__gl_program("topology boxes", box_vs, box_fs, NULL);
    t->prog_line = mw__gl_program("topology lines", line_vs, line_fs, NULL);
    if (!t->prog_box || !t->prog_line)
        return -1;
    t->u_box_mvp = glGetUniformLocation(t->prog_box, "u_mvp");
    t->u_line_mvp = glGetUniformLocation(t->prog_line, "u_mvp");
    t->u_line_alpha = glGetUniformLocation(t->prog_line, "u_alpha");
    GLuint vao[3], vbo[4];
    glGenVertexArrays(3, vao);
    glGenBuffers(4, vbo);
    t->vao_box = vao[0];
    t->vao_rank = vao[1];
    t->vao_line = vao[2];
    t->vbo_cube = vbo[0];
    t->vbo_box = vbo[1];
    t->vbo_rank = vbo[2];
    t->vbo_line = vbo[3];
    float cube[(CUBE_TRI_VERTS + CUBE_EDGE_VERTS) * 4];
    cube_vertices(cube);
    glBindBuffer(GL_ARRAY_BUFFER, t->vbo_cube);
    glBufferData(GL_ARRAY_BUFFER, sizeof cube, cube, GL_STATIC_DRAW);
    instance_vao(t->vao_box, t->vbo_cube, t->vbo_box);
    instance_vao(t->vao_rank, t->vbo_cube, t->vbo_rank);
    glGenVertexArrays(1, &t->vao_agg);
    glGenBuffers(1, &t->vbo_agg);
    instance_vao(t->vao_agg, t->vbo_cube, t->vbo_agg);
    glGenVertexArrays(1, &t->vao_aggpt);
    glBindVertexArray(t->vao_aggpt);
    glBindBuffer(GL_ARRAY_BUFFER, t->vbo_agg);
    for (int i = 1; i <= 3; i++) {
        glEnableVertexAttribArray((GLuint)i);
        glVertexAttribPointer((GLuint)i, i == 3 ? 4 : 3, GL_FLOAT, GL_FALSE, 10 * sizeof(float),
                              (const void *)(size_t)((i - 1) * 3 * sizeof(float)));
    }
    /* The same rank buffer read per vertex: one point per rank. */
    glGenVertexArrays(1, &t->vao_rankpt);
    glBindVertexArray(t->vao_rankpt);
    glBindBuffer(GL_ARRAY_BUFFER, t->vbo_rank);
    for (int i = 1; i <= 3; i++) {
        glEnableVertexAttribArray((GLuint)i);
        glVertexAttribPointer((GLuint)i, i == 3 ? 4 : 3, GL_FLOAT, GL_FALSE, 10 * sizeof(float),
                              (const void *)(size_t)((i - 1) * 3 * sizeof(float)));
    }
    glBindVertexArray(0);
    glBindVertexArray(t->vao_line);
    glBindBuffer(GL_ARRAY_BUFFER, t->vbo_line);
    const int stride = LINE_VERTEX_FLOATS * sizeof(float);
    const int size[3] = {3, 4, 1}, off[3] = {0, 3, 7};
    for (int i = 0; i < 3; i++) {
        glEnableVertexAttribArray((GLuint)i);
        glVertexAttribPointer((GLuint)i, size[i], GL_FLOAT, GL_FALSE, stride,
                              (const void *)(size_t)(off[i] * sizeof(float)));
    }
    glBindVertexArray(0);
    GLfloat range[2] = {1, 1};
    glGetFloatv(GL_ALIASED_LINE_WIDTH_RANGE, range);
    mw__gl_check("line width range"); /* not every core context answers */
    t->line_w_max = range[1] >= 1 ? range[1] : 1;
    t->bundles = -1;
    t->log = 1;
    t->labels = 1;
    t->follow = 1;
    return mw__gl_check("topology setup");
}

/* Deletes the scene's framebuffer without touching the framebuffer bindings (mw__fbo_free binds
 * the default one, which a headless viewer does not draw into). */
static void scene_free(mw_topo_gl_t *t)
{
    mw__fbo_delete(&t->scene);
    t->scene_key = 0;
}

/* A framebuffer of w x h for the scene's image; 1 when there is one, 0 to draw directly. The
 * caller restores its framebuffer bindings. */
static int scene_target(mw_topo_gl_t *t, int w, int h)
{
    if (t->scene_failed)
        return 0;
    if (t->scene.fbo && t->scene.w == w && t->scene.h == h)
        return 1;
    scene_free(t);
    if (mw__fbo_make(&t->scene, w, h) != GL_FRAMEBUFFER_COMPLETE || glGetError() != GL_NO_ERROR) {
        scene_free(t);
        t->scene_failed = 1;
        return 0;
    }
    return 1;
}

void mw__topo_free(mw_topo_gl_t *t)
{
    if (t->prog_box)
        glDeleteProgram(t->prog_box);
    if (t->prog_line)
        glDeleteProgram(t->prog_line);
    GLuint vao[3] = {t->vao_box, t->vao_rank, t->vao_line};
    GLuint vbo[4] = {t->vbo_cube, t->vbo_box, t->vbo_rank, t->vbo_line};
    glDeleteVertexArrays(3, vao);
    if (t->vao_rankpt)
        glDeleteVertexArrays(1, &t->vao_rankpt);
    if (t->vao_agg)
        glDeleteVertexArrays(1, &t->vao_agg);
    if (t->vao_aggpt)
        glDeleteVertexArrays(1, &t->vao_aggpt);
    if (t->vbo_agg)
        glDeleteBuffers(1, &t->vbo_agg);
    glDeleteBuffers(4, vbo);
    scene_free(t);
    free(t->bundle_keep);
    t->bundle_keep = NULL;
    mw_topo_layout_free(&t->layout);
    mw_network_free(&t->net);
    mw_topo_lines_free(&t->lines);
    mw_matrix_free(&t->mx);
    free(t->rgba);
    if (t->rx)
        mw_topo_regions_free(t->rx);
    free(t->rx);
    t->rx = NULL;
}

/* ---- what is shown ------------------------------------------------------------------------ */

/* A signature of the job's placement: the layout is rebuilt when it changes (hellos arrive,
 * a node reports its hardware). */
static uint64_t job_signature(const Mpiwatch__JobInfo *job)
{
    if (!job)
        return 0;
    uint64_t h = 1469598103934665603ull;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
    MIX(job->size);
    MIX(job->n_ranks);
    MIX(job->n_nodes);
    MIX(job->n_hosts);
    for (size_t i = 0; i < job->n_nodes; i++)
        MIX(job->nodes[i]->n_objects);
    for (size_t i = 0; i < job->n_ranks; i++) {
        MIX(job->ranks[i]->rank);
        MIX(job->ranks[i]->node);
        MIX(job->ranks[i]->host);
        MIX((uint32_t)job->ranks[i]->pu);
    }
#undef MIX
    return h | 1;
}

mw_pairs_t mw__topo_pairs(const mw_model_t *m, const mw_topo_gl_t *t)
{
    if (t->step_mode)
        return mw_pairs_of_step(mw_model_step_at(m, t->step_idx));
    if (t->rx && t->rx->set.link_fn) { /* the links of one sending function (model_regions.h) */
        mw_pairs_t p;
        mw_fpairs_of_window(&t->rx->fp, mw_model_window(m, t->window), t->rx->set.link_fn, &p);
        return p;
    }
    return mw_pairs_of_window(mw_model_window(m, t->window));
}

/* Applies the cursor rules: following shows the newest; the options' window or step once they
 * exist. */
static void topo_cursor(const mw_model_t *m, mw_topo_gl_t *t)
{
    uint64_t oldest = 0, newest = 0;
    int ext = mw_model_extent(m, &oldest, &newest) == 0;
    size_t ns = mw_model_step_count(m);
    if (t->step_mode) {
        if (t->opt.step_given && !t->follow) {
            long i = mw_model_step_find(m, t->opt.step_n);
            if (i >= 0)
                t->step_idx = (size_t)i;
        }
        if (t->follow && ns)
            t->step_idx = ns - 1;
        if (ns && t->step_idx >= ns)
            t->step_idx = ns - 1;
    } else if (ext) {
        if (t->opt.window_given && !t->follow && t->window < oldest)
            t->window = oldest + t->opt.window_n;
        if (t->follow)
            t->window = newest;
        if (t->window < oldest)
            t->window = oldest;
        if (t->window > newest)
            t->window = newest;
    }
    if (t->step_mode) {
        const Mpiwatch__Step *s = mw_model_step_at(m, t->step_idx);
        if (s)
            snprintf(t->what, sizeof t->what, "step %" PRIu64 "  (%zu of %zu kept)", s->step,
                     t->step_idx + 1, ns);
        else
            snprintf(t->what, sizeof t->what, "no time steps (yet)");
    } else if (ext) {
        snprintf(t->what, sizeof t->what, "window %" PRIu64 " of %" PRIu64, t->window - oldest,
                 newest - oldest + 1);
    } else {
        snprintf(t->what, sizeof t->what, "no windows (yet)");
    }
}

int mw__topo_step(const mw_model_t *m, mw_topo_gl_t *t, int delta)
{
    t->follow = 0;
    if (t->step_mode) {
        size_t ns = mw_model_step_count(m);
        if (!ns)
            return 0;
        if (delta < 0 && t->step_idx > 0)
            t->step_idx--;
        else if (delta > 0 && t->step_idx + 1 < ns)
            t->step_idx++;
    } else {
        uint64_t oldest = 0, newest = 0;
        if (mw_model_extent(m, &oldest, &newest) != 0)
            return 0;
        if (delta < 0 && t->window > oldest)
            t->window--;
        else if (delta > 0 && t->window < newest)
            t->window++;
    }
    return 1;
}

/* Playing: one window or step further every PLAY_STEP_NS; at the newest, live views follow
 * and replays stop. Returns 1 when the cursor moved. */
int mw__topo_play(const mw_model_t *m, mw_topo_gl_t *t, mw_source_t *src, uint64_t now_ns)
{
    if (!t->playing || now_ns - t->play_ns < PLAY_STEP_NS)
        return 0;
    t->play_ns = now_ns;
    uint64_t oldest = 0, newest = 0;
    size_t ns = mw_model_step_count(m);
    int at_end = t->step_mode ? (ns == 0 || t->step_idx + 1 >= ns)
                              : (mw_model_extent(m, &oldest, &newest) != 0 || t->window >= newest);
    if (at_end) {
        mw_source_status_t st;
        mw_source_status(src, &st);
        if (st.live)
            t->follow = 1;
        else
            t->playing = 0;
        return 0;
    }
    mw__topo_step(m, t, 1);
    return 1;
}

/* The layout, the lines and the scales for what is shown, rebuilt when their inputs change. */
int mw__topo_update(const mw_view_ctx_t *vc, mw_topo_gl_t *t)
{
    const mw_model_t *m = vc->model;
    const Mpiwatch__JobInfo *job = mw_model_job(m);
    /* The signature walks every rank (100,000 at the scale the view is made for): once per job
     * and data generation, not per frame. */
    if (t->sig_job != (const void *)job || t->sig_gen != vc->data_gen || !t->sig_val) {
        t->sig_val = job_signature(job);
        t->sig_job = job;
        t->sig_gen = vc->data_gen;
    }
    uint64_t sig = t->sig_val;
    uint32_t gap_bits;
    memcpy(&gap_bits, &t->node_gap, sizeof gap_bits);
    sig = (sig ^ gap_bits) * 1099511628211ull | 1;
    if (t->rx && vc->rg)
        t->rx->set = *vc->rg;
    if (!t->have_layout || sig != t->layout_sig) {
        mw_topo_layout_free(&t->layout);
        mw_topo_layout_opts_t lo = {t->have_net ? &t->net : NULL, t->node_gap};
        int rc = mw_topo_layout_ex(&t->layout, job, &lo);
        if (rc < 0) {
            fprintf(stderr, "mpiwatch-viewer: %s\n",
                    rc == -2 ? "the job claims more ranks than the viewer takes (2^20)"
                             : "out of memory laying out the topology");
            t->have_layout = 0;
            return -1;
        }
        t->have_layout = 1;
        t->layout_sig = sig;
        memset(t->lines_key, 0, sizeof t->lines_key);
        if (!t->cam_fitted && t->layout.n_nodes) {
            mw_camera_fit(&t->cam, &t->layout);
            if (t->opt.camera_given) {
                t->cam.yaw = t->opt.cam_yaw;
                t->cam.pitch = t->opt.cam_pitch;
                if (t->opt.cam_distance > 0)
                    t->cam.distance = t->opt.cam_distance;
            }
            if (t->opt.cam_zoom > 0)
                mw_camera_zoom(&t->cam, t->opt.cam_zoom);
            t->cam_fitted = 1;
        }
    }
    topo_cursor(m, t);
    const void *src = t->step_mode ? (const void *)mw_model_step_at(m, t->step_idx)
                                   : (const void *)mw_model_window(m, t->window);
    uint64_t key[6] = {sig,
                       (uint64_t)t->step_mode,
                       t->step_mode ? (uint64_t)t->step_idx : t->window,
                       (uint64_t)(uintptr_t)src,
                       vc->data_gen,
                       1 + 2 * (uint64_t)(t->rx ? t->rx->set.link_fn : 0)};
    if (memcmp(key, t->lines_key, sizeof key) != 0) {
        if (mw_topo_lines(&t->lines, &t->layout, mw__topo_pairs(m, t)) < 0) {
            fprintf(stderr, "mpiwatch-viewer: out of memory for the topology's lines\n");
            return -1;
        }
        memcpy(t->lines_key, key, sizeof key);
    }
    t->have_data = src != NULL;
    return 0;
}

/* The 3D area: everything between the title and the status bar. */
static mw_rect_t topo_region(const mw_layout_t *l)
{
    mw_rect_t r = {0, l->title.h, l->width, l->status.y - l->title.h};
    if (r.h < 1)
        r.h = 1;
    return r;
}

static float cull_target[2], cull_radius;
static int curve_visible(const mw_topo_curve_t *c, const float mvp[16], int w, int h);

/* The ground around the camera's target that culled boxes and lines must touch. */
static void cull_around_target(const mw_topo_gl_t *t, const mw_rect_t *r)
{
    float ppu = mw_camera_px_per_unit(&t->cam, r->h);
    cull_target[0] = t->cam.target[0];
    cull_target[1] = t->cam.target[2];
    cull_radius = 0.4f * (float)(r->w > r->h ? r->w : r->h) / (ppu > 0 ? ppu : 1);
}

int mw__topo_bundled(mw_topo_gl_t *t, const mw_layout_t *l)
{
    if (t->bundles >= 0)
        return t->bundles;
    mw_rect_t r = topo_region(l);
    if (mw_topo_auto_bundles(&t->cam, &t->layout, r.h, BUNDLE_MIN_PX))
        return 1;
    /* Zoomed in: rank lines, unless more than LINE_BUDGET of them touch the nodes in view
     * (llvmpipe draws a few thousand long curves in more than a frame's time; zoom in further
     * and they become individual). */
    if (t->lines.n_lines <= LINE_BUDGET || t->layout.n_nodes < 2)
        return 0;
    float mvp[16];
    mw_camera_matrix(&t->cam, (float)r.w / (float)(r.h > 0 ? r.h : 1), mvp);
    /* Counting the lines in view scans every pair (600,000 at 100,000 ranks): the answer is
     * kept until the camera, the viewport or the lines change. */
    uint64_t key = 1469598103934665603ull;
    for (int i = 0; i < 16; i++) {
        uint32_t u;
        memcpy(&u, &mvp[i], sizeof u);
        key = (key ^ u) * 1099511628211ull;
    }
    for (int i = 0; i < 6; i++)
        key = (key ^ t->lines_key[i]) * 1099511628211ull;
    key = (key ^ ((uint64_t)r.w << 32 ^ (uint64_t)r.h ^ (uint64_t)t->periodic << 62)) | 1;
    if (key == t->auto_key)
        return t->auto_val;
    cull_around_target(t, &r);
    size_t n = 0;
    mw_rgb_t c = {1, 1, 1};
    for (size_t i = 0; i < t->lines.n_lines && n <= LINE_BUDGET; i++) {
        mw_topo_curve_t cv[2];
        int m = mw_topo_curves(&t->layout, &t->lines, 0, i, t->periodic, c, cv);
        for (int j = 0; j < m; j++)
            n += curve_visible(&cv[j], mvp, r.w, r.h);
    }
    t->auto_key = key;
    t->auto_val = n > LINE_BUDGET;
    return t->auto_val;
}

/* ---- drawing ------------------------------------------------------------------------------ */

static void put_rgb(float *v, unsigned hex, float a)
{
    mw_rgba_t c = mw__hex(hex, a);
    v[0] = c.r;
    v[1] = c.g;
    v[2] = c.b;
    v[3] = c.a;
}

/* The rank metric's ramp: dim grey-blue (little sent) to bright warm white (most). */
static mw_rgb_t rank_ramp(float u)
{
    mw_rgb_t c = {0.36f + 0.64f * u, 0.40f + 0.52f * u, 0.50f + 0.28f * u};
    return c;
}

/* Boxes are uploaded sorted by type (planes, packages, L3, cores, PUs), so that a level of
 * detail is a prefix of the instances: box_upto[k] boxes have a type <= k. */
static size_t box_upto[MW_TOPO_TYPES];

/* Zoomed in on a large job, only the nodes in view get their boxes and rank markers uploaded
 * (node_show; NULL: every node): tens of thousands of nested boxes cost llvmpipe more than a
 * frame even where they are off screen. */
static const uint8_t *node_show;

static int node_shown(uint32_t node)
{
    return !node_show || node_show[node];
}

/* Switch i's colour: grey (the unknown switch darker); a leaf switch coloured like its nodes'
 * planes when they are coloured by switch (a brighter tone of the same hue). */
void mw__topo_switch_rgb(const mw_topo_gl_t *t, size_t i, float rgb[3])
{
    const mw_topo_switch_t *s = &t->layout.switches[i];
    float v[4];
    put_rgb(v, s->source < 0 ? 0x6b6f78 : 0xb0b8c8, 1);
    if (t->plane_color == MW_PLANES_BY_SWITCH && s->source >= 0 && s->level == 0) {
        mw_rgb_t c = mw_hue_ramp((float)i / (float)t->layout.n_switches);
        v[0] = 0.3f + 0.6f * c.r;
        v[1] = 0.3f + 0.6f * c.g;
        v[2] = 0.3f + 0.6f * c.b;
    }
    memcpy(rgb, v, 3 * sizeof *rgb);
}

/* A node plane's colour: plain, or a dim hue of its node or of its switch. */
static void plane_rgb(const mw_topo_gl_t *t, uint32_t node, float *p)
{
    const mw_topo_layout_t *L = &t->layout;
    int32_t sw = node < L->n_nodes ? L->nodes[node].sw : -1;
    float u = -1;
    if (t->plane_color == MW_PLANES_BY_NODE && L->n_nodes)
        u = (float)node / (float)L->n_nodes;
    else if (t->plane_color == MW_PLANES_BY_SWITCH && sw >= 0 && L->n_switches &&
             L->switches[sw].source >= 0)
        u = (float)sw / (float)L->n_switches;
    if (u < 0) {
        put_rgb(p, 0x262a33, 1); /* plain, and the unknown switch's nodes */
        return;
    }
    mw_rgb_t c = mw_hue_ramp(u);
    p[0] = 0.12f + 0.38f * c.r;
    p[1] = 0.12f + 0.38f * c.g;
    p[2] = 0.14f + 0.38f * c.b;
    p[3] = 1;
}

static void upload_boxes(mw_topo_gl_t *t)
{
    /* By type, NUMA nodes after packages (the level they usually are): level of detail cuts a
     * prefix (no PUs, then no cores). */
    static const unsigned color[MW_TOPO_TYPES] = {0x262a33, 0x323a4a, 0x3b4760,
                                                  0x4a5775, 0x5d6d92, 0x36414f};
    static const int order[MW_TOPO_TYPES] = {MW_TOPO_NODE, MW_TOPO_PACKAGE, MW_TOPO_NUMA,
                                             MW_TOPO_L3,   MW_TOPO_CORE,    MW_TOPO_PU};
    size_t n = t->layout.n_boxes + t->layout.n_switches;
    float *v = malloc((n ? n : 1) * 10 * sizeof *v);
    if (!v)
        return;
    size_t k = 0;
    for (int oi = 0; oi < MW_TOPO_TYPES; oi++) {
        int type = order[oi];
        for (size_t i = 0; i < t->layout.n_boxes; i++) {
            const mw_topo_box_t *b = &t->layout.boxes[i];
            if (b->type != type || !node_shown(b->node))
                continue;
            float *p = v + k++ * 10;
            /* A hair inside the parent's footprint so that edges do not fight. */
            memcpy(p, b->lo, 3 * sizeof *p);
            memcpy(p + 3, b->hi, 3 * sizeof *p);
            if (type == MW_TOPO_NODE)
                plane_rgb(t, b->node, p + 6);
            else
                put_rgb(p + 6, color[b->type], 1);
        }
        /* Switches with the planes: always drawn. */
        for (size_t i = 0; type == MW_TOPO_NODE && i < t->layout.n_switches; i++) {
            const mw_topo_switch_t *s = &t->layout.switches[i];
            float *p = v + k++ * 10;
            memcpy(p, s->lo, 3 * sizeof *p);
            memcpy(p + 3, s->hi, 3 * sizeof *p);
            mw__topo_switch_rgb(t, i, p + 6);
            p[9] = 1;
        }
        box_upto[type] = k;
    }
    glBindBuffer(GL_ARRAY_BUFFER, t->vbo_box);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(k * 10 * sizeof *v), v, GL_DYNAMIC_DRAW);
    free(v);
    t->n_box = k;
}

/* The aggregated markers of a large job (AGG_RANKS): u[r] is rank r's value on its ramp (-1: no
 * data, -2: not drawn). Fills vbo_agg; out of memory leaves none (the points are drawn then). */
static void upload_agg(mw_topo_gl_t *t, const float *u, int region)
{
    t->n_agg = 0;
    const mw_topo_layout_t *L = &t->layout;
    size_t cells = (L->n_nodes + 1) * AGG_GRID * AGG_GRID;
    float *cell = malloc(cells * 6 * sizeof *cell); /* max u, max y, x0, z0, x1, z1 */
    float *v = malloc(cells * 10 * sizeof *v);
    if (!cell || !v) {
        free(cell);
        free(v);
        return;
    }
    for (size_t c = 0; c < cells; c++) {
        cell[c * 6] = -3;
        cell[c * 6 + 1] = -1e30f;
        cell[c * 6 + 2] = cell[c * 6 + 3] = 1e30f;
        cell[c * 6 + 4] = cell[c * 6 + 5] = -1e30f;
    }
    for (uint32_t r = 0; r < L->n_ranks; r++) {
        int32_t g = L->ranks[r].node;
        if (g < 0 || (size_t)g >= L->n_nodes || u[r] < -1.5f)
            continue;
        const mw_topo_node_t *nd = &L->nodes[g];
        const float *pos = L->ranks[r].pos;
        float fx = (pos[0] - nd->lo[0]) / (nd->hi[0] - nd->lo[0] > 0 ? nd->hi[0] - nd->lo[0] : 1);
        float fz = (pos[2] - nd->lo[2]) / (nd->hi[2] - nd->lo[2] > 0 ? nd->hi[2] - nd->lo[2] : 1);
        int ix = (int)(fx * AGG_GRID), iz = (int)(fz * AGG_GRID);
        ix = ix < 0 ? 0 : ix >= AGG_GRID ? AGG_GRID - 1 : ix;
        iz = iz < 0 ? 0 : iz >= AGG_GRID ? AGG_GRID - 1 : iz;
        float *cl = cell + (((size_t)g * AGG_GRID + (size_t)iz) * AGG_GRID + (size_t)ix) * 6;
        cl[0] = fmaxf(cl[0], u[r]);
        cl[1] = fmaxf(cl[1], pos[1]);
        cl[2] = fminf(cl[2], pos[0]);
        cl[3] = fminf(cl[3], pos[2]);
        cl[4] = fmaxf(cl[4], pos[0]);
        cl[5] = fmaxf(cl[5], pos[2]);
    }
    size_t k = 0;
    float hw = MW_TOPO_MARKER_W / 2;
    for (size_t c = 0; c < cells; c++) {
        const float *cl = cell + c * 6;
        if (cl[0] < -2.5f)
            continue;
        float *p = v + k++ * 10;
        p[0] = cl[2] - hw;
        p[1] = cl[1];
        p[2] = cl[3] - hw;
        p[3] = cl[4] + hw;
        p[4] = cl[1] + MW_TOPO_MARKER_H;
        p[5] = cl[5] + hw;
        mw_rgb_t col = {0.22f, 0.24f, 0.28f};
        if (cl[0] >= 0)
            col = region ? mw_ramp(cl[0]) : rank_ramp(cl[0]);
        p[6] = col.r;
        p[7] = col.g;
        p[8] = col.b;
        p[9] = 1;
    }
    glBindBuffer(GL_ARRAY_BUFFER, t->vbo_agg);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(k * 10 * sizeof *v), v, GL_DYNAMIC_DRAW);
    t->n_agg = k;
    free(cell);
    free(v);
}

static void upload_ranks(mw_topo_gl_t *t)
{
    uint32_t n = t->layout.n_ranks;
    float *v = malloc((n ? n : 1) * 10 * sizeof *v);
    if (!v)
        return;
    float *u = n > AGG_RANKS && t->vbo_agg ? malloc(n * sizeof *u) : NULL;
    int share = t->n_rank_pm == n && n > 0;
    int region = t->rx && t->rx->set.ranks != MW_RANKS_DEFAULT;
    t->rank_scale = region ? t->rx->scale : mw_topo_rank_scale(&t->lines);
    if (share) {
        /* The MPI share of the window: 0 to 100%, linear. */
        t->rank_scale.min = 0;
        t->rank_scale.max = 1;
        t->rank_scale.log = 0;
    }
    float hw = MW_TOPO_MARKER_W / 2;
    uint32_t k = 0;
    for (uint32_t r = 0; r < n; r++) {
        int32_t node = t->layout.ranks[r].node;
        if (u)
            u[r] = -2;
        if (node >= 0 && !node_shown((uint32_t)node))
            continue;
        const float *pos = t->layout.ranks[r].pos;
        float *p = v + (size_t)k++ * 10;
        p[0] = pos[0] - hw;
        p[1] = pos[1];
        p[2] = pos[2] - hw;
        p[3] = pos[0] + hw;
        p[4] = pos[1] + MW_TOPO_MARKER_H;
        p[5] = pos[2] + hw;
        mw_rgb_t c = {0.22f, 0.24f, 0.28f}; /* no data: grey */
        float ur = -1;
        if (region) {
            if (r < t->rx->n_ranks && t->rx->rank_ns[r] > 0)
                c = mw_ramp(ur = mw_scale_t01(&t->rx->scale, t->rx->rank_ns[r]));
        } else if (share) {
            uint32_t pm = t->rank_pm[r];
            if (pm != MW_RANK_PM_NONE_VIEW)
                c = rank_ramp(ur = pm >= 1000 ? 1.0f : (float)pm / 1000.0f);
        } else {
            uint64_t sent = t->lines.n_ranks == n ? t->lines.rank_bytes[r] : 0;
            if (sent)
                c = rank_ramp(ur = mw_scale_t01(&t->rank_scale, (double)sent));
        }
        if (u)
            u[r] = ur;
        p[6] = c.r;
        p[7] = c.g;
        p[8] = c.b;
        p[9] = 1;
    }
    glBindBuffer(GL_ARRAY_BUFFER, t->vbo_rank);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)((size_t)k * 10 * sizeof *v), v, GL_DYNAMIC_DRAW);
    free(v);
    t->n_rank = k;
    t->n_agg = 0;
    if (u)
        upload_agg(t, u, region);
    free(u);
}

/* 1 when a curve may be on screen near the target: an end, or its middle, projects into the
 * viewport (with a margin) and lies within cull_radius of the target. Zoomed in on a large job,
 * this keeps the drawn lines to those of the nodes in view. */
static int curve_visible(const mw_topo_curve_t *c, const float mvp[16], int w, int h)
{
    float q[3], x, y, m = 0.25f * (float)(w > h ? w : h);
    for (int i = 0; i < 3; i++) {
        mw_topo_curve_point(c, i * 0.5f, q);
        float dx = q[0] - cull_target[0], dz = q[2] - cull_target[1];
        if (dx * dx + dz * dz > cull_radius * cull_radius)
            continue;
        if (mw_camera_project(mvp, q, w, h, &x, &y) && x > -m && y > -m && x < w + m && y < h + m)
            return 1;
    }
    return 0;
}

/* Bundle weights for the level of detail, and their order: heaviest first, then by index. */
static const uint64_t *heavy_w;
static int heavy_cmp(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (heavy_w[i] != heavy_w[j])
        return heavy_w[i] > heavy_w[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* The bundles to draw when there are more than BUNDLE_DRAW_MAX: a mask of the heaviest (by bytes
 * when the lines are coloured by bytes, else by messages). NULL when all are drawn (or out of
 * memory, when all are drawn too). */
static uint8_t *heavy_bundles(mw_topo_gl_t *t, const float *cull, int w, int h)
{
    size_t n = t->lines.n_bundles, nc = 0;
    t->bundles_over = 0;
    if (n <= BUNDLE_DRAW_MAX)
        return NULL;
    uint64_t *wt = malloc(n * sizeof *wt);
    size_t *ix = malloc(n * sizeof *ix);
    uint8_t *mask = calloc(n, 1);
    if (!wt || !ix || !mask) {
        free(wt);
        free(ix);
        free(mask);
        return NULL;
    }
    /* Zoomed in (cull): the heaviest of the bundles in view, not of the whole job. */
    mw_rgb_t c0 = {1, 1, 1};
    for (size_t i = 0; i < n; i++) {
        if (cull) {
            mw_topo_curve_t cv[2];
            int m = mw_topo_curves(&t->layout, &t->lines, 1, i, t->periodic, c0, cv), vis = 0;
            for (int j = 0; j < m && !vis; j++)
                vis = curve_visible(&cv[j], cull, w, h);
            if (!vis)
                continue;
        }
        const mw_topo_bundle_t *b = &t->lines.bundles[i];
        wt[i] = t->color == MW_TOPO_COLOR_BYTES ? b->bytes : b->messages;
        ix[nc++] = i;
    }
    heavy_w = wt;
    qsort(ix, nc, sizeof *ix, heavy_cmp);
    heavy_w = NULL;
    size_t keep = nc < BUNDLE_DRAW_MAX ? nc : BUNDLE_DRAW_MAX;
    for (size_t i = 0; i < keep; i++)
        mask[ix[i]] = 1;
    t->bundles_over = nc - keep;
    t->bundles_drawn = keep;
    free(wt);
    free(ix);
    return mask;
}

static void upload_lines(mw_topo_gl_t *t, int bundled, const float *cull, int w, int h)
{
    size_t n = bundled ? t->lines.n_bundles : t->lines.n_lines;
    uint8_t *keep = bundled ? heavy_bundles(t, cull, w, h) : NULL;
    if (!bundled)
        t->bundles_over = 0;
    size_t n_draw = keep ? t->bundles_drawn : n;
    /* Fewer segments per curve when there are many (they are small on screen then). */
    int segs = n_draw > 16384  ? MW_TOPO_SEGMENTS / 4
               : n_draw > 1000 ? MW_TOPO_SEGMENTS / 2
                               : MW_TOPO_SEGMENTS;
    size_t per = (size_t)segs * 2 * LINE_VERTEX_FLOATS; /* floats per curve */
    size_t wires = t->layout.network ? t->layout.n_nodes + t->layout.n_switches : 0;
    float *v =
        malloc(((n_draw ? n_draw : 1) * 2 * per + wires * 2 * LINE_VERTEX_FLOATS) * sizeof *v);
    if (!v) {
        free(keep);
        return;
    }
    t->scale = mw_topo_line_scale(&t->lines, bundled, t->color, t->log);
    size_t k = 0, curves = 0;
    for (size_t i = 0; i < n; i++) {
        if (keep && !keep[i])
            continue;
        mw_rgb_t c = mw_scale_color(&t->scale, mw_topo_line_value(&t->lines, bundled, i, t->color));
        mw_topo_curve_t cv[2];
        int m = mw_topo_curves(&t->layout, &t->lines, bundled, i, t->periodic, c, cv);
        for (int j = 0; j < m; j++) {
            if (cull && !curve_visible(&cv[j], cull, w, h))
                continue;
            curves++;
            float prev[3];
            mw_topo_curve_point(&cv[j], 0.0f, prev);
            for (int sg = 0; sg < segs; sg++) {
                float s1 = (float)(sg + 1) / (float)segs, next[3];
                mw_topo_curve_point(&cv[j], s1, next);
                for (int e = 0; e < 2; e++) {
                    float sv = e ? s1 : (float)sg / (float)segs;
                    float *p = v + k;
                    memcpy(p, e ? next : prev, 3 * sizeof *p);
                    memcpy(p + 3, cv[j].rgb, 3 * sizeof *p);
                    p[6] = cv[j].inter;
                    p[7] = cv[j].t0 + (cv[j].t1 - cv[j].t0) * sv;
                    k += LINE_VERTEX_FLOATS;
                }
                memcpy(prev, next, sizeof prev);
            }
        }
    }
    /* The network's wires: a straight grey line from each switch down to each of its nodes
     * (above the node's hardware) and up to the switch above it. */
    const mw_topo_layout_t *L = &t->layout;
    for (size_t i = 0; i < wires; i++) {
        float a[3], b[3];
        const mw_topo_switch_t *s;
        if (i < L->n_nodes) {
            if (L->nodes[i].sw < 0)
                continue;
            s = &L->switches[L->nodes[i].sw];
            a[0] = (L->nodes[i].lo[0] + L->nodes[i].hi[0]) / 2;
            a[1] = L->hi[1] > s->lo[1] ? s->lo[1] - 2.0f : L->hi[1];
            a[2] = (L->nodes[i].lo[2] + L->nodes[i].hi[2]) / 2;
            b[1] = s->lo[1];
        } else {
            const mw_topo_switch_t *c = &L->switches[i - L->n_nodes];
            if (c->parent < 0)
                continue;
            s = &L->switches[c->parent];
            a[0] = (c->lo[0] + c->hi[0]) / 2;
            a[1] = c->hi[1];
            a[2] = (c->lo[2] + c->hi[2]) / 2;
            b[1] = s->lo[1];
        }
        b[0] = (s->lo[0] + s->hi[0]) / 2;
        b[2] = (s->lo[2] + s->hi[2]) / 2;
        for (int e = 0; e < 2; e++) {
            float *p = v + k;
            memcpy(p, e ? b : a, 3 * sizeof *p);
            p[3] = p[4] = 0.55f;
            p[5] = 0.62f;
            p[6] = 0;
            p[7] = 1;
            k += LINE_VERTEX_FLOATS;
        }
    }
    glBindBuffer(GL_ARRAY_BUFFER, t->vbo_line);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(k * sizeof *v), v, GL_DYNAMIC_DRAW);
    free(v);
    free(t->bundle_keep); /* kept for --meta: which bundles were drawn */
    t->bundle_keep = keep;
    t->bundles_drawn = bundled ? n_draw : 0;
    t->n_line = curves;
    t->n_line_verts = k / LINE_VERTEX_FLOATS;
}

/* Which nodes are in view: a corner or the middle of the node's plane projects into the
 * viewport (with a margin), or the plane's projection spans it, and the plane comes within
 * cull_radius of the camera's target (a perspective view reaches to the horizon). Fills
 * show[] and returns a hash of it. */
static uint64_t nodes_in_view(const mw_topo_gl_t *t, const float mvp[16], int w, int h,
                              uint8_t *show)
{
    uint64_t key = 1469598103934665603ull;
    float m = 0.25f * (float)(w > h ? w : h);
    for (size_t i = 0; i < t->layout.n_nodes; i++) {
        const mw_topo_node_t *nd = &t->layout.nodes[i];
        float cx = (nd->lo[0] + nd->hi[0]) / 2, cz = (nd->lo[2] + nd->hi[2]) / 2;
        float hx = (nd->hi[0] - nd->lo[0]) / 2, hz = (nd->hi[2] - nd->lo[2]) / 2;
        float dx = fabsf(cx - cull_target[0]) - hx, dz = fabsf(cz - cull_target[1]) - hz;
        dx = dx > 0 ? dx : 0;
        dz = dz > 0 ? dz : 0;
        int on = dx * dx + dz * dz <= cull_radius * cull_radius;
        if (on) {
            float pts[5][3] = {{nd->lo[0], nd->lo[1], nd->lo[2]},
                               {nd->hi[0], nd->lo[1], nd->lo[2]},
                               {nd->lo[0], nd->lo[1], nd->hi[2]},
                               {nd->hi[0], nd->lo[1], nd->hi[2]},
                               {cx, nd->lo[1], cz}};
            float x0 = 1e30f, y0 = 1e30f, x1 = -1e30f, y1 = -1e30f;
            int behind = 0;
            for (int j = 0; j < 5; j++) {
                float x, y;
                if (!mw_camera_project(mvp, pts[j], w, h, &x, &y)) {
                    behind = 1;
                    continue;
                }
                x0 = fminf(x0, x);
                y0 = fminf(y0, y);
                x1 = fmaxf(x1, x);
                y1 = fmaxf(y1, y);
            }
            on = behind || (x1 > -m && y1 > -m && x0 < w + m && y0 < h + m);
        }
        show[i] = (uint8_t)on;
        key = (key ^ (uint64_t)on) * 1099511628211ull;
    }
    return key;
}

static void draw_3d(const mw_view_ctx_t *vc, mw_topo_gl_t *t, const mw_rect_t *r, int bundled)
{
    /* Culling by node pays once the boxes are many and a node is large on screen. */
    uint8_t *show = NULL;
    uint64_t show_key = 0;
    if (t->layout.n_boxes > 4096 && t->layout.n_nodes > 1 &&
        !mw_topo_auto_bundles(&t->cam, &t->layout, r->h, 150.0f)) {
        float mvp0[16];
        mw_camera_matrix(&t->cam, (float)r->w / (float)(r->h > 0 ? r->h : 1), mvp0);
        cull_around_target(t, r);
        show = malloc(t->layout.n_nodes);
        if (show)
            show_key = nodes_in_view(t, mvp0, r->w, r->h, show);
    }
    node_show = show;
    uint64_t box_sig = t->layout_sig ^ show_key ^ ((uint64_t)t->plane_color << 40);
    if (t->box_sig != box_sig) {
        upload_boxes(t);
        t->box_sig = box_sig;
        t->rank_key = 0;
    }
    uint64_t data_key = t->lines_key[0] ^ (t->lines_key[2] * 31) ^ (t->lines_key[3] * 7) ^
                        (t->lines_key[4] * 131) ^ (uint64_t)t->step_mode;
    /* The shown window's per-rank MPI shares (none for a step). */
    const Mpiwatch__Window *win = t->step_mode ? NULL : mw_model_window(vc->model, t->window);
    t->rank_pm = win ? win->rank_mpi_permille : NULL;
    t->n_rank_pm = win ? win->n_rank_mpi_permille : 0;
    data_key ^= (uint64_t)t->n_rank_pm * 0x9e3779b97f4a7c15ull;
    if (t->rx && t->rx->set.ranks != MW_RANKS_DEFAULT) { /* a code region's time (topo_color.c) */
        mw_topo_region_ranks(t->rx, win, t->layout.n_ranks);
        data_key ^=
            ((uint64_t)t->rx->set.ranks << 40) ^ ((uint64_t)t->rx->region << 44) ^ 0x5bd1e995u;
    }
    if (t->rank_key != (data_key | 1)) {
        upload_ranks(t);
        t->rank_key = data_key | 1;
    }
    node_show = NULL;
    free(show);
    mw_camera_matrix(&t->cam, (float)r->w / (float)(r->h > 0 ? r->h : 1), t->mvp);
    /* Individual lines of a large job are culled to the view: the instances then depend on the
     * camera too. */
    size_t n_items = bundled ? t->lines.n_bundles : t->lines.n_lines;
    /* Bundles are culled too once the view is zoomed in past the nodes' bundling distance (many
     * bundles then, e.g. 150,000 node pairs at 400 nodes): the heaviest in view are drawn. */
    int cull = n_items > 4096 &&
               (!bundled || (n_items > BUNDLE_DRAW_MAX &&
                             !mw_topo_auto_bundles(&t->cam, &t->layout, r->h, BUNDLE_MIN_PX)));
    uint64_t cam_key = 0;
    if (cull) {
        for (int i = 0; i < 16; i++) {
            uint32_t u;
            memcpy(&u, &t->mvp[i], sizeof u);
            cam_key = (cam_key ^ u) * 1099511628211ull;
        }
        cam_key ^= (uint64_t)r->w << 20 ^ (uint64_t)r->h;
    }
    uint64_t line_key = data_key * 1000003 + (uint64_t)t->color * 17 + (uint64_t)bundled * 3 +
                        (uint64_t)t->periodic * 5 + (uint64_t)t->log * 7 + cam_key * 11 + 1;
    float ppu = mw_camera_px_per_unit(&t->cam, r->h);
    if (t->line_key != line_key) {
        cull_around_target(t, r);
        upload_lines(t, bundled, cull ? t->mvp : NULL, r->w, r->h);
        t->line_key = line_key;
    }
    size_t n_box = box_upto[ppu >= PU_MIN_PX     ? MW_TOPO_PU
                            : ppu >= CORE_MIN_PX ? MW_TOPO_CORE
                                                 : MW_TOPO_L3];
    if (n_box > t->n_box)
        n_box = t->n_box;

    /* An unchanged scene (the same boxes, markers, lines, camera and viewport) is not drawn
     * again: its image is copied from the last frame's. At 100,000 ranks a frame of the scene
     * costs llvmpipe more than 100 ms (every rank a point, thousands of curves); an idle or
     * paused view then costs a copy. The key holds everything the pass below reads. */
    uint64_t sk = 1469598103934665603ull;
#define SK(v) (sk = (sk ^ (uint64_t)(v)) * 1099511628211ull)
    SK(t->box_sig);
    SK(t->rank_key);
    SK(t->line_key);
    SK(n_box);
    SK(t->n_rank);
    SK(t->n_line_verts);
    SK(bundled);
    SK(r->w);
    SK(r->h);
    for (int i = 0; i < 16; i++) {
        uint32_t u;
        memcpy(&u, &t->mvp[i], sizeof u);
        SK(u);
    }
#undef SK
    sk |= 1;
    GLint prev_draw = 0, prev_read = 0;
    glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &prev_draw);
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &prev_read);
    int own = scene_target(t, r->w, r->h);
    if (own && t->scene_key != sk) {
        glBindFramebuffer(GL_FRAMEBUFFER, t->scene.fbo);
        mw__gl_begin_3d(0, 0, r->w, r->h, r->h);
    } else if (!own) {
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, (GLuint)prev_draw);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)prev_read);
        mw__gl_begin_3d(r->x, r->y, r->w, r->h, vc->fb_h);
    }
    if (own && t->scene_key == sk)
        goto copy;

    glUseProgram(t->prog_box);
    glUniformMatrix4fv(t->u_box_mvp, 1, GL_FALSE, t->mvp);
    glBindVertexArray(t->vao_box);
    glDrawArraysInstanced(GL_TRIANGLES, 0, CUBE_TRI_VERTS, (GLsizei)n_box);
    if (ppu >= EDGE_MIN_PX)
        glDrawArraysInstanced(GL_LINES, CUBE_TRI_VERTS, CUBE_EDGE_VERTS, (GLsizei)n_box);
    t->agg_drawn = t->n_agg > 0 && ppu * MW_TOPO_MARKER_W < AGG_MAX_PX;
    if (ppu * MW_TOPO_MARKER_W >= CUBE_MIN_PX) {
        glBindVertexArray(t->vao_rank);
        glDrawArraysInstanced(GL_TRIANGLES, 0, CUBE_TRI_VERTS, (GLsizei)t->n_rank);
    } else if (t->agg_drawn) {
        /* One point per cell, as wide as the cell looks (a cube each costs llvmpipe 30
         * vertices and ten triangles: 6,400 of them were a third of a frame). */
        glBindVertexArray(t->vao_aggpt);
        glVertexAttrib4f(0, 0.5f, 1.0f, 0.5f, 1.0f);
        float ps = ppu * fminf(t->layout.cell_w, t->layout.cell_d) / (float)AGG_GRID * 0.7f;
        glPointSize(ps < 2 ? 2 : ps > 64 ? 64 : ps);
        glDrawArrays(GL_POINTS, 0, (GLsizei)t->n_agg);
        glPointSize(1);
    } else {
        /* Far away a marker is a few pixels: one point at the top of each, its corner taken
         * from the generic attribute 0 (the VAO leaves it disabled). */
        glBindVertexArray(t->vao_rankpt);
        glVertexAttrib4f(0, 0.5f, 1.0f, 0.5f, 1.0f);
        float ps = ppu * MW_TOPO_MARKER_W + 1;
        glPointSize(ps < 2 ? 2 : ps);
        glDrawArrays(GL_POINTS, 0, (GLsizei)t->n_rank);
        glPointSize(1);
    }

    glUseProgram(t->prog_line);
    glUniformMatrix4fv(t->u_line_mvp, 1, GL_FALSE, t->mvp);
    glUniform1f(t->u_line_alpha, 1.0f);
    /* Bundles are wide lines, which llvmpipe draws as quads: 2 pixels when there are many. */
    float w = mw__px(vc->layout, !bundled ? 1.0f : t->n_line > 1000 ? 2.0f : 3.0f);
    glLineWidth(w < t->line_w_max ? w : t->line_w_max);
    glBindVertexArray(t->vao_line);
    glDrawArrays(GL_LINES, 0, (GLsizei)t->n_line_verts);
    glLineWidth(1);
    glBindVertexArray(0);
    glUseProgram(0);
    t->scene_key = own ? sk : 0;
copy:
    t->curves = t->n_line;
    if (own) {
        glDisable(GL_SCISSOR_TEST);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, t->scene.fbo);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, (GLuint)prev_draw);
        int y0 = vc->fb_h - r->y - r->h;
        glBlitFramebuffer(0, 0, r->w, r->h, r->x, y0, r->x + r->w, y0 + r->h, GL_COLOR_BUFFER_BIT,
                          GL_NEAREST);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)prev_read);
    }

    glDisable(GL_DEPTH_TEST);
    glDisable(GL_SCISSOR_TEST);
    glViewport(0, 0, vc->fb_w, vc->fb_h);
    glEnable(GL_BLEND);
}

/* Rank numbers over their markers, and node names at their planes' near edge, where they fit. */
static void draw_labels(const mw_view_ctx_t *vc, mw_topo_gl_t *t, const mw_rect_t *r)
{
    mw_text_t *tx = vc->text;
    int fs = mw__font_small(vc->layout);
    float ppu = mw_camera_px_per_unit(&t->cam, r->h);
    t->labels_drawn = 0;
    mw_rgba_t dim = mw__hex(MW_COLOR_DIM, 1), txt = mw__hex(MW_COLOR_TEXT, 1);
    if (ppu * fmaxf(t->layout.cell_w, t->layout.cell_d) > 60) {
        for (size_t g = 0; g < t->layout.n_nodes && g < 512; g++) {
            const mw_topo_node_t *n = &t->layout.nodes[g];
            float p[3] = {n->lo[0], 0, n->hi[2] + 0.4f}, x, y;
            if (!mw_camera_project(t->mvp, p, r->w, r->h, &x, &y))
                continue;
            x += (float)r->x;
            y += (float)r->y;
            if (x < r->x || y < r->y || x > r->x + r->w - 20 || y > r->y + r->h - 10)
                continue;
            mw__text_drawf(tx, fs, x, y, MW_ALIGN_LEFT, dim, "%s  ·  %u ranks", n->name, n->ranks);
        }
    }
    /* Switch names above their boxes. */
    for (size_t i = 0; i < t->layout.n_switches && i < 512; i++) {
        const mw_topo_switch_t *s = &t->layout.switches[i];
        float p[3] = {(s->lo[0] + s->hi[0]) / 2, s->hi[1], (s->lo[2] + s->hi[2]) / 2}, x, y;
        if (!mw_camera_project(t->mvp, p, r->w, r->h, &x, &y))
            continue;
        x += (float)r->x;
        y += (float)r->y - (float)mw__text_line_height(tx, fs);
        if (x < r->x || y < r->y || x > r->x + r->w - 20 || y > r->y + r->h - 10)
            continue;
        if (s->level == 0)
            mw__text_drawf(tx, fs, x, y, MW_ALIGN_CENTER, txt, "%s  ·  %u node%s", s->name,
                           s->nodes, s->nodes == 1 ? "" : "s");
        else
            mw__text_draw(tx, fs, x, y, MW_ALIGN_CENTER, txt, s->name);
    }
    if (!t->labels || ppu * MW_TOPO_MARKER_W < LABEL_MIN_PX)
        return;
    int lh = mw__text_line_height(tx, fs);
    /* A label goes where no label is yet: one per cell of a grid of label-sized cells (ranks
     * packed on the PUs of a node are closer than their numbers are wide; at 100,000 ranks the
     * labels drew over each other in a grey blur). */
    int cw = 5 * fs / 2 > 8 ? 5 * fs / 2 : 8, chh = lh > 4 ? lh : 4;
    int gw = r->w / cw + 1, gh = r->h / chh + 1;
    uint8_t *used = calloc((size_t)gw * (size_t)gh, 1);
    for (uint32_t i = 0; i < t->layout.n_ranks && t->labels_drawn < LABELS_MAX; i++) {
        const float *pos = t->layout.ranks[i].pos;
        float p[3] = {pos[0], pos[1] + MW_TOPO_MARKER_H, pos[2]}, x, y;
        if (!mw_camera_project(t->mvp, p, r->w, r->h, &x, &y))
            continue;
        if (x < 0 || y < lh || x > r->w || y > r->h)
            continue;
        if (used) { /* the cell and its eight neighbours free: no two labels overlap */
            int cx = (int)x / cw, cy = (int)y / chh, busy = 0;
            for (int dy = -1; dy <= 1 && !busy; dy++)
                for (int dx = -1; dx <= 1 && !busy; dx++) {
                    int nx = cx + dx, ny = cy + dy;
                    busy = nx >= 0 && ny >= 0 && nx < gw && ny < gh &&
                           used[(size_t)ny * (size_t)gw + (size_t)nx];
                }
            if (busy)
                continue;
            used[(size_t)cy * (size_t)gw + (size_t)cx] = 1;
        }
        mw__text_drawf(tx, fs, (float)r->x + x, (float)r->y + y - (float)lh, MW_ALIGN_CENTER, txt,
                       "%" PRIu32, i);
        t->labels_drawn++;
    }
    free(used);
}

/* A horizontal color bar of ramp `rank` (0: the line scale's, 1: the rank metric's). */
static void color_bar(const mw_view_ctx_t *vc, const mw_rect_t *b, const mw_scale_t *s, int rank)
{
    int steps = b->w > 0 ? b->w : 1;
    for (int i = 0; i < steps; i++) {
        float u = steps > 1 ? (float)i / (float)(steps - 1) : 1;
        mw_rgb_t c = rank ? rank_ramp(u) : s->ranks ? mw_hue_ramp(u) : mw_ramp(u);
        mw__batch_rect(vc->batch, (float)(b->x + i), (float)b->y, 1, (float)b->h,
                       mw__rgba(c.r, c.g, c.b, 1));
    }
}

static void format_value(double v, int bytes, char *buf, size_t len)
{
    if (bytes)
        mw__format_bytes((uint64_t)(v + 0.5), buf, len);
    else if (v >= 1e6)
        snprintf(buf, len, "%.3g M", v / 1e6);
    else
        snprintf(buf, len, "%.0f", v);
}

/* The legend: the line color scale with its min and max, the rank metric, the line styles. */
static void draw_legend(const mw_view_ctx_t *vc, mw_topo_gl_t *t, const mw_rect_t *r, int bundled)
{
    mw_text_t *tx = vc->text;
    int fs = mw__font_small(vc->layout), lh = mw__text_line_height(tx, fs);
    float pad = mw__px(vc->layout, 10);
    int net = t->layout.network;
    float w = mw__px(vc->layout, 350), h = (float)lh * (net ? 10 : 8) + 2 * pad;
    float x = (float)r->x + pad, y = (float)(r->y + r->h) - h - pad;
    mw__batch_rect(vc->batch, x, y, w, h, mw__hex(0x1d2028, 0.92f));
    mw__batch_frame(vc->batch, x, y, w, h, mw__px(vc->layout, 1), mw__hex(MW_COLOR_GRID, 1));
    mw_rgba_t txt = mw__hex(MW_COLOR_TEXT, 1), dim = mw__hex(MW_COLOR_DIM, 1);
    float cy = y + pad;
    const char *what = t->color == MW_TOPO_COLOR_MESSAGES ? "messages"
                       : t->color == MW_TOPO_COLOR_BYTES  ? "bytes"
                       : t->color == MW_TOPO_COLOR_SRC
                           ? (bundled ? "source node" : "source rank")
                           : (bundled ? "destination node" : "destination rank");
    char lt[128]; /* "links: MPI_Isend messages" when one sending function is shown ('f') */
    mw_topo_link_title(t->rx ? t->rx->set.link_fn : 0, what, lt, sizeof lt);
    mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, txt, "%s%s%s", lt,
                   t->scale.ranks ? ""
                   : bundled      ? " per node pair"
                                  : " per rank pair",
                   t->scale.ranks ? ""
                   : t->scale.log ? " (log)"
                                  : " (linear)");
    cy += (float)lh + mw__px(vc->layout, 2);
    mw_rect_t bar = {(int)(x + pad), (int)cy, (int)(w - 2 * pad), (int)mw__px(vc->layout, 10)};
    color_bar(vc, &bar, &t->scale, 0);
    t->legend_bar = bar;
    cy += (float)bar.h + mw__px(vc->layout, 2);
    char a[32], b[32];
    int bytes = t->color == MW_TOPO_COLOR_BYTES;
    format_value(t->scale.min, bytes, a, sizeof a);
    format_value(t->scale.max, bytes, b, sizeof b);
    mw__text_draw(tx, fs, (float)bar.x, cy, MW_ALIGN_LEFT, dim, a);
    mw__text_draw(tx, fs, (float)(bar.x + bar.w), cy, MW_ALIGN_RIGHT, dim, b);
    cy += (float)lh + mw__px(vc->layout, 4);

    int share = t->n_rank_pm == t->layout.n_ranks && t->n_rank_pm > 0;
    int region = t->rx && t->rx->set.ranks != MW_RANKS_DEFAULT;
    char rname[96];
    if (region)
        mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, txt, "ranks: time in region %s (%s)",
                       mw_region_name(vc->model, t->rx->region, rname, sizeof rname),
                       t->rx->set.ranks == MW_RANKS_REGION_INCL ? "inclusive" : "exclusive");
    else if (share)
        mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, txt,
                       "ranks: time in MPI, share of the window");
    else
        mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, txt,
                       "ranks: bytes sent in this %s (log)", t->step_mode ? "step" : "window");
    cy += (float)lh + mw__px(vc->layout, 2);
    mw_rect_t rb = {(int)(x + pad), (int)cy, (int)(w - 2 * pad), (int)mw__px(vc->layout, 8)};
    color_bar(vc, &rb, &t->rank_scale, !region);
    t->rank_bar = rb;
    cy += (float)rb.h + mw__px(vc->layout, 2);
    if (region) {
        snprintf(a, sizeof a, "0");
        mw_format_duration(t->rank_scale.max, b, sizeof b);
    } else if (share) {
        snprintf(a, sizeof a, "0%%");
        snprintf(b, sizeof b, "100%%");
    } else {
        mw__format_bytes((uint64_t)t->rank_scale.min, a, sizeof a);
        mw__format_bytes((uint64_t)t->rank_scale.max, b, sizeof b);
    }
    mw__text_draw(tx, fs, (float)rb.x, cy, MW_ALIGN_LEFT, dim, a);
    mw__text_draw(tx, fs, (float)(rb.x + rb.w), cy, MW_ALIGN_RIGHT, dim, b);
    cy += (float)lh + mw__px(vc->layout, 6);

    /* Line styles: solid intra-node, dashed inter-node, dim at the sender. */
    float sx = x + pad, sw = mw__px(vc->layout, 36), lw = mw__px(vc->layout, 2);
    float my = cy + (float)lh / 2;
    mw_rgba_t lc = mw__hex(0xd8dce3, 1);
    mw__batch_line(vc->batch, sx, my, sx + sw, my, lw, lc);
    mw__text_draw(tx, fs, sx + sw + mw__px(vc->layout, 6), cy, MW_ALIGN_LEFT, dim, "intra-node");
    float dx = sx + w / 2 - pad;
    for (int i = 0; i < 4; i++)
        mw__batch_line(vc->batch, dx + (float)i * sw / 4, my, dx + (float)i * sw / 4 + sw / 7, my,
                       lw, lc);
    mw__text_draw(tx, fs, dx + sw + mw__px(vc->layout, 6), cy, MW_ALIGN_LEFT, dim,
                  net ? "intra-switch" : "inter-node");
    cy += (float)lh + mw__px(vc->layout, 2);
    if (net) {
        /* Between switches: dotted, and higher arcs. */
        my = cy + (float)lh / 2;
        for (int i = 0; i < 9; i++)
            mw__batch_line(vc->batch, sx + (float)i * sw / 9, my, sx + (float)i * sw / 9 + sw / 22,
                           my, lw, lc);
        mw__text_draw(tx, fs, sx + sw + mw__px(vc->layout, 6), cy, MW_ALIGN_LEFT, dim,
                      "inter-switch (higher arcs)");
        cy += (float)lh + mw__px(vc->layout, 2);
        mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, dim,
                       "planes by %s (n)  ·  node gap %.3g (g / G)",
                       t->plane_color == MW_PLANES_BY_SWITCH ? "switch"
                       : t->plane_color == MW_PLANES_BY_NODE ? "node"
                                                             : "nothing",
                       (double)t->layout.node_gap);
        cy += (float)lh + mw__px(vc->layout, 2);
    }
    mw__text_draw(tx, fs, x + pad, cy, MW_ALIGN_LEFT, dim,
                  "dim end: sender (leaves its base) → arrives on top");
}

static void draw_info(const mw_view_ctx_t *vc, mw_topo_gl_t *t, const mw_rect_t *r, int bundled)
{
    mw_text_t *tx = vc->text;
    int fs = mw__font_small(vc->layout), lh = mw__text_line_height(tx, fs);
    float pad = mw__px(vc->layout, 10), x = (float)r->x + pad, y = (float)r->y + pad;
    mw_rgba_t txt = mw__hex(MW_COLOR_TEXT, 1), dim = mw__hex(MW_COLOR_DIM, 1);
    mw__text_drawf(tx, vc->layout->font_px, x, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_ACCENT, 1),
                   "%s%s", t->what,
                   t->playing  ? "  ▶"
                   : t->follow ? "  (newest)"
                               : "");
    y += (float)mw__text_line_height(tx, vc->layout->font_px);
    const mw_topo_lines_t *L = &t->lines;
    if (!t->have_data) {
        mw__text_draw(tx, fs, x, y, MW_ALIGN_LEFT, dim, "not loaded");
    } else {
        if (t->layout.network)
            mw__text_drawf(tx, fs, x, y, MW_ALIGN_LEFT, txt,
                           "%zu rank pairs: %zu intra-node, %zu intra-switch, %zu inter-switch"
                           "  ·  %zu node pairs",
                           L->n_lines, L->by_class[MW_LINK_INTRA_NODE],
                           L->by_class[MW_LINK_INTRA_SWITCH], L->by_class[MW_LINK_INTER_SWITCH],
                           L->n_bundles);
        else
            mw__text_drawf(tx, fs, x, y, MW_ALIGN_LEFT, txt,
                           "%zu rank pairs: %zu intra-node, %zu inter-node  ·  %zu node pairs",
                           L->n_lines, L->intra, L->inter, L->n_bundles);
    }
    y += (float)lh;
    mw__text_drawf(tx, fs, x, y, MW_ALIGN_LEFT, dim,
                   "%s (b)  ·  periodic %s (p)  ·  color %s (c)  ·  %s (w)",
                   t->bundles < 0 ? (bundled ? "auto: node bundles" : "auto: rank lines")
                   : bundled      ? "node bundles"
                                  : "rank lines",
                   t->periodic ? "on" : "off", mw_topo_color_name(t->color),
                   t->step_mode ? "steps" : "windows");
    y += (float)lh;
    if (bundled && t->bundles_over) {
        mw__text_drawf(tx, fs, x, y, MW_ALIGN_LEFT, mw__hex(0xe5c07b, 1),
                       "the %zu heaviest node pairs drawn (by %s), %zu lighter ones left out",
                       t->bundles_drawn, t->color == MW_TOPO_COLOR_BYTES ? "bytes" : "messages",
                       t->bundles_over);
        y += (float)lh;
    }
    mw__text_drawf(tx, fs, x, y, MW_ALIGN_LEFT, dim, "%zu nodes%s  ·  %" PRIu32 " ranks%s",
                   t->layout.n_nodes, t->layout.fallback ? " (no hardware reported: by host)" : "",
                   t->layout.n_ranks,
                   t->layout.network ? "  ·  network: nodes under switches" : "");
}

static void draw_pick(const mw_view_ctx_t *vc, mw_topo_gl_t *t, const mw_rect_t *r)
{
    if (t->pick.kind == MW_TOPO_PICK_NONE)
        return;
    mw_text_t *tx = vc->text;
    int fs = mw__font_small(vc->layout), lh = mw__text_line_height(tx, fs);
    float pad = mw__px(vc->layout, 10), w = mw__px(vc->layout, 290), h = (float)lh * 4 + 2 * pad;
    float x = (float)(r->x + r->w) - w - pad, y = (float)r->y + pad;
    mw__batch_rect(vc->batch, x, y, w, h, mw__hex(0x1d2028, 0.92f));
    mw__batch_frame(vc->batch, x, y, w, h, mw__px(vc->layout, 1), mw__hex(MW_COLOR_ACCENT, 1));
    mw_rgba_t txt = mw__hex(MW_COLOR_TEXT, 1);
    char a[32];
    float cy = y + pad;
    if (t->pick.kind == MW_TOPO_PICK_RANK) {
        uint32_t rk = t->pick.rank;
        int32_t g = t->layout.ranks[rk].node;
        mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, txt, "rank %" PRIu32 " on %s", rk,
                       g >= 0 ? t->layout.nodes[g].name : "?");
        cy += (float)lh;
        if (t->lines.n_ranks > rk) {
            mw__format_bytes(t->lines.rank_bytes[rk], a, sizeof a);
            mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, txt, "sent %" PRIu64 " messages, %s",
                           t->lines.rank_messages[rk], a);
        }
        if (rk < t->n_rank_pm && t->rank_pm[rk] != MW_RANK_PM_NONE_VIEW) {
            cy += (float)lh;
            mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, txt, "in MPI %.1f%% of the window",
                           t->rank_pm[rk] / 10.0);
        }
    } else if (t->pick.kind == MW_TOPO_PICK_LINE && t->pick.index < t->lines.n_lines) {
        const mw_topo_line_t *l = &t->lines.lines[t->pick.index];
        mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, txt,
                       "rank %" PRIu32 " → rank %" PRIu32 "  (%s)", l->src, l->dst,
                       l->inter ? "inter-node" : "intra-node");
        cy += (float)lh;
        mw__format_bytes(l->bytes, a, sizeof a);
        mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, txt, "%" PRIu64 " messages, %s",
                       l->messages, a);
    } else if (t->pick.kind == MW_TOPO_PICK_BUNDLE && t->pick.index < t->lines.n_bundles) {
        const mw_topo_bundle_t *b = &t->lines.bundles[t->pick.index];
        mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, txt, "%s → %s",
                       t->layout.nodes[b->a].name, t->layout.nodes[b->b].name);
        cy += (float)lh;
        mw__format_bytes(b->bytes, a, sizeof a);
        mw__text_drawf(tx, fs, x + pad, cy, MW_ALIGN_LEFT, txt,
                       "%" PRIu32 " rank pairs, %" PRIu64 " messages, %s", b->pairs, b->messages,
                       a);
    }
}

void mw__topo_draw(const mw_view_ctx_t *vc, mw_topo_gl_t *t)
{
    mw_rect_t r = topo_region(vc->layout);
    t->region = r;
    if (mw__topo_update(vc, t) < 0)
        return;
    int bundled = mw__topo_bundled(t, vc->layout);
    t->bundled = bundled;
    mw__batch_flush(vc->batch);
    mw__text_flush(vc->text);
    if (t->layout.n_nodes)
        draw_3d(vc, t, &r, bundled);
    draw_labels(vc, t, &r);
    draw_info(vc, t, &r, bundled);
    draw_legend(vc, t, &r, bundled);
    draw_pick(vc, t, &r);
}

mw_topo_pick_t mw__topo_pick(const mw_view_ctx_t *vc, mw_topo_gl_t *t, int x, int y)
{
    mw_rect_t r = topo_region(vc->layout);
    mw__topo_update(vc, t);
    int bundled = mw__topo_bundled(t, vc->layout);
    float mvp[16];
    mw_camera_matrix(&t->cam, (float)r.w / (float)(r.h > 0 ? r.h : 1), mvp);
    t->pick = mw_topo_pick(&t->layout, &t->lines, bundled, t->periodic, mvp, r.w, r.h,
                           (float)(x - r.x), (float)(y - r.y), mw__px(vc->layout, PICK_RADIUS_PX));
    return t->pick;
}
