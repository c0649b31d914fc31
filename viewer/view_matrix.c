/* view_matrix.c: the communication matrix: sender (rows, rank 0 at the top) by receiver
 * (columns) of the window or step the topology view shows, as a heat map.
 *
 * DESIGN: matrix.c bins the pairs (mw_matrix_bin: at most one bin per pixel of the plot, exact
 * sums per bin); the view receives what it draws (an mw_view_ctx_t) and the topology view's
 * state (mw_topo_gl_t: what is shown, the bins, its GL objects); this file turns the bins
 * into one RGBA texture (empty cells take the plot's background) drawn as one
 * nearest-filtered quad, then marks node boundaries, the axes and the color scale with the
 * batch. The texture is rebuilt only when the data, the plot's size, the
 * quantity (messages or bytes) or the scale (linear or log) change.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

static const char *tex_vs = "#version 330 core\n"
                            "layout(location = 0) in vec2 a_pos;\n"
                            "layout(location = 1) in vec2 a_uv;\n"
                            "uniform mat4 u_proj;\n"
                            "out vec2 v_uv;\n"
                            "void main() {\n"
                            "    gl_Position = u_proj * vec4(a_pos, 0.0, 1.0);\n"
                            "    v_uv = a_uv;\n"
                            "}\n";

static const char *tex_fs = "#version 330 core\n"
                            "in vec2 v_uv;\n"
                            "uniform sampler2D u_tex;\n"
                            "out vec4 o;\n"
                            "void main() { o = texture(u_tex, v_uv); }\n";

int mw__matrix_init(mw_topo_gl_t *t)
{
    t->prog_tex = mw__gl_program("matrix", tex_vs, tex_fs, NULL);
    if (!t->prog_tex)
        return -1;
    t->u_tex_proj = glGetUniformLocation(t->prog_tex, "u_proj");
    t->u_tex = glGetUniformLocation(t->prog_tex, "u_tex");
    glGenVertexArrays(1, &t->vao_quad);
    glGenBuffers(1, &t->vbo_quad);
    glGenTextures(1, &t->tex);
    glBindVertexArray(t->vao_quad);
    glBindBuffer(GL_ARRAY_BUFFER, t->vbo_quad);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float), (const void *)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float),
                          (const void *)(2 * sizeof(float)));
    glBindVertexArray(0);
    glBindTexture(GL_TEXTURE_2D, t->tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glBindTexture(GL_TEXTURE_2D, 0);
    return mw__gl_check("matrix setup");
}

void mw__matrix_free(mw_topo_gl_t *t)
{
    if (t->prog_tex)
        glDeleteProgram(t->prog_tex);
    if (t->tex)
        glDeleteTextures(1, &t->tex);
    if (t->vao_quad)
        glDeleteVertexArrays(1, &t->vao_quad);
    if (t->vbo_quad)
        glDeleteBuffers(1, &t->vbo_quad);
}

/* The plot: a square left of the legend column, with room for the axis labels. */
static mw_rect_t matrix_plot(const mw_layout_t *l)
{
    int pad = (int)mw__px(l, 12), left = l->font_px * 5, top = l->font_px * 3;
    int legend_w = (int)mw__px(l, 300);
    int aw = l->width - left - legend_w - 3 * pad,
        ah = l->status.y - l->title.h - top - 2 * pad - l->font_px * 2;
    int s = aw < ah ? aw : ah;
    if (s < 16)
        s = 16;
    mw_rect_t r = {left + pad, l->title.h + top + pad, s, s};
    return r;
}

/* The scale of the cells: messages or bytes, min and max over non-empty cells. */
mw_scale_t mw__matrix_scale(const mw_topo_gl_t *t)
{
    mw_scale_t s = {0, 0, t->log, 0};
    s.min = (double)(t->mx_bytes ? t->mx.min_bytes : t->mx.min_messages);
    s.max = (double)(t->mx_bytes ? t->mx.max_bytes : t->mx.max_messages);
    return s;
}

