/* view_density.c: the MPI call view, every call at (time, log duration) with opacity scaling.
 *
 * DESIGN: the paper's two high-precision buffers are computed by the model on the CPU
 * (mw_density_bin: D, calls per pixel, and C, the call-weighted average color) because the
 * data are already binned (sub-slots x log2 duration bins) and spreading a cell over its
 * pixels is cheaper on the CPU than sending every cell to the GPU. They are uploaded as float
 * textures (GL_R32F, GL_RGB32F, so overplotting far beyond 256 stays exact) and one quad over
 * the plot applies the transfer function in a fragment shader, exactly as mw_transfer() does,
 * and blends the result over the dark background. Re-binning is the expensive part, so it
 * happens only when its inputs change (a cache key of range, size, representation,
 * highlights and the data generation). On top come the picked rank's calls (exact calls as
 * bright outlined markers, density cells as thin boxes) and a ring around the picked call.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

static const char *density_vs = "#version 330 core\n"
                                "uniform mat4 u_proj;\n"
                                "in vec2 a_pos;\n"
                                "in vec2 a_texel;\n"
                                "out vec2 v_texel;\n"
                                "void main() {\n"
                                "    v_texel = a_texel;\n"
                                "    gl_Position = u_proj * vec4(a_pos, 0.0, 1.0);\n"
                                "}\n";

/* Must stay the same function as mw_transfer() in model_density.c. */
static const char *density_fs =
    "#version 330 core\n"
    "uniform sampler2D u_d;\n"
    "uniform sampler2D u_c;\n"
    "uniform int u_mode;   /* 0 linear, 1 log */\n"
    "uniform float u_omin;\n"
    "uniform float u_dmax;\n"
    "in vec2 v_texel;\n"
    "out vec4 o_color;\n"
    "void main() {\n"
    "    ivec2 size = textureSize(u_d, 0);\n"
    "    ivec2 p = clamp(ivec2(floor(v_texel)), ivec2(0), size - 1);\n"
    "    float d = texelFetch(u_d, p, 0).r;\n"
    "    if (d <= 0.0 || u_dmax <= 0.0)\n"
    "        discard;\n"
    "    float o;\n"
    "    if (u_mode == 0)\n"
    "        o = u_omin + (1.0 - u_omin) * d / u_dmax;\n"
    "    else\n"
    "        o = u_omin + (1.0 - u_omin) * log(1.0 + d) / log(1.0 + u_dmax);\n"
    "    o_color = vec4(texelFetch(u_c, p, 0).rgb, clamp(o, 0.0, 1.0));\n"
    "}\n";

int mw__density_init(mw_density_gl_t *d)
{
    static const char *const attribs[] = {"a_pos", "a_texel", NULL};
    static const int sizes[] = {2, 2};
    memset(d, 0, sizeof *d);
    d->prog = mw__gl_program("density", density_vs, density_fs, attribs);
    if (!d->prog)
        return -1;
    d->u_proj = glGetUniformLocation(d->prog, "u_proj");
    d->u_d = glGetUniformLocation(d->prog, "u_d");
    d->u_c = glGetUniformLocation(d->prog, "u_c");
    d->u_mode = glGetUniformLocation(d->prog, "u_mode");
    d->u_omin = glGetUniformLocation(d->prog, "u_omin");
    d->u_dmax = glGetUniformLocation(d->prog, "u_dmax");
    if (mw__vbuf_init(&d->quad, sizes, 2) < 0)
        return -1;
    glGenTextures(1, &d->tex_d);
    glGenTextures(1, &d->tex_c);
    GLuint tex[2] = {d->tex_d, d->tex_c};
    for (int i = 0; i < 2; i++) {
        glBindTexture(GL_TEXTURE_2D, tex[i]);
        /* Float textures are sampled with texelFetch; NEAREST keeps them complete without
         * mipmaps and without needing float filtering. */
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    }
    return mw__gl_check("density setup");
}

void mw__density_free(mw_density_gl_t *d)
{
    if (d->prog)
        glDeleteProgram(d->prog);
    if (d->tex_d)
        glDeleteTextures(1, &d->tex_d);
    if (d->tex_c)
        glDeleteTextures(1, &d->tex_c);
    mw__vbuf_free(&d->quad);
    free(d->D);
    free(d->C);
    memset(d, 0, sizeof *d);
}

