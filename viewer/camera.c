/* camera.c: the topology view's camera (camera.h). */
#include "camera.h"

#include <math.h>
#include <string.h>

static float fmaxf2(float a, float b)
{
    return a > b ? a : b;
}

#define DEG (3.14159265358979f / 180.0f)

void mw_camera_fit(mw_camera_t *c, const mw_topo_layout_t *L)
{
    memset(c, 0, sizeof *c);
    c->fov = 40;
    c->yaw = -20;
    c->pitch = 48;
    float w = L->hi[0] - L->lo[0], d = L->hi[2] - L->lo[2];
    float r = 0.5f * sqrtf(w * w + d * d);
    if (r < 2)
        r = 2;
    c->target[0] = (L->lo[0] + L->hi[0]) / 2;
    c->target[1] = 0;
    c->target[2] = (L->lo[2] + L->hi[2]) / 2;
    c->distance = r / sinf(c->fov / 2 * DEG);
}

void mw_camera_eye(const mw_camera_t *c, float out[3])
{
    float p = c->pitch * DEG, y = c->yaw * DEG;
    out[0] = c->target[0] + c->distance * cosf(p) * sinf(y);
    out[1] = c->target[1] + c->distance * sinf(p);
    out[2] = c->target[2] + c->distance * cosf(p) * cosf(y);
}

static void mat_mul(const float a[16], const float b[16], float out[16])
{
    float r[16];
    for (int col = 0; col < 4; col++)
        for (int row = 0; row < 4; row++) {
            float s = 0;
            for (int k = 0; k < 4; k++)
                s += a[k * 4 + row] * b[col * 4 + k];
            r[col * 4 + row] = s;
        }
    memcpy(out, r, sizeof r);
}

/* The camera's frame: eye, forward f (to the target), side s = f x up and up u = s x f, unit
 * vectors (a camera looking straight down takes x as its side). */
static void camera_basis(const mw_camera_t *c, float eye[3], float f[3], float s[3], float u[3])
{
    mw_camera_eye(c, eye);
    for (int i = 0; i < 3; i++)
        f[i] = c->target[i] - eye[i];
    float fl = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int i = 0; i < 3; i++)
        f[i] /= fl > 0 ? fl : 1;
    s[0] = -f[2];
    s[1] = 0;
    s[2] = f[0];
    float sl = sqrtf(s[0] * s[0] + s[2] * s[2]);
    if (sl < 1e-6f) {
        s[0] = 1;
        s[2] = 0;
        sl = 1;
    }
    s[0] /= sl;
    s[2] /= sl;
    u[0] = s[1] * f[2] - s[2] * f[1];
    u[1] = s[2] * f[0] - s[0] * f[2];
    u[2] = s[0] * f[1] - s[1] * f[0];
}

void mw_camera_ray(const mw_camera_t *c, int w, int h, float x, float y, float eye[3], float dir[3])
{
    float f[3], s[3], u[3];
    camera_basis(c, eye, f, s, u);
    float th = tanf(c->fov / 2 * DEG), aspect = (float)w / (float)(h > 0 ? h : 1);
    float nx = (2 * x / (float)(w > 0 ? w : 1) - 1) * th * aspect;
    float ny = (1 - 2 * y / (float)(h > 0 ? h : 1)) * th;
    for (int i = 0; i < 3; i++)
        dir[i] = f[i] + s[i] * nx + u[i] * ny;
}

void mw_camera_matrix(const mw_camera_t *c, float aspect, float out[16])
{
    float eye[3], f[3], s[3], u[3];
    camera_basis(c, eye, f, s, u);
    float view[16] = {s[0], u[0], -f[0], 0, s[1], u[1], -f[1], 0, s[2], u[2], -f[2], 0, 0, 0, 0, 1};
    view[12] = -(s[0] * eye[0] + s[1] * eye[1] + s[2] * eye[2]);
    view[13] = -(u[0] * eye[0] + u[1] * eye[1] + u[2] * eye[2]);
    view[14] = f[0] * eye[0] + f[1] * eye[1] + f[2] * eye[2];
    float n = c->distance * 0.01f, fa = c->distance * 6 + 100;
    float t = 1.0f / tanf(c->fov / 2 * DEG);
    float proj[16] = {0};
    proj[0] = t / (aspect > 0 ? aspect : 1);
    proj[5] = t;
    proj[10] = (fa + n) / (n - fa);
    proj[11] = -1;
    proj[14] = 2 * fa * n / (n - fa);
    mat_mul(proj, view, out);
}

int mw_camera_project(const float m[16], const float p[3], int w, int h, float *x, float *y)
{
    float cx = m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12];
    float cy = m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13];
    float cw = m[3] * p[0] + m[7] * p[1] + m[11] * p[2] + m[15];
    if (cw <= 1e-6f)
        return 0;
    *x = (cx / cw * 0.5f + 0.5f) * (float)w;
    *y = (1 - (cy / cw * 0.5f + 0.5f)) * (float)h;
    return 1;
}

void mw_camera_orbit(mw_camera_t *c, float dx, float dy)
{
    c->yaw -= dx * 0.3f;
    c->pitch += dy * 0.3f;
    c->pitch = c->pitch < 5 ? 5 : c->pitch > 89 ? 89 : c->pitch;
    c->yaw = fmodf(c->yaw, 360.0f);
}

float mw_camera_px_per_unit(const mw_camera_t *c, int viewport_h)
{
    return (float)viewport_h / (2 * c->distance * tanf(c->fov / 2 * DEG));
}

void mw_camera_pan(mw_camera_t *c, float dx, float dy, int viewport_h)
{
    float k = 1.0f / mw_camera_px_per_unit(c, viewport_h);
    float y = c->yaw * DEG;
    /* Screen right and screen up projected on the ground. */
    float rx = cosf(y), rz = -sinf(y);
    float fx = -sinf(y), fz = -cosf(y);
    c->target[0] -= (rx * dx - fx * dy) * k;
    c->target[2] -= (rz * dx - fz * dy) * k;
}

void mw_camera_zoom(mw_camera_t *c, float factor)
{
    if (factor > 0)
        c->distance /= factor;
    c->distance = c->distance < 1 ? 1 : c->distance > 1e6f ? 1e6f : c->distance;
}

int mw_topo_auto_bundles(const mw_camera_t *c, const mw_topo_layout_t *L, int viewport_h,
                         float min_px)
{
    float cell = fmaxf2(L->cell_w, L->cell_d);
    return cell * mw_camera_px_per_unit(c, viewport_h) < min_px;
}
