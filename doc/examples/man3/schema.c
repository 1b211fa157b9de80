/* The request schema: the payloads argument filters see, their fields,
 * and the named constants a policy may write. */
#include <inttypes.h>
#include <stdio.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	IOUR_OPTS(iour_payload_info, pi);
	IOUR_OPTS(iour_field_info, fi);
	IOUR_OPTS(iour_const_info, ci);
	int i, idx;

	for (i = 0; i < iour_payload_count(); i++)
		if (iour_payload_get((size_t)i, &pi) == 0)
			printf("payload %s: %s, %u bytes\n", pi.group,
			       iour_opcode_name(pi.opcode),
			       pi.pdu_size);
	printf("OPENAT2 uses payload %d\n",
	       iour_payload_find(IOUR_OP_OPENAT2));

	for (i = 0; i < iour_field_count(); i++)
		if (iour_field_get((size_t)i, &fi) == 0)
			printf("field %s (id %u)\n", fi.name, fi.id);
	idx = iour_field_find("connect.port");
	if (idx < 0 || iour_field_get((size_t)idx, &fi))
		return 1;
	printf("connect.port: index %d, applies to CONNECT %d, to SOCKET %d\n",
	       iour_field_index(fi.id),
	       iour_field_applies(fi.id, IOUR_OP_CONNECT),
	       iour_field_applies(fi.id, IOUR_OP_SOCKET));

	idx = iour_const_find("O_CREAT");
	if (idx >= 0 && iour_const_get((size_t)idx, &ci) == 0)
		printf("%s = 0x%" PRIx64 " (%s), one of %d constants\n",
		       ci.name, ci.value, ci.ns, iour_const_count());
	return 0;
}