/* Re-bins when the view, the data or the size changed (force: always). */
static int density_update(const mw_view_ctx_t *vc, mw_density_gl_t *d, int force)
{
    const mw_rect_t *r = &vc->layout->density;
    const mw_view_t *v = vc->view;
    if (r->w <= 0 || r->h <= 0)
        return 0;
    double f0 = 0, f1 = 0, d0 = 1, d1 = 1e9;
    mw_view_focus(v, &f0, &f1);
    mw_density_range(vc->model, f0, f1, &d0, &d1);
    if (!force && d->key.valid && d->key.f0 == f0 && d->key.f1 == f1 && d->key.d0 == d0 &&
        d->key.d1 == d1 && d->key.w == r->w && d->key.h == r->h && d->key.repr == (int)v->repr &&
        d->key.lin == v->dur_linear && d->key.hfn == v->highlight_fn &&
        d->key.hrank == v->highlight_rank && d->key.data_gen == vc->data_gen)
        return 0;

    size_t px = (size_t)r->w * (size_t)r->h;
    if (mw__density_room(d, r->w, r->h) < 0) {
        fprintf(stderr, "mpiwatch-viewer: out of memory for the density buffers\n");
        d->key.valid = 0;
        return -1;
    }
    memset(d->D, 0, px * sizeof(float));
    memset(d->C, 0, px * 3 * sizeof(float));
    d->dmax = mw_density_bin(vc->model, v, f0, f1, d0, d1, r->w, r->h, d->D, d->C);
    d->d0 = d0;
    d->d1 = d1;
    d->lin = v->dur_linear;
    double calls = 0;
    for (size_t i = 0; i < px; i++)
        calls += d->D[i];
    d->calls = calls;
    d->rebins++;

    glActiveTexture(GL_TEXTURE0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D, d->tex_d);
    if (d->tex_w != r->w || d->tex_h != r->h) {
        glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, r->w, r->h, 0, GL_RED, GL_FLOAT, d->D);
        glBindTexture(GL_TEXTURE_2D, d->tex_c);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB32F, r->w, r->h, 0, GL_RGB, GL_FLOAT, d->C);
        d->tex_w = r->w;
        d->tex_h = r->h;
    } else {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, r->w, r->h, GL_RED, GL_FLOAT, d->D);
        glBindTexture(GL_TEXTURE_2D, d->tex_c);
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, r->w, r->h, GL_RGB, GL_FLOAT, d->C);
    }
    if (mw__gl_check("density upload") < 0) {
        d->key.valid = 0;
        return -1;
    }
    d->key.f0 = f0;
    d->key.f1 = f1;
    d->key.d0 = d0;
    d->key.d1 = d1;
    d->key.w = r->w;
    d->key.h = r->h;
    d->key.repr = (int)v->repr;
    d->key.hfn = v->highlight_fn;
    d->key.hrank = v->highlight_rank;
    d->key.lin = v->dur_linear;
    d->key.data_gen = vc->data_gen;
    d->key.valid = 1;
    return 0;
}

/* Screen x of a global ns time on the call view's axis. */
static float x_of_ns(const mw_view_ctx_t *vc, double f0, double f1, uint64_t ns)
{
    return (float)mw_x_of_time(&vc->layout->density, f0, f1, mw_model_seconds(vc->model, ns));
}

static float y_of_dur(const mw_view_ctx_t *vc, const mw_density_gl_t *d, double ns)
{
    if (d->lin)
        return (float)mw_y_of_duration_linear(&vc->layout->density, d->d1, ns);
    return (float)mw_y_of_duration(&vc->layout->density, d->d0, d->d1, ns < 1 ? 1 : ns);
}

/* The screen position of a call as the current representation draws it (its anchor point). */
static void density_call_xy(const mw_view_ctx_t *vc, const mw_density_gl_t *d, uint64_t start_ns,
                            uint64_t duration_ns, float *x, float *y)
{
    double f0 = 0, f1 = 0;
    mw_view_focus(vc->view, &f0, &f1);
    uint64_t at = start_ns;
    if (vc->view->repr == MW_REPR_END)
        at = start_ns + duration_ns;
    else if (vc->view->repr == MW_REPR_LINES || vc->view->repr == MW_REPR_ARCS)
        at = start_ns + duration_ns / 2;
    *x = x_of_ns(vc, f0, f1, at);
    *y = y_of_dur(vc, d, (double)duration_ns);
}