/* Bins what is shown and rebuilds the texture when needed. */
int mw__matrix_update(const mw_view_ctx_t *vc, mw_topo_gl_t *t)
{
    if (mw__topo_update(vc, t) < 0)
        return -1;
    mw_rect_t p = matrix_plot(vc->layout);
    t->mx_plot = p;
    /* lines_key[5] holds the sending function shown ('f'): a change bins again. */
    uint64_t key[5] = {t->lines_key[0] ^ t->lines_key[2] * 31 ^ t->lines_key[3] * 7 ^
                           t->lines_key[5] * 131,
                       t->lines_key[4], (uint64_t)p.w, (uint64_t)t->mx_bytes, (uint64_t)t->log + 1};
    if (t->mx_valid && !memcmp(key, t->mx_key, sizeof key))
        return 0;
    const Mpiwatch__JobInfo *job = mw_model_job(vc->model);
    uint32_t n = job ? job->size : 0;
    if (mw_matrix_bin(&t->mx, mw__topo_pairs(vc->model, t), n, p.w, &t->layout) < 0)
        return -1;
    int b = t->mx.bins;
    size_t need = (size_t)b * (size_t)b * 4;
    if (need > t->rgba_cap) {
        unsigned char *v = realloc(t->rgba, need);
        if (!v)
            return -1;
        t->rgba = v;
        t->rgba_cap = need;
    }
    mw_scale_t s = mw__matrix_scale(t);
    mw_rgba_t bg = mw__hex(MW_COLOR_PLOT, 1);
    for (int i = 0; i < b * b; i++) {
        uint64_t v = t->mx_bytes ? t->mx.bytes[i] : t->mx.messages[i];
        unsigned char *px = t->rgba + (size_t)i * 4;
        mw_rgb_t c = {bg.r, bg.g, bg.b};
        if (v || (t->mx.messages[i] || t->mx.bytes[i]))
            c = mw_ramp(mw_scale_t01(&s, (double)v));
        px[0] = (unsigned char)(c.r * 255.0f + 0.5f);
        px[1] = (unsigned char)(c.g * 255.0f + 0.5f);
        px[2] = (unsigned char)(c.b * 255.0f + 0.5f);
        px[3] = 255;
    }
    glBindTexture(GL_TEXTURE_2D, t->tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, b, b, 0, GL_RGBA, GL_UNSIGNED_BYTE, t->rgba);
    glBindTexture(GL_TEXTURE_2D, 0);
    memcpy(t->mx_key, key, sizeof key);
    t->mx_valid = 1;
    return 0;
}

/* The bins under pixel (x, y), or 0 outside the plot. */
int mw__matrix_cell_at(const mw_topo_gl_t *t, int x, int y, int *src_bin, int *dst_bin)
{
    const mw_rect_t *p = &t->mx_plot;
    if (!t->mx_valid || x < p->x || y < p->y || x >= p->x + p->w || y >= p->y + p->h)
        return 0;
    *dst_bin = (int)((int64_t)(x - p->x) * t->mx.bins / p->w);
    *src_bin = (int)((int64_t)(y - p->y) * t->mx.bins / p->h);
    return 1;
}

static void draw_pick(const mw_view_ctx_t *vc, mw_topo_gl_t *t)
{
    if (!t->mx_pick || t->mx_src_bin >= t->mx.bins || t->mx_dst_bin >= t->mx.bins)
        return;
    const mw_rect_t *p = &t->mx_plot;
    float cw = (float)p->w / (float)t->mx.bins;
    float x = (float)p->x + (float)t->mx_dst_bin * cw, y = (float)p->y + (float)t->mx_src_bin * cw;
    float m = mw__px(vc->layout, 2);
    mw__batch_frame(vc->batch, x - m, y - m, cw + 2 * m, cw + 2 * m, m,
                    mw__hex(MW_COLOR_ACCENT, 1));
}

