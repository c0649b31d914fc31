/* app.c: the viewer's life cycle, frame loop and interaction.
 *
 * DESIGN: sokol-style init / event / frame / cleanup around one state struct (mw_app_t). A
 * frame polls the source (never blocking: the source drains its sockets with ZMQ_DONTWAIT and
 * bounds its replay work), lets the view follow the newest window, tells the model which time
 * ranges are on screen (so it fetches and keeps those windows), and draws only when something
 * changed: new data, an event, a resize. With nothing to do the loop sleeps in
 * SDL_WaitEventTimeout, so an idle viewer costs nothing while still polling the source about
 * thirty times a second. Input maps to the model's view operations (scroll, zoom, select,
 * pick); the keys are listed in one table that also feeds the help overlay (panels.c).
 * Steering: ':' opens a one-line prompt that takes every key until Enter (sent through
 * control.c, never waited for) or Escape; the --steer options go through the same client once
 * the job is known, one at a time, and their results are printed and kept for --meta.
 */
#include "app.h"

#include <SDL2/SDL_ttf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snapshot.h"
#include "views.h"

#define IDLE_WAIT_MS 30
#define NOTE_NS 6000000000ull /* a steering result stays at the bottom this long */
#define ZOOM_STEP 1.25        /* one key press or wheel notch: the span shrinks or grows by this */
#define CLICK_SLOP_PX 4       /* a press that moves less than this is a click, not a drag */

uint64_t mw__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void mw__viewer_options_defaults(mw_viewer_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->show = MW_SHOW_ALL;
    o->width = 1280;
    o->height = 800;
    o->cache_mb = 256;
    o->bundles = -1;
    o->labels = 1;
}

/* ---- setup -------------------------------------------------------------------------------- */

static int app_gl_context(mw_app_t *app, int headless)
{
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24); /* the topology view's 3D pass */
    SDL_GL_SetAttribute(SDL_GL_STENCIL_SIZE, 0);

    Uint32 flags = SDL_WINDOW_OPENGL;
    if (headless)
        flags |= SDL_WINDOW_HIDDEN;
    else
        flags |= SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI;
    app->win = SDL_CreateWindow("mpiwatch", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED,
                                app->opt.width, app->opt.height, flags);
    if (!app->win) {
        fprintf(stderr, "mpiwatch-viewer: cannot open a window: %s\n", SDL_GetError());
        return -1;
    }
    app->ctx = SDL_GL_CreateContext(app->win);
    if (!app->ctx) {
        fprintf(stderr,
                "mpiwatch-viewer: no OpenGL 3.3 core context: %s (with Mesa, "
                "LIBGL_ALWAYS_SOFTWARE=1 uses llvmpipe)\n",
                SDL_GetError());
        return -1;
    }
    if (SDL_GL_MakeCurrent(app->win, app->ctx) < 0) {
        fprintf(stderr, "mpiwatch-viewer: cannot use the OpenGL context: %s\n", SDL_GetError());
        return -1;
    }
    if (epoxy_gl_version() < 33) {
        fprintf(stderr, "mpiwatch-viewer: OpenGL %d.%d found, 3.3 needed\n",
                epoxy_gl_version() / 10, epoxy_gl_version() % 10);
        return -1;
    }
    /* Benchmarks measure drawing, not the display's refresh rate. */
    if (!headless)
        SDL_GL_SetSwapInterval(app->opt.bench_frames ? 0 : 1);
    return 0;
}

/* Reads the drawable size and the high-DPI factor of the window. */
static void app_target_size(mw_app_t *app)
{
    if (app->headless) {
        app->fb_w = app->fbo.w;
        app->fb_h = app->fbo.h;
        app->scale = 1.0f;
        return;
    }
    int ww = 0, wh = 0, dw = 0, dh = 0;
    SDL_GetWindowSize(app->win, &ww, &wh);
    SDL_GL_GetDrawableSize(app->win, &dw, &dh);
    app->fb_w = dw > 0 ? dw : 1;
    app->fb_h = dh > 0 ? dh : 1;
    app->scale = ww > 0 ? (float)dw / (float)ww : 1.0f;
    if (app->scale < 0.5f)
        app->scale = 1.0f;
}

/* The view as the options ask for it (at start, and when a new job replaces the model's). */
static void app_view_reset(mw_app_t *app)
{
    const mw_viewer_options_t *opt = &app->opt;
    mw_view_init(&app->view);
    if (opt->repr_given)
        app->view.repr = opt->repr;
    if (opt->transfer_given)
        app->view.transfer = opt->transfer;
    if (opt->omin_given)
        app->view.o_min = opt->o_min;
    app->view.dur_linear = opt->dur_linear;
    if (opt->highlight_fn)
        app->view.highlight_fn = opt->highlight_fn;
    /* A recording played at a speed behaves as live; without one it is all history and
     * is shown whole once its extent is known (mw__app_update). */
    if (opt->replay && !(opt->speed > 0))
        app->view.follow = 0;
    app->pick.kind = MW_PICK_NONE;
    app->initial_view_done = 0;

    mw_topo_gl_t *t = &app->tp;
    t->step_mode = opt->step_given;
    t->follow = !(opt->window_given || opt->step_given);
    t->window = 0;
    t->step_idx = 0;
    t->playing = 0;
    t->color = opt->color;
    t->bundles = opt->bundles;
    t->periodic = opt->periodic;
    t->labels = opt->labels;
    t->log = opt->transfer_given ? opt->transfer == MW_TRANSFER_LOG : 1;
    t->cam_fitted = 0;
    t->have_layout = 0;
    t->pick.kind = MW_TOPO_PICK_NONE;
    t->mx_pick = 0;
    t->mx_valid = 0;
    t->mx_bytes = opt->color == MW_TOPO_COLOR_BYTES;
    mw__terrain_reset(&app->te);
}

