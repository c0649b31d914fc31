/* text.c: glyph atlases and batched text quads.
 *
 * DESIGN: each font size used gets its own TTF_Font and an atlas texture (GL_R8 coverage)
 * holding every glyph the viewer prints, rendered with TTF_RenderGlyph32_Blended and packed
 * in rows. A glyph keeps its advance and the horizontal offset of its rendered surface (SDL_ttf
 * starts a glyph's surface at its left bearing when that is negative), so a string is laid
 * out by adding advances, which is also how widths are measured. Sizes are created on first
 * use and kept (the viewer uses three or four sizes; the table is bounded and the oldest size
 * is dropped when it is full, e.g. after many window resizes).
 */
#include "text.h"

#include <SDL2/SDL_ttf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_SIZES 8
#define ATLAS_W 1024
#define FLOATS_PER_VERTEX 8 /* x, y, u, v, r, g, b, a */

/* The code points in every atlas besides ASCII 32..126. */
static const Uint32 extra_glyphs[] = {0x00b5, 0x2014, 0x00d7, 0x00b0, 0x00b1, 0x00b7, 0x2026,
                                      0x2190, 0x2192, 0x2191, 0x2193, 0x2013, 0x2212, 0x2194};
#define N_EXTRA (sizeof extra_glyphs / sizeof extra_glyphs[0])
#define N_GLYPHS (95 + N_EXTRA)

typedef struct {
    Uint32 cp;
    float u0, v0, u1, v1; /* atlas coordinates */
    int w, h;             /* surface size */
    int xoff;             /* where the surface starts relative to the pen */
    int advance;
} glyph_t;

typedef struct {
    int px; /* 0: unused slot */
    TTF_Font *font;
    GLuint tex;
    int line_h;
    glyph_t glyphs[N_GLYPHS];
    float *v; /* queued quads */
    size_t n, cap;
    unsigned long last_use;
} atlas_t;

struct mw_text {
    char path[512];
    GLuint prog;
    GLint u_proj, u_tex;
    mw_vbuf_t vb;
    float proj[16];
    atlas_t atlas[TEXT_SIZES];
    unsigned long use_clock;
};

static const char *text_vs = "#version 330 core\n"
                             "uniform mat4 u_proj;\n"
                             "in vec2 a_pos;\n"
                             "in vec2 a_uv;\n"
                             "in vec4 a_color;\n"
                             "out vec2 v_uv;\n"
                             "out vec4 v_color;\n"
                             "void main() {\n"
                             "    v_uv = a_uv;\n"
                             "    v_color = a_color;\n"
                             "    gl_Position = u_proj * vec4(a_pos, 0.0, 1.0);\n"
                             "}\n";

static const char *text_fs = "#version 330 core\n"
                             "uniform sampler2D u_tex;\n"
                             "in vec2 v_uv;\n"
                             "in vec4 v_color;\n"
                             "out vec4 o_color;\n"
                             "void main() {\n"
                             "    float a = texture(u_tex, v_uv).r;\n"
                             "    o_color = vec4(v_color.rgb, v_color.a * a);\n"
                             "}\n";

mw_text_t *mw__text_new(void)
{
    static const char *const attribs[] = {"a_pos", "a_uv", "a_color", NULL};
    static const int sizes[] = {2, 2, 4};
    mw_text_t *t = calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "mpiwatch-viewer: out of memory for text\n");
        return NULL;
    }
    /* Find a font file now so that a missing font is reported once, at start. */
    const char *candidates[] = {getenv("MPIWATCH_FONT"),
                                "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                                "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !t->path[0]; i++) {
        if (!candidates[i] || !candidates[i][0])
            continue;
        TTF_Font *f = TTF_OpenFont(candidates[i], 12);
        if (f) {
            TTF_CloseFont(f);
            snprintf(t->path, sizeof t->path, "%s", candidates[i]);
        } else if (i == 0) {
            fprintf(stderr, "mpiwatch-viewer: MPIWATCH_FONT=%s: %s; using DejaVu\n", candidates[i],
                    TTF_GetError());
        }
    }
    if (!t->path[0]) {
        fprintf(stderr, "mpiwatch-viewer: no font: install fonts-dejavu-core or set "
                        "MPIWATCH_FONT to a .ttf file\n");
        free(t);
        return NULL;
    }
    t->prog = mw__gl_program("text", text_vs, text_fs, attribs);
    if (!t->prog || mw__vbuf_init(&t->vb, sizes, 3) < 0) {
        mw__text_free(t);
        return NULL;
    }
    t->u_proj = glGetUniformLocation(t->prog, "u_proj");
    t->u_tex = glGetUniformLocation(t->prog, "u_tex");
    mw__gl_ortho(t->proj, 1, 1);
    return t;
}

