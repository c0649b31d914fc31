/* mw_steer_request.h: one steering request, parsed, checked and encoded the same way by every
 * client of the collector's --control endpoint (mpiwatch-steer, the viewer); the one check of
 * a steering key and the one rank-list parser, which the collector and the ranks use too.
 *
 * DESIGN: the text forms a user types ("KEY=VALUE", a rank list "0-3,7", or both on one line
 * "KEY=VALUE 0-3" / "KEY=VALUE:0-3") become a fixed-size mw_steer_request_t, checked with the
 * collector's rules for what can be checked without it (the key's length and characters, the
 * value's length, the rank list's syntax and size); the collector checks again, and also the
 * value's text and the ranks against the job size. Encoding and decoding of SteerRequest and
 * SteerReply are here too, so the two clients cannot drift apart. No I/O, no sockets, and
 * nothing but libc and protobuf-c, so the preloaded library links it too.
 */
#ifndef MW_STEER_REQUEST_H
#define MW_STEER_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "mw_proto.h"

/* The collector's caps (proto/mw_proto.h), so that a client refuses what it would refuse. */
#define MW_STEER_REQ_KEY_MAX MW_STEER_MAX_KEY     /* 1..64 of [A-Za-z0-9._-] */
#define MW_STEER_REQ_VALUE_MAX MW_STEER_MAX_VALUE /* bytes */
#define MW_STEER_REQ_RANKS_MAX MW_STEER_MAX_RANKS /* ranks one request may list */

typedef struct {
    char key[MW_STEER_REQ_KEY_MAX + 1];
    char value[MW_STEER_REQ_VALUE_MAX + 1];
    uint32_t ranks[MW_STEER_REQ_RANKS_MAX];
    size_t n_ranks; /* 0: every rank */
} mw_steer_request_t;

/* The one parser of a rank list ("0-3,7"), used by the steering clients and by the collector's
 * rules: calls add(user, lo, hi) for each range (a single rank is lo == hi), in order. Ranks are
 * decimal numbers below `limit`, a range never ends below its start. With MW_RANKS_BLANKS,
 * blanks (spaces, tabs) may surround the numbers, '-' and ',' (the rules file); without, none
 * may (a request, where a blank ends the rank list). Returns 0, or -1 when the text is not a
 * non-empty rank list or add returned -1. */
#define MW_RANKS_BLANKS 1u
int mw_rank_list_parse(const char *s, unsigned flags, uint64_t limit,
                       int (*add)(void *user, uint32_t lo, uint32_t hi), void *user);

/* Parses a rank list ("0-3,7") into out[0..*n) (at most max), with mw_rank_list_parse and no
 * blanks. Returns 0, or -1 when the text is not a non-empty rank list or lists more than max
 * ranks. */
int mw_steer_parse_ranks(const char *s, uint32_t *out, size_t *n, size_t max);

/* The one check of a steering key, used by the clients, the collector and the ranks: NULL when
 * `key` is valid (1 to MW_STEER_MAX_KEY bytes of [A-Za-z0-9._-]), else why not ("the key must
 * have 1 to 64 characters", "the key may only contain A-Z a-z 0-9 . _ -"). When `at` is not
 * NULL it receives the offset of the first refused byte, or the key's length when the length
 * is what is wrong. */
const char *mw_steer_key_error(const char *key, size_t *at);

/* Sets rq's key and value from "KEY=VALUE" (its ranks are left as they are). Returns 0, or -1
 * with the reason in err: "expected KEY=VALUE, got '...'", "bad key '...': ...", "the value is
 * longer than 1024 bytes". */
int mw_steer_request_set(mw_steer_request_t *rq, const char *kv, char *err, size_t errlen);

/* Parses a whole request typed on one line: "KEY=VALUE", optionally followed by `sep` and a
 * rank list or the word "all" (every rank). Only the last `sep` counts, and only when what
 * follows it is a rank list or "all": "msg=a b" is the value "a b" for every rank, "msg=a b 3"
 * is "a b" for rank 3, "msg=a 3 all" is "a 3" for every rank. sep is ' ' for the viewer's
 * prompt (blanks around the parts are ignored) and ':' for --steer KEY=VALUE:RANKS. Returns 0,
 * or -1 with the reason in err. */
int mw_steer_request_parse_line(mw_steer_request_t *rq, const char *line, char sep, char *err,
                                size_t errlen);

/* Encodes rq as a SteerRequest into a new buffer (free() it). Returns its length, or 0 when out
 * of memory (*out is then NULL). */
size_t mw_steer_request_pack(const mw_steer_request_t *rq, uint8_t **out);

/* Decodes a SteerReply. Returns 0 with *ok, *seq and the collector's reason (when !ok) in
 * error, or -1 when the bytes are not a SteerReply. */
int mw_steer_reply_parse(const void *buf, size_t len, int *ok, uint64_t *seq, char *error,
                         size_t errlen);

/* "rebalance=1" or "rebalance=1 ranks 0-3,7": the request as the user would read it back, with
 * rank ranges joined again. */
void mw_steer_request_text(const mw_steer_request_t *rq, char *buf, size_t len);

#endif