int mw__app_init(mw_app_t *app, const mw_viewer_options_t *opt, int headless)
{
    memset(app, 0, sizeof *app);
    app->opt = *opt;
    app->headless = headless;
    app->show = opt->show;
    app->rg = opt->regions;
    app->pick.kind = MW_PICK_NONE;

    if (SDL_Init(SDL_INIT_VIDEO) < 0) {
        fprintf(stderr, "mpiwatch-viewer: SDL_Init: %s%s\n", SDL_GetError(),
                headless ? "" : " (without a display, use SDL_VIDEODRIVER=offscreen)");
        return -1;
    }
    if (TTF_Init() < 0) {
        fprintf(stderr, "mpiwatch-viewer: TTF_Init: %s\n", TTF_GetError());
        return -1;
    }
    if (app_gl_context(app, headless) < 0)
        return -1;
    if (headless) {
        if (mw__fbo_init(&app->fbo, opt->width, opt->height) < 0)
            return -1;
        glBindFramebuffer(GL_FRAMEBUFFER, app->fbo.fbo);
    }
    app_target_size(app);

    if (mw__batch_init(&app->batch) < 0)
        return -1;
    app->text = mw__text_new();
    if (!app->text)
        return -1;
    if (mw__timeline_init(&app->tl) < 0 || mw__density_init(&app->dn) < 0 ||
        mw__ranks_init(&app->rk) < 0 || mw__logical_init(&app->lg) < 0 ||
        mw__topo_init(&app->tp, &app->opt) < 0 || mw__matrix_init(&app->tp) < 0 ||
        mw__terrain_init(&app->te, &app->opt) < 0)
        return -1;
    if (opt->network) {
        char err[512];
        if (mw_network_read(&app->tp.net, opt->network, err, sizeof err) < 0) {
            fprintf(stderr, "mpiwatch-viewer: --network %s\n", err);
            return -1;
        }
        app->tp.have_net = 1;
        app->tp.plane_color = MW_PLANES_BY_SWITCH;
    }
    app->tp.node_gap = opt->node_gap > 0 ? opt->node_gap : MW_TOPO_NODE_GAP;
    app->lg.metric = opt->lateness_diff ? MW_LVIEW_DIFF : MW_LVIEW_LATENESS;
    app->lg.strip = opt->lateness_strip;
    mw_lview_set_leap(app->lg.lv, !opt->no_leap);
    app->lg.throttle = !headless; /* a snapshot draws the range it asked for, whatever it costs */

    app->model = mw_model_new(opt->cache_mb << 20);
    if (app->model)
        mw_model_set_trace_cap(app->model, opt->trace_records);
    if (!app->model) {
        fprintf(stderr, "mpiwatch-viewer: cannot create the model\n");
        return -1;
    }
    char err[512] = "";
    if (opt->connect)
        app->src = mw_source_connect(opt->connect, opt->history, err, sizeof err);
    else
        app->src = mw_source_replay(opt->replay, opt->speed, err, sizeof err);
    if (!app->src) {
        fprintf(stderr, "mpiwatch-viewer: %s\n", err[0] ? err : "cannot open the source");
        return -1;
    }

    /* Steering: --control, else what `mpiwatch run` exports. A bad endpoint given on the
     * command line is an error; one from the environment only turns steering off. */
    const char *ctl = opt->control;
    if (!ctl || !*ctl)
        ctl = getenv("MPIWATCH_CONTROL");
    if (ctl && *ctl) {
        app->ctl = mw_control_open(ctl, 0, err, sizeof err);
        if (!app->ctl) {
            fprintf(stderr, "mpiwatch-viewer: steering: %s\n", err);
            if (opt->control)
                return -1;
        }
    }

    app_view_reset(app);
    app->model_gen = mw_model_generation(app->model);

    SDL_SetWindowTitle(app->win, opt->connect ? "mpiwatch — connecting" : "mpiwatch — replay");
    mw__app_layout(app);
    app->dirty = 1;
    app->fps_t0_ns = mw__now_ns();
    return mw__gl_check("setup");
}

void mw__app_cleanup(mw_app_t *app)
{
    if (app->ctl)
        mw_control_free(app->ctl);
    if (app->src)
        mw_source_free(app->src);
    if (app->model)
        mw_model_free(app->model);
    if (app->ctx) {
        mw__density_free(&app->dn);
        mw__ranks_free(&app->rk);
        mw__logical_free(&app->lg);
        mw__timeline_free(&app->tl);
        mw__matrix_free(&app->tp);
        mw__topo_free(&app->tp);
        mw__terrain_free(&app->te);
        mw__text_free(app->text);
        mw__batch_free(&app->batch);
        if (app->fbo.fbo)
            mw__fbo_free(&app->fbo);
        SDL_GL_DeleteContext(app->ctx);
    }
    if (app->win)
        SDL_DestroyWindow(app->win);
    if (TTF_WasInit())
        TTF_Quit();
    SDL_Quit();
    memset(app, 0, sizeof *app);
}

/* ---- the frame ---------------------------------------------------------------------------- */

/* The window index that contains t seconds of the time axis. */
static uint64_t app_window_of(const mw_app_t *app, double t)
{
    const Mpiwatch__JobInfo *job = mw_model_job(app->model);
    if (!job || !job->window_ns)
        return 0;
    double g = (double)mw_model_origin_ns(app->model) + (t > 0 ? t : 0) * 1e9;
    return mw_model_window_at(app->model, (uint64_t)g);
}

int mw__app_whole_run(mw_app_t *app)
{
    const Mpiwatch__JobInfo *job = mw_model_job(app->model);
    uint64_t oldest = 0, newest = 0;
    if (!job || !job->window_ns || mw_model_extent(app->model, &oldest, &newest) != 0)
        return -1;
    double t0 = mw_model_seconds(app->model, mw_model_window_start(app->model, oldest));
    double t1 = mw_model_seconds(app->model, mw_model_window_start(app->model, newest + 1));
    if (t0 < 0)
        t0 = 0;
    if (!(t1 > t0))
        t1 = t0 + (double)job->window_ns * 1e-9;
    app->view.follow = 0;
    app->view.t0 = t0;
    app->view.t1 = t1;
    app->dirty = 1;
    return 0;
}

/* The window title names the job once it is known. */
static void app_title(mw_app_t *app)
{
    const Mpiwatch__JobInfo *job = mw_model_job(app->model);
    if (!job || app->headless)
        return;
    char title[512];
    snprintf(title, sizeof title, "mpiwatch — %s (%s, %u ranks) — %s",
             job->job && job->job[0] ? job->job : "job",
             job->program && job->program[0] ? job->program : "?", job->size,
             app->opt.connect ? "live" : "replay");
    const char *old = SDL_GetWindowTitle(app->win);
    if (!old || strcmp(old, title))
        SDL_SetWindowTitle(app->win, title);
}

