/* text.h: strings on screen, from glyph atlases rendered once per font size with SDL2_ttf.
 *
 * DESIGN: a string is a run of textured quads into a per-size atlas (ASCII 32-126 and the few
 * symbols the viewer prints: µ — × ° ± · … ← → ↑ ↓); quads are batched per atlas and drawn in
 * one call per size when flushed, so the whole frame's text costs a handful of draw calls.
 * Positions are in the same pixel space as the shape batch (origin top left, y down); a string
 * is placed by the top of its line box. Kerning is ignored: at the sizes of labels it is not
 * visible and it would make widths depend on neighbours.
 */
#ifndef MW_VIEWER_TEXT_H
#define MW_VIEWER_TEXT_H

#include "gl_util.h"

typedef struct mw_text mw_text_t;

typedef enum { MW_ALIGN_LEFT, MW_ALIGN_CENTER, MW_ALIGN_RIGHT } mw_align_t;

/* Opens the font (MPIWATCH_FONT, else DejaVuSans, else DejaVuSansMono) and builds the text
 * program. NULL after printing why. Needs a current GL context and TTF_Init() done. */
mw_text_t *mw__text_new(void);
void mw__text_free(mw_text_t *t);
void mw__text_target(mw_text_t *t, int w, int h);

/* Width in pixels of `s` (UTF-8) at font size `px`. */
float mw__text_width(mw_text_t *t, int px, const char *s);
/* Height of a line box at size px. */
int mw__text_line_height(mw_text_t *t, int px);
/* Queues `s` with its line box's top at y, aligned at x; returns its width. */
float mw__text_draw(mw_text_t *t, int px, float x, float y, mw_align_t align, mw_rgba_t c,
                    const char *s);
float mw__text_drawf(mw_text_t *t, int px, float x, float y, mw_align_t align, mw_rgba_t c,
                     const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* Copies `s` into out, cut at a character boundary and ended with "…" when it is wider than
 * max_w pixels; returns the width of what was copied. */
float mw__text_fit(mw_text_t *t, int px, const char *s, float max_w, char *out, size_t len);
/* Draws the queued strings. */
void mw__text_flush(mw_text_t *t);

#endif