static void atlas_free(atlas_t *a)
{
    if (a->font)
        TTF_CloseFont(a->font);
    if (a->tex)
        glDeleteTextures(1, &a->tex);
    free(a->v);
    memset(a, 0, sizeof *a);
}

void mw__text_free(mw_text_t *t)
{
    if (!t)
        return;
    for (int i = 0; i < TEXT_SIZES; i++)
        atlas_free(&t->atlas[i]);
    if (t->prog)
        glDeleteProgram(t->prog);
    mw__vbuf_free(&t->vb);
    free(t);
}

void mw__text_target(mw_text_t *t, int w, int h)
{
    mw__gl_ortho(t->proj, w, h);
}

/* Renders every glyph of the set at size px into one coverage texture. */
static int atlas_build(mw_text_t *t, atlas_t *a, int px)
{
    memset(a, 0, sizeof *a);
    a->font = TTF_OpenFont(t->path, px);
    if (!a->font) {
        fprintf(stderr, "mpiwatch-viewer: %s at %d px: %s\n", t->path, px, TTF_GetError());
        return -1;
    }
    TTF_SetFontHinting(a->font, TTF_HINTING_LIGHT);
    a->line_h = TTF_FontHeight(a->font);

    SDL_Surface *surf[N_GLYPHS] = {0};
    SDL_Color white = {255, 255, 255, 255};
    int x = 1, y = 1, row_h = 0;
    for (size_t i = 0; i < N_GLYPHS; i++) {
        glyph_t *g = &a->glyphs[i];
        g->cp = i < 95 ? (Uint32)(32 + i) : extra_glyphs[i - 95];
        int minx = 0, maxx = 0, miny = 0, maxy = 0, adv = 0;
        if (TTF_GlyphMetrics32(a->font, g->cp, &minx, &maxx, &miny, &maxy, &adv) < 0)
            continue;
        g->advance = adv;
        g->xoff = minx < 0 ? minx : 0;
        if (g->cp == ' ')
            continue;
        SDL_Surface *s = TTF_RenderGlyph32_Blended(a->font, g->cp, white);
        if (!s)
            continue;
        surf[i] = s;
        g->w = s->w;
        g->h = s->h;
        if (x + g->w + 1 > ATLAS_W) {
            x = 1;
            y += row_h + 1;
            row_h = 0;
        }
        g->u0 = (float)x; /* pixel positions for now, normalized below */
        g->v0 = (float)y;
        x += g->w + 1;
        if (g->h > row_h)
            row_h = g->h;
    }
    int atlas_h = y + row_h + 1;
    unsigned char *pix = calloc((size_t)ATLAS_W * (size_t)atlas_h, 1);
    if (!pix) {
        fprintf(stderr, "mpiwatch-viewer: out of memory for a glyph atlas\n");
        for (size_t i = 0; i < N_GLYPHS; i++)
            SDL_FreeSurface(surf[i]);
        atlas_free(a);
        return -1;
    }
    for (size_t i = 0; i < N_GLYPHS; i++) {
        SDL_Surface *s = surf[i];
        if (!s)
            continue;
        glyph_t *g = &a->glyphs[i];
        /* Blended glyphs are 32-bit ARGB: the coverage is the alpha channel. */
        SDL_Surface *conv = SDL_ConvertSurfaceFormat(s, SDL_PIXELFORMAT_ARGB8888, 0);
        if (conv && SDL_LockSurface(conv) == 0) {
            for (int r = 0; r < conv->h; r++) {
                const Uint32 *src = (const Uint32 *)((const unsigned char *)conv->pixels +
                                                     (size_t)r * (size_t)conv->pitch);
                unsigned char *dst = pix + (size_t)((int)g->v0 + r) * ATLAS_W + (size_t)g->u0;
                for (int c = 0; c < conv->w; c++)
                    dst[c] = (unsigned char)(src[c] >> 24);
            }
            SDL_UnlockSurface(conv);
        }
        SDL_FreeSurface(conv);
        SDL_FreeSurface(s);
        g->u1 = (g->u0 + (float)g->w) / ATLAS_W;
        g->v1 = (g->v0 + (float)g->h) / (float)atlas_h;
        g->u0 /= ATLAS_W;
        g->v0 /= (float)atlas_h;
    }
    glGenTextures(1, &a->tex);
    glBindTexture(GL_TEXTURE_2D, a->tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, ATLAS_W, atlas_h, 0, GL_RED, GL_UNSIGNED_BYTE, pix);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    free(pix);
    a->px = px;
    if (mw__gl_check("glyph atlas") < 0) {
        atlas_free(a);
        return -1;
    }
    return 0;
}

