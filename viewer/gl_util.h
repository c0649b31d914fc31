/* gl_util.h: the small OpenGL toolbox the viewer's drawing code shares.
 *
 * DESIGN: everything on screen is either a flat-colored triangle (plots, boxes, lines, markers),
 * a glyph quad (text.c) or the call view's one density quad (view_density.c). The flat shapes
 * go through one batch: the views append triangles in pixel coordinates (origin top left, y
 * down, the same as the model's layout) and the batch is drawn with one glDrawArrays whenever
 * the caller needs what comes next to be on top of it. Offscreen rendering (snapshots,
 * benchmarks) uses a framebuffer object with the same projection, so a snapshot is exactly
 * what the window shows.
 */
#ifndef MW_VIEWER_GL_UTIL_H
#define MW_VIEWER_GL_UTIL_H

#include <epoxy/gl.h>
#include <stddef.h>

typedef struct {
    float r, g, b, a;
} mw_rgba_t;

/* Compiles and links a program from vertex and fragment source; the attribute locations are
 * bound in the order of the NULL-terminated `attribs`. Returns 0 after printing the compiler's
 * or linker's log. */
GLuint mw__gl_program(const char *name, const char *vs, const char *fs, const char *const *attribs);

/* Prints and clears pending GL errors; returns -1 when there were any. */
int mw__gl_check(const char *where);

/* The pixel projection: x right, y down, (0, 0) the top-left corner of a w x h target. */
void mw__gl_ortho(float out[16], int w, int h);
/* A 3D scene in the screen rectangle (x, y, w, h; y from the top) of a target fb_h pixels high:
 * viewport and scissor on it, cleared to the plot colour with depth, depth test on, blending
 * off (the topology and terrain views). */
void mw__gl_begin_3d(int x, int y, int w, int h, int fb_h);

/* A vertex array with one buffer of interleaved floats, described by per-attribute sizes. */
typedef struct {
    GLuint vao, vbo;
    int floats_per_vertex;
} mw_vbuf_t;

int mw__vbuf_init(mw_vbuf_t *b, const int *sizes, int n_attribs);
/* Uploads `n_vertices` vertices (orphaning the old storage) and draws them as `mode`. */
void mw__vbuf_draw(mw_vbuf_t *b, GLenum mode, const float *data, size_t n_vertices);
void mw__vbuf_free(mw_vbuf_t *b);

/* ---- the flat-color batch ----------------------------------------------------------------- */

typedef struct {
    GLuint prog;
    GLint u_proj;
    mw_vbuf_t vb;
    float *v; /* x, y, r, g, b, a per vertex */
    size_t n, cap;
    float proj[16];
} mw_batch_t;

int mw__batch_init(mw_batch_t *b);
void mw__batch_free(mw_batch_t *b);
/* Sets the projection for the target size (call when the target changes). */
void mw__batch_target(mw_batch_t *b, int w, int h);
void mw__batch_tri(mw_batch_t *b, float x0, float y0, float x1, float y1, float x2, float y2,
                   mw_rgba_t c);
void mw__batch_rect(mw_batch_t *b, float x, float y, float w, float h, mw_rgba_t c);
/* A vertical gradient: top color above, bottom color below. */
void mw__batch_rect2(mw_batch_t *b, float x, float y, float w, float h, mw_rgba_t top,
                     mw_rgba_t bottom);
/* A rectangle's outline of width `lw` drawn inside the rectangle. */
void mw__batch_frame(mw_batch_t *b, float x, float y, float w, float h, float lw, mw_rgba_t c);
/* A line segment of width `lw` as a quad. */
void mw__batch_line(mw_batch_t *b, float x0, float y0, float x1, float y1, float lw, mw_rgba_t c);
/* A ring (annulus) and a filled disc, approximated with `segments` sides. */
void mw__batch_ring(mw_batch_t *b, float cx, float cy, float r, float lw, mw_rgba_t c);
void mw__batch_disc(mw_batch_t *b, float cx, float cy, float r, mw_rgba_t c);
/* Draws what was appended and empties the batch. */
void mw__batch_flush(mw_batch_t *b);

/* ---- offscreen target --------------------------------------------------------------------- */

typedef struct {
    GLuint fbo, color, depth;
    int w, h;
} mw_fbo_t;

/* An offscreen target of w x h (checked against GL_MAX_RENDERBUFFER_SIZE), bound on return.
 * Returns 0, or -1 with a message. */
int mw__fbo_init(mw_fbo_t *f, int w, int h);
/* Makes f a w x h framebuffer (RGBA8 colour, 24-bit depth), bound on return. Returns
 * GL_FRAMEBUFFER_COMPLETE, or the status with nothing made (the binding is then left to the
 * caller). */
GLenum mw__fbo_make(mw_fbo_t *f, int w, int h);
/* Deletes f's objects without touching the framebuffer bindings ... */
void mw__fbo_delete(mw_fbo_t *f);
/* ... and after binding the default framebuffer. */
void mw__fbo_free(mw_fbo_t *f);
/* Reads the bound framebuffer's w x h RGBA pixels into `out` (w * h * 4 bytes), top row first
 * (GL's rows start at the bottom). */
int mw__gl_read_rgba(int w, int h, unsigned char *out);

static inline mw_rgba_t mw__rgba(float r, float g, float b, float a)
{
    mw_rgba_t c = {r, g, b, a};
    return c;
}

/* A color from 0xRRGGBB and an alpha. */
static inline mw_rgba_t mw__hex(unsigned rgb, float a)
{
    mw_rgba_t c = {(float)((rgb >> 16) & 0xff) / 255.0f, (float)((rgb >> 8) & 0xff) / 255.0f,
                   (float)(rgb & 0xff) / 255.0f, a};
    return c;
}

#endif
