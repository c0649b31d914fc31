/* mw-pngprobe: answers questions about the pixels of a PNG, for the snapshot tests.
 *
 *   mw-pngprobe FILE.png size                         -> "W H"
 *   mw-pngprobe FILE.png pixel X Y                    -> "R G B"
 *   mw-pngprobe FILE.png column X Y0 Y1 [TOL]         -> one line "y0 y1 R G B" per run of
 *                                                        similar colors, top to bottom
 *   mw-pngprobe FILE.png count R G B TOL [X0 Y0 X1 Y1] -> pixels within TOL of the color in
 *                                                        the rectangle (inclusive; default the
 *                                                        whole image)
 *   mw-pngprobe FILE.png find R G B TOL [X0 Y0 X1 Y1]  -> "N CX CY X0 Y0 X1 Y1": how many such
 *                                                        pixels, their centroid and bounding
 *                                                        box ("0" when there is none)
 *
 * Coordinates are pixels from the top left corner. Two colors are within TOL when each
 * channel differs by at most TOL. A run of `column` extends while each pixel is within TOL
 * (default 8) of the run's first pixel, and reports that first pixel's color; y1 is
 * inclusive. Exit status 0 with the answer, 1 when the file cannot be read, 2 on a usage
 * error (a coordinate outside the image included).
 *
 * DESIGN: stb_image (Debian's libstb) decodes the file to 8-bit RGB; nothing is cached, every
 * call reads the file again: snapshots are small and the scripts ask a few questions each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image.h>

static unsigned char *img;
static int W, H;

static int parse_int(const char *s, int *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < -1000000 || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

static const unsigned char *px(int x, int y)
{
    return img + 3 * ((size_t)y * (size_t)W + (size_t)x);
}

static int near(const unsigned char *a, const unsigned char *b, int tol)
{
    for (int i = 0; i < 3; i++)
        if (abs((int)a[i] - (int)b[i]) > tol)
            return 0;
    return 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: mw-pngprobe FILE.png (size | pixel X Y | column X Y0 Y1 [TOL] |\n"
                    "                              count R G B TOL [X0 Y0 X1 Y1] |\n"
                    "                              find R G B TOL [X0 Y0 X1 Y1])\n");
    return 2;
}

static int inside(int x, int y)
{
    return x >= 0 && y >= 0 && x < W && y < H;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return usage();
    int n;
    img = stbi_load(argv[1], &W, &H, &n, 3);
    if (!img) {
        fprintf(stderr, "mw-pngprobe: %s: %s\n", argv[1], stbi_failure_reason());
        return 1;
    }
    const char *q = argv[2];
    int a[8] = {0}, na = argc - 3;
    if (na > 8)
        return usage();
    for (int i = 0; i < na; i++)
        if (parse_int(argv[3 + i], &a[i]) < 0)
            return usage();
    int rc = 0;
    if (!strcmp(q, "size") && na == 0) {
        printf("%d %d\n", W, H);
    } else if (!strcmp(q, "pixel") && na == 2) {
        if (!inside(a[0], a[1]))
            return usage();
        const unsigned char *p = px(a[0], a[1]);
        printf("%d %d %d\n", p[0], p[1], p[2]);
    } else if (!strcmp(q, "column") && (na == 3 || na == 4)) {
        int x = a[0], y0 = a[1], y1 = a[2], tol = na == 4 ? a[3] : 8;
        if (!inside(x, y0) || !inside(x, y1) || y1 < y0)
            return usage();
        int start = y0;
        for (int y = y0 + 1; y <= y1 + 1; y++) {
            if (y <= y1 && near(px(x, y), px(x, start), tol))
                continue;
            const unsigned char *p = px(x, start);
            printf("%d %d %d %d %d\n", start, y - 1, p[0], p[1], p[2]);
            start = y;
        }
    } else if ((!strcmp(q, "count") || !strcmp(q, "find")) && (na == 4 || na == 8)) {
        unsigned char c[3] = {(unsigned char)a[0], (unsigned char)a[1], (unsigned char)a[2]};
        int x0 = 0, y0 = 0, x1 = W - 1, y1 = H - 1;
        if (na == 8) {
            x0 = a[4] < 0 ? 0 : a[4];
            y0 = a[5] < 0 ? 0 : a[5];
            x1 = a[6] >= W ? W - 1 : a[6];
            y1 = a[7] >= H ? H - 1 : a[7];
        }
        long count = 0;
        double sx = 0, sy = 0;
        int bx0 = W, by0 = H, bx1 = -1, by1 = -1;
        for (int y = y0; y <= y1; y++)
            for (int x = x0; x <= x1; x++)
                if (near(px(x, y), c, a[3])) {
                    count++;
                    sx += x;
                    sy += y;
                    bx0 = x < bx0 ? x : bx0;
                    bx1 = x > bx1 ? x : bx1;
                    by0 = y < by0 ? y : by0;
                    by1 = y > by1 ? y : by1;
                }
        if (q[0] == 'c')
            printf("%ld\n", count);
        else if (count)
            printf("%ld %.2f %.2f %d %d %d %d\n", count, sx / (double)count, sy / (double)count,
                   bx0, by0, bx1, by1);
        else
            printf("0\n");
    } else {
        rc = usage();
    }
    stbi_image_free(img);
    return rc;
}
