/* view_terrain.c: the terrain view: ranks x functions (or code regions) x a metric over the call
 * view's range, as a 3D height field under the orbit camera or as a 2D heat map ('h').
 *
 * DESIGN: everything it shows is computed by the model (model_terrain.h): the per-rank sums of
 * the range, the columns, the rows (ranks aggregated to the pixels the view has, each row the
 * largest of its ranks), the largest cells, the geometry and picking. The 3D field is one vertex
 * buffer of triangles (position and a colour already shaded per face: the top at full
 * brightness, the sides darker by their direction, so heights read without a lighting pass),
 * rebuilt only when the grid, the scale or the rows change: a frame is one draw call whatever
 * the job's size (llvmpipe runs instanced draws instance by instance, so cells are not
 * instanced). A side is emitted only where it rises above its neighbour in the row order. The
 * heat map is drawn with the shape batch, one rectangle per cell. Labels, the scale, the marks of
 * the largest cells, the highlighted rank and the picked cell are 2D overlays projected with
 * the camera. The view takes the call view's region under the timeline, whose selection is its
 * range, so it follows the newest windows live like the call view.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw_json.h"
#include "views.h"

#define VERT_FLOATS 6 /* x, y, z, r, g, b */
#define MARK_R_PX 9.0f
#define FRONT_SHADE 0.82f /* the +z (front) faces: towards the default eye */

static const char *vs = "#version 330 core\n"
                        "layout(location = 0) in vec3 a_p;\n"
                        "layout(location = 1) in vec3 a_c;\n"
                        "uniform mat4 u_mvp;\n"
                        "out vec3 v_c;\n"
                        "void main() { gl_Position = u_mvp * vec4(a_p, 1.0); v_c = a_c; }\n";
static const char *fs = "#version 330 core\n"
                        "in vec3 v_c;\n"
                        "out vec4 o;\n"
                        "void main() { o = vec4(v_c, 1.0); }\n";

int mw__terrain_init(mw_terrain_gl_t *te, const mw_viewer_options_t *opt)
{
    memset(te, 0, sizeof *te);
    te->tr = mw_terrain_new();
    if (!te->tr)
        return -1;
    mw_terrain_opts_t o;
    char err[200];
    memset(&o, 0, sizeof o);
    if (opt->terrain && mw_terrain_parse(opt->terrain, &o, err, sizeof err) < 0) {
        fprintf(stderr, "mpiwatch-viewer: --terrain: %s\n", err);
        return -1;
    }
    te->what = o.what;
    te->metric = o.metric;
    te->heatmap = o.heatmap;
    te->log = o.log;
    te->camera_given = opt->camera_given;
    te->cam_yaw = opt->cam_yaw;
    te->cam_pitch = opt->cam_pitch;
    te->cam_distance = opt->cam_distance;
    te->pick_col = -1;
    te->prog = mw__gl_program("terrain", vs, fs, NULL);
    if (!te->prog)
        return -1;
    te->u_mvp = glGetUniformLocation(te->prog, "u_mvp");
    glGenVertexArrays(1, &te->vao);
    glGenBuffers(1, &te->vbo);
    glBindVertexArray(te->vao);
    glBindBuffer(GL_ARRAY_BUFFER, te->vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, VERT_FLOATS * sizeof(float), (const void *)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, VERT_FLOATS * sizeof(float),
                          (const void *)(3 * sizeof(float)));
    glBindVertexArray(0);
    return mw__gl_check("terrain setup");
}

void mw__terrain_free(mw_terrain_gl_t *te)
{
    if (te->prog_tex) {
        glDeleteProgram(te->prog_tex);
        glDeleteTextures(1, &te->tex);
        mw__vbuf_free(&te->quad);
    }
    if (te->prog)
        glDeleteProgram(te->prog);
    if (te->vao)
        glDeleteVertexArrays(1, &te->vao);
    if (te->vbo)
        glDeleteBuffers(1, &te->vbo);
    mw_terrain_free(te->tr);
    te->tr = NULL;
}

void mw__terrain_reset(mw_terrain_gl_t *te)
{
    te->pick_col = -1;
    te->cam_fitted = 0;
}

/* ---- layout and data ---------------------------------------------------------------------- */

/* The header's height: two lines of text. */
static int header_h(const mw_view_ctx_t *vc)
{
    int fs_px = mw__font_small(vc->layout);
    return mw__text_line_height(vc->text, vc->layout->font_px) +
           mw__text_line_height(vc->text, fs_px) + (int)mw__px(vc->layout, 8);
}

static void terrain_rects(const mw_view_ctx_t *vc, mw_terrain_gl_t *te)
{
    const mw_layout_t *l = vc->layout;
    te->region = l->density;
    mw_rect_t r = te->region;
    int hh = header_h(vc);
    int lh = mw__text_line_height(vc->text, mw__font_small(l));
    if (te->heatmap) {
        int left = (int)mw__px(l, 78), right = (int)mw__px(l, 96);
        mw_rect_t p = {r.x + left, r.y + hh + lh + (int)mw__px(l, 6), r.w - left - right,
                       r.h - hh - lh - (int)mw__px(l, 6) - 3 * lh - (int)mw__px(l, 8)};
        te->plot = p;
        mw_rect_t b = {p.x + p.w + (int)mw__px(l, 16), p.y, (int)mw__px(l, 14), p.h};
        te->bar = b;
    } else {
        mw_rect_t p = {r.x, r.y + hh, r.w, r.h - hh};
        te->plot = p;
        mw_rect_t b = {r.x + r.w - (int)mw__px(l, 250), r.y + r.h - (int)mw__px(l, 34),
                       (int)mw__px(l, 230), (int)mw__px(l, 9)};
        te->bar = b;
    }
    if (te->plot.w < 1)
        te->plot.w = 1;
    if (te->plot.h < 1)
        te->plot.h = 1;
}