void mw__app_layout(mw_app_t *app)
{
    mw_legend_entry_t leg[MW_LEGEND_MAX];
    int rows = mw_model_legend(app->model, leg, MW_LEGEND_MAX);
    if (app->rg.timeline) { /* the legend lists code regions (model_regions.h) */
        mw_region_entry_t re[MW_LEGEND_MAX];
        rows = mw_region_legend(app->model, app->view.t0, app->view.t1, re, MW_LEGEND_MAX);
    }
    if (rows < 0)
        rows = 0;
    int st = app->show == MW_SHOW_ALL || app->show == MW_SHOW_TIMELINE ||
             app->show == MW_SHOW_RANKS || app->show == MW_SHOW_LOGICAL ||
             app->show == MW_SHOW_TERRAIN;
    int sd = app->show == MW_SHOW_ALL || app->show == MW_SHOW_DENSITY ||
             app->show == MW_SHOW_RANKS || app->show == MW_SHOW_LOGICAL ||
             app->show == MW_SHOW_TERRAIN;
    mw_layout(&app->layout, app->fb_w, app->fb_h, app->scale, st, sd, rows);
}

int mw__app_update(mw_app_t *app, uint64_t now_ns)
{
    int rank_busy = mw_source_rank_busy(app->src);
    int n = mw_source_poll(app->src, app->model, now_ns);
    if (n < 0) {
        fprintf(stderr, "mpiwatch-viewer: the data source failed\n");
        return -1;
    }
    if (n > 0) {
        app->data_gen++;
        app->dirty = 1;
    }
    /* A different job: what was selected, picked or highlighted belonged to the old one. */
    if (mw_model_generation(app->model) != app->model_gen) {
        app->model_gen = mw_model_generation(app->model);
        app_view_reset(app);
        app->data_gen++;
        app->dirty = 1;
    }
    /* A finished rank request changed the highlighted calls. */
    if (rank_busy && !mw_source_rank_busy(app->src)) {
        app->data_gen++;
        app->dirty = 1;
    }
    if (!app->initial_view_done && app->opt.replay && !(app->opt.speed > 0) &&
        mw__app_whole_run(app) == 0)
        app->initial_view_done = 1;

    double t0 = app->view.t0, t1 = app->view.t1;
    mw_view_update(&app->view, app->model);
    if (t0 != app->view.t0 || t1 != app->view.t1)
        app->dirty = 1;

    mw__app_layout(app);
    if (mw__app_topo(app)) {
        int moved = mw__topo_play(app->model, &app->tp, app->src, now_ns);
        mw_topo_gl_t *t = &app->tp;
        uint64_t before = t->step_mode ? t->step_idx : t->window;
        mw_view_ctx_t tvc;
        mw__app_view_ctx(app, &tvc);
        if (mw__topo_update(&tvc, t) < 0)
            return -1;
        if (moved || before != (t->step_mode ? t->step_idx : t->window))
            app->dirty = 1;
    }
    mw__app_need(app);
    app_title(app);
    if (mw__app_steer(app, now_ns))
        app->dirty = 1;
    if (app->show == MW_SHOW_LOGICAL && app->lg.pending)
        app->dirty = 1; /* the logical view waits to analyse the range shown */
    /* A result note appearing or going away is a change on screen. */
    int state = 0;
    int shown = mw__app_steer_note(app, now_ns, &state) != NULL;
    if (shown != app->note_shown) {
        app->note_shown = shown;
        app->dirty = 1;
    }
    return 0;
}

/* ---- steering ----------------------------------------------------------------------------- */

static const char *const steer_off =
    "steering is off: no --control ENDPOINT and no $MPIWATCH_CONTROL (mpiwatch run sets it)";

/* A result for the note at the bottom. */
static void app_note(mw_app_t *app, const mw_control_result_t *r)
{
    app->note = *r;
    app->dirty = 1;
}

/* A --steer request is over: its result is kept for --meta and printed. */
static void app_steer_result(mw_app_t *app, const mw_control_result_t *r)
{
    if (app->steer_done < MW_STEER_OPTS_MAX)
        app->steer_res[app->steer_done] = *r;
    app->steer_done++;
    if (r->state != MW_CONTROL_SENT)
        app->steer_failed++;
    printf("steer: %s\n", r->text);
    fflush(stdout);
}

int mw__app_steer(mw_app_t *app, uint64_t now_ns)
{
    int changed = 0;
    if (!app->ctl) {
        /* Nothing can be sent: every --steer fails, once. */
        while (app->steer_next < app->opt.n_steer) {
            mw_control_result_t r;
            memset(&r, 0, sizeof r);
            r.state = MW_CONTROL_NO_REPLY;
            r.at_ns = now_ns;
            snprintf(r.request, sizeof r.request, "%.150s", app->opt.steer[app->steer_next++]);
            snprintf(r.text, sizeof r.text, "not sent: %s", steer_off);
            app_steer_result(app, &r);
            app_note(app, &r);
            changed = 1;
        }
        return changed;
    }
    const mw_control_result_t *r = mw_control_result(app->ctl);
    if (mw_control_poll(app->ctl, now_ns)) {
        app_note(app, r);
        changed = 1;
    }
    if (app->steer_id && r->id == app->steer_id && r->state != MW_CONTROL_WAITING) {
        app_steer_result(app, r);
        app->steer_id = 0;
    }
    /* The --steer requests go once the job is known (the collector then knows its size and
     * can check rank lists), one at a time. */
    if (!app->steer_id && app->steer_next < app->opt.n_steer && mw_model_job(app->model) &&
        !mw_control_busy(app->ctl)) {
        if (app->steer_next == 0) {
            mw_event_counts_t ec;
            mw_model_event_counts(app->model, &ec);
            app->steer_events0 = ec.by_kind[MW_EVENT_STEER];
        }
        const char *line = app->opt.steer[app->steer_next++];
        if (mw_control_send(app->ctl, line, ':', now_ns) == 0)
            app->steer_id = r->id;
        else
            app_steer_result(app, r);
        app_note(app, r);
        changed = 1;
    }
    return changed;
}

const char *mw__app_steer_note(const mw_app_t *app, uint64_t now_ns, int *state)
{
    const mw_control_result_t *n = &app->note;
    if (n->state == MW_CONTROL_IDLE || !n->text[0])
        return NULL;
    if (n->state != MW_CONTROL_WAITING && now_ns - n->at_ns > NOTE_NS && !app->headless)
        return NULL;
    *state = n->state;
    return n->text;
}

