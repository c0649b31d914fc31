/* fuzz_recording.c: a libFuzzer target for the recording reader (proto/mw_recording.c).
 *
 * One input is a whole recording file. The reader is used the way replay, the exporters and
 * the viewer use it: open (header check), read every frame forward to the end, ask whether the
 * tail was torn, find the span and a few windows through the index frames (the backward search
 * for the last index included), seek back to frames found on the way and read them again, and
 * look into received frames without decoding them (mw_rec_sample_window, mw_rec_envelope_rank).
 *
 * DESIGN: the reader takes a path, so the input is written to a memfd and opened as
 * /proc/self/fd/N (memfile.h). The seeds (tests/fuzz/seeds.c) are recordings written by the
 * collector's own writer (collector/record_file.c) during a job run through the collector core, and
 * a torn copy of one, so they follow the format as it changes. Frames read per input are capped (a
 * crafted file of a million empty frames would otherwise make one input take seconds); the cap is
 * far above what a seed holds. A hang or a slow input (more than 10 s, fuzz.sh) is a finding like
 * a crash: the reader's searches must stay bounded whatever the file claims (issue 12).
 */
#include "memfile.h"
#include "mw_recording.h"
#include "fuzz.h"

#define FUZZ_MAX_FRAMES 100000 /* frames read forward per input */
#define FUZZ_SEEKS 16          /* frame offsets remembered and sought again */

static volatile uint64_t sink;

static void look_into(const Mpiwatch__Record *rec)
{
    if (rec->body_case != MPIWATCH__RECORD__BODY_MESSAGE)
        return;
    /* These read bytes the collector received from anyone; the answers go to a sink so that
     * the compiler keeps the reads the sanitizers check. */
    uint64_t window = 0;
    uint32_t rank = 0;
    if (mw_rec_sample_window(rec->message.data, rec->message.len, &window) == 1)
        sink += window;
    if (mw_rec_envelope_rank(rec->message.data, rec->message.len, &rank) == 1)
        sink += rank;
}

static void read_all(mw_rec_reader_t *r)
{
    char err[256];
    uint64_t offsets[FUZZ_SEEKS];
    unsigned n_off = 0;
    const Mpiwatch__Record *rec;
    uint64_t off;
    for (int i = 0; i < FUZZ_MAX_FRAMES; i++) {
        int rc = mw_rec_reader_next(r, &rec, &off, err, sizeof err);
        if (rc <= 0)
            break;
        look_into(rec);
        if (n_off < FUZZ_SEEKS && (i % 3 == 0))
            offsets[n_off++] = off;
    }
    (void)mw_rec_reader_truncated(r);

    uint64_t first = 0, last = 0, mono0 = 0, mono1 = 0;
    int span = mw_rec_reader_span(r, &first, &last, &mono0, &mono1);
    uint64_t probe[] = {0, 1, first, first + 1, last, last + 1, (first + last) / 2, UINT64_MAX};
    for (size_t i = 0; i < sizeof probe / sizeof *probe; i++) {
        if (span != 1 && i >= 2)
            break;
        uint64_t wo = 0, so = 0;
        if (mw_rec_reader_find_window(r, probe[i], &wo, &so) == 1) {
            if (mw_rec_reader_seek(r, wo) == 0 &&
                mw_rec_reader_next(r, &rec, NULL, err, sizeof err) == 1)
                look_into(rec);
            if (so && mw_rec_reader_seek(r, so) == 0 &&
                mw_rec_reader_next(r, &rec, NULL, err, sizeof err) == 1)
                look_into(rec);
        }
    }
    for (unsigned i = 0; i < n_off; i++)
        if (mw_rec_reader_seek(r, offsets[n_off - 1 - i]) == 0 &&
            mw_rec_reader_next(r, &rec, NULL, err, sizeof err) == 1)
            look_into(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[256];
    int fd = memfile(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    mw_rec_reader_t *r = mw_rec_reader_open(path, err, sizeof err);
    if (r) {
        read_all(r);
        mw_rec_reader_close(r);
    }
    close(fd);
    return 0;
}