/* An arc from x0 to x1 on the baseline y_base, with its apex at y_apex (a half ellipse). */
static void arc(const mw_view_ctx_t *vc, float x0, float x1, float y_base, float y_apex, float lw,
                mw_rgba_t c)
{
    const int seg = 24;
    float cx = (x0 + x1) / 2, rx = (x1 - x0) / 2, ry = y_base - y_apex;
    float px = x0, py = y_base;
    for (int i = 1; i <= seg; i++) {
        float a = 3.14159265f * (1.0f - (float)i / seg);
        float nx = cx + rx * cosf(a), ny = y_base - ry * sinf(a);
        mw__batch_line(vc->batch, px, py, nx, ny, lw, c);
        px = nx;
        py = ny;
    }
}

/* 1 when `rank` is exact in the window holding global time g: its traced calls are drawn
 * there (draw_rank_traced), not its summary's cells and long calls. */
static int rank_exact_at(const mw_view_ctx_t *vc, uint32_t rank, uint64_t g)
{
    const mw_trace_window_t *tw = mw_trace_window(vc->model, mw_model_window_at(vc->model, g));
    if (!tw || tw->over_cap)
        return 0;
    for (uint32_t i = 0; i < tw->n_ranks; i++)
        if (tw->ranks[i].rank == rank)
            return tw->ranks[i].exact;
    return 0;
}

/* The highlighted rank's calls, drawn over the density so they stand out of the crowd. */
static void draw_rank_calls(const mw_view_ctx_t *vc, const mw_density_gl_t *d, const mw_rect_t *r,
                            double f0, double f1)
{
    uint32_t rank = 0;
    size_t n = 0;
    const mw_rank_call_t *calls = mw_model_rank_calls(vc->model, &rank, &n);
    if (!calls || vc->view->highlight_rank < 0 || (int64_t)rank != vc->view->highlight_rank)
        return;
    const Mpiwatch__JobInfo *job = mw_model_job(vc->model);
    uint64_t sub_ns = job && job->subslots ? job->window_ns / job->subslots : 0;
    mw_batch_t *b = vc->batch;
    float lw = mw__px(vc->layout, 1), rad = mw__px(vc->layout, 3.5f);
    float left = (float)r->x, right = (float)(r->x + r->w);
    float top = (float)r->y, bottom = (float)(r->y + r->h);
    mw_repr_t repr = vc->view->repr;
    /* The cells the model draws for this representation: by start for START, by end for the
     * others (mw_density_bin). */
    int want_end = repr != MW_REPR_START;
    mw_rgba_t white = mw__rgba(1, 1, 1, 0.95f);

    /* Cells first (context), exact calls on top. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) {
            const mw_rank_call_t *c = &calls[i];
            if (c->exact != pass)
                continue;
            /* Cells count by end or start in the window of their sub-slot; a long call comes
             * with the window it ends in. */
            if (rank_exact_at(vc, rank, c->exact ? c->start_ns + c->duration_ns : c->start_ns))
                continue;
            mw_rgb_t col = mw_model_color(vc->model, c->fn);
            mw_rgba_t fc = mw__rgba(col.r, col.g, col.b, 1);
            if (!c->exact) {
                if (c->end != want_end || !sub_ns)
                    continue;
                float x0 = x_of_ns(vc, f0, f1, c->start_ns);
                /* A sub-slot of the cell's own window (the grid can change mid-run). */
                uint64_t cell_ns =
                    mw_model_window_len(vc->model, mw_model_window_at(vc->model, c->start_ns)) /
                    job->subslots;
                float x1 = x_of_ns(vc, f0, f1, c->start_ns + (cell_ns ? cell_ns : sub_ns));
                float y0 = y_of_dur(vc, d, 2.0 * (double)c->duration_ns);
                float y1 = y_of_dur(vc, d, (double)c->duration_ns);
                if (x1 < left || x0 > right || y1 < top || y0 > bottom)
                    continue;
                x0 = x0 < left ? left : x0;
                x1 = x1 > right ? right : x1;
                y0 = y0 < top ? top : y0;
                y1 = y1 > bottom ? bottom : y1;
                if (x1 - x0 < 3 * lw)
                    x1 = x0 + 3 * lw;
                /* The function's color lifted toward white: readable on the dimmed crowd and
                 * still telling which function the cell is. */
                mw_rgba_t frame =
                    mw__rgba(0.5f + 0.5f * fc.r, 0.5f + 0.5f * fc.g, 0.5f + 0.5f * fc.b, 0.8f);
                mw__batch_frame(b, x0, y0, x1 - x0, y1 - y0, lw, frame);
                continue;
            }
            float y = y_of_dur(vc, d, (double)c->duration_ns);
            float xs = x_of_ns(vc, f0, f1, c->start_ns);
            float xe = x_of_ns(vc, f0, f1, c->start_ns + c->duration_ns);
            if (y < top - rad || y > bottom + rad || xe < left - rad || xs > right + rad)
                continue;
            if (repr == MW_REPR_LINES) {
                float a = xs < left ? left : xs, z = xe > right ? right : xe;
                if (z - a < 1)
                    z = a + 1;
                mw__batch_line(b, a, y, z, y, 3 * lw, white);
                mw__batch_line(b, a, y, z, y, lw, fc);
            } else if (repr == MW_REPR_ARCS) {
                arc(vc, xs, xe, bottom, y, 3 * lw, white);
                arc(vc, xs, xe, bottom, y, lw, fc);
            } else {
                float x = repr == MW_REPR_END ? xe : xs;
                if (x < left - rad || x > right + rad)
                    continue;
                mw__batch_disc(b, x, y, rad + lw, white);
                mw__batch_disc(b, x, y, rad - lw * 0.5f, fc);
            }
        }
    }
}