void mw__app_view_ctx(const mw_app_t *app, mw_view_ctx_t *vc)
{
    vc->model = app->model;
    vc->view = &app->view;
    vc->layout = &app->layout;
    vc->pick = &app->pick;
    vc->rg = &app->rg;
    vc->data_gen = app->data_gen;
    /* The batch and the text are the app's drawing tools: views draw through them. */
    vc->batch = (mw_batch_t *)&app->batch;
    vc->text = app->text;
    vc->fb_w = app->fb_w;
    vc->fb_h = app->fb_h;
}

void mw__app_panels_state(const mw_app_t *app, mw_panels_state_t *ps)
{
    mw_source_status(app->src, &ps->src);
    ps->topo = mw__app_topo(app);
    ps->headless = app->headless;
    ps->fps = app->fps;
    ps->steer_state = 0;
    ps->steer_note = mw__app_steer_note(app, mw__now_ns(), &ps->steer_state);
    ps->prompt.steering = app->ctl != NULL;
    ps->prompt.open = app->prompt_open;
    ps->prompt.line = app->prompt;
    ps->prompt.cur = app->prompt_cur;
    ps->prompt.note = &app->note;
}

/* Opens the prompt, with the ranks selected in the views after an empty KEY=VALUE. */
static void prompt_open(mw_app_t *app)
{
    app->prompt_open = 1;
    app->prompt[0] = 0;
    app->prompt_cur = 0;
    const mw_topo_gl_t *t = &app->tp;
    if (mw__app_topo(app) && app->show == MW_SHOW_TOPOLOGY && t->pick.kind == MW_TOPO_PICK_RANK) {
        snprintf(app->prompt, sizeof app->prompt, " %u", (unsigned)t->pick.rank);
    } else if (mw__app_topo(app) && app->show == MW_SHOW_MATRIX && t->mx_pick) {
        uint32_t a = 0, b = 0;
        mw_matrix_bin_ranks(&t->mx, t->mx_src_bin, &a, &b);
        if (b > a)
            snprintf(app->prompt, sizeof app->prompt, " %u-%u", a, b);
        else
            snprintf(app->prompt, sizeof app->prompt, " %u", a);
    } else if (!mw__app_topo(app) && app->view.highlight_rank >= 0) {
        snprintf(app->prompt, sizeof app->prompt, " %lld", (long long)app->view.highlight_rank);
    }
}

static void prompt_enter(mw_app_t *app)
{
    uint64_t now = mw__now_ns();
    if (!app->ctl) {
        mw_control_result_t r;
        memset(&r, 0, sizeof r);
        r.state = MW_CONTROL_INVALID;
        r.at_ns = now;
        snprintf(r.text, sizeof r.text, "%s", steer_off);
        app_note(app, &r);
        app->prompt_open = 0;
        return;
    }
    int rc = mw_control_send(app->ctl, app->prompt, ' ', now);
    app_note(app, mw_control_result(app->ctl));
    /* A line refused before sending (or while the last request waits) stays open to be
     * corrected or sent again; the prompt shows the note that says why. */
    if (rc == 0)
        app->prompt_open = 0;
}

/* The prompt's keys; every key is the prompt's while it is open. */
static void prompt_key(mw_app_t *app, SDL_Keycode k)
{
    size_t n = strlen(app->prompt), c = app->prompt_cur;
    switch (k) {
    case SDLK_RETURN:
    case SDLK_KP_ENTER:
        prompt_enter(app);
        break;
    case SDLK_ESCAPE:
        app->prompt_open = 0;
        break;
    case SDLK_BACKSPACE:
        if (c > 0) {
            size_t a = c - 1;
            while (a > 0 && ((unsigned char)app->prompt[a] & 0xc0) == 0x80)
                a--; /* a whole UTF-8 character */
            memmove(app->prompt + a, app->prompt + c, n - c + 1);
            app->prompt_cur = a;
        }
        break;
    case SDLK_DELETE:
        if (c < n) {
            size_t b = c + 1;
            while (b < n && ((unsigned char)app->prompt[b] & 0xc0) == 0x80)
                b++;
            memmove(app->prompt + c, app->prompt + b, n - b + 1);
        }
        break;
    case SDLK_LEFT:
        while (c > 0 && ((unsigned char)app->prompt[--c] & 0xc0) == 0x80)
            ;
        app->prompt_cur = c;
        break;
    case SDLK_RIGHT:
        if (c < n)
            c++;
        while (c < n && ((unsigned char)app->prompt[c] & 0xc0) == 0x80)
            c++;
        app->prompt_cur = c;
        break;
    case SDLK_HOME:
        app->prompt_cur = 0;
        break;
    case SDLK_END:
        app->prompt_cur = n;
        break;
    default:
        return;
    }
    app->dirty = 1;
}

/* Typed text goes into the prompt at the cursor (bytes of UTF-8 as they come). */
static void prompt_char(mw_app_t *app, char ch)
{
    size_t n = strlen(app->prompt), c = app->prompt_cur;
    if ((unsigned char)ch < 0x20 || n + 1 >= sizeof app->prompt)
        return;
    memmove(app->prompt + c + 1, app->prompt + c, n - c + 1);
    app->prompt[c] = ch;
    app->prompt_cur = c + 1;
    app->dirty = 1;
}

void mw__app_need(mw_app_t *app)
{
    double f0 = 0, f1 = 0;
    mw_view_focus(&app->view, &f0, &f1);
    const Mpiwatch__JobInfo *job = mw_model_job(app->model);
    if (mw__app_topo(app) && !app->tp.step_mode && job && job->window_ns) {
        /* The window shown: kept and fetched like the call view's range. */
        uint64_t k = app->tp.window;
        f0 = mw_model_seconds(app->model, mw_model_window_start(app->model, k));
        f1 = mw_model_seconds(app->model, mw_model_window_start(app->model, k + 1) - 1);
    }
    mw_model_need(app->model, app->view.t0, app->view.t1, f0, f1);
}

