# A real MPI (Open MPI, Debian's) over real verbs (rxe0 in the Soft-RoCE guest): the stale-registration
# hazard, what the shim saves an MPI's registration cache, and an MPI using the shim's keys directly.
# Included by the Makefile; programs land in $(BUILD)/mpi.
#   make mpi            build them (part of `all`: they keep compiling)
#   make mpi-vm-test    boot the guest once and run tests/mpi/run.sh there (asserts every outcome);
#                       then, for MPI_PART=all, two guests: the stacks' hazard set between two kernels;
#                       TESTS_FILTER=substring: only the steps named so; MPI_PART=PART: one part of run.sh
#   make mpi-two-guests-test   the seed with the MPI's own hooks (pml cm/ofi), one rank in each of two guests
MPI_DIR   := $(BUILD)/mpi
MPICC     ?= mpicc
MPI_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Werror -Itests/mpi -Iinclude -Isrc
MPI_PROGS := $(MPI_DIR)/pinarena-mpi-seed $(MPI_DIR)/pinarena-mpi-churn $(MPI_DIR)/pinarena-mpi-keys
MPI_REGCOUNT := $(MPI_DIR)/libpinarena-regcount.so
MPI_PART  ?= all

.PHONY: mpi mpi-vm-test mpi-two-guests-test
all: mpi
mpi: $(MPI_PROGS) $(MPI_REGCOUNT)

$(MPI_DIR)/pinarena-mpi-%: tests/mpi/%.c tests/mpi/*.h tests/mpi/mpi.mk
	@mkdir -p $(dir $@)
	$(MPICC) $(MPI_CFLAGS) -o $@ $< -ldl

$(MPI_DIR)/pinarena-mpi-keys: tests/mpi/keys.c tests/mpi/peer_qp.c tests/mpi/*.h src/rc_connect.h include/pinarena.h tests/mpi/mpi.mk
	@mkdir -p $(dir $@)
	$(MPICC) $(MPI_CFLAGS) -o $@ tests/mpi/keys.c tests/mpi/peer_qp.c -libverbs -ldl

$(MPI_REGCOUNT): tests/mpi/regcount.c tests/mpi/regcount.h tests/mpi/mpi.mk
	@mkdir -p $(dir $@)
	$(CC) $(MPI_CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $< -ldl

# One guest boot for the MPI scenarios of run.sh's part $(MPI_PART) (tests/mpi/README.md), results in
# $(MPI_DIR)/results; then (MPI_PART all or two-kernels) two guests, one rank each (../testbed/two-guests):
# each stack fed by the shim and under the hooks to compare with, hazard set and all, between two kernels.
# TESTS_FILTER=substring runs only the steps whose name contains it (run.sh --list PART names them); a
# guest whose steps all miss the filter is not booted.
MPI_ONE_PART = $(if $(filter two-kernels,$(MPI_PART)),,$(MPI_PART))
MPI_TWO_PART = $(if $(filter all two-kernels,$(MPI_PART)),two-kernels,)
MPI_SELECTS = { [ -n "$(1)" ] && { [ -z "$(TESTS_FILTER)" ] || tests/mpi/run.sh --list $(1) | grep -qF -- "$(TESTS_FILTER)"; }; }
mpi-vm-test: mpi $(SHIM)
	@$(call MPI_SELECTS,$(MPI_ONE_PART)) || $(call MPI_SELECTS,$(MPI_TWO_PART)) || \
	  { echo "mpi-vm-test: no MPI step of part $(MPI_PART) matches TESTS_FILTER=$(TESTS_FILTER): no guest booted"; }
	@if $(call MPI_SELECTS,$(MPI_ONE_PART)); then \
	  ../testbed/softroce --mttcg --rw $(abspath $(MPI_DIR)/results) --env PINARENA_MPI_ITERATIONS=10 \
	    --env TESTS_FILTER=$(TESTS_FILTER) -- \
	    tests/mpi/run.sh $(abspath $(MPI_DIR)) $(abspath $(SHIM)) $(abspath $(MPI_DIR)/results) $(MPI_ONE_PART); \
	fi
	@if $(call MPI_SELECTS,$(MPI_TWO_PART)); then \
	  ../testbed/two-guests --rw $(abspath $(MPI_DIR)/results-two-kernels) --env TESTS_FILTER=$(TESTS_FILTER) -- \
	    tests/mpi/run.sh $(abspath $(MPI_DIR)) $(abspath $(SHIM)) $(abspath $(MPI_DIR)/results-two-kernels) \
	    $(MPI_TWO_PART); \
	fi

# The seed over pml cm/ofi with one rank in each of two guests on one link (../testbed/two-guests): RDMA
# between two kernels, glibc and the shim with the MPI's hooks (about 60 s for both guests).
mpi-two-guests-test: mpi $(SHIM)
	../testbed/two-guests --rw $(abspath $(MPI_DIR)/results-two-guests) -- \
	  tests/mpi/run.sh $(abspath $(MPI_DIR)) $(abspath $(SHIM)) $(abspath $(MPI_DIR)/results-two-guests) seed-ofi