int mw__terrain_update(const mw_view_ctx_t *vc, mw_terrain_gl_t *te)
{
    double f0 = 0, f1 = 0;
    mw_view_focus(vc->view, &f0, &f1);
    if (!mw_terrain_metric_valid(te->what, te->metric))
        te->metric = MW_TERRAIN_TIME;
    if (mw_terrain_update(te->tr, vc->model, f0, f1, te->what, te->metric) < 0)
        fprintf(stderr, "mpiwatch-viewer: out of memory for the terrain\n");
    terrain_rects(vc, te);
    const mw_terrain_info_t *in = mw_terrain_info(te->tr);
    if (in->ncols > 0 && (!te->cam_fitted || te->cam_cols != in->ncols || te->cam_w != te->plot.w ||
                          te->cam_h != te->plot.h)) {
        mw_terrain_camera(&te->cam, in->ncols, (float)te->plot.w / (float)te->plot.h);
        if (te->camera_given) {
            te->cam.yaw = te->cam_yaw;
            te->cam.pitch = te->cam_pitch;
            if (te->cam_distance > 0)
                te->cam.distance = te->cam_distance;
        }
        te->cam_fitted = 1;
        te->cam_cols = in->ncols;
        te->cam_w = te->plot.w;
        te->cam_h = te->plot.h;
    }
    mw_camera_matrix(&te->cam, (float)te->plot.w / (float)te->plot.h, te->mvp);
    /* Rows: one per pixel the ranks' axis spans, the heat map's height or in 3D the longer of
     * the field's two sides along the ranks as projected now (a row thinner than a pixel
     * on screen would cost triangles and show nothing more). */
    uint32_t max_rows = (uint32_t)te->plot.h;
    if (!te->heatmap && in->ncols) {
        float px = 0, W = (float)in->ncols * mw_terrain_col_w(in->ncols);
        for (int s = 0; s < 2; s++) {
            float a[3] = {s ? W : 0, 0, 0}, b[3] = {s ? W : 0, 0, MW_TERRAIN_DEPTH}, x0, y0, x1, y1;
            if (mw_camera_project(te->mvp, a, te->plot.w, te->plot.h, &x0, &y0) &&
                mw_camera_project(te->mvp, b, te->plot.w, te->plot.h, &x1, &y1)) {
                float d = sqrtf((x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0));
                px = d > px ? d : px;
            }
        }
        /* In steps of 16 rows, so that a small zoom does not aggregate again. */
        uint32_t r = ((uint32_t)px + 15) / 16 * 16;
        max_rows = r < 16 ? 16 : r > 4096 ? 4096 : r;
    }
    te->max_rows = max_rows;
    te->have_grid = mw_terrain_rows(te->tr, max_rows, &te->grid) == 0;
    return 0;
}

/* ---- values ------------------------------------------------------------------------------- */

static void format_value(const mw_terrain_info_t *in, double v, char *buf, size_t len)
{
    if (mw_terrain_metric_is_time(in->metric))
        mw_format_duration(v, buf, len);
    else if (in->metric == MW_TERRAIN_BYTES)
        mw__format_bytes((uint64_t)(v + 0.5), buf, len);
    else if (v >= 1e6)
        snprintf(buf, len, "%.3g M", v / 1e6);
    else
        snprintf(buf, len, "%.0f", v);
}

static mw_rgb_t cell_color(const mw_terrain_gl_t *te, double v)
{
    return mw_ramp(mw_terrain_t01(v, te->grid.vmax, te->log));
}

/* ---- the 3D field ------------------------------------------------------------------------- */

/* A quad as two triangles, counter-clockwise seen from the side its outward normal n points
 * to (the 3D pass culls back faces: only the sides facing the eye are rasterised, which halves
 * llvmpipe's work on a large job's thin rows). */
static float *put_quad_n(float *v, const float p[4][3], mw_rgb_t c, float shade, const float *n)
{
    static const int ccw[6] = {0, 1, 2, 0, 2, 3}, cw[6] = {0, 2, 1, 0, 3, 2};
    const int *tri = ccw;
    if (n) {
        float a[3], b[3];
        for (int i = 0; i < 3; i++) {
            a[i] = p[1][i] - p[0][i];
            b[i] = p[2][i] - p[0][i];
        }
        float x[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                      a[0] * b[1] - a[1] * b[0]};
        if (x[0] * n[0] + x[1] * n[1] + x[2] * n[2] < 0)
            tri = cw;
    }
    for (int i = 0; i < 6; i++) {
        memcpy(v, p[tri[i]], 3 * sizeof *v);
        v[3] = c.r * shade;
        v[4] = c.g * shade;
        v[5] = c.b * shade;
        v += VERT_FLOATS;
    }
    return v;
}

static const float N_UP[3] = {0, 1, 0}, N_XM[3] = {-1, 0, 0}, N_XP[3] = {1, 0, 0},
                   N_ZP[3] = {0, 0, 1}, N_ZM[3] = {0, 0, -1};

