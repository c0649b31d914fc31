/* view_events.c: the job's events on screen (rule firings, steering messages) and the
 * steering prompt.
 *
 * DESIGN: the model keeps and parses the events (mw_model_add_event) and places them on the
 * time axis (mw_model_event_time): a rule firing at the end of the window it fired on, a
 * steering message at the time it was published. Here they become markers: on the timeline a
 * full-height line in a hue the function palette does not use, with a head (a triangle for a
 * rule, a diamond for a steering message) and a short label (the rule's name, the key=value
 * sent) where labels do not overlap; on the call view a faint line and the head, so the
 * pattern can be followed through a firing without hiding calls. The events list under the
 * details shows the newest events as text, a rule's steering action on the rule's line
 * ("w 37  rule imbalance 1.82 → steer rebalance=1"). The prompt (':') is one line drawn over
 * the status bar; the app (app.c) edits it and sends it through control.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "views.h"

int mw__event_markers(const mw_view_ctx_t *vc, const mw_rect_t *r, double t0, double t1,
                      mw_event_marker_t *out, int max)
{
    int n = 0;
    if (!(t1 > t0) || r->w <= 0)
        return 0;
    size_t count = mw_model_event_count(vc->model);
    for (size_t i = 0; i < count && n < max; i++) {
        const mw_event_t *e = mw_model_event_at(vc->model, i);
        if (e->kind != MW_EVENT_RULE && e->kind != MW_EVENT_STEER)
            continue;
        double t;
        if (mw_model_event_time(vc->model, e, &t, NULL) < 0 || t < t0 || t > t1)
            continue;
        double x = mw_x_of_time(r, t0, t1, t);
        if (x < r->x || x > r->x + r->w - 1)
            x = x < r->x ? r->x : r->x + r->w - 1; /* the plot's edge: still inside */
        out[n].e = e;
        out[n].x = (float)x;
        out[n].color = e->kind == MW_EVENT_RULE ? MW_COLOR_RULE : MW_COLOR_STEER;
        n++;
    }
    return n;
}

/* The head of a marker at the top of the plot: a downward triangle for a rule, a diamond for
 * a steering message. */
static void marker_head(const mw_view_ctx_t *vc, const mw_event_marker_t *mk, float top, float size)
{
    mw_rgba_t c = mw__hex(mk->color, 1);
    float x = mk->x, h = size / 2;
    if (mk->e->kind == MW_EVENT_RULE) {
        mw__batch_tri(vc->batch, x - h, top, x + h, top, x, top + size, c);
    } else {
        mw__batch_tri(vc->batch, x - h, top + h, x, top, x + h, top + h, c);
        mw__batch_tri(vc->batch, x - h, top + h, x + h, top + h, x, top + size, c);
    }
}

/* A marker's short label: the rule's name, or the key=value sent. */
static void marker_label(const mw_event_t *e, char *buf, size_t len)
{
    if (e->kind == MW_EVENT_RULE) {
        snprintf(buf, len, "%s", e->rule[0] ? e->rule : "rule");
    } else {
        char kv[40];
        /* The library's own keys carry the window the collector chose (`@K`, an absolute
         * index of 10 digits or more): the marker's place already says when. */
        size_t n = strcspn(e->detail, strncmp(e->detail, "mpiwatch.", 9) == 0 ? " @" : " ");
        snprintf(kv, sizeof kv, "%.*s", (int)n, e->detail);
        snprintf(buf, len, "steer %s", kv);
    }
}

#define MARKERS_MAX MW_EVENTS_MAX
#define LABEL_ROWS 2

