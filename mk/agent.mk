# mk/agent.mk: `iour-restrict agent`, the OCI seccomp agent, on the running
# kernel with Debian's runc and crun (tests/agent/run.sh): its socket and
# command line, runtimes that send garbage or nothing, and containers built
# here from tests/agent/agent_prog.c (linked statically: the rootfs is that
# one file; nothing is downloaded) whose rings the agent restricts, with
# each way of choosing a policy, the JSON log, status and reload
# (doc/agent.md).  Needs
# root and runc; skips, saying why, without them (and the crun part where
# crun cannot run a container here).  Included by the top-level Makefile.

AGENT_PROG := $(O)/tests/agent_prog

$(AGENT_PROG): tests/agent/agent_prog.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -static -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $<

# A runtime's connection without a container, whose io_uring_setup params
# can lie in a FUSE page that never arrives (tests/common/fuse_stall.c).
AGENT_STALL := $(O)/tests/agent_stall

$(AGENT_STALL): tests/agent/agent_stall.c tests/common/fuse_stall.c tests/common/fuse_stall.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -static -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Itests/common -o $@ \
		tests/agent/agent_stall.c tests/common/fuse_stall.c

.PHONY: check-agent
check-agent: $(AGENT_PROG) $(AGENT_STALL) tools
	$(Q)$(NEED) python3:python3
	$(Q)tests/agent/run.sh $(O)