static void build_field(mw_terrain_gl_t *te)
{
    const mw_terrain_grid_t *g = &te->grid;
    size_t cells = (size_t)g->rows * (size_t)g->ncols;
    /* Per cell at most a top and four sides, plus the floor and the column lanes. */
    size_t cap = (cells * 5 + 2 + (size_t)g->ncols) * 6 * VERT_FLOATS + 64 * VERT_FLOATS;
    float *buf = malloc(cap * sizeof *buf), *v = buf;
    if (!buf)
        return;
    float D = MW_TERRAIN_DEPTH, cw = mw_terrain_col_w(g->ncols), W = (float)g->ncols * cw;
    mw_rgb_t floor_c = {0.105f, 0.118f, 0.145f}, lane_c = {0.14f, 0.155f, 0.19f};
    const float fl[4][3] = {{-0.3f, -0.02f, -0.3f},
                            {W + 0.3f, -0.02f, -0.3f},
                            {W + 0.3f, -0.02f, D + 0.3f},
                            {-0.3f, -0.02f, D + 0.3f}};
    v = put_quad_n(v, fl, floor_c, 1, N_UP);
    for (int c = 0; c < g->ncols; c++) { /* each column's lane on the floor */
        float x0 = ((float)c + MW_TERRAIN_GAP * 0.5f) * cw,
              x1 = ((float)(c + 1) - MW_TERRAIN_GAP * 0.5f) * cw;
        const float ln[4][3] = {{x0, -0.01f, 0}, {x1, -0.01f, 0}, {x1, -0.01f, D}, {x0, -0.01f, D}};
        v = put_quad_n(v, ln, lane_c, 1, N_UP);
    }
    for (uint32_t y = 0; y < g->rows; y++)
        for (int c = 0; c < g->ncols; c++) {
            double val = g->v[(size_t)y * (size_t)g->ncols + (size_t)c];
            if (!(val > 0))
                continue;
            float lo[3], hi[3];
            mw_terrain_cell_box(g, te->log, y, c, lo, hi);
            if (hi[1] < 0.015f)
                hi[1] = 0.015f; /* a value too small to see still leaves a coloured tile */
            mw_rgb_t col = cell_color(te, val);
            const float top[4][3] = {{lo[0], hi[1], lo[2]},
                                     {hi[0], hi[1], lo[2]},
                                     {hi[0], hi[1], hi[2]},
                                     {lo[0], hi[1], hi[2]}};
            v = put_quad_n(v, top, col, 1.0f, N_UP);
            const float xm[4][3] = {
                {lo[0], 0, lo[2]}, {lo[0], 0, hi[2]}, {lo[0], hi[1], hi[2]}, {lo[0], hi[1], lo[2]}};
            v = put_quad_n(v, xm, col, 0.62f, N_XM);
            const float xp[4][3] = {
                {hi[0], 0, lo[2]}, {hi[0], 0, hi[2]}, {hi[0], hi[1], hi[2]}, {hi[0], hi[1], lo[2]}};
            v = put_quad_n(v, xp, col, 0.7f, N_XP);
            /* Front (+z) and back (-z) walls down to the neighbour's height. */
            float hn[2] = {0, 0};
            for (int s = 0; s < 2; s++) {
                int64_t ny = (int64_t)y + (s ? 1 : -1);
                if (ny >= 0 && ny < (int64_t)g->rows) {
                    float l2[3], h2[3];
                    mw_terrain_cell_box(g, te->log, (uint32_t)ny, c, l2, h2);
                    hn[s] = g->v[(size_t)ny * (size_t)g->ncols + (size_t)c] > 0 ? h2[1] : 0;
                }
            }
            if (hi[1] > hn[1]) {
                const float zp[4][3] = {{lo[0], hn[1], hi[2]},
                                        {hi[0], hn[1], hi[2]},
                                        {hi[0], hi[1], hi[2]},
                                        {lo[0], hi[1], hi[2]}};
                v = put_quad_n(v, zp, col, FRONT_SHADE, N_ZP);
            }
            if (hi[1] > hn[0]) {
                const float zm[4][3] = {{lo[0], hn[0], lo[2]},
                                        {hi[0], hn[0], lo[2]},
                                        {hi[0], hi[1], lo[2]},
                                        {lo[0], hi[1], lo[2]}};
                v = put_quad_n(v, zm, col, 0.5f, N_ZM);
            }
        }
    te->n_tri = (size_t)(v - buf) / VERT_FLOATS;
    /* The back and left walls' grid: a line at every quarter of the height, drawn with the
     * depth test so that columns in front hide it. */
    mw_rgb_t gc = {0.24f, 0.26f, 0.31f};
    for (int i = 0; i <= 4; i++) {
        float h = MW_TERRAIN_HEIGHT * (float)i / 4;
        const float seg[2][2][3] = {{{-0.3f, h, -0.3f}, {W + 0.3f, h, -0.3f}},
                                    {{W + 0.3f, h, -0.3f}, {W + 0.3f, h, D + 0.3f}}};
        for (int k = 0; k < 2; k++)
            for (int e = 0; e < 2; e++) {
                memcpy(v, seg[k][e], 3 * sizeof *v);
                v[3] = gc.r;
                v[4] = gc.g;
                v[5] = gc.b;
                v += VERT_FLOATS;
            }
    }
    const float up[2][2][3] = {{{-0.3f, 0, -0.3f}, {-0.3f, MW_TERRAIN_HEIGHT, -0.3f}},
                               {{W + 0.3f, 0, D + 0.3f}, {W + 0.3f, MW_TERRAIN_HEIGHT, D + 0.3f}}};
    for (int k = 0; k < 2; k++)
        for (int e = 0; e < 2; e++) {
            memcpy(v, up[k][e], 3 * sizeof *v);
            v[3] = gc.r;
            v[4] = gc.g;
            v[5] = gc.b;
            v += VERT_FLOATS;
        }
    size_t n = (size_t)(v - buf);
    glBindBuffer(GL_ARRAY_BUFFER, te->vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(n * sizeof *buf), buf, GL_STATIC_DRAW);
    free(buf);
    te->n_verts = n / VERT_FLOATS;
    te->rebuilds++;
}

static void draw_field(const mw_view_ctx_t *vc, mw_terrain_gl_t *te)
{
    uint64_t key = (te->grid.gen * 31 + (uint64_t)te->log * 7 + 1) * 1000003;
    const char *rb = getenv("MW_BENCH_REBIN");
    if (rb && !strcmp(rb, "1"))
        key = 0; /* benchmarks: what a live view receiving windows costs */
    if (key != te->key || !key) {
        build_field(te);
        te->key = key;
    }
    const mw_rect_t *r = &te->plot;
    mw__batch_flush(vc->batch);
    mw__text_flush(vc->text);
    mw__gl_begin_3d(r->x, r->y, r->w, r->h, vc->fb_h);
    glUseProgram(te->prog);
    glUniformMatrix4fv(te->u_mvp, 1, GL_FALSE, te->mvp);
    glBindVertexArray(te->vao);
    glEnable(GL_CULL_FACE);
    glCullFace(GL_BACK);
    glFrontFace(GL_CCW);
    glDrawArrays(GL_TRIANGLES, 0, (GLsizei)te->n_tri);
    glDisable(GL_CULL_FACE);
    glDrawArrays(GL_LINES, (GLint)te->n_tri, (GLsizei)(te->n_verts - te->n_tri));
    glBindVertexArray(0);
    glUseProgram(0);
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_SCISSOR_TEST);
    glViewport(0, 0, vc->fb_w, vc->fb_h);
    glEnable(GL_BLEND);
}

/* Pixel of world point p in the framebuffer; 0 when behind the eye. */
static int proj(const mw_terrain_gl_t *te, const float p[3], float *x, float *y)
{
    if (!mw_camera_project(te->mvp, p, te->plot.w, te->plot.h, x, y))
        return 0;
    *x += (float)te->plot.x;
    *y += (float)te->plot.y;
    return 1;
}

static void line3(const mw_view_ctx_t *vc, const mw_terrain_gl_t *te, const float a[3],
                  const float b[3], float lw, mw_rgba_t c)
{
    float x0, y0, x1, y1;
    if (proj(te, a, &x0, &y0) && proj(te, b, &x1, &y1))
        mw__batch_line(vc->batch, x0, y0, x1, y1, lw, c);
}

/* A short name for a narrow column: without "MPI_". */
static const char *short_name(const char *s, int narrow)
{
    return narrow && !strncmp(s, "MPI_", 4) ? s + 4 : s;
}

/* As many rows of column labels as the widest name needs at `spacing` pixels per column (at
 * most 3): column c's label goes in row c % rows. */
static int label_rows(const mw_view_ctx_t *vc, const mw_terrain_info_t *in, float spacing,
                      int narrow)
{
    int fs_px = mw__font_small(vc->layout), rows = 1;
    for (int c = 0; c < in->ncols; c++) {
        float w = mw__text_width(vc->text, fs_px, short_name(in->cols[c].name, narrow)) + 8;
        int k = (int)ceilf(w / (spacing > 1 ? spacing : 1));
        rows = k > rows ? k : rows;
    }
    return rows > 3 ? 3 : rows;
}

/* The axes of the 3D field: function names along the front, ranks along the right side, the
 * metric's scale up the back-left corner. */
