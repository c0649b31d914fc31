/* pbequal.h: deep comparison of two unpacked protobuf-c messages, driven by their descriptors.
 *
 * Used to prove that the hand-written decoder (proto/mw_decode.c) produces exactly what
 * protobuf-c produces: every field of every (nested) message, the selected oneof member, the
 * elements of repeated fields and the unknown fields are compared; pointers are not (two
 * decoders allocate differently), so an empty array equals a NULL one.
 */
#ifndef MW_PBEQUAL_H
#define MW_PBEQUAL_H

#include <protobuf-c/protobuf-c.h>

/* NULL when the messages are equal, else a description of the first difference
 * ("Sample.peer_rank[3]"), valid until the next call. */
const char *pb_diff(const ProtobufCMessage *a, const ProtobufCMessage *b);

#endif