void mw__app_render(mw_app_t *app)
{
    mw_rgba_t bg = mw__hex(MW_COLOR_BG, 1);
    glViewport(0, 0, app->fb_w, app->fb_h);
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_CULL_FACE);
    glDisable(GL_SCISSOR_TEST);
    glClearColor(bg.r, bg.g, bg.b, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glEnable(GL_BLEND);
    /* Straight alpha for colors; the target's alpha stays 1 so snapshots are opaque. */
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ZERO, GL_ONE);
    mw__batch_target(&app->batch, app->fb_w, app->fb_h);
    mw__text_target(app->text, app->fb_w, app->fb_h);

    mw_view_ctx_t vc;
    mw__app_view_ctx(app, &vc);
    if (app->show == MW_SHOW_TOPOLOGY)
        mw__topo_draw(&vc, &app->tp);
    else if (app->show == MW_SHOW_MATRIX)
        mw__matrix_draw(&vc, &app->tp);
    if (app->layout.show_timeline)
        mw__timeline_draw(&vc, &app->tl);
    if (app->layout.show_density && app->show == MW_SHOW_RANKS) {
        mw__ranks_draw(&vc, &app->rk);
    } else if (app->layout.show_density && app->show == MW_SHOW_LOGICAL) {
        mw__logical_draw(&vc, &app->lg, &app->rk);
    } else if (app->layout.show_density && app->show == MW_SHOW_TERRAIN) {
        mw__terrain_draw(&vc, &app->te);
    } else if (app->layout.show_density) {
        const char *force = getenv("MW_BENCH_REBIN");
        mw__density_draw(&vc, &app->dn, app->opt.bench_frames && force && !strcmp(force, "1"),
                         mw_source_rank_busy(app->src));
    }
    mw_panels_state_t ps;
    mw__app_panels_state(app, &ps);
    mw__panels_draw(&vc, &ps);
    mw__batch_flush(&app->batch);
    mw__text_flush(app->text);
    if (app->view.show_help) {
        mw__help_draw(&vc);
        mw__batch_flush(&app->batch);
        mw__text_flush(app->text);
    }
    app->frames_drawn++;
}

/* Counts drawn frames; the status bar shows the rate over the last second. */
static void app_count_frame(mw_app_t *app, uint64_t now)
{
    app->fps_frames++;
    uint64_t dt = now - app->fps_t0_ns;
    if (dt >= 1000000000ull) {
        app->fps = (double)app->fps_frames * 1e9 / (double)dt;
        app->fps_frames = 0;
        app->fps_t0_ns = now;
    }
}

static void app_save(mw_app_t *app)
{
    char path[64];
    time_t t = time(NULL);
    struct tm tmv;
    localtime_r(&t, &tmv);
    strftime(path, sizeof path, "mpiwatch-%Y%m%d-%H%M%S.png", &tmv);
    if (mw__write_png(path, app->fb_w, app->fb_h) == 0)
        fprintf(stderr, "mpiwatch-viewer: saved %s\n", path);
}

int mw__app_frame(mw_app_t *app, int force)
{
    uint64_t now = mw__now_ns();
    if (mw__app_update(app, now) < 0)
        return -1;
    if (!app->dirty && !force)
        return 0;
    app_target_size(app);
    mw__app_layout(app);
    mw__app_render(app);
    if (app->save_request) {
        app->save_request = 0;
        glFinish();
        app_save(app);
    }
    if (!app->headless)
        SDL_GL_SwapWindow(app->win);
    app_count_frame(app, now);
    app->dirty = 0;
    return 1;
}

int mw__app_run(mw_app_t *app)
{
    while (!app->quit) {
        SDL_Event ev;
        /* Sleep in the event queue while nothing changes, but not longer than the source
         * can wait to be polled. */
        if (!app->dirty && SDL_WaitEventTimeout(&ev, IDLE_WAIT_MS))
            mw__app_event(app, &ev);
        while (!app->quit && SDL_PollEvent(&ev))
            mw__app_event(app, &ev);
        if (app->quit)
            break;
        if (mw__app_frame(app, 0) < 0)
            return 1;
    }
    return 0;
}

void mw__app_prompt(mw_app_t *app, const char *text)
{
    prompt_open(app);
    for (const char *c = text; *c; c++)
        prompt_char(app, *c);
}

/* ---- input -------------------------------------------------------------------------------- */

static int in_rect(const mw_rect_t *r, int x, int y)
{
    return x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h;
}

static void app_clear(mw_app_t *app)
{
    app->view.sel0 = app->view.sel1 = 0;
    app->view.highlight_fn = 0;
    app->view.highlight_rank = -1;
    app->pick.kind = MW_PICK_NONE;
    app->te.pick_col = -1;
}

/* Sets the call view's range, keeping it inside the run's time axis. */
static void app_select(mw_app_t *app, double a, double b)
{
    if (a > b) {
        double t = a;
        a = b;
        b = t;
    }
    if (a < 0) {
        b -= a;
        a = 0;
    }
    if (b - a < 1e-6)
        b = a + 1e-6;
    app->view.sel0 = a;
    app->view.sel1 = b;
}