static void axes_3d(const mw_view_ctx_t *vc, mw_terrain_gl_t *te)
{
    const mw_terrain_info_t *in = mw_terrain_info(te->tr);
    const mw_terrain_grid_t *g = &te->grid;
    mw_text_t *tx = vc->text;
    int fs_px = mw__font_small(vc->layout), lh = mw__text_line_height(tx, fs_px);
    mw_rgba_t txt = mw__hex(MW_COLOR_TEXT, 1), dim = mw__hex(MW_COLOR_DIM, 1),
              ax = mw__hex(MW_COLOR_AXIS, 0.9f);
    float D = MW_TERRAIN_DEPTH, cw = mw_terrain_col_w(g->ncols), W = (float)g->ncols * cw;
    float lw = mw__px(vc->layout, 1);
    /* Function names, staggered in two rows when they would touch. */
    float a0[3] = {0, 0, D + 0.35f}, a1[3] = {W, 0, D + 0.35f}, xa, ya, xb, yb;
    float spacing = 80;
    if (proj(te, a0, &xa, &ya) && proj(te, a1, &xb, &yb))
        spacing = fabsf(xb - xa) / (float)(g->ncols > 0 ? g->ncols : 1);
    line3(vc, te, a0, a1, lw, ax);
    int narrow = spacing < 110, rows = label_rows(vc, in, spacing, narrow);
    for (int c = 0; c < g->ncols; c++) {
        float p[3] = {((float)c + 0.5f) * cw, 0, D + 0.35f}, x, y;
        if (!proj(te, p, &x, &y))
            continue;
        int k = c % rows;
        char fit[80];
        mw__text_fit(tx, fs_px, short_name(in->cols[c].name, narrow), spacing * (float)rows - 6,
                     fit, sizeof fit);
        mw__batch_line(vc->batch, x, y, x, y + (float)(k * lh + 4), lw, ax);
        mw__text_draw(tx, fs_px, x, y + 4 + (float)(k * lh), MW_ALIGN_CENTER,
                      c == in->ncols - 1 && in->other ? dim : txt, fit);
    }
    /* Ranks along the left side. */
    float r0[3] = {-0.3f, 0, 0}, r1[3] = {-0.3f, 0, D};
    line3(vc, te, r0, r1, lw, ax);
    uint32_t R = in->ranks;
    uint32_t ticks[5] = {0, R / 4, R / 2, 3 * (R / 4), R ? R - 1 : 0};
    float lx = 1e9f;
    for (int i = 0; i < 5; i++) {
        if (i && ticks[i] == ticks[i - 1])
            continue;
        uint32_t y = mw_terrain_row_of(g, ticks[i]);
        float p[3] = {-0.3f, 0, ((float)y + 0.5f) * D / (float)g->rows}, x, yy;
        if (!proj(te, p, &x, &yy))
            continue;
        mw__batch_line(vc->batch, x - 5, yy, x, yy, lw, ax);
        char b[16];
        snprintf(b, sizeof b, "%" PRIu32, ticks[i]);
        mw__text_draw(tx, fs_px, x - 8, yy - (float)lh / 2, MW_ALIGN_RIGHT, dim, b);
        float l = x - 8 - mw__text_width(tx, fs_px, b);
        lx = l < lx ? l : lx;
    }
    float tp[3] = {-0.3f, 0, D * 0.5f}, x, y;
    if (proj(te, tp, &x, &y) && lx < 1e8f)
        mw__text_draw(tx, fs_px, lx - 8, y - (float)lh / 2, MW_ALIGN_RIGHT, txt, "ranks");
    /* The metric: a scale up the back-right corner, with 0, half and the top value. */
    float m0[3] = {W + 0.3f, 0, -0.3f}, m1[3] = {W + 0.3f, MW_TERRAIN_HEIGHT, -0.3f};
    line3(vc, te, m0, m1, lw, ax);
    for (int i = 0; i <= 2; i++) {
        float u = (float)i / 2, p[3] = {W + 0.3f, MW_TERRAIN_HEIGHT * u, -0.3f};
        if (!proj(te, p, &x, &y))
            continue;
        double v = te->log ? expm1((double)u * log1p(g->vmax)) : (double)u * g->vmax;
        char b[40];
        format_value(in, v, b, sizeof b);
        mw__batch_line(vc->batch, x, y, x + 5, y, lw, ax);
        mw__text_draw(tx, fs_px, x + 8, y - (float)lh / 2, MW_ALIGN_LEFT, dim, b);
    }
    if (proj(te, m1, &x, &y))
        mw__text_draw(tx, fs_px, x, y - (float)lh - 6, MW_ALIGN_CENTER, txt,
                      mw_terrain_metric_name(in->what, in->metric));
}

/* ---- the heat map ------------------------------------------------------------------------- */

/* The heat map: one texel per cell (columns x rows, RGBA), uploaded only when the grid or the
 * scale change, drawn as one textured quad over the plot with nearest filtering (rows a pixel
 * high as triangles cost llvmpipe a triangle setup each); the columns' separators are lines. */
static const char *tex_vs =
    "#version 330 core\n"
    "layout(location = 0) in vec2 a_p;\n"
    "layout(location = 1) in vec2 a_t;\n"
    "uniform mat4 u_proj;\n"
    "out vec2 v_t;\n"
    "void main() { gl_Position = u_proj * vec4(a_p, 0.0, 1.0); v_t = a_t; }\n";
static const char *tex_fs = "#version 330 core\n"
                            "in vec2 v_t;\n"
                            "uniform sampler2D u_tex;\n"
                            "out vec4 o;\n"
                            "void main() { o = vec4(texture(u_tex, v_t).rgb, 1.0); }\n";