/* The atlas of size px, built on first use; NULL when it cannot be built. */
static atlas_t *atlas_get(mw_text_t *t, int px)
{
    if (px < 4)
        px = 4;
    if (px > 128)
        px = 128;
    atlas_t *victim = &t->atlas[0];
    for (int i = 0; i < TEXT_SIZES; i++) {
        atlas_t *a = &t->atlas[i];
        if (a->px == px) {
            a->last_use = ++t->use_clock;
            return a;
        }
        if (!a->px || (victim->px && a->last_use < victim->last_use))
            victim = a;
    }
    if (victim->px) {
        /* Draw what the evicted size had queued before it goes. */
        mw__text_flush(t);
        atlas_free(victim);
    }
    if (atlas_build(t, victim, px) < 0)
        return NULL;
    victim->last_use = ++t->use_clock;
    return victim;
}

/* Decodes one UTF-8 code point; advances *s. Invalid bytes come out as '?'. */
static Uint32 utf8_next(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    Uint32 c = p[0];
    int n = 0;
    if (c < 0x80)
        n = 0;
    else if ((c & 0xe0) == 0xc0)
        n = 1, c &= 0x1f;
    else if ((c & 0xf0) == 0xe0)
        n = 2, c &= 0x0f;
    else if ((c & 0xf8) == 0xf0)
        n = 3, c &= 0x07;
    else {
        *s += 1;
        return '?';
    }
    for (int i = 1; i <= n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            *s += i;
            return '?';
        }
        c = (c << 6) | (p[i] & 0x3f);
    }
    *s += n + 1;
    return c;
}

static const glyph_t *glyph_of(const atlas_t *a, Uint32 cp)
{
    if (cp >= 32 && cp <= 126)
        return &a->glyphs[cp - 32];
    for (size_t i = 0; i < N_EXTRA; i++)
        if (extra_glyphs[i] == cp)
            return &a->glyphs[95 + i];
    return &a->glyphs['?' - 32];
}

float mw__text_width(mw_text_t *t, int px, const char *s)
{
    atlas_t *a = atlas_get(t, px);
    if (!a || !s)
        return 0;
    float w = 0;
    while (*s)
        w += (float)glyph_of(a, utf8_next(&s))->advance;
    return w;
}

int mw__text_line_height(mw_text_t *t, int px)
{
    atlas_t *a = atlas_get(t, px);
    return a ? a->line_h : px;
}

static int atlas_reserve(atlas_t *a, size_t n)
{
    if (a->n + n <= a->cap)
        return 0;
    size_t cap = a->cap ? a->cap : 6 * 512;
    while (cap < a->n + n)
        cap *= 2;
    float *v = realloc(a->v, cap * FLOATS_PER_VERTEX * sizeof(float));
    if (!v)
        return -1;
    a->v = v;
    a->cap = cap;
    return 0;
}