void mw__matrix_draw(const mw_view_ctx_t *vc, mw_topo_gl_t *t)
{
    if (mw__matrix_update(vc, t) < 0)
        return;
    const mw_rect_t *p = &t->mx_plot;
    mw_text_t *tx = vc->text;
    int fs = mw__font_small(vc->layout), lh = mw__text_line_height(tx, fs);
    mw_rgba_t txt = mw__hex(MW_COLOR_TEXT, 1), dim = mw__hex(MW_COLOR_DIM, 1);
    float pad = mw__px(vc->layout, 10);
    mw__batch_rect(vc->batch, (float)p->x, (float)p->y, (float)p->w, (float)p->h,
                   mw__hex(MW_COLOR_PLOT, 1));
    mw__batch_flush(vc->batch);
    if (t->have_data) {
        float q[24] = {(float)p->x,          (float)p->y,          0, 0,
                       (float)(p->x + p->w), (float)p->y,          1, 0,
                       (float)(p->x + p->w), (float)(p->y + p->h), 1, 1,
                       (float)p->x,          (float)p->y,          0, 0,
                       (float)(p->x + p->w), (float)(p->y + p->h), 1, 1,
                       (float)p->x,          (float)(p->y + p->h), 0, 1};
        float proj[16];
        mw__gl_ortho(proj, vc->fb_w, vc->fb_h);
        glUseProgram(t->prog_tex);
        glUniformMatrix4fv(t->u_tex_proj, 1, GL_FALSE, proj);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_2D, t->tex);
        glUniform1i(t->u_tex, 0);
        glBindVertexArray(t->vao_quad);
        glBindBuffer(GL_ARRAY_BUFFER, t->vbo_quad);
        glBufferData(GL_ARRAY_BUFFER, sizeof q, q, GL_STREAM_DRAW);
        glDrawArrays(GL_TRIANGLES, 0, 6);
        glBindVertexArray(0);
        glBindTexture(GL_TEXTURE_2D, 0);
        glUseProgram(0);
    }
    /* Node boundaries, on both axes; closer than EDGE_MIN_PX (400 nodes of 250 ranks in a
     * 654-pixel plot are 1.6 pixels apart) every k-th only, so that the lines stay lines and
     * do not grey the whole plot. */
    float cw = (float)p->w / (float)(t->mx.bins > 0 ? t->mx.bins : 1);
    mw_rgba_t edge = mw__hex(0x9aa3b5, 0.55f);
    t->mx_edge_every = 1;
    if (t->mx.n_edges > 0) {
        float apart = (float)p->w / (float)(t->mx.n_edges + 1);
        while (apart * (float)t->mx_edge_every < mw__px(vc->layout, 6.0f))
            t->mx_edge_every++;
    }
    for (int i = t->mx_edge_every - 1; i < t->mx.n_edges; i += t->mx_edge_every) {
        float e = (float)t->mx.node_edges[i] * cw;
        mw__batch_rect(vc->batch, (float)p->x + e, (float)p->y, 1, (float)p->h, edge);
        mw__batch_rect(vc->batch, (float)p->x, (float)p->y + e, (float)p->w, 1, edge);
    }
    mw__batch_frame(vc->batch, (float)p->x - 1, (float)p->y - 1, (float)p->w + 2, (float)p->h + 2,
                    1, mw__hex(MW_COLOR_AXIS, 1));
    draw_pick(vc, t);
    /* Axes: rank numbers at the ends and middle. */
    uint32_t n = t->mx.n_ranks;
    mw__text_draw(tx, fs, (float)(p->x + p->w / 2), (float)p->y - (float)lh * 2 - 2,
                  MW_ALIGN_CENTER, txt, "receiver rank →");
    for (int k = 0; k <= 2 && n; k++) {
        uint32_t rk = k == 0 ? 0 : k == 1 ? n / 2 : n - 1;
        float pos = ((float)mw_matrix_bin_of(&t->mx, rk) + 0.5f) * cw;
        mw__text_drawf(tx, fs, (float)p->x + pos, (float)p->y - (float)lh - 2, MW_ALIGN_CENTER, dim,
                       "%" PRIu32, rk);
        mw__text_drawf(tx, fs, (float)p->x - 4, (float)p->y + pos - (float)lh / 2, MW_ALIGN_RIGHT,
                       dim, "%" PRIu32, rk);
    }
    if (t->mx_edge_every > 1)
        mw__text_drawf(tx, fs, (float)p->x, (float)(p->y + p->h) + 4, MW_ALIGN_LEFT, txt,
                       "sender rank ↓ (rows)  ·  lines: every %d%s node boundary", t->mx_edge_every,
                       t->mx_edge_every == 2   ? "nd"
                       : t->mx_edge_every == 3 ? "rd"
                                               : "th");
    else
        mw__text_draw(tx, fs, (float)p->x, (float)(p->y + p->h) + 4, MW_ALIGN_LEFT, txt,
                      "sender rank ↓ (rows)  ·  lines: node boundaries");

    /* The legend column. */
    float lx = (float)(p->x + p->w) + 2 * pad, ly = (float)p->y;
    mw__text_drawf(tx, vc->layout->font_px, lx, ly, MW_ALIGN_LEFT, mw__hex(MW_COLOR_ACCENT, 1),
                   "%s", t->what);
    ly += (float)mw__text_line_height(tx, vc->layout->font_px) + 4;
    char lt[128]; /* "links: MPI_Isend messages" when one sending function is shown ('f') */
    unsigned lfn = t->rx ? t->rx->set.link_fn : 0;
    mw_topo_link_title(lfn, t->mx_bytes ? "bytes" : "messages", lt, sizeof lt);
    mw__text_drawf(tx, fs, lx, ly, MW_ALIGN_LEFT, txt, "%s per cell (%s)  ·  m, t%s",
                   lfn ? lt : (t->mx_bytes ? "bytes" : "messages"), t->log ? "log" : "linear",
                   lfn ? ", f" : "");
    ly += (float)lh + 2;
    mw_rect_t bar = {(int)lx, (int)ly, (int)mw__px(vc->layout, 260), (int)mw__px(vc->layout, 12)};
    for (int i = 0; i < bar.w; i++) {
        mw_rgb_t c = mw_ramp(bar.w > 1 ? (float)i / (float)(bar.w - 1) : 1);
        mw__batch_rect(vc->batch, (float)(bar.x + i), (float)bar.y, 1, (float)bar.h,
                       mw__rgba(c.r, c.g, c.b, 1));
    }
    t->legend_bar = bar;
    ly += (float)bar.h + 2;
    mw_scale_t s = mw__matrix_scale(t);
    char a[32], b[32];
    if (t->mx_bytes) {
        mw__format_bytes((uint64_t)s.min, a, sizeof a);
        mw__format_bytes((uint64_t)s.max, b, sizeof b);
    } else {
        snprintf(a, sizeof a, "%.0f", s.min);
        snprintf(b, sizeof b, "%.0f", s.max);
    }
    mw__text_draw(tx, fs, (float)bar.x, ly, MW_ALIGN_LEFT, dim, a);
    mw__text_draw(tx, fs, (float)(bar.x + bar.w), ly, MW_ALIGN_RIGHT, dim, b);
    ly += (float)lh * 2;
    uint32_t per = t->mx.bins ? (n + (uint32_t)t->mx.bins - 1) / (uint32_t)t->mx.bins : 1;
    mw__text_drawf(tx, fs, lx, ly, MW_ALIGN_LEFT, dim, "%d × %d cells%s", t->mx.bins, t->mx.bins,
                   per > 1 ? "  (binned: sums)" : "");
    ly += (float)lh;
    mw__text_drawf(tx, fs, lx, ly, MW_ALIGN_LEFT, dim, "%zu cells used, %d node boundaries",
                   t->mx.cells_used, t->mx.n_edges);
    ly += (float)lh * 2;
    if (t->mx_pick && t->mx_src_bin < t->mx.bins && t->mx_dst_bin < t->mx.bins) {
        uint32_t s0, s1, d0, d1;
        mw_matrix_bin_ranks(&t->mx, t->mx_src_bin, &s0, &s1);
        mw_matrix_bin_ranks(&t->mx, t->mx_dst_bin, &d0, &d1);
        size_t c = (size_t)t->mx_src_bin * (size_t)t->mx.bins + (size_t)t->mx_dst_bin;
        if (s0 == s1 && d0 == d1)
            mw__text_drawf(tx, fs, lx, ly, MW_ALIGN_LEFT, txt, "rank %" PRIu32 " → rank %" PRIu32,
                           s0, d0);
        else
            mw__text_drawf(tx, fs, lx, ly, MW_ALIGN_LEFT, txt,
                           "ranks %" PRIu32 "–%" PRIu32 " → %" PRIu32 "–%" PRIu32, s0, s1, d0, d1);
        ly += (float)lh;
        mw__format_bytes(t->mx.bytes[c], a, sizeof a);
        mw__text_drawf(tx, fs, lx, ly, MW_ALIGN_LEFT, txt, "%" PRIu64 " messages, %s",
                       t->mx.messages[c], a);
    }
}

void mw__matrix_pick(const mw_view_ctx_t *vc, mw_topo_gl_t *t, int x, int y)
{
    mw__matrix_update(vc, t);
    int sb = 0, db = 0;
    t->mx_pick = mw__matrix_cell_at(t, x, y, &sb, &db);
    t->mx_src_bin = sb;
    t->mx_dst_bin = db;
}