static int heat_gl(mw_terrain_gl_t *te)
{
    if (te->prog_tex)
        return 0;
    te->prog_tex = mw__gl_program("terrain heat map", tex_vs, tex_fs, NULL);
    if (!te->prog_tex)
        return -1;
    te->u_tex_proj = glGetUniformLocation(te->prog_tex, "u_proj");
    te->u_tex = glGetUniformLocation(te->prog_tex, "u_tex");
    glGenTextures(1, &te->tex);
    glBindTexture(GL_TEXTURE_2D, te->tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glBindTexture(GL_TEXTURE_2D, 0);
    const int sizes[2] = {2, 2};
    return mw__vbuf_init(&te->quad, sizes, 2);
}

static void upload_heat(mw_terrain_gl_t *te)
{
    const mw_terrain_grid_t *g = &te->grid;
    size_t n = (size_t)g->rows * (size_t)g->ncols;
    unsigned char *px = malloc(n * 4 + 4);
    if (!px)
        return;
    mw_rgba_t bg = mw__hex(MW_COLOR_PLOT, 1);
    for (size_t i = 0; i < n; i++) {
        mw_rgb_t c = {bg.r, bg.g, bg.b};
        if (g->v[i] > 0)
            c = cell_color(te, g->v[i]);
        px[i * 4 + 0] = (unsigned char)(c.r * 255.0f + 0.5f);
        px[i * 4 + 1] = (unsigned char)(c.g * 255.0f + 0.5f);
        px[i * 4 + 2] = (unsigned char)(c.b * 255.0f + 0.5f);
        px[i * 4 + 3] = 255;
    }
    glBindTexture(GL_TEXTURE_2D, te->tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, g->ncols, (GLsizei)g->rows, 0, GL_RGBA,
                 GL_UNSIGNED_BYTE, px);
    glBindTexture(GL_TEXTURE_2D, 0);
    free(px);
    te->rebuilds++;
}

static void draw_cells_2d(const mw_view_ctx_t *vc, mw_terrain_gl_t *te)
{
    if (heat_gl(te) < 0)
        return;
    const mw_rect_t *p = &te->plot;
    uint64_t key = (te->grid.gen * 31 + (uint64_t)te->log * 7 + 2) * 1000003;
    const char *rb = getenv("MW_BENCH_REBIN");
    if (rb && !strcmp(rb, "1"))
        key = 0; /* benchmarks: what a live view receiving windows costs */
    if (key != te->tex_key || !key) {
        upload_heat(te);
        te->tex_key = key;
    }
    mw__batch_flush(vc->batch);
    mw__text_flush(vc->text);
    float proj[16];
    mw__gl_ortho(proj, vc->fb_w, vc->fb_h);
    float x0 = (float)p->x, y0 = (float)p->y, x1 = x0 + (float)p->w, y1 = y0 + (float)p->h;
    /* Row 0 (rank 0) at the top: texture row 0 is the first uploaded. */
    const float q[6 * 4] = {x0, y0, 0, 0, x1, y0, 1, 0, x1, y1, 1, 1,
                            x0, y0, 0, 0, x1, y1, 1, 1, x0, y1, 0, 1};
    glDisable(GL_BLEND);
    glUseProgram(te->prog_tex);
    glUniformMatrix4fv(te->u_tex_proj, 1, GL_FALSE, proj);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, te->tex);
    glUniform1i(te->u_tex, 0);
    mw__vbuf_draw(&te->quad, GL_TRIANGLES, q, 6);
    glBindTexture(GL_TEXTURE_2D, 0);
    glUseProgram(0);
    glEnable(GL_BLEND);
    /* The columns' separators, where columns are wide enough to spare a pixel. */
    float cw = (float)p->w / (float)(te->grid.ncols ? te->grid.ncols : 1);
    if (cw > 12)
        for (int c = 1; c < te->grid.ncols; c++)
            mw__batch_rect(vc->batch, x0 + (float)c * cw - 1, y0, 2, (float)p->h,
                           mw__hex(MW_COLOR_BG, 1));
}

static void draw_heatmap(const mw_view_ctx_t *vc, mw_terrain_gl_t *te)
{
    const mw_terrain_info_t *in = mw_terrain_info(te->tr);
    const mw_terrain_grid_t *g = &te->grid;
    const mw_rect_t *p = &te->plot;
    mw_batch_t *b = vc->batch;
    mw_text_t *tx = vc->text;
    int fs_px = mw__font_small(vc->layout), lh = mw__text_line_height(tx, fs_px);
    mw_rgba_t dim = mw__hex(MW_COLOR_DIM, 1), txt = mw__hex(MW_COLOR_TEXT, 1);
    draw_cells_2d(vc, te);
    /* Function names under the columns (two rows), ranks on the left. */
    float cw = (float)p->w / (float)(g->ncols ? g->ncols : 1);
    int rows = label_rows(vc, in, cw, cw < 110);
    for (int c = 0; c < g->ncols; c++) {
        char fit[80];
        const char *nm = short_name(in->cols[c].name, cw < 110);
        mw__text_fit(tx, fs_px, nm, cw * (float)rows - 8, fit, sizeof fit);
        float x = (float)p->x + ((float)c + 0.5f) * cw;
        float y = (float)(p->y + p->h) + 3 + (float)((c % rows) * lh);
        mw__text_draw(tx, fs_px, x, y, MW_ALIGN_CENTER, c == in->ncols - 1 && in->other ? dim : txt,
                      fit);
    }
    uint32_t R = in->ranks;
    uint32_t ticks[5] = {0, R / 4, R / 2, 3 * (R / 4), R ? R - 1 : 0};
    for (int i = 0; i < 5; i++) {
        if (i && ticks[i] == ticks[i - 1])
            continue;
        uint32_t y = mw_terrain_row_of(g, ticks[i]);
        float x0, y0, x1, y1;
        mw_terrain_cell_rect(g, p, y, 0, &x0, &y0, &x1, &y1);
        float ym = (y0 + y1) / 2;
        mw__batch_line(b, (float)p->x - 5, ym, (float)p->x, ym, 1, mw__hex(MW_COLOR_AXIS, 1));
        mw__text_drawf(tx, fs_px, (float)p->x - 8, ym - (float)lh / 2, MW_ALIGN_RIGHT, dim,
                       "%" PRIu32, ticks[i]);
    }
    mw__text_draw(tx, fs_px, (float)p->x - 8, (float)p->y - (float)lh - 2, MW_ALIGN_RIGHT, txt,
                  "rank");
}

/* ---- overlays ----------------------------------------------------------------------------- */

/* The pixel centre of cell (row y, column c) as drawn: the top of its column in 3D, the middle
 * of its rectangle in the heat map. 0 when off screen. */
static int cell_px(const mw_terrain_gl_t *te, uint32_t y, int c, float *x, float *py)
{
    if (te->heatmap) {
        float x0, y0, x1, y1;
        mw_terrain_cell_rect(&te->grid, &te->plot, y, c, &x0, &y0, &x1, &y1);
        *x = (x0 + x1) / 2;
        *py = (y0 + y1) / 2;
        return 1;
    }
    float lo[3], hi[3];
    mw_terrain_cell_box(&te->grid, te->log, y, c, lo, hi);
    float p[3] = {(lo[0] + hi[0]) / 2, hi[1], (lo[2] + hi[2]) / 2};
    return proj(te, p, x, py);
}

