/* gl_util.c: shader programs, vertex buffers, the flat-color batch and the offscreen target.
 *
 * DESIGN: OpenGL 3.3 core has no immediate mode, so the viewer keeps one CPU array of
 * triangles per frame and uploads it whenever what follows must be drawn on top (text, the
 * density quad). Orphaning the buffer on each upload (glBufferData with the new size) lets
 * the driver hand out fresh storage instead of waiting for the previous draw, which matters
 * little on llvmpipe but a lot on real GPUs. Every failure is printed with its GL log and
 * returned as 0 / -1; nothing here aborts.
 */
#include "gl_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static GLuint gl_shader(const char *name, GLenum type, const char *src)
{
    GLuint s = glCreateShader(type);
    if (!s) {
        fprintf(stderr, "mpiwatch-viewer: %s: glCreateShader failed\n", name);
        return 0;
    }
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[2048];
        GLsizei n = 0;
        glGetShaderInfoLog(s, sizeof log, &n, log);
        fprintf(stderr, "mpiwatch-viewer: %s: %s shader does not compile:\n%.*s\n", name,
                type == GL_VERTEX_SHADER ? "vertex" : "fragment", (int)n, log);
        glDeleteShader(s);
        return 0;
    }
    return s;
}

GLuint mw__gl_program(const char *name, const char *vs, const char *fs, const char *const *attribs)
{
    GLuint v = gl_shader(name, GL_VERTEX_SHADER, vs);
    GLuint f = v ? gl_shader(name, GL_FRAGMENT_SHADER, fs) : 0;
    if (!v || !f) {
        if (v)
            glDeleteShader(v);
        return 0;
    }
    GLuint p = glCreateProgram();
    glAttachShader(p, v);
    glAttachShader(p, f);
    for (GLuint i = 0; attribs && attribs[i]; i++)
        glBindAttribLocation(p, i, attribs[i]);
    glLinkProgram(p);
    glDeleteShader(v);
    glDeleteShader(f);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[2048];
        GLsizei n = 0;
        glGetProgramInfoLog(p, sizeof log, &n, log);
        fprintf(stderr, "mpiwatch-viewer: %s: program does not link:\n%.*s\n", name, (int)n, log);
        glDeleteProgram(p);
        return 0;
    }
    return p;
}

int mw__gl_check(const char *where)
{
    int bad = 0;
    for (int i = 0; i < 16; i++) {
        GLenum e = glGetError();
        if (e == GL_NO_ERROR)
            break;
        fprintf(stderr, "mpiwatch-viewer: GL error 0x%04x in %s\n", (unsigned)e, where);
        bad = 1;
    }
    return bad ? -1 : 0;
}

void mw__gl_ortho(float m[16], int w, int h)
{
    memset(m, 0, 16 * sizeof *m);
    /* Column-major: x' = 2x/w - 1, y' = 1 - 2y/h. */
    m[0] = 2.0f / (float)(w > 0 ? w : 1);
    m[5] = -2.0f / (float)(h > 0 ? h : 1);
    m[10] = -1.0f;
    m[12] = -1.0f;
    m[13] = 1.0f;
    m[15] = 1.0f;
}

int mw__vbuf_init(mw_vbuf_t *b, const int *sizes, int n_attribs)
{
    memset(b, 0, sizeof *b);
    glGenVertexArrays(1, &b->vao);
    glGenBuffers(1, &b->vbo);
    if (!b->vao || !b->vbo) {
        fprintf(stderr, "mpiwatch-viewer: cannot create a vertex buffer\n");
        return -1;
    }
    int total = 0;
    for (int i = 0; i < n_attribs; i++)
        total += sizes[i];
    b->floats_per_vertex = total;
    glBindVertexArray(b->vao);
    glBindBuffer(GL_ARRAY_BUFFER, b->vbo);
    int off = 0;
    for (int i = 0; i < n_attribs; i++) {
        glEnableVertexAttribArray((GLuint)i);
        glVertexAttribPointer((GLuint)i, sizes[i], GL_FLOAT, GL_FALSE,
                              (GLsizei)(total * sizeof(float)),
                              (const void *)(size_t)(off * sizeof(float)));
        off += sizes[i];
    }
    glBindVertexArray(0);
    return mw__gl_check("vertex buffer setup");
}