mw_pick_t mw__app_pick(mw_app_t *app, int x, int y)
{
    int radius = (int)(6 * app->layout.scale + 0.5f);
    mw_pick_t p = mw_pick(app->model, &app->view, &app->layout, x, y, radius);
    if (app->rg.timeline && in_rect(&app->layout.legend, x, y)) {
        /* The legend lists code regions: a click highlights one, which also colours the
         * topology's ranks in a region mode (model_regions.h). */
        uint32_t id = mw_region_legend_pick(app->model, &app->view, &app->layout, x, y);
        if (id) {
            app->rg.highlight = app->rg.highlight == id ? 0 : id;
            app->rg.rank_region = id;
        }
        app->data_gen++;
        app->dirty = 1;
        return p;
    }
    if (app->show == MW_SHOW_RANKS && app->layout.show_density &&
        in_rect(&app->layout.density, x, y))
        p = mw_ranks_pick(app->model, &app->view, &app->layout.density, x, y);
    if (app->show == MW_SHOW_LOGICAL && app->layout.show_density &&
        in_rect(&app->layout.density, x, y)) {
        /* The per-rank timeline above, the logical plot below (the split of the last frame). */
        mw_view_ctx_t vc;
        mw__app_view_ctx(app, &vc);
        mw__logical_update(&vc, &app->lg);
        if (in_rect(&app->lg.ranks_r, x, y) && app->lg.strip)
            p = mw__logical_strip_pick(&vc, &app->lg, x, y);
        else if (in_rect(&app->lg.ranks_r, x, y))
            p = mw_ranks_pick(app->model, &app->view, &app->lg.ranks_r, x, y);
        else if (in_rect(&app->lg.plot_r, x, y))
            p = mw__logical_pick(&vc, &app->lg, x, y);
        else
            p.kind = MW_PICK_NONE;
    }
    if (app->show == MW_SHOW_TERRAIN && app->layout.show_density &&
        in_rect(&app->layout.density, x, y)) {
        mw_view_ctx_t vc;
        mw__app_view_ctx(app, &vc);
        p = mw__terrain_pick(&vc, &app->te, x, y);
    }
    switch (p.kind) {
    case MW_PICK_LEGEND:
        /* Clicking the highlighted entry again turns the highlight off. */
        app->view.highlight_fn = app->view.highlight_fn == p.fn ? 0 : p.fn;
        break;
    case MW_PICK_CALL: {
        app->pick = p;
        app->view.highlight_rank = p.rank;
        double f0 = 0, f1 = 0;
        mw_view_focus(&app->view, &f0, &f1);
        mw_source_want_rank(app->src, p.rank, app_window_of(app, f0), app_window_of(app, f1));
        break;
    }
    case MW_PICK_CELL:
        app->pick = p;
        app->view.highlight_rank = -1;
        break;
    case MW_PICK_TERRAIN:
    case MW_PICK_RANK: {
        /* A row of the per-rank timeline or a cell of the terrain: that rank is followed in
         * every view. */
        app->pick = p;
        app->view.highlight_rank = p.rank;
        double f0 = 0, f1 = 0;
        mw_view_focus(&app->view, &f0, &f1);
        mw_source_want_rank(app->src, p.rank, app_window_of(app, f0), app_window_of(app, f1));
        break;
    }
    default:
        if (app->layout.show_density && in_rect(&app->layout.density, x, y)) {
            app->pick.kind = MW_PICK_NONE;
            app->view.highlight_rank = -1;
        }
        break;
    }
    app->data_gen++;
    app->dirty = 1;
    return p;
}

/* Multiplies the call view's range by `factor` around time t (the wheel over the call
 * view). */
static void app_zoom_focus(mw_app_t *app, double t, double factor)
{
    double f0 = 0, f1 = 0;
    mw_view_focus(&app->view, &f0, &f1);
    app_select(app, t - (t - f0) * factor, t + (f1 - t) * factor);
}

/* Keys of the topology and matrix views; 1 when the key was theirs. */
static int app_topo_key(mw_app_t *app, SDL_Keycode k)
{
    switch (k) {
    case SDLK_LEFT:
        app->dirty |= mw__topo_step(app->model, &app->tp, -1);
        break;
    case SDLK_RIGHT:
        app->dirty |= mw__topo_step(app->model, &app->tp, 1);
        break;
    case SDLK_HOME:
        app->tp.cam_fitted = 0;
        app->tp.have_layout = 0;
        break;
    case SDLK_END:
        app->tp.follow = 1;
        break;
    case SDLK_ESCAPE:
        if (app->view.show_help)
            return 0;
        app->tp.pick.kind = MW_TOPO_PICK_NONE;
        app->tp.mx_pick = 0;
        break;
    default:
        return 0;
    }
    app->dirty = 1;
    return 1;
}

static void app_key(mw_app_t *app, SDL_Keycode k)
{
    const mw_layout_t *l = &app->layout;
    if (app->prompt_open) {
        prompt_key(app, k);
        return;
    }
    if (mw__app_topo(app) && app_topo_key(app, k))
        return;
    switch (k) {
    case SDLK_LEFT:
        mw_view_scroll(&app->view, l, -l->timeline.w / 8.0);
        break;
    case SDLK_RIGHT:
        mw_view_scroll(&app->view, l, l->timeline.w / 8.0);
        break;
    case SDLK_KP_PLUS:
        mw_view_zoom(&app->view, l, l->timeline.x + l->timeline.w / 2, ZOOM_STEP);
        break;
    case SDLK_KP_MINUS:
        mw_view_zoom(&app->view, l, l->timeline.x + l->timeline.w / 2, 1 / ZOOM_STEP);
        break;
    case SDLK_HOME:
        mw__app_whole_run(app);
        break;
    case SDLK_END:
        app->view.follow = 1;
        break;
    case SDLK_ESCAPE:
        if (app->view.show_help)
            app->view.show_help = 0;
        else
            app_clear(app);
        break;
    case SDLK_F1:
        app->view.show_help = !app->view.show_help;
        break;
    default:
        return;
    }
    app->dirty = 1;
}

/* The view after `s` for the 'v' key. */
static mw_show_t app_next_show(mw_show_t s)
{
    switch (s) {
    case MW_SHOW_ALL:
        return MW_SHOW_TIMELINE;
    case MW_SHOW_TIMELINE:
        return MW_SHOW_DENSITY;
    case MW_SHOW_DENSITY:
        return MW_SHOW_RANKS;
    case MW_SHOW_RANKS:
        return MW_SHOW_LOGICAL;
    case MW_SHOW_LOGICAL:
        return MW_SHOW_TOPOLOGY;
    case MW_SHOW_TOPOLOGY:
        return MW_SHOW_MATRIX;
    case MW_SHOW_MATRIX:
        return MW_SHOW_TERRAIN;
    default:
        return MW_SHOW_ALL;
    }
}