void mw__event_markers_draw(const mw_view_ctx_t *vc, const mw_rect_t *r, double t0, double t1,
                            int full)
{
    static mw_event_marker_t mk[MARKERS_MAX];
    int n = mw__event_markers(vc, r, t0, t1, mk, MARKERS_MAX);
    if (n <= 0)
        return;
    float lw = mw__px(vc->layout, full ? 2.0f : 1.0f),
          size = mw__px(vc->layout, full ? 10.0f : 7.0f);
    float on = mw__px(vc->layout, MW_STEER_DASH_ON), period = mw__px(vc->layout, MW_STEER_DASH);
    for (int i = 0; i < n; i++) {
        mw_rgba_t c = mw__hex(mk[i].color, full ? 1.0f : 0.55f);
        float x = mk[i].x - lw / 2 + (full ? 0.0f : 0.5f);
        if (mk[i].e->kind == MW_EVENT_RULE) {
            mw__batch_rect(vc->batch, x, (float)r->y, lw, (float)r->h, c);
        } else {
            /* Dashed: a rule's line under it (its steer action, at the same time) shows
             * between the dashes. */
            for (float y = (float)r->y; y < (float)(r->y + r->h); y += period) {
                float h = y + on > (float)(r->y + r->h) ? (float)(r->y + r->h) - y : on;
                mw__batch_rect(vc->batch, x, y, lw, h, c);
            }
        }
        marker_head(vc, &mk[i], (float)r->y, size);
    }
    if (!full)
        return;
    /* Labels in up to two rows under the plot's top tags; one that would overlap the label
     * before it in both rows is left out (the events list has them all). */
    mw__batch_flush(vc->batch);
    mw_text_t *t = vc->text;
    int fs = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 6), tp = mw__px(vc->layout, 3);
    float lh = (float)mw__text_line_height(t, fs);
    float right[LABEL_ROWS];
    for (int k = 0; k < LABEL_ROWS; k++)
        right[k] = -1e9f;
    float y0 = (float)r->y + 2 * pad + lh;
    for (int i = 0; i < n; i++) {
        char label[64];
        marker_label(mk[i].e, label, sizeof label);
        float w = mw__text_width(t, fs, label) + 2 * tp;
        float x = mk[i].x + lw;
        if (x + w > (float)(r->x + r->w))
            x = mk[i].x - lw - w; /* at the right edge: to the left of the line */
        for (int k = 0; k < LABEL_ROWS; k++) {
            float y = y0 + (float)k * (lh + tp);
            if (x < right[k] + tp || y + lh > (float)(r->y + r->h))
                continue;
            mw__batch_rect(vc->batch, x, y, w, lh, mw__hex(MW_COLOR_BG, 1.0f));
            mw__text_draw(t, fs, x + tp, y, MW_ALIGN_LEFT, mw__hex(mk[i].color, 1), label);
            right[k] = x + w;
            break;
        }
    }
}

int mw__event_lines(const mw_view_ctx_t *vc, char (*lines)[320], int *kinds, int max)
{
    int n = 0;
    size_t count = mw_model_event_count(vc->model);
    for (size_t i = count; i-- > 0 && n < max;) {
        const mw_event_t *e = mw_model_event_at(vc->model, i);
        const mw_event_t *next = mw_model_event_at(vc->model, i + 1);
        /* A rule's steering action is shown on the rule's line, not on its own. */
        if (e->kind == MW_EVENT_STEER && e->steer_after && i > 0 &&
            mw_model_event_at(vc->model, i - 1)->seq == e->steer_after)
            continue;
        const mw_event_t *with =
            next && next->kind == MW_EVENT_STEER && next->steer_after == e->seq ? next : NULL;
        mw_event_text(vc->model, e, with, lines[n], sizeof lines[n]);
        kinds[n] = e->kind;
        n++;
    }
    return n;
}

#define PANEL_LINES 64

void mw__events_panel_draw(const mw_view_ctx_t *vc, int steering)
{
    const mw_rect_t *r = &vc->layout->events;
    if (r->w <= 0 || r->h <= 0)
        return;
    mw_text_t *t = vc->text;
    int f = vc->layout->font_px, fs = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 8);
    mw__batch_rect(vc->batch, (float)r->x, (float)r->y, (float)r->w, (float)r->h,
                   mw__hex(MW_COLOR_PANEL, 1));
    float y = (float)r->y + pad / 2;
    mw__text_draw(t, f, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_TEXT, 1), "events");
    mw_event_counts_t ec;
    mw_model_event_counts(vc->model, &ec);
    char counts[96];
    snprintf(counts, sizeof counts, "%" PRIu64 " rule%s · %" PRIu64 " steer",
             ec.by_kind[MW_EVENT_RULE], ec.by_kind[MW_EVENT_RULE] == 1 ? "" : "s",
             ec.by_kind[MW_EVENT_STEER]);
    mw__text_draw(t, fs, (float)(r->x + r->w) - pad, y + (float)(f - fs) / 2, MW_ALIGN_RIGHT,
                  mw__hex(MW_COLOR_DIM, 1), counts);
    y += (float)mw__text_line_height(t, f) + mw__px(vc->layout, 2);
    static char lines[PANEL_LINES][320];
    int kinds[PANEL_LINES];
    int n = mw__event_lines(vc, lines, kinds, PANEL_LINES);
    if (n == 0) {
        mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_DIM, 1),
                      "rule firings and steering");
        y += (float)mw__text_line_height(t, fs);
        mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_DIM, 1),
                      steering ? "messages appear here (: to steer)" : "messages appear here");
        return;
    }
    int lh = mw__text_line_height(t, fs);
    float room = (float)r->w - 2 * pad;
    float bottom = (float)(r->y + r->h);
    for (int i = 0; i < n && y + (float)lh <= bottom; i++) {
        unsigned c = kinds[i] == MW_EVENT_RULE    ? MW_COLOR_RULE
                     : kinds[i] == MW_EVENT_STEER ? MW_COLOR_STEER
                                                  : MW_COLOR_DIM;
        char fit[320];
        /* A rule and its steering action that do not fit on one line: the action goes on a
         * second line of its own color. */
        char *arrow = strstr(lines[i], " → ");
        if (arrow && mw__text_width(t, fs, lines[i]) <= room) {
            /* One line, the action in its own color. */
            *arrow = 0;
            float w =
                mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(c, 1), lines[i]);
            mw__text_draw(t, fs, (float)r->x + pad + w + mw__text_width(t, fs, " "), y,
                          MW_ALIGN_LEFT, mw__hex(MW_COLOR_STEER, 1), arrow + 1);
        } else if (arrow) {
            *arrow = 0;
            mw__text_fit(t, fs, lines[i], room, fit, sizeof fit);
            mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(c, 1), fit);
            y += (float)lh;
            if (y + (float)lh > bottom)
                break;
            float indent = mw__px(vc->layout, 16);
            mw__text_fit(t, fs, arrow + 1, room - indent, fit, sizeof fit);
            mw__text_draw(t, fs, (float)r->x + pad + indent, y, MW_ALIGN_LEFT,
                          mw__hex(MW_COLOR_STEER, 1), fit);
        } else {
            mw__text_fit(t, fs, lines[i], room, fit, sizeof fit);
            mw__text_draw(t, fs, (float)r->x + pad, y, MW_ALIGN_LEFT, mw__hex(c, 1), fit);
        }
        y += (float)lh + mw__px(vc->layout, 1);
    }
}