void mw__vbuf_draw(mw_vbuf_t *b, GLenum mode, const float *data, size_t n_vertices)
{
    if (!n_vertices)
        return;
    glBindVertexArray(b->vao);
    glBindBuffer(GL_ARRAY_BUFFER, b->vbo);
    glBufferData(GL_ARRAY_BUFFER,
                 (GLsizeiptr)(n_vertices * (size_t)b->floats_per_vertex * sizeof(float)), data,
                 GL_STREAM_DRAW);
    glDrawArrays(mode, 0, (GLsizei)n_vertices);
    glBindVertexArray(0);
}

void mw__vbuf_free(mw_vbuf_t *b)
{
    if (b->vbo)
        glDeleteBuffers(1, &b->vbo);
    if (b->vao)
        glDeleteVertexArrays(1, &b->vao);
    memset(b, 0, sizeof *b);
}

/* ---- the flat-color batch ----------------------------------------------------------------- */

static const char *batch_vs = "#version 330 core\n"
                              "uniform mat4 u_proj;\n"
                              "in vec2 a_pos;\n"
                              "in vec4 a_color;\n"
                              "out vec4 v_color;\n"
                              "void main() {\n"
                              "    v_color = a_color;\n"
                              "    gl_Position = u_proj * vec4(a_pos, 0.0, 1.0);\n"
                              "}\n";

static const char *batch_fs = "#version 330 core\n"
                              "in vec4 v_color;\n"
                              "out vec4 o_color;\n"
                              "void main() { o_color = v_color; }\n";

int mw__batch_init(mw_batch_t *b)
{
    static const char *const attribs[] = {"a_pos", "a_color", NULL};
    static const int sizes[] = {2, 4};
    memset(b, 0, sizeof *b);
    b->prog = mw__gl_program("shapes", batch_vs, batch_fs, attribs);
    if (!b->prog)
        return -1;
    b->u_proj = glGetUniformLocation(b->prog, "u_proj");
    if (mw__vbuf_init(&b->vb, sizes, 2) < 0)
        return -1;
    b->cap = 6 * 4096;
    b->v = malloc(b->cap * 6 * sizeof(float));
    if (!b->v) {
        fprintf(stderr, "mpiwatch-viewer: out of memory for the shape batch\n");
        return -1;
    }
    mw__gl_ortho(b->proj, 1, 1);
    return 0;
}

void mw__batch_free(mw_batch_t *b)
{
    if (b->prog)
        glDeleteProgram(b->prog);
    mw__vbuf_free(&b->vb);
    free(b->v);
    memset(b, 0, sizeof *b);
}

void mw__batch_target(mw_batch_t *b, int w, int h)
{
    mw__gl_ortho(b->proj, w, h);
}

/* Makes room for `n` more vertices; on allocation failure the shapes are dropped (the frame
 * is then missing some shapes, which is better than stopping the viewer). */
static int batch_reserve(mw_batch_t *b, size_t n)
{
    if (b->n + n <= b->cap)
        return 0;
    size_t cap = b->cap;
    while (cap < b->n + n)
        cap *= 2;
    float *v = realloc(b->v, cap * 6 * sizeof(float));
    if (!v)
        return -1;
    b->v = v;
    b->cap = cap;
    return 0;
}

static inline void batch_vertex(mw_batch_t *b, float x, float y, mw_rgba_t c)
{
    float *p = b->v + b->n * 6;
    p[0] = x;
    p[1] = y;
    p[2] = c.r;
    p[3] = c.g;
    p[4] = c.b;
    p[5] = c.a;
    b->n++;
}