static void draw_marks(const mw_view_ctx_t *vc, mw_terrain_gl_t *te)
{
    const mw_terrain_info_t *in = mw_terrain_info(te->tr);
    mw_text_t *tx = vc->text;
    int fs_px = mw__font_small(vc->layout);
    float rr = mw__px(vc->layout, MARK_R_PX), lw = mw__px(vc->layout, 2);
    /* Largest first on top; top cells sharing a drawn cell (ranks of one aggregated row, equal
     * values) get one ring labelled with all their places ("3,4,5"). */
    for (int i = in->ntop - 1; i >= 0; i--) {
        float x, y;
        uint32_t row = mw_terrain_row_of(&te->grid, in->top[i].rank);
        int first = i;
        for (int j = 0; j < i; j++)
            if (in->top[j].col == in->top[i].col &&
                mw_terrain_row_of(&te->grid, in->top[j].rank) == row) {
                first = j;
                break;
            }
        if (first != i || !cell_px(te, row, in->top[i].col, &x, &y))
            continue;
        char label[32] = "";
        for (int j = i; j < in->ntop; j++)
            if (in->top[j].col == in->top[i].col &&
                mw_terrain_row_of(&te->grid, in->top[j].rank) == row) {
                size_t n = strlen(label);
                snprintf(label + n, sizeof label - n, "%s%d", n ? "," : "", j + 1);
            }
        if (te->heatmap) { /* an aggregated row is a pixel: the cell drawn 3 px high */
            float x0, y0, x1, y1;
            mw_terrain_cell_rect(&te->grid, &te->plot, row, in->top[i].col, &x0, &y0, &x1, &y1);
            mw_rgb_t cc = cell_color(
                te, te->grid.v[(size_t)row * (size_t)te->grid.ncols + (size_t)in->top[i].col]);
            if (y1 - y0 < 3)
                mw__batch_rect(vc->batch, x0, y - 1.5f, x1 - x0, 3, mw__rgba(cc.r, cc.g, cc.b, 1));
        }
        mw_rgba_t c = i == 0 ? mw__rgba(1, 1, 1, 1) : mw__rgba(0.9f, 0.92f, 0.95f, 0.8f);
        mw__batch_ring(vc->batch, x, y, rr, lw, mw__rgba(0, 0, 0, 0.6f));
        mw__batch_ring(vc->batch, x, y, rr - lw, lw, c);
        mw__text_draw(tx, fs_px, x + rr + 2, y - rr - (float)fs_px, MW_ALIGN_LEFT, c, label);
    }
    /* The highlighted rank (from any view) and the picked cell. */
    int64_t hr = vc->view->highlight_rank;
    mw_rgba_t acc = mw__hex(MW_COLOR_ACCENT, 1);
    if (hr >= 0 && (uint64_t)hr < in->ranks && te->grid.rows) {
        uint32_t row = mw_terrain_row_of(&te->grid, (uint32_t)hr);
        if (te->heatmap) {
            float x0, y0, x1, y1;
            mw_terrain_cell_rect(&te->grid, &te->plot, row, 0, &x0, &y0, &x1, &y1);
            float h = y1 - y0 < 3 ? 3 : y1 - y0;
            mw__batch_frame(vc->batch, (float)te->plot.x - 2, (y0 + y1 - h) / 2 - 2,
                            (float)te->plot.w + 4, h + 4, lw, acc);
        } else {
            float d = MW_TERRAIN_DEPTH / (float)te->grid.rows,
                  W = (float)te->grid.ncols * mw_terrain_col_w(te->grid.ncols);
            float z0 = (float)row * d, z1 = z0 + d;
            float c4[4][3] = {{0, 0.02f, z0}, {W, 0.02f, z0}, {W, 0.02f, z1}, {0, 0.02f, z1}};
            for (int k = 0; k < 4; k++)
                line3(vc, te, c4[k], c4[(k + 1) % 4], lw, acc);
        }
    }
    if (te->pick_col >= 0 && te->pick_col < te->grid.ncols && te->pick_row < te->grid.rows) {
        float x, y;
        if (cell_px(te, te->pick_row, te->pick_col, &x, &y)) {
            mw__batch_frame(vc->batch, x - rr * 0.7f, y - rr * 0.7f, rr * 1.4f, rr * 1.4f, lw, acc);
        }
    }
}

static void draw_bar(const mw_view_ctx_t *vc, mw_terrain_gl_t *te)
{
    const mw_terrain_info_t *in = mw_terrain_info(te->tr);
    const mw_rect_t *b = &te->bar;
    mw_text_t *tx = vc->text;
    int fs_px = mw__font_small(vc->layout), lh = mw__text_line_height(tx, fs_px);
    mw_rgba_t dim = mw__hex(MW_COLOR_DIM, 1);
    char lo[40], hi[40];
    format_value(in, 0, lo, sizeof lo);
    format_value(in, te->grid.vmax, hi, sizeof hi);
    if (te->heatmap) { /* vertical: the top value at the top */
        for (int i = 0; i < b->h; i++) {
            mw_rgb_t c = mw_ramp(1.0f - (float)i / (float)(b->h > 1 ? b->h - 1 : 1));
            mw__batch_rect(vc->batch, (float)b->x, (float)(b->y + i), (float)b->w, 1,
                           mw__rgba(c.r, c.g, c.b, 1));
        }
        mw__text_draw(tx, fs_px, (float)b->x, (float)b->y - (float)lh - 2, MW_ALIGN_LEFT, dim, hi);
        mw__text_draw(tx, fs_px, (float)b->x, (float)(b->y + b->h) + 2, MW_ALIGN_LEFT, dim, lo);
        return;
    }
    float pad = mw__px(vc->layout, 8);
    mw__batch_rect(vc->batch, (float)b->x - pad, (float)b->y - (float)lh - pad,
                   (float)b->w + 2 * pad, (float)(b->h + 2 * lh) + 2 * pad,
                   mw__hex(0x1d2028, 0.9f));
    for (int i = 0; i < b->w; i++) {
        mw_rgb_t c = mw_ramp((float)i / (float)(b->w > 1 ? b->w - 1 : 1));
        mw__batch_rect(vc->batch, (float)(b->x + i), (float)b->y, 1, (float)b->h,
                       mw__rgba(c.r, c.g, c.b, 1));
    }
    mw__text_drawf(tx, fs_px, (float)b->x, (float)b->y - (float)lh - 1, MW_ALIGN_LEFT,
                   mw__hex(MW_COLOR_TEXT, 1), "%s per rank (%s)",
                   mw_terrain_metric_name(in->what, in->metric), te->log ? "log" : "linear");
    mw__text_draw(tx, fs_px, (float)b->x, (float)(b->y + b->h) + 1, MW_ALIGN_LEFT, dim, lo);
    mw__text_draw(tx, fs_px, (float)(b->x + b->w), (float)(b->y + b->h) + 1, MW_ALIGN_RIGHT, dim,
                  hi);
}

/* "16384 ranks: 28 ranks per row, max shown" or "16 ranks: one row each". */
static void aggregation_text(const mw_terrain_gl_t *te, char *buf, size_t len)
{
    const mw_terrain_info_t *in = mw_terrain_info(te->tr);
    if (te->have_grid && te->grid.per_row > 1)
        snprintf(buf, len, "%" PRIu32 " ranks: %" PRIu32 " ranks per row, max", in->ranks,
                 te->grid.per_row);
    else
        snprintf(buf, len, "%" PRIu32 " ranks: one row each", in->ranks);
}