void mw__prompt_draw(const mw_view_ctx_t *vc, const mw_prompt_state_t *p)
{
    const mw_rect_t *r = &vc->layout->status;
    if (!p->open || r->w <= 0 || r->h <= 0)
        return;
    mw_text_t *t = vc->text;
    int f = vc->layout->font_px, fs = mw__font_small(vc->layout);
    float pad = mw__px(vc->layout, 8);
    mw__batch_rect(vc->batch, (float)r->x, (float)r->y, (float)r->w, (float)r->h,
                   mw__hex(0x262b36, 1));
    mw__batch_rect(vc->batch, (float)r->x, (float)r->y, (float)r->w, mw__px(vc->layout, 1.5f),
                   mw__hex(MW_COLOR_STEER, 1));
    float y = (float)r->y + ((float)r->h - (float)mw__text_line_height(t, f)) / 2;
    float ys = (float)r->y + ((float)r->h - (float)mw__text_line_height(t, fs)) / 2;
    float x = (float)r->x + pad;
    x += mw__text_draw(t, f, x, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_STEER, 1), "steer:");
    x += mw__px(vc->layout, 8);
    /* The hint on the right: what to type, or why the last line was not sent. */
    const char *hint;
    mw_rgba_t hc = mw__hex(MW_COLOR_DIM, 1);
    const mw_control_result_t *note = p->note;
    if (!p->steering) {
        hint = "steering is off: no --control (mpiwatch run sets it)";
        hc = mw__hex(MW_COLOR_ERROR, 1);
    } else if ((note->state == MW_CONTROL_INVALID || note->state == MW_CONTROL_WAITING) &&
               note->text[0] && mw__now_ns() - note->at_ns < 10000000000ull) {
        hint = note->text;
        hc = mw__hex(note->state == MW_CONTROL_INVALID ? MW_COLOR_ERROR : MW_COLOR_PAUSED, 1);
    } else {
        hint = "KEY=VALUE [RANKS]   Enter send · Esc cancel";
    }
    float room = (float)(r->x + r->w) - pad - x;
    char hfit[420];
    float hw = mw__text_fit(t, fs, hint, room * 0.5f, hfit, sizeof hfit);
    mw__text_draw(t, fs, (float)(r->x + r->w) - pad, ys, MW_ALIGN_RIGHT, hc, hfit);
    /* The line, and a cursor after the character it stands behind. The end of a long line is
     * what is being typed: it is shown, the start gives way. */
    float line_room = room - hw - mw__px(vc->layout, 16);
    const char *shown = p->line;
    char before[MW_PROMPT_MAX];
    size_t cur = p->cur;
    while (*shown && mw__text_width(t, f, shown) > line_room && (size_t)(shown - p->line) < cur) {
        shown++;
        while (((unsigned char)*shown & 0xc0) == 0x80)
            shown++;
    }
    size_t off = (size_t)(shown - p->line);
    snprintf(before, sizeof before, "%.*s", (int)(cur - off), shown);
    mw__text_draw(t, f, x, y, MW_ALIGN_LEFT, mw__hex(MW_COLOR_TEXT, 1), shown);
    float cx = x + mw__text_width(t, f, before);
    mw__batch_rect(vc->batch, cx, y, mw__px(vc->layout, 2), (float)mw__text_line_height(t, f),
                   mw__hex(MW_COLOR_STEER, 0.9f));
    if (!p->line[0])
        mw__text_draw(t, fs, cx + mw__px(vc->layout, 6), ys, MW_ALIGN_LEFT,
                      mw__hex(MW_COLOR_DIM, 0.8f), "e.g. rebalance=1 0-3");
}