static void quad_vertex(atlas_t *a, float x, float y, float u, float v, mw_rgba_t c)
{
    float *p = a->v + a->n * FLOATS_PER_VERTEX;
    p[0] = x;
    p[1] = y;
    p[2] = u;
    p[3] = v;
    p[4] = c.r;
    p[5] = c.g;
    p[6] = c.b;
    p[7] = c.a;
    a->n++;
}

float mw__text_draw(mw_text_t *t, int px, float x, float y, mw_align_t align, mw_rgba_t c,
                    const char *s)
{
    if (!s || !*s)
        return 0;
    float w = mw__text_width(t, px, s);
    atlas_t *a = atlas_get(t, px);
    if (!a)
        return 0;
    if (align == MW_ALIGN_CENTER)
        x -= w * 0.5f;
    else if (align == MW_ALIGN_RIGHT)
        x -= w;
    /* Whole pixels keep the nearest-sampled glyphs crisp. */
    float pen = (float)(int)(x + 0.5f);
    float top = (float)(int)(y + 0.5f);
    while (*s) {
        const glyph_t *g = glyph_of(a, utf8_next(&s));
        if (g->w > 0 && atlas_reserve(a, 6) == 0) {
            float x0 = pen + (float)g->xoff, x1 = x0 + (float)g->w;
            float y0 = top, y1 = top + (float)g->h;
            quad_vertex(a, x0, y0, g->u0, g->v0, c);
            quad_vertex(a, x1, y0, g->u1, g->v0, c);
            quad_vertex(a, x0, y1, g->u0, g->v1, c);
            quad_vertex(a, x1, y0, g->u1, g->v0, c);
            quad_vertex(a, x1, y1, g->u1, g->v1, c);
            quad_vertex(a, x0, y1, g->u0, g->v1, c);
        }
        pen += (float)g->advance;
    }
    return w;
}

float mw__text_drawf(mw_text_t *t, int px, float x, float y, mw_align_t align, mw_rgba_t c,
                     const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return mw__text_draw(t, px, x, y, align, c, buf);
}

float mw__text_fit(mw_text_t *t, int px, const char *s, float max_w, char *out, size_t len)
{
    if (!len)
        return 0;
    snprintf(out, len, "%s", s ? s : "");
    float w = mw__text_width(t, px, out);
    if (w <= max_w)
        return w;
    float ell = mw__text_width(t, px, "…");
    atlas_t *a = atlas_get(t, px);
    if (!a) {
        out[0] = 0;
        return 0;
    }
    /* Keep whole code points while they fit with the ellipsis after them. */
    const char *p = s;
    float acc = 0;
    size_t keep = 0;
    while (*p) {
        const char *q = p;
        float adv = (float)glyph_of(a, utf8_next(&q))->advance;
        if (acc + adv + ell > max_w)
            break;
        acc += adv;
        p = q;
        keep = (size_t)(p - s);
    }
    if (keep + 4 > len)
        keep = len > 4 ? len - 4 : 0;
    memcpy(out, s, keep);
    memcpy(out + keep, "…", 4); /* 3 bytes and the terminator */
    return acc + ell;
}

void mw__text_flush(mw_text_t *t)
{
    int used = 0;
    for (int i = 0; i < TEXT_SIZES; i++)
        used |= t->atlas[i].n > 0;
    if (!used)
        return;
    glUseProgram(t->prog);
    glUniformMatrix4fv(t->u_proj, 1, GL_FALSE, t->proj);
    glUniform1i(t->u_tex, 0);
    glActiveTexture(GL_TEXTURE0);
    for (int i = 0; i < TEXT_SIZES; i++) {
        atlas_t *a = &t->atlas[i];
        if (!a->n)
            continue;
        glBindTexture(GL_TEXTURE_2D, a->tex);
        mw__vbuf_draw(&t->vb, GL_TRIANGLES, a->v, a->n);
        a->n = 0;
    }
}