static void draw_header(const mw_view_ctx_t *vc, mw_terrain_gl_t *te)
{
    const mw_terrain_info_t *in = mw_terrain_info(te->tr);
    const mw_rect_t *r = &te->region;
    mw_text_t *tx = vc->text;
    int f = vc->layout->font_px, fs_px = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 8), y = (float)r->y + mw__px(vc->layout, 3);
    mw__batch_rect(vc->batch, (float)r->x, (float)r->y, (float)r->w, (float)header_h(vc),
                   mw__hex(MW_COLOR_BG, 1));
    char agg[96], line[400], fit[400];
    aggregation_text(te, agg, sizeof agg);
    uint64_t nw = in->windows;
    snprintf(line, sizeof line, "terrain  ·  %s × ranks  ·  %s (%s)  ·  %" PRIu64 " window%s",
             in->what == MW_TERRAIN_REGIONS ? "code regions" : "MPI functions",
             mw_terrain_metric_name(in->what, in->metric), te->log ? "log" : "linear", nw,
             nw == 1 ? "" : "s");
    mw__text_fit(tx, f, line, (float)r->w - 2 * pad, fit, sizeof fit);
    mw__text_draw(tx, f, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_ACCENT, 1), fit);
    y += (float)mw__text_line_height(tx, f);
    snprintf(
        line, sizeof line, "%s  ·  %d columns%s  ·  h %s  ·  m metric  ·  g %s  ·  t log/linear%s",
        agg, in->ncols, in->other ? " (the rest summed in other)" : "",
        te->heatmap ? "3D" : "heat map", in->what == MW_TERRAIN_REGIONS ? "functions" : "regions",
        te->heatmap ? "" : "  ·  drag orbits, wheel zooms");
    mw__text_fit(tx, fs_px, line, (float)r->w - 2 * pad, fit, sizeof fit);
    /* The aggregation is said in the text colour: it changes what a cell means. */
    mw__text_draw(
        tx, fs_px, (float)r->x + pad, y, MW_ALIGN_LEFT,
        mw__hex(te->have_grid && te->grid.per_row > 1 ? MW_COLOR_PAUSED : MW_COLOR_DIM, 1), fit);
}

void mw__terrain_draw(const mw_view_ctx_t *vc, mw_terrain_gl_t *te)
{
    mw__terrain_update(vc, te);
    const mw_terrain_info_t *in = mw_terrain_info(te->tr);
    const mw_rect_t *r = &te->region;
    if (!te->have_grid) {
        mw__batch_rect(vc->batch, (float)r->x, (float)r->y, (float)r->w, (float)r->h,
                       mw__hex(MW_COLOR_PLOT, 1));
        draw_header(vc, te);
        const char *why = in->windows == 0
                              ? "no windows loaded in the range (select one on the timeline)"
                          : in->what == MW_TERRAIN_REGIONS
                              ? "no code regions in these windows (g: functions)"
                              : "no per-rank figures in these windows (an older recording, or "
                                "the collector left them out)";
        mw__text_draw(vc->text, vc->layout->font_px, (float)r->x + (float)r->w / 2,
                      (float)r->y + (float)r->h / 2, MW_ALIGN_CENTER, mw__hex(MW_COLOR_DIM, 1),
                      why);
        return;
    }
    if (te->heatmap) {
        mw__batch_rect(vc->batch, (float)r->x, (float)r->y, (float)r->w, (float)r->h,
                       mw__hex(MW_COLOR_BG, 1));
        draw_heatmap(vc, te);
    } else {
        draw_field(vc, te);
        axes_3d(vc, te);
    }
    draw_marks(vc, te);
    draw_bar(vc, te);
    draw_header(vc, te);
}

/* ---- picking and details ------------------------------------------------------------------ */

mw_pick_t mw__terrain_pick(const mw_view_ctx_t *vc, mw_terrain_gl_t *te, int x, int y)
{
    mw_pick_t p;
    memset(&p, 0, sizeof p);
    p.kind = MW_PICK_NONE;
    p.peer = -1;
    mw__terrain_update(vc, te);
    te->pick_col = -1;
    if (!te->have_grid)
        return p;
    uint32_t row = 0;
    int col = -1, hit;
    if (te->heatmap)
        hit = mw_terrain_pick_2d(&te->grid, &te->plot, x, y, &row, &col);
    else
        hit = x >= te->plot.x && y >= te->plot.y && x < te->plot.x + te->plot.w &&
              y < te->plot.y + te->plot.h &&
              mw_terrain_pick_3d(&te->grid, te->log, &te->cam, te->plot.w, te->plot.h,
                                 (float)(x - te->plot.x) + 0.5f, (float)(y - te->plot.y) + 0.5f,
                                 &row, &col);
    if (!hit)
        return p;
    const mw_terrain_info_t *in = mw_terrain_info(te->tr);
    size_t i = (size_t)row * (size_t)te->grid.ncols + (size_t)col;
    p.kind = MW_PICK_TERRAIN;
    p.rank = te->grid.at[i];
    mw_terrain_row_ranks(&te->grid, in->ranks, row, &p.rank_first, &p.rank_last);
    p.value = te->grid.v[i] > 0 ? te->grid.v[i] : 0;
    p.terrain_regions = in->what == MW_TERRAIN_REGIONS;
    p.terrain_metric = (int)in->metric;
    unsigned id = in->cols[col].id;
    if (p.terrain_regions)
        p.region = id;
    else
        p.fn = id;
    snprintf(p.col_name, sizeof p.col_name, "%s", in->cols[col].name);
    te->pick_col = col;
    te->pick_row = row;
    te->pick_rank = p.rank;
    te->pick_value = p.value;
    return p;
}

void mw__terrain_details(const mw_view_ctx_t *vc, const mw_rect_t *r)
{
    const mw_pick_t *p = vc->pick;
    mw_text_t *tx = vc->text;
    int f = vc->layout->font_px, fs_px = mw__font_small(vc->layout);
    int lh = mw__text_line_height(tx, fs_px);
    float pad = mw__px(vc->layout, 8), y = (float)r->y + pad / 2;
    float col = (float)r->x + pad + mw__text_width(tx, fs_px, "function ") + mw__px(vc->layout, 6);
    mw_rgba_t dim = mw__hex(MW_COLOR_DIM, 1), txt = mw__hex(MW_COLOR_TEXT, 1);
    mw__text_drawf(tx, f, (float)r->x + pad, y, MW_ALIGN_LEFT, txt, "rank %" PRIu32, p->rank);
    y += (float)mw__text_line_height(tx, f) + mw__px(vc->layout, 2);
    mw_terrain_info_t fake;
    memset(&fake, 0, sizeof fake);
    fake.metric = (mw_terrain_metric_t)p->terrain_metric;
    char v[48], line[160];
    format_value(&fake, p->value, v, sizeof v);
    const char *rows[3][2] = {
        {p->terrain_regions ? "region" : "function", p->col_name},
        {mw_terrain_metric_name(p->terrain_regions ? MW_TERRAIN_REGIONS : MW_TERRAIN_FUNCTIONS,
                                fake.metric),
         v},
        {"row", line}};
    if (p->rank_last > p->rank_first)
        snprintf(line, sizeof line, "ranks %" PRIu32 "–%" PRIu32 " (max)", p->rank_first,
                 p->rank_last);
    else
        snprintf(line, sizeof line, "one rank");
    for (int i = 0; i < 3 && y + (float)lh <= (float)(r->y + r->h); i++) {
        char fit[160];
        mw__text_draw(tx, fs_px, (float)r->x + pad, y, MW_ALIGN_LEFT, dim, rows[i][0]);
        mw__text_fit(tx, fs_px, rows[i][1], (float)(r->x + r->w) - col - pad, fit, sizeof fit);
        mw__text_draw(tx, fs_px, col, y, MW_ALIGN_LEFT, txt, fit);
        y += (float)lh + mw__px(vc->layout, 1);
    }
    if (y + (float)lh <= (float)(r->y + r->h))
        mw__text_draw(tx, fs_px, (float)r->x + pad, y, MW_ALIGN_LEFT, dim,
                      "the rank is highlighted in every view");
}