void mw__batch_tri(mw_batch_t *b, float x0, float y0, float x1, float y1, float x2, float y2,
                   mw_rgba_t c)
{
    if (batch_reserve(b, 3) < 0)
        return;
    batch_vertex(b, x0, y0, c);
    batch_vertex(b, x1, y1, c);
    batch_vertex(b, x2, y2, c);
}

void mw__batch_rect2(mw_batch_t *b, float x, float y, float w, float h, mw_rgba_t top,
                     mw_rgba_t bottom)
{
    if (w <= 0 || h <= 0 || batch_reserve(b, 6) < 0)
        return;
    batch_vertex(b, x, y, top);
    batch_vertex(b, x + w, y, top);
    batch_vertex(b, x, y + h, bottom);
    batch_vertex(b, x + w, y, top);
    batch_vertex(b, x + w, y + h, bottom);
    batch_vertex(b, x, y + h, bottom);
}

void mw__batch_rect(mw_batch_t *b, float x, float y, float w, float h, mw_rgba_t c)
{
    mw__batch_rect2(b, x, y, w, h, c, c);
}

void mw__batch_frame(mw_batch_t *b, float x, float y, float w, float h, float lw, mw_rgba_t c)
{
    mw__batch_rect(b, x, y, w, lw, c);
    mw__batch_rect(b, x, y + h - lw, w, lw, c);
    mw__batch_rect(b, x, y + lw, lw, h - 2 * lw, c);
    mw__batch_rect(b, x + w - lw, y + lw, lw, h - 2 * lw, c);
}

void mw__batch_line(mw_batch_t *b, float x0, float y0, float x1, float y1, float lw, mw_rgba_t c)
{
    float dx = x1 - x0, dy = y1 - y0;
    float len = sqrtf(dx * dx + dy * dy);
    if (len < 1e-6f)
        return;
    /* Half the width along the normal on each side. */
    float nx = -dy / len * lw * 0.5f, ny = dx / len * lw * 0.5f;
    if (batch_reserve(b, 6) < 0)
        return;
    batch_vertex(b, x0 + nx, y0 + ny, c);
    batch_vertex(b, x1 + nx, y1 + ny, c);
    batch_vertex(b, x0 - nx, y0 - ny, c);
    batch_vertex(b, x1 + nx, y1 + ny, c);
    batch_vertex(b, x1 - nx, y1 - ny, c);
    batch_vertex(b, x0 - nx, y0 - ny, c);
}

#define RING_SEGMENTS 24

void mw__batch_ring(mw_batch_t *b, float cx, float cy, float r, float lw, mw_rgba_t c)
{
    float ri = r - lw * 0.5f, ro = r + lw * 0.5f;
    if (ri < 0)
        ri = 0;
    for (int i = 0; i < RING_SEGMENTS; i++) {
        float a0 = (float)i * 6.2831853f / RING_SEGMENTS;
        float a1 = (float)(i + 1) * 6.2831853f / RING_SEGMENTS;
        float c0 = cosf(a0), s0 = sinf(a0), c1 = cosf(a1), s1 = sinf(a1);
        mw__batch_tri(b, cx + ri * c0, cy + ri * s0, cx + ro * c0, cy + ro * s0, cx + ro * c1,
                      cy + ro * s1, c);
        mw__batch_tri(b, cx + ri * c0, cy + ri * s0, cx + ro * c1, cy + ro * s1, cx + ri * c1,
                      cy + ri * s1, c);
    }
}

void mw__batch_disc(mw_batch_t *b, float cx, float cy, float r, mw_rgba_t c)
{
    for (int i = 0; i < RING_SEGMENTS; i++) {
        float a0 = (float)i * 6.2831853f / RING_SEGMENTS;
        float a1 = (float)(i + 1) * 6.2831853f / RING_SEGMENTS;
        mw__batch_tri(b, cx, cy, cx + r * cosf(a0), cy + r * sinf(a0), cx + r * cosf(a1),
                      cy + r * sinf(a1), c);
    }
}