/* Printable keys of the topology and matrix views; 1 when the key was theirs. */
static int app_topo_char(mw_app_t *app, char c)
{
    mw_topo_gl_t *t = &app->tp;
    switch (c) {
    case ' ':
        t->playing = !t->playing;
        t->play_ns = mw__now_ns();
        if (t->playing)
            t->follow = 0;
        break;
    case ',':
    case '<':
        app->dirty |= mw__topo_step(app->model, &app->tp, -1);
        break;
    case '.':
    case '>':
        app->dirty |= mw__topo_step(app->model, &app->tp, 1);
        break;
    case 'c':
        t->color = (mw_topo_color_t)((t->color + 1) % MW_TOPO_COLOR_COUNT);
        break;
    case 'b':
        t->bundles = t->bundles < 0 ? 1 : t->bundles == 1 ? 0 : -1;
        break;
    case 'p':
        t->periodic = !t->periodic;
        break;
    case 'w':
        t->step_mode = !t->step_mode;
        t->follow = 1;
        break;
    case 'l':
        t->labels = !t->labels;
        break;
    case 't':
        t->log = !t->log;
        break;
    case 'm':
        t->mx_bytes = !t->mx_bytes;
        break;
    case 'g': /* the gap between node planes: wider, narrower */
    case 'G':
        t->node_gap =
            c == 'g' ? fminf(t->node_gap * 1.5f, 200.0f) : fmaxf(t->node_gap / 1.5f, 0.5f);
        break;
    case 'n':
        t->plane_color = (t->plane_color + 1) % MW_PLANES_COUNT;
        break;
    case 'f': /* links of one sending function (Window.fpair_*), then all again */
        app->rg.link_fn = mw_fpair_next_fn(
            t->step_mode ? NULL : mw_model_window(app->model, t->window), app->rg.link_fn);
        break;
    case 'e': /* ranks: MPI share → a region's exclusive → inclusive time */
        app->rg.ranks = (mw_rank_mode_t)((app->rg.ranks + 1) % MW_RANKS_MODES);
        break;
    case 'E': /* the next code region on the ranks */
        app->rg.rank_region = mw_region_next(app->model, t->rx ? t->rx->region : 0);
        break;
    case '+':
    case '=':
        mw_camera_zoom(&t->cam, 1.25f);
        break;
    case '-':
    case '_':
        mw_camera_zoom(&t->cam, 0.8f);
        break;
    default:
        return 0;
    }
    app->dirty = 1;
    return 1;
}

/* Printable keys come as text so that '?', '+' and '[' work on any keyboard layout. */
static void app_char(mw_app_t *app, char c)
{
    const mw_layout_t *l = &app->layout;
    mw_view_t *v = &app->view;
    if (app->prompt_open) {
        prompt_char(app, c);
        return;
    }
    if (c == ':') {
        prompt_open(app);
        app->dirty = 1;
        return;
    }
    if (mw__app_topo(app) && app_topo_char(app, c))
        return;
    switch (c) {
    case ' ':
        v->follow = !v->follow;
        break;
    case '+':
    case '=':
        mw_view_zoom(v, l, l->timeline.x + l->timeline.w / 2, ZOOM_STEP);
        break;
    case '-':
    case '_':
        mw_view_zoom(v, l, l->timeline.x + l->timeline.w / 2, 1 / ZOOM_STEP);
        break;
    case '1':
    case '2':
    case '3':
    case '4':
        v->repr = (mw_repr_t)(c - '1');
        break;
    case 't':
        if (app->show == MW_SHOW_TERRAIN) /* the terrain's scale */
            app->te.log = !app->te.log;
        else
            v->transfer = v->transfer == MW_TRANSFER_LOG ? MW_TRANSFER_LINEAR : MW_TRANSFER_LOG;
        break;
    case 'l':
        v->dur_linear = !v->dur_linear;
        break;
    case '[':
        v->o_min = v->o_min - 0.05f < 0 ? 0 : v->o_min - 0.05f;
        break;
    case ']':
        v->o_min = v->o_min + 0.05f > 1 ? 1 : v->o_min + 0.05f;
        break;
    case 'v':
        app->show = app_next_show(app->show);
        break;
    case 'r': /* the timeline: MPI functions ↔ code regions */
        app->rg.timeline = !app->rg.timeline;
        break;
    case 'd':
        /* The logical view: lateness or differential lateness. */
        if (app->show != MW_SHOW_LOGICAL)
            return;
        app->lg.metric = app->lg.metric == MW_LVIEW_DIFF ? MW_LVIEW_LATENESS : MW_LVIEW_DIFF;
        break;
    case 'h':
    case 'm':
    case 'g':
        /* The terrain: 3D or heat map, the metric, functions or regions. */
        if (app->show != MW_SHOW_TERRAIN)
            return;
        if (c == 'h')
            app->te.heatmap = !app->te.heatmap;
        else if (c == 'm')
            app->te.metric = mw_terrain_metric_next(app->te.what, app->te.metric);
        else {
            app->te.what =
                app->te.what == MW_TERRAIN_REGIONS ? MW_TERRAIN_FUNCTIONS : MW_TERRAIN_REGIONS;
            app->te.metric = MW_TERRAIN_TIME;
        }
        app->te.pick_col = -1;
        break;
    case 'o':
        /* The logical view's upper plot: MPI calls or lateness over time per rank. */
        if (app->show != MW_SHOW_LOGICAL)
            return;
        app->lg.strip = !app->lg.strip;
        break;
    case 'q':
        app->quit = 1;
        break;
    case 's':
        app->save_request = 1;
        break;
    case '?':
        v->show_help = !v->show_help;
        break;
    default:
        return;
    }
    app->dirty = 1;
}

static void app_button_down(mw_app_t *app, int button, int x, int y)
{
    const mw_layout_t *l = &app->layout;
    if (mw__app_topo(app)) {
        app->drag_x0 = app->drag_last_x = x;
        app->drag_y0 = app->drag_last_y = y;
        app->drag_moved = 0;
        app->drag = app->show != MW_SHOW_TOPOLOGY ? MW_DRAG_NONE
                    : button == SDL_BUTTON_LEFT   ? MW_DRAG_ORBIT
                    : button == SDL_BUTTON_RIGHT  ? MW_DRAG_PAN
                                                  : MW_DRAG_NONE;
        return;
    }
    int in_tl = l->show_timeline && in_rect(&l->timeline, x, y);
    int in_dn = l->show_density && in_rect(&l->density, x, y);
    app->drag_x0 = app->drag_last_x = x;
    app->drag_y0 = app->drag_last_y = y;
    app->drag_moved = 0;
    if (button == SDL_BUTTON_LEFT && in_tl)
        app->drag = MW_DRAG_SELECT;
    else if (button == SDL_BUTTON_LEFT && in_dn && app->show == MW_SHOW_TERRAIN && !app->te.heatmap)
        app->drag = MW_DRAG_ORBIT; /* the terrain's camera; a click without moving picks */
    else if (button == SDL_BUTTON_RIGHT && (in_tl || in_dn))
        app->drag = MW_DRAG_PAN;
    else if (button == SDL_BUTTON_LEFT)
        app->drag = MW_DRAG_NONE; /* a click in the call view or legend, acted on release */
    else
        app->drag = MW_DRAG_NONE;
}