/* ---- traced windows (docs/trace.md, "Viewing traced windows") ---------------------------- */

/* Window k's span on the call view's x axis (screen pixels). */
static void window_x(const mw_view_ctx_t *vc, double f0, double f1, uint64_t k, float *xa,
                     float *xb)
{
    uint64_t s = mw_model_window_start(vc->model, k);
    *xa = x_of_ns(vc, f0, f1, s);
    *xb = x_of_ns(vc, f0, f1, s + mw_model_window_len(vc->model, k));
}

/* The windows of [f0, f1] and how they are drawn; 1 when any of them is traced. */
static int range_windows(const mw_view_ctx_t *vc, double f0, double f1, uint64_t *k0, uint64_t *k1)
{
    double origin = (double)mw_model_origin_ns(vc->model);
    double g0 = origin + f0 * 1e9, g1 = origin + f1 * 1e9;
    *k0 = g0 > 0 ? mw_model_window_at(vc->model, (uint64_t)g0) : 0;
    *k1 = g1 > 0 ? mw_model_window_at(vc->model, (uint64_t)g1) : 0;
    if (*k1 - *k0 > 4096)
        *k0 = *k1 - 4096;
    int traced = 0;
    for (uint64_t k = *k0; k <= *k1 && !traced; k++) {
        mw_cover_t c = mw_trace_cover(vc->model, k);
        traced = c == MW_COVER_EXACT || c == MW_COVER_PARTIAL;
    }
    return traced;
}

/* Over a range that holds traced windows, the windows drawn from their summaries are marked:
 * a hatched band along the plot's top (partly exact windows: half of it) and the word
 * "summary" where there is room. Exact windows get no mark: exact is what a call view is. */
void mw__trace_marks_draw(const mw_view_ctx_t *vc, const mw_rect_t *r, double f0, double f1)
{
    uint64_t k0, k1;
    if (!range_windows(vc, f0, f1, &k0, &k1))
        return;
    mw_batch_t *b = vc->batch;
    float band = mw__px(vc->layout, 5), lw = mw__px(vc->layout, 1.5f);
    mw_rgba_t hatch = mw__hex(MW_COLOR_SUMMARY, 0.9f), dim = mw__hex(MW_COLOR_SUMMARY, 0.25f);
    int fs = mw__font_small(vc->layout);
    for (uint64_t k = k0; k <= k1; k++) {
        mw_cover_t c = mw_trace_cover(vc->model, k);
        if (c != MW_COVER_SUMMARY && c != MW_COVER_PARTIAL)
            continue;
        float xa, xb;
        window_x(vc, f0, f1, k, &xa, &xb);
        xa = xa < r->x ? (float)r->x : xa;
        xb = xb > r->x + r->w ? (float)(r->x + r->w) : xb;
        if (xb <= xa)
            continue;
        float h = c == MW_COVER_PARTIAL ? band / 2 : band;
        mw__batch_rect(b, xa, (float)r->y, xb - xa, h, dim);
        /* Diagonal strokes every 6 pixels. */
        float step = mw__px(vc->layout, 6);
        for (float x = xa - fmodf(xa - (float)r->x, step); x < xb; x += step) {
            float x0 = x < xa ? xa : x, x1 = x + h > xb ? xb : x + h;
            if (x1 > x0)
                mw__batch_line(b, x0, (float)r->y + h, x1, (float)r->y + h - (x1 - x0), lw, hatch);
        }
        const char *word = c == MW_COVER_PARTIAL ? "partly exact" : "summary";
        float tw = mw__text_width(vc->text, fs, word);
        if (xb - xa > tw + 8)
            mw__text_draw(vc->text, fs, (xa + xb) / 2, (float)r->y + band + 1, MW_ALIGN_CENTER,
                          mw__hex(MW_COLOR_SUMMARY, 1), word);
    }
}

