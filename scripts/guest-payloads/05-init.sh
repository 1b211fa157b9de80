# SPDX-License-Identifier: MIT
# Payload (scripts/guest-initramfs.sh): /init itself.  A line of 5,002
# characters must reach the log whole (tests/oldkernel/long_line.c): the
# command's pass pattern matches only the unbroken line, so an /init that
# splits long lines (it read 1,023 characters at a time once, and
# make bench-guest's JSON line came out cut in two) fails here.
${CC_STATIC:-gcc} -std=c11 -O2 -Wall -Wextra -Werror -static -o "$GB/long_line" \
	tests/oldkernel/long_line.c || fail "building tests/oldkernel/long_line.c failed"
guest_file "$GB/long_line" /long_line
guest_cmd init_long_line '^L(0123456789){500}E$' '' /long_line