void mw__batch_flush(mw_batch_t *b)
{
    if (!b->n)
        return;
    glUseProgram(b->prog);
    glUniformMatrix4fv(b->u_proj, 1, GL_FALSE, b->proj);
    mw__vbuf_draw(&b->vb, GL_TRIANGLES, b->v, b->n);
    b->n = 0;
}

/* ---- offscreen target --------------------------------------------------------------------- */

int mw__fbo_init(mw_fbo_t *f, int w, int h)
{
    memset(f, 0, sizeof *f);
    GLint max = 0;
    glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max);
    if (w <= 0 || h <= 0 || w > max || h > max) {
        fprintf(stderr, "mpiwatch-viewer: offscreen size %dx%d is outside 1..%d\n", w, h, max);
        return -1;
    }
    GLenum st = mw__fbo_make(f, w, h);
    if (st != GL_FRAMEBUFFER_COMPLETE) {
        fprintf(stderr, "mpiwatch-viewer: offscreen framebuffer incomplete (0x%04x)\n",
                (unsigned)st);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        return -1;
    }
    return mw__gl_check("offscreen framebuffer");
}

GLenum mw__fbo_make(mw_fbo_t *f, int w, int h)
{
    glGenFramebuffers(1, &f->fbo);
    glGenRenderbuffers(1, &f->color);
    glBindRenderbuffer(GL_RENDERBUFFER, f->color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    /* A depth buffer for the topology view's 3D pass (the 2D views never enable it). */
    glGenRenderbuffers(1, &f->depth);
    glBindRenderbuffer(GL_RENDERBUFFER, f->depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, w, h);
    glBindRenderbuffer(GL_RENDERBUFFER, 0);
    glBindFramebuffer(GL_FRAMEBUFFER, f->fbo);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, f->color);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, f->depth);
    GLenum st = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    if (st != GL_FRAMEBUFFER_COMPLETE) {
        mw__fbo_delete(f);
        return st;
    }
    f->w = w;
    f->h = h;
    return st;
}

void mw__fbo_delete(mw_fbo_t *f)
{
    if (f->color)
        glDeleteRenderbuffers(1, &f->color);
    if (f->depth)
        glDeleteRenderbuffers(1, &f->depth);
    if (f->fbo)
        glDeleteFramebuffers(1, &f->fbo);
    memset(f, 0, sizeof *f);
}

void mw__fbo_free(mw_fbo_t *f)
{
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    mw__fbo_delete(f);
}

int mw__gl_read_rgba(int w, int h, unsigned char *out)
{
    size_t row = (size_t)w * 4;
    unsigned char *tmp = malloc(row);
    if (!tmp) {
        fprintf(stderr, "mpiwatch-viewer: out of memory reading pixels\n");
        return -1;
    }
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, out);
    if (mw__gl_check("glReadPixels") < 0) {
        free(tmp);
        return -1;
    }
    /* GL's first row is the bottom one; PNG's is the top one. */
    for (int y = 0; y < h / 2; y++) {
        unsigned char *a = out + (size_t)y * row, *b = out + (size_t)(h - 1 - y) * row;
        memcpy(tmp, a, row);
        memcpy(a, b, row);
        memcpy(b, tmp, row);
    }
    free(tmp);
    return 0;
}

void mw__gl_begin_3d(int x, int y, int w, int h, int fb_h)
{
    glViewport(x, fb_h - y - h, w, h);
    glEnable(GL_SCISSOR_TEST);
    glScissor(x, fb_h - y - h, w, h);
    glClearColor(0.075f, 0.082f, 0.1f, 1);
    glClearDepth(1);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LEQUAL);
    glDisable(GL_BLEND);
}