static void app_motion(mw_app_t *app, int x, int y)
{
    const mw_layout_t *l = &app->layout;
    if (abs(x - app->drag_x0) + abs(y - app->drag_y0) > (int)(CLICK_SLOP_PX * app->scale))
        app->drag_moved = 1;
    if (!app->drag_moved)
        return;
    if (mw__app_topo(app)) {
        float dx = (float)(x - app->drag_last_x), dy = (float)(y - app->drag_last_y);
        if (app->drag == MW_DRAG_ORBIT)
            mw_camera_orbit(&app->tp.cam, dx / app->scale, dy / app->scale);
        else if (app->drag == MW_DRAG_PAN)
            mw_camera_pan(&app->tp.cam, dx, dy, app->tp.region.h);
        app->drag_last_x = x;
        app->drag_last_y = y;
        app->dirty = 1;
        return;
    }
    if (app->drag == MW_DRAG_ORBIT) { /* the terrain */
        mw_camera_orbit(&app->te.cam, (float)(x - app->drag_last_x) / app->scale,
                        (float)(y - app->drag_last_y) / app->scale);
        app->drag_last_x = x;
        app->drag_last_y = y;
        app->dirty = 1;
        return;
    }
    if (app->drag == MW_DRAG_SELECT) {
        const mw_rect_t *r = &l->timeline;
        int xc = x < r->x ? r->x : x > r->x + r->w ? r->x + r->w : x;
        app_select(app, mw_time_of_x(r, app->view.t0, app->view.t1, app->drag_x0),
                   mw_time_of_x(r, app->view.t0, app->view.t1, xc));
        app->dirty = 1;
    } else if (app->drag == MW_DRAG_PAN) {
        int dx = x - app->drag_last_x;
        if (in_rect(&l->density, app->drag_x0, app->drag_y0) && l->show_density) {
            double f0 = 0, f1 = 0;
            mw_view_focus(&app->view, &f0, &f1);
            double dt = -(double)dx * (f1 - f0) / (l->density.w > 0 ? l->density.w : 1);
            app_select(app, f0 + dt, f1 + dt);
        } else {
            mw_view_scroll(&app->view, l, -dx);
        }
        app->dirty = 1;
    }
    app->drag_last_x = x;
}

static void app_button_up(mw_app_t *app, int button, int x, int y)
{
    const mw_layout_t *l = &app->layout;
    mw_drag_t drag = app->drag;
    app->drag = MW_DRAG_NONE;
    if (button != SDL_BUTTON_LEFT || app->drag_moved)
        return;
    if (app->show == MW_SHOW_TOPOLOGY || app->show == MW_SHOW_MATRIX) {
        mw_view_ctx_t vc;
        mw__app_view_ctx(app, &vc);
        if (app->show == MW_SHOW_TOPOLOGY)
            mw__topo_pick(&vc, &app->tp, x, y);
        else
            mw__matrix_pick(&vc, &app->tp, x, y);
        app->dirty = 1;
        return;
    }
    if (drag == MW_DRAG_SELECT) {
        /* A click on the timeline moves the call view's range there, keeping its length. */
        double f0 = 0, f1 = 0;
        mw_view_focus(&app->view, &f0, &f1);
        double t = mw_time_of_x(&l->timeline, app->view.t0, app->view.t1, x);
        app_select(app, t - (f1 - f0) / 2, t + (f1 - f0) / 2);
        app->dirty = 1;
        return;
    }
    if ((l->show_density && in_rect(&l->density, x, y)) || in_rect(&l->legend, x, y))
        mw__app_pick(app, x, y);
}

void mw__app_event(mw_app_t *app, const SDL_Event *ev)
{
    float s = app->scale > 0 ? app->scale : 1.0f;
    switch (ev->type) {
    case SDL_QUIT:
        app->quit = 1;
        break;
    case SDL_WINDOWEVENT:
        if (ev->window.event == SDL_WINDOWEVENT_SIZE_CHANGED ||
            ev->window.event == SDL_WINDOWEVENT_EXPOSED ||
            ev->window.event == SDL_WINDOWEVENT_RESIZED) {
            app_target_size(app);
            app->dirty = 1;
        }
        break;
    case SDL_KEYDOWN:
        app_key(app, ev->key.keysym.sym);
        break;
    case SDL_TEXTINPUT:
        for (const char *c = ev->text.text; *c; c++)
            app_char(app, *c);
        break;
    case SDL_MOUSEBUTTONDOWN:
        app_button_down(app, ev->button.button, (int)(ev->button.x * s), (int)(ev->button.y * s));
        break;
    case SDL_MOUSEMOTION:
        if (app->drag != MW_DRAG_NONE)
            app_motion(app, (int)(ev->motion.x * s), (int)(ev->motion.y * s));
        break;
    case SDL_MOUSEBUTTONUP:
        app_button_up(app, ev->button.button, (int)(ev->button.x * s), (int)(ev->button.y * s));
        break;
    case SDL_MOUSEWHEEL: {
        if (!ev->wheel.y)
            break;
        int mx = 0, my = 0;
        SDL_GetMouseState(&mx, &my);
        int x = (int)(mx * s), y = (int)(my * s);
        /* Wheel up zooms in: mw_view_zoom() divides the span by the factor. */
        double factor = ev->wheel.y > 0 ? ZOOM_STEP : 1 / ZOOM_STEP;
        const mw_layout_t *l = &app->layout;
        if (mw__app_topo(app)) {
            if (app->show == MW_SHOW_TOPOLOGY)
                mw_camera_zoom(&app->tp.cam, (float)factor);
            app->dirty = 1;
            break;
        }
        if (app->show == MW_SHOW_TERRAIN && l->show_density && in_rect(&l->density, x, y)) {
            mw_camera_zoom(&app->te.cam, (float)factor);
        } else if (l->show_density && in_rect(&l->density, x, y)) {
            double f0 = 0, f1 = 0;
            mw_view_focus(&app->view, &f0, &f1);
            app_zoom_focus(app, mw_time_of_x(&l->density, f0, f1, x), 1 / factor);
        } else {
            int zx = l->show_timeline && in_rect(&l->timeline, x, y)
                         ? x
                         : l->timeline.x + l->timeline.w / 2;
            mw_view_zoom(&app->view, l, zx, factor);
        }
        app->dirty = 1;
        break;
    }
    default:
        break;
    }
}
