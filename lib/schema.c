/* SPDX-License-Identifier: MIT */
/*
 * The request schema (lib/schema.def) as arrays, and lookups over them.
 */
#include <string.h>
#include <sys/socket.h>

#include "iouring_restrict/filter.h"
#include "iouring_restrict/probe.h"
#include "schema.h"
#include "uapi.h"

static const struct iour__schema_payload payloads[] = {
#define IOUR_SCHEMA_PAYLOAD(op, group, pdu, level) { (op), IOUR__SG_##group, (pdu), (level) },
#include "schema.def"
};

/* clang-format off */
static const struct iour__schema_field fields[] = {
#define IOUR_SCHEMA_FIELD(name, id, group, kind, prefix, off, bytes, order, mask, valid, label) \
	{ (name), (prefix), (mask), (valid), (label), (id), IOUR__SG_##group,                     \
	  IOUR__SK_##kind, (off), (bytes), IOUR__SO_##order },
#include "schema.def"
};
/* clang-format on */

const struct iour__schema_payload *iour__schema_payload_at(size_t i)
{
	return i < IOUR_ARRAY_SIZE(payloads) ? &payloads[i] : NULL;
}

const struct iour__schema_field *iour__schema_field_at(size_t i)
{
	return i < IOUR_ARRAY_SIZE(fields) ? &fields[i] : NULL;
}

const struct iour__schema_payload *iour__schema_payload_of(uint32_t opcode)
{
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(payloads); i++)
		if (payloads[i].opcode == opcode)
			return &payloads[i];
	return NULL;
}

const struct iour__schema_field *iour__schema_field_of(uint32_t id)
{
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(fields); i++)
		if (fields[i].id == id)
			return &fields[i];
	return NULL;
}

const struct iour__schema_field *iour__schema_field_named(const char *name)
{
	size_t i;

	for (i = 0; name && i < IOUR_ARRAY_SIZE(fields); i++)
		if (!strcmp(fields[i].name, name))
			return &fields[i];
	return NULL;
}

uint32_t iour__schema_max_pdu(void)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(payloads); i++)
		if (payloads[i].pdu_size > m)
			m = payloads[i].pdu_size;
	return m;
}
