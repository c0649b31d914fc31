/* pbequal.c: the descriptor-driven deep comparison of pbequal.h.
 *
 * DESIGN: generic over the descriptors rather than written per message, so that a field added
 * to mpiwatch.proto is compared without anyone remembering to add it here.
 */
#include "pbequal.h"

#include <stdio.h>
#include <string.h>

static char where[256];

static const char *differ(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                          long index, const char *inner)
{
    char buf[256];
    if (index >= 0)
        snprintf(buf, sizeof buf, "%s.%s[%ld]%s%s", d->short_name, f ? f->name : "unknown_fields",
                 index, inner ? " > " : "", inner ? inner : "");
    else
        snprintf(buf, sizeof buf, "%s.%s%s%s", d->short_name, f ? f->name : "unknown_fields",
                 inner ? " > " : "", inner ? inner : "");
    memcpy(where, buf, sizeof where);
    return where;
}

static size_t elem_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_ENUM:
        return 4;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
        return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(ProtobufCMessage *);
    }
    return 0;
}

/* Compares one value of field f at a and b; returns NULL or the inner difference ("" for the
 * value itself). */
static const char *value_diff(const ProtobufCFieldDescriptor *f, const void *a, const void *b)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
        const char *sa = *(char *const *)a, *sb = *(char *const *)b;
        return strcmp(sa ? sa : "", sb ? sb : "") ? "" : NULL;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *ba = a, *bb = b;
        return ba->len != bb->len || (ba->len && memcmp(ba->data, bb->data, ba->len)) ? "" : NULL;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *ma = *(ProtobufCMessage *const *)a;
        const ProtobufCMessage *mb = *(ProtobufCMessage *const *)b;
        if (!ma || !mb)
            return ma == mb ? NULL : "";
        return pb_diff(ma, mb);
    }
    default:
        return memcmp(a, b, elem_size(f->type)) ? "" : NULL;
    }
}

const char *pb_diff(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
    const ProtobufCMessageDescriptor *d = a->descriptor;
    if (a->descriptor != b->descriptor) {
        snprintf(where, sizeof where, "descriptor");
        return where;
    }
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const char *pa = (const char *)a + f->offset, *pb = (const char *)b + f->offset;
        const char *inner;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t ca = *(const uint32_t *)((const char *)a + f->quantifier_offset);
            uint32_t cb = *(const uint32_t *)((const char *)b + f->quantifier_offset);
            if (ca != cb)
                return differ(d, f, -1, "oneof case");
            if (ca != f->id)
                continue;
        }
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t na = *(const size_t *)((const char *)a + f->quantifier_offset);
            size_t nb = *(const size_t *)((const char *)b + f->quantifier_offset);
            if (na != nb)
                return differ(d, f, -1, "count");
            const char *arr_a = *(char *const *)pa, *arr_b = *(char *const *)pb;
            size_t sz = elem_size(f->type);
            for (size_t k = 0; k < na; k++)
                if ((inner = value_diff(f, arr_a + k * sz, arr_b + k * sz)))
                    return differ(d, f, (long)k, *inner ? inner : NULL);
        } else {
            if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
                !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                *(const protobuf_c_boolean *)((const char *)a + f->quantifier_offset) !=
                    *(const protobuf_c_boolean *)((const char *)b + f->quantifier_offset))
                return differ(d, f, -1, "has");
            if ((inner = value_diff(f, pa, pb)))
                return differ(d, f, -1, *inner ? inner : NULL);
        }
    }
    if (a->n_unknown_fields != b->n_unknown_fields)
        return differ(d, NULL, -1, "count");
    for (unsigned i = 0; i < a->n_unknown_fields; i++) {
        const ProtobufCMessageUnknownField *ua = &a->unknown_fields[i], *ub = &b->unknown_fields[i];
        if (ua->tag != ub->tag || ua->wire_type != ub->wire_type || ua->len != ub->len ||
            memcmp(ua->data, ub->data, ua->len))
            return differ(d, NULL, (long)i, NULL);
    }
    return NULL;
}