/* Calls still in progress at the newest window: open-ended, growing with every window. A
 * dashed line from the call's start to the newest window's end at the height of how long it
 * has lasted so far, a hollow marker at the start and an arrow head at the growing end. */
static void draw_open_calls(const mw_view_ctx_t *vc, const mw_density_gl_t *d, const mw_rect_t *r,
                            double f0, double f1)
{
    mw_trace_open_t open[256];
    size_t n = mw_trace_open_calls(vc->model, open, 256);
    float lw = mw__px(vc->layout, 1.5f), rad = mw__px(vc->layout, 4), dash = mw__px(vc->layout, 5);
    for (size_t i = 0; i < n; i++) {
        const mw_trace_open_t *o = &open[i];
        float y = y_of_dur(vc, d, (double)o->grown_ns);
        float xs = x_of_ns(vc, f0, f1, o->start_ns);
        float xe = x_of_ns(vc, f0, f1, o->start_ns + o->grown_ns);
        if (y < r->y || y > r->y + r->h || xe < r->x || xs > r->x + r->w)
            continue;
        mw_rgb_t col = mw_model_color(vc->model, o->fn);
        mw_rgba_t c = mw__rgba(col.r, col.g, col.b, 1);
        float a = xs < r->x ? (float)r->x : xs, z = xe > r->x + r->w ? (float)(r->x + r->w) : xe;
        for (float x = a; x < z; x += 2 * dash)
            mw__batch_line(vc->batch, x, y, x + dash < z ? x + dash : z, y, lw, c);
        if (xs >= r->x)
            mw__batch_ring(vc->batch, xs, y, rad, lw, c);
        if (xe <= r->x + r->w)
            mw__batch_tri(vc->batch, xe, y, xe - 2 * rad, y - rad, xe - 2 * rad, y + rad, c);
    }
}

/* The highlighted rank's calls in traced windows, every one exact, outlined over the crowd. */
static void draw_rank_traced(const mw_view_ctx_t *vc, const mw_density_gl_t *d, const mw_rect_t *r,
                             double f0, double f1)
{
    int64_t hr = vc->view->highlight_rank;
    uint64_t k0, k1;
    if (hr < 0 || !range_windows(vc, f0, f1, &k0, &k1))
        return;
    mw_repr_t repr = vc->view->repr;
    float lw = mw__px(vc->layout, 1), rad = mw__px(vc->layout, 3);
    mw_rgba_t white = mw__rgba(1, 1, 1, 0.9f);
    size_t drawn = 0;
    for (uint64_t k = k0; k <= k1 + 1 && drawn < 20000; k++) {
        const mw_trace_window_t *tw = mw_trace_window(vc->model, k);
        if (!tw || tw->over_cap)
            continue;
        for (uint32_t i = 0; i < tw->n_ranks; i++) {
            const mw_trace_rank_t *e = &tw->ranks[i];
            if ((int64_t)e->rank != hr || !e->exact)
                continue;
            for (size_t j = 0; j < e->n && drawn < 20000; j++) {
                const mw_trace_rec_t *rec = &e->recs[j];
                if (!mw_trace_is_call(rec))
                    continue;
                uint64_t s = mw_trace_rec_start(e, rec);
                float y = y_of_dur(vc, d, rec->dur_ns ? (double)rec->dur_ns : 1.0);
                float xs = x_of_ns(vc, f0, f1, s), xe = x_of_ns(vc, f0, f1, s + rec->dur_ns);
                if (y < r->y || y > r->y + r->h || xe < r->x || xs > r->x + r->w)
                    continue;
                mw_rgb_t col = mw_model_color(vc->model, rec->fn);
                mw_rgba_t fc = mw__rgba(col.r, col.g, col.b, 1);
                drawn++;
                if (repr == MW_REPR_LINES) {
                    float a = xs < r->x ? (float)r->x : xs;
                    float z = xe > r->x + r->w ? (float)(r->x + r->w) : xe;
                    mw__batch_line(vc->batch, a, y, z < a + 1 ? a + 1 : z, y, 3 * lw, white);
                    mw__batch_line(vc->batch, a, y, z < a + 1 ? a + 1 : z, y, lw, fc);
                } else if (repr == MW_REPR_ARCS) {
                    arc(vc, xs, xe, (float)(r->y + r->h), y, 2 * lw, fc);
                } else {
                    float x = repr == MW_REPR_END ? xe : xs;
                    if (x < r->x || x > r->x + r->w)
                        continue;
                    /* As draw_rank_calls marks an exact call: white rim, function colour. */
                    mw__batch_disc(vc->batch, x, y, rad + lw, white);
                    mw__batch_disc(vc->batch, x, y, rad - lw * 0.5f, fc);
                }
            }
        }
    }
}

