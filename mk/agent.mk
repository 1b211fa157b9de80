# mk/agent.mk: `iour-restrict agent`, the OCI seccomp agent, on the running
# kernel with Debian's runc and crun (tests/agent/run.sh): its socket and
# command line, runtimes that send garbage or nothing, and containers built
# here from tests/agent/agent_prog.c (linked statically: the rootfs is that
# one file; nothing is downloaded) whose rings the agent restricts, with
# each way of choosing a policy, the JSON log, status and reload
# (doc/agent.md).  Needs
# root and runc; skips, saying why, without them (and the crun part where
# crun cannot run a container here; on a hybrid cgroup hierarchy crun runs
# in a mount namespace without the cgroup2 mount).  Included by the
# top-level Makefile.

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

# The agent behind the container engines (tests/engines/run.sh): containerd
# (ctr), Docker 20.10 through `iour-restrict runc-shim`, podman with runc
# and crun, each daemon started and stopped by the script in a temporary
# directory, with an image imported from a tar built here.  Engines that
# are not installed are skipped, saying so: scripts/deps.sh does not
# install them (containerd, docker.io and podman take about 60 s to
# install on a fresh Debian 12 and about 30 s to test, more than make
# check's budget allows for them); `scripts/deps.sh containerd docker.io
# podman` does.
.PHONY: check-engines
check-engines: $(AGENT_PROG) tools
	$(Q)$(NEED) python3:python3
	$(Q)tests/engines/run.sh $(O)