/* ---- --meta -------------------------------------------------------------------------------- */

static cJSON *rgb_json(mw_rgb_t c)
{
    int v[3] = {(int)(c.r * 255.0f + 0.5f), (int)(c.g * 255.0f + 0.5f), (int)(c.b * 255.0f + 0.5f)};
    return cJSON_CreateIntArray(v, 3);
}

static cJSON *rect_json(const mw_rect_t *r)
{
    int v[4] = {r->x, r->y, r->w, r->h};
    return cJSON_CreateIntArray(v, 4);
}

void mw__terrain_meta(const mw_view_ctx_t *vc, mw_terrain_gl_t *te, cJSON *root)
{
    mw__terrain_update(vc, te);
    const mw_terrain_info_t *in = mw_terrain_info(te->tr);
    cJSON *o = cJSON_AddObjectToObject(root, "terrain");
    if (!o)
        return;
    cJSON_AddStringToObject(o, "what", in->what == MW_TERRAIN_REGIONS ? "regions" : "functions");
    cJSON_AddStringToObject(o, "metric", mw_terrain_metric_name(in->what, in->metric));
    cJSON_AddStringToObject(o, "mode", te->heatmap ? "heatmap" : "3d");
    cJSON_AddBoolToObject(o, "log", te->log);
    (void)mw_json_add_u64(o, "k0", in->k0);
    (void)mw_json_add_u64(o, "k1", in->k1);
    (void)mw_json_add_u64(o, "windows", in->windows);
    (void)mw_json_add_u64(o, "detailed_windows", in->detailed);
    (void)mw_json_add_u64(o, "left_out", in->left_out);
    (void)mw_json_add_u64(o, "bad", in->bad);
    cJSON_AddNumberToObject(o, "ranks", in->ranks);
    cJSON_AddNumberToObject(o, "max_rows", te->max_rows);
    cJSON_AddNumberToObject(o, "rows", te->have_grid ? te->grid.rows : 0);
    cJSON_AddNumberToObject(o, "ranks_per_row", te->have_grid ? te->grid.per_row : 0);
    cJSON_AddStringToObject(o, "aggregation", "max");
    char agg[96];
    aggregation_text(te, agg, sizeof agg);
    cJSON_AddStringToObject(o, "aggregation_text", agg);
    cJSON_AddNumberToObject(o, "ncols", in->ncols);
    cJSON_AddBoolToObject(o, "other", in->other);
    cJSON_AddNumberToObject(o, "total", in->total);
    cJSON_AddNumberToObject(o, "vmax", te->have_grid ? te->grid.vmax : 0);
    cJSON_AddNumberToObject(o, "vmax_rank", in->vmax);
    cJSON_AddItemToObject(o, "region", rect_json(&te->region));
    cJSON_AddItemToObject(o, "plot", rect_json(&te->plot));
    cJSON_AddItemToObject(o, "bar", rect_json(&te->bar));
    cJSON_AddItemToObject(o, "color_min", rgb_json(mw_ramp(0)));
    cJSON_AddItemToObject(o, "color_max", rgb_json(mw_ramp(1)));
    cJSON_AddNumberToObject(o, "vertices", (double)te->n_verts);
    cJSON *cols = cJSON_AddArrayToObject(o, "cols");
    for (int c = 0; c < in->ncols; c++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "id", in->cols[c].id);
        cJSON_AddStringToObject(j, "name", in->cols[c].name);
        cJSON_AddNumberToObject(j, "total", in->cols[c].total);
        cJSON_AddItemToArray(cols, j);
    }
    cJSON *top = cJSON_AddArrayToObject(o, "top");
    for (int i = 0; i < in->ntop; i++) {
        const mw_terrain_top_t *t = &in->top[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "rank", t->rank);
        cJSON_AddNumberToObject(j, "col", t->col);
        cJSON_AddStringToObject(j, "name", in->cols[t->col].name);
        cJSON_AddNumberToObject(j, "value", t->value);
        if (te->have_grid) {
            uint32_t row = mw_terrain_row_of(&te->grid, t->rank);
            double shown = te->grid.v[(size_t)row * (size_t)te->grid.ncols + (size_t)t->col];
            float x = 0, y = 0;
            cJSON_AddNumberToObject(j, "row", row);
            cJSON_AddNumberToObject(j, "shown", shown);
            if (cell_px(te, row, t->col, &x, &y)) {
                float xy[2] = {x, y};
                cJSON_AddItemToObject(j, "px", cJSON_CreateFloatArray(xy, 2));
            }
            mw_rgb_t cc = cell_color(te, shown);
            cJSON_AddItemToObject(j, "color", rgb_json(cc));
            /* Where its colour can be read: the heat map's cell, or in 3D halfway up the column's
             * front face (a row of a large job is thinner than a pixel from above), shaded as
             * that face is. */
            float lo[3], hi[3];
            mw_terrain_cell_box(&te->grid, te->log, row, t->col, lo, hi);
            float fp[3] = {(lo[0] + hi[0]) / 2, hi[1] / 2, hi[2]};
            if (te->heatmap ? cell_px(te, row, t->col, &x, &y) : proj(te, fp, &x, &y)) {
                float xy[2] = {x, y};
                mw_rgb_t pc = cc;
                if (!te->heatmap) {
                    pc.r *= FRONT_SHADE;
                    pc.g *= FRONT_SHADE;
                    pc.b *= FRONT_SHADE;
                }
                cJSON_AddItemToObject(j, "probe_px", cJSON_CreateFloatArray(xy, 2));
                cJSON_AddItemToObject(j, "probe_color", rgb_json(pc));
            }
        }
        cJSON_AddItemToArray(top, j);
    }
    if (te->pick_col >= 0) {
        cJSON *j = cJSON_AddObjectToObject(o, "pick");
        cJSON_AddNumberToObject(j, "row", te->pick_row);
        cJSON_AddNumberToObject(j, "col", te->pick_col);
        cJSON_AddNumberToObject(j, "rank", te->pick_rank);
        cJSON_AddNumberToObject(j, "value", te->pick_value);
    }
}