#define LONGEST_RINGED 24 /* the longest recorded calls of the range get a ring */

/* The longest recorded calls of the range, ringed in their function's color. They are in the
 * density like every call (at least o_min, whatever Dmax is), but a single call of a few
 * pixels is easy to miss next to a million others: the outliers are the calls the view is for,
 * so the longest ones are marked. */
static void draw_longest(const mw_view_ctx_t *vc, const mw_density_gl_t *d, const mw_rect_t *r,
                         double f0, double f1)
{
    const Mpiwatch__JobInfo *job = mw_model_job(vc->model);
    if (!job || !job->window_ns)
        return;
    const Mpiwatch__Call *top[LONGEST_RINGED];
    int n = 0;
    double origin = (double)mw_model_origin_ns(vc->model);
    double g0 = origin + f0 * 1e9, g1 = origin + f1 * 1e9;
    double k0 = g0 > 0 ? (double)mw_model_window_at(vc->model, (uint64_t)g0) : 0;
    double k1 = g1 > 0 ? (double)mw_model_window_at(vc->model, (uint64_t)g1) : -1;
    if (k1 - k0 > 100000)
        k0 = k1 - 100000; /* a zoomed-out range: its newest part */
    for (double k = k0; k <= k1; k++) {
        const Mpiwatch__Window *w = mw_model_window(vc->model, (uint64_t)k);
        if (!w)
            continue;
        for (size_t i = 0; i < w->n_longest; i++) {
            const Mpiwatch__Call *c = w->longest[i];
            /* Longest first within a window: once one is too short, so are the rest. */
            if (n == LONGEST_RINGED && c->duration_ns <= top[n - 1]->duration_ns)
                break;
            int j = n < LONGEST_RINGED ? n++ : n - 1;
            while (j > 0 && top[j - 1]->duration_ns < c->duration_ns) {
                top[j] = top[j - 1];
                j--;
            }
            top[j] = c;
        }
    }
    float rad = mw__px(vc->layout, 4.5f), lw = mw__px(vc->layout, 1.5f);
    for (int i = 0; i < n; i++) {
        float x = 0, y = 0;
        density_call_xy(vc, d, top[i]->start_ns, top[i]->duration_ns, &x, &y);
        if (x < r->x || x > r->x + r->w || y < r->y || y > r->y + r->h)
            continue;
        mw_rgb_t col = mw_model_color(vc->model, top[i]->fn);
        mw__batch_ring(vc->batch, x, y, rad, lw, mw__rgba(col.r, col.g, col.b, 0.9f));
    }
}

static void draw_pick(const mw_view_ctx_t *vc, const mw_density_gl_t *d, const mw_rect_t *r,
                      double f0, double f1)
{
    const mw_pick_t *p = vc->pick;
    mw_rgba_t ring = mw__hex(0xffd84a, 1);
    if (p->kind == MW_PICK_CALL) {
        float x = 0, y = 0;
        density_call_xy(vc, d, p->start_ns, p->duration_ns, &x, &y);
        if (x < r->x - 20 || x > r->x + r->w + 20 || y < r->y - 20 || y > r->y + r->h + 20)
            return;
        mw__batch_ring(vc->batch, x, y, mw__px(vc->layout, 9), mw__px(vc->layout, 2),
                       mw__rgba(0, 0, 0, 0.6f));
        mw__batch_ring(vc->batch, x, y, mw__px(vc->layout, 9), mw__px(vc->layout, 1.5f), ring);
    } else if (p->kind == MW_PICK_CELL) {
        float x0 = x_of_ns(vc, f0, f1, p->cell_t0_ns), x1 = x_of_ns(vc, f0, f1, p->cell_t1_ns);
        float y0 = y_of_dur(vc, d, (double)p->cell_d1_ns),
              y1 = y_of_dur(vc, d, (double)p->cell_d0_ns);
        if (x1 - x0 < 4)
            x0 -= 2, x1 += 2;
        mw__batch_frame(vc->batch, x0, y0, x1 - x0, y1 - y0, mw__px(vc->layout, 1.5f), ring);
    }
}

