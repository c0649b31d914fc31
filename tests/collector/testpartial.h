/* testpartial.h: real partials, for the decoder's tests and the fuzz seeds.
 *
 * An aggregator collector (the socket-free core of fixture.h, in aggregator mode) takes full
 * samples from every rank of a small job, window after window; each window closes when its last
 * rank reported and goes out as the aggregator's Partial envelope (mw__partial_envelope_pack),
 * the bytes a parent receives. Its AggState envelope comes first.
 */
#ifndef MW_TESTPARTIAL_H
#define MW_TESTPARTIAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *b; /* malloc'd */
    size_t n;
} tp_frame_t;

/* Runs an aggregator (id agg_id) over ranks 0..ranks-1 of job `job` (of `ranks` ranks) for
 * `windows` windows from fixture.h's FX_W0, at most max - 1 windows. out[0] is its AggState
 * envelope, out[1..] its partials in window order. Returns the number of frames, or 0 when the
 * aggregator refused a sample or closed no window where expected. */
size_t tp_aggregator_frames(const char *job, uint32_t ranks, unsigned windows, uint32_t agg_id,
                            tp_frame_t *out, size_t max);
void tp_frames_free(tp_frame_t *f, size_t n);

#endif