static void draw_grid_and_axes(const mw_view_ctx_t *vc, const mw_density_gl_t *d,
                               const mw_rect_t *r, double f0, double f1, int grid)
{
    mw_batch_t *b = vc->batch;
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout);
    int lh = mw__text_line_height(t, fs);
    mw_rgba_t axis = mw__hex(MW_COLOR_AXIS, 1), label = mw__hex(MW_COLOR_DIM, 1);
    mw_rgba_t gridc = mw__hex(MW_COLOR_GRID, 1);
    float lw = mw__px(vc->layout, 1), tick = mw__px(vc->layout, 4);
    float bottom = (float)(r->y + r->h);
    mw_tick_t ticks[48];

    if (grid) {
        int n = mw_time_ticks(f0, f1, r, ticks, 48);
        for (int i = 0; i < n; i++) {
            float x = (float)ticks[i].px;
            if (x >= r->x - 0.5f && x <= r->x + r->w + 0.5f)
                mw__batch_rect(b, x - lw / 2, (float)r->y, lw, (float)r->h, gridc);
        }
    } else {
        mw__time_axis(vc, r, f0, f1);
    }
    /* The y axis title sits in the left margin level with the plot's top; tick labels that
     * would touch it are left out. */
    const char *ytitle = "call duration ↑";
    if (!grid)
        mw__text_draw(t, fs, mw__px(vc->layout, 6), (float)r->y, MW_ALIGN_LEFT, label, ytitle);
    int n = d->lin ? mw_duration_ticks_linear(d->d1, r, ticks, 48)
                   : mw_duration_ticks(d->d0, d->d1, r, ticks, 48);
    float last_top = 1e9f;
    for (int i = 0; i < n; i++) {
        float y = (float)ticks[i].px;
        if (y < r->y - 0.5f || y > bottom + 0.5f)
            continue;
        if (grid) {
            mw__batch_rect(b, (float)r->x, y - lw / 2, (float)r->w, lw, gridc);
            continue;
        }
        mw__batch_rect(b, (float)r->x - lw - tick, y - lw / 2, tick, lw, axis);
        /* Ticks come bottom-up or top-down; skip a label that would touch the last one. */
        if (fabsf(y - last_top) < (float)lh || y - (float)lh / 2 < (float)(r->y + lh))
            continue;
        mw__text_draw(t, fs, (float)r->x - lw - tick - mw__px(vc->layout, 3), y - (float)lh / 2,
                      MW_ALIGN_RIGHT, label, ticks[i].label);
        last_top = y;
    }
    if (grid)
        return;
    mw__batch_rect(b, (float)r->x - lw, (float)r->y, lw, (float)r->h + lw, axis);
    mw__batch_rect(b, (float)r->x - lw, bottom, (float)r->w + lw, lw, axis);
    /* The x axis title goes in the margin left of the tick labels' row; the y axis title
     * inside the plot's top-left corner (mw__density_draw), since the layout leaves no room
     * above the plot and horizontal text reads better than rotated text at these sizes. */
    mw__text_draw(t, fs, mw__px(vc->layout, 6), bottom + lw + tick + mw__px(vc->layout, 1),
                  MW_ALIGN_LEFT, label, "time →");
}

/* Room for a w x h picture in d's buffers (D opacity, C colour). */
int mw__density_room(mw_density_gl_t *d, int w, int h)
{
    size_t px = (size_t)w * (size_t)h;
    if (px > d->cap) {
        float *D = realloc(d->D, px * sizeof(float));
        if (D)
            d->D = D;
        float *C = D ? realloc(d->C, px * 3 * sizeof(float)) : NULL;
        if (!D || !C)
            return -1;
        d->C = C;
        d->cap = px;
    }
    return 0;
}

/* d's buffers (D opacity, C colour, w x h) into its textures. */
int mw__density_upload(mw_density_gl_t *d, int w, int h, const char *what)
{
    glActiveTexture(GL_TEXTURE0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D, d->tex_d);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, w, h, 0, GL_RED, GL_FLOAT, d->D);
    glBindTexture(GL_TEXTURE_2D, d->tex_c);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB32F, w, h, 0, GL_RGB, GL_FLOAT, d->C);
    d->tex_w = w;
    d->tex_h = h;
    return mw__gl_check(what);
}

/* d's textures over rect r through the call view's shader: transfer `mode` (0 linear, 1 log),
 * opacity floor `omin`, opacities divided by `dmax`. */
void mw__density_draw_tex(const mw_view_ctx_t *vc, mw_density_gl_t *d, const mw_rect_t *r, int mode,
                          float omin, float dmax)
{
    float v[] = {
        (float)r->x,          (float)r->y,          0,           (float)r->h,
        (float)(r->x + r->w), (float)r->y,          (float)r->w, (float)r->h,
        (float)r->x,          (float)(r->y + r->h), 0,           0,
        (float)(r->x + r->w), (float)(r->y + r->h), (float)r->w, 0,
    };
    glUseProgram(d->prog);
    glUniformMatrix4fv(d->u_proj, 1, GL_FALSE, vc->batch->proj);
    glUniform1i(d->u_d, 0);
    glUniform1i(d->u_c, 1);
    glUniform1i(d->u_mode, mode);
    glUniform1f(d->u_omin, omin);
    glUniform1f(d->u_dmax, dmax);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, d->tex_c);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, d->tex_d);
    mw__vbuf_draw(&d->quad, GL_TRIANGLE_STRIP, v, 4);
}

void mw__density_draw(const mw_view_ctx_t *vc, mw_density_gl_t *d, int force_rebin, int rank_busy)
{
    const mw_rect_t *r = &vc->layout->density;
    if (r->w <= 0 || r->h <= 0)
        return;
    double f0 = 0, f1 = 0;
    mw_view_focus(vc->view, &f0, &f1);
    density_update(vc, d, force_rebin);

    mw__batch_rect(vc->batch, (float)r->x, (float)r->y, (float)r->w, (float)r->h,
                   mw__hex(MW_COLOR_PLOT, 1));
    draw_grid_and_axes(vc, d, r, f0, f1, 1);
    mw__batch_flush(vc->batch);

    if (d->key.valid && d->dmax > 0)
        mw__density_draw_tex(vc, d, r, vc->view->transfer == MW_TRANSFER_LINEAR ? 0 : 1,
                             vc->view->o_min, d->dmax);

    mw__event_markers_draw(vc, r, f0, f1, 0);
    draw_longest(vc, d, r, f0, f1);
    draw_rank_calls(vc, d, r, f0, f1);
    draw_rank_traced(vc, d, r, f0, f1);
    draw_open_calls(vc, d, r, f0, f1);
    mw__trace_marks_draw(vc, r, f0, f1);
    draw_pick(vc, d, r, f0, f1);
    draw_grid_and_axes(vc, d, r, f0, f1, 0);

    /* What is shown, in a corner: representation, transfer, o_min, Dmax. */
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 6);
    char buf[160];
    snprintf(buf, sizeof buf, "%s · %s transfer · o_min %.2f · Dmax %.0f%s",
             mw__repr_name(vc->view->repr), mw__transfer_name(vc->view->transfer),
             (double)vc->view->o_min, (double)d->dmax, d->lin ? " · linear durations" : "");
    float w = mw__text_width(t, fs, buf);
    float lh = (float)mw__text_line_height(t, fs);
    /* Bottom corners: the top of the plot holds the longest calls, the ones that matter. */
    float cy = (float)(r->y + r->h) - lh - pad / 2;
    mw__batch_rect(vc->batch, (float)(r->x + r->w) - w - 2 * pad, cy, w + pad * 1.5f, lh,
                   mw__hex(MW_COLOR_BG, 0.75f));
    mw__text_draw(t, fs, (float)(r->x + r->w) - pad, cy, MW_ALIGN_RIGHT, mw__hex(MW_COLOR_TEXT, 1),
                  buf);
    if (vc->view->highlight_rank >= 0) {
        const char *busy = rank_busy ? " (loading its calls…)" : "";
        char hb[96];
        snprintf(hb, sizeof hb, "rank %lld highlighted%s", (long long)vc->view->highlight_rank,
                 busy);
        float hy = (float)(r->y + r->h) - lh - pad / 2;
        mw__batch_rect(vc->batch, (float)r->x + pad / 2, hy, mw__text_width(t, fs, hb) + pad, lh,
                       mw__hex(MW_COLOR_BG, 0.75f));
        mw__text_draw(t, fs, (float)r->x + pad, hy, MW_ALIGN_LEFT, mw__hex(0xffd84a, 1), hb);
    }
    if (!(d->dmax > 0)) {
        int f = vc->layout->font_px;
        mw__text_draw(t, f, (float)r->x + (float)r->w / 2,
                      (float)r->y + (float)r->h / 2 - (float)mw__text_line_height(t, f) / 2,
                      MW_ALIGN_CENTER, mw__hex(MW_COLOR_DIM, 1),
                      mw_model_job(vc->model) ? "no calls in the selected range"
                                              : "waiting for the job…");
    }
    mw__batch_flush(vc->batch);
    mw__text_flush(vc->text);
}
