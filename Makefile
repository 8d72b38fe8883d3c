# Tempest build.
#
# This header is `make help`: the help target prints its "Targets:" and
# "Variables:" lines and the entries under them (the lines that begin
# with "#   "), so keep each entry to one line.  More in docs/building.md.
#
# Targets:
#   make              the kernel ELF, the boot ISO and compile_commands.json
#   make run          boot a machine preset in QEMU to a shell; type poweroff to leave
#   make boot         boot the kernel alone, no root file system (OPTS=ktest=all ...)
#   make bochs        boot a preset in Bochs
#   make debug        QEMU halted at the reset vector with its gdb stub, and gdb
#   make check        every test, in under 30 minutes; ends with "N passed, N failed"
#   make check-long   the long variants only (the user tests against glibc on Debian)
#   make tools        the host tools (mkfs, fsck, s5cat ...) into build/tools/
#   make userland     init, lockstat and the user tests into build/userland/
#   make bench        the benchmarks into build/bench/; with SWEEP= or POINTS= run a sweep
#   make linux-run    Debian's Linux kernel, the peer, runs RUN='...' on the same preset
#   make fuzz         random system calls at scale (PRESETS=, SEEDS=, CALLS=, FROM=)
#   make crash        crash consistency: QEMU killed mid-workload, fsck (STOPS=, FS=)
#   make flip         byte-flipped images mounted and walked (IMAGES=, FS=)
#   make soak         a multi-user load for DURATION= seconds, then leak checks (USERS=)
#   make bootbench    boot phases (firmware+loader, kernel, init, command) of Tempest and Linux
#   make clean        remove build/ (or build/up/ with UP=1, build/kcsan/ with KCSAN=1)
#   make help         this list
#
# Variables:
#   MACHINE=NAME      the machine preset (default, svr4mp, hector ...; machines.conf)
#   OPTS='k=v ...'    kernel options (lock=mcs, sched=..., lockstat=on; docs/options.md)
#   ACCEL=tcg|kvm     QEMU's accelerator (default tcg)
#   TIMEOUT=S         seconds before a boot is stopped (0: none)
#   RUN='cmd'         make run / linux-run: run cmd under /bin/sh, print its output, power off
#   ADD=DIR           make run: a host directory under /add in the guest
#   DISK=IMAGE        make run / boot: a raw image as the next virtio disk (repeatable)
#   SIZE=16M          make run: free space in the root image beyond its contents
#   ROOT=PATH         make run: keep the root image at PATH between runs
#   FS=s5|ufs         make run: the root's file system; crash, flip: the one tested
#   USERLAND=debian   make run / linux-run: Debian's own programs on a UFS root
#   GAEDE=1           make run USERLAND=debian: GAEDE's users and home disks, pmake's sources
#   NET=user|peer     make run: a virtio-net eth0 on QEMU's restricted user network,
#                     10.0.2.15/24, gateway 10.0.2.2; or (peer) 10.0.3.1/24 on a segment
#                     with the Linux peer, 10.0.3.2, booted beside it (docs/running.md)
#   FWD='H:G ...'     make run NET=user: TCP forwards from host 127.0.0.1:H to guest port G
#   UP=1              the uniprocessor build into build/up/ (make UP=1 boot|run too)
#   KCSAN=1           the data-race detector's build into build/kcsan/ (make KCSAN=1 boot|run too)
#   SWEEP=FILE        make bench: run the sweep in FILE (bench/sweeps/) and report
#   POINTS='...'      make bench: an ad hoc sweep on one line, lines separated by ';'
#   OUT=DIR           make bench: the results directory (default build/sweeps/NAME)
#   JOBS=N            make bench: emulators at once
#   CLUSTER=ADDR      make bench: run the boots through Dask (tcp://host:8786 or local)
#   CHECK_ARGS='...'  make check: options for tests/check.py (-k NAME, -j N, --list)
#   LINUX_APPEND=...  make linux-run: more Linux kernel command line
#   REPEATS=N         make bootbench: counted boots of each kernel (default 3)
#   V=1               show the full build commands
#
# Kernel sources are found by wildcard, so a new .c or .asm file under
# boot/, kern/ or drivers/ is built without editing this file.

BUILD    := build
# Where the host tools, user programs and benchmarks go: build/ in both
# builds, so that make UP=1 run uses the same root image contents.
HOSTBUILD := build
CC       := gcc
NASM     := nasm
LD       := ld
PYTHON   := python3

MACHINE  ?= default
OPTS     ?=
ACCEL    ?= tcg
TIMEOUT  ?= 0

KCFLAGS := -std=gnu11 -O2 -g -ffreestanding -fno-stack-protector -fno-pic \
           -fno-omit-frame-pointer -fno-optimize-sibling-calls \
           -mno-red-zone -mcmodel=kernel -mgeneral-regs-only -mno-sse \
           -mno-mmx -mno-80387 -fno-strict-aliasing -fno-common \
           -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration \
           -I.
# make UP=1: a uniprocessor kernel from the same sources, for SVR4 MP's
# comparison of the MP kernel on one CPU against it.  TEMPEST_UP turns a
# spin lock's acquire and release into interrupt masking (no lock word,
# no atomics), a cross-CPU call or TLB shootdown into a local call, and
# the application processors' start-up off (kern/lock/spinlock.c,
# kern/arch/smp.c).  Its objects, kernel.elf and ISO go to build/up/, and
# make UP=1 boot|run|debug boots that kernel (TEMPEST_KERNEL).
ifeq ($(UP),1)
BUILD    := build/up
KCFLAGS  += -DTEMPEST_UP
export TEMPEST_KERNEL := $(abspath $(BUILD))/kernel.elf
endif

# make KCSAN=1: the data-race detector (kern/kcsan/kcsan.c, docs/kcsan.md).
# Every file but those KCSAN_SKIP names is compiled with GCC's thread
# sanitizer, whose calls kern/kcsan/ answers; the skipped ones are the
# detector itself, the boot and arch code (what runs before the per-CPU
# data, the console and the panic path), the spin lock primitives and what
# a report prints with.  Its objects, kernel.elf and ISO go to build/kcsan/,
# and make KCSAN=1 boot|run boots that kernel.  Without KCSAN=1 kern/kcsan/
# is not compiled at all and TSAN_FLAGS is empty: the plain kernel is the
# same as before, byte for byte.
TSAN_FLAGS :=
KCSAN_SKIP := boot/% kern/arch/% kern/main.c kern/kcsan/% kern/lock/spinlock.c \
              kern/lock/pvspin.c kern/lib/string.c kern/lib/vsnprintf.c kern/lib/ksyms.c \
              drivers/platform/serial.c drivers/platform/vga.c
ifeq ($(KCSAN),1)
ifeq ($(UP),1)
$(error KCSAN=1 and UP=1 together are not a build; the detector needs two CPUs)
endif
BUILD    := build/kcsan
KCFLAGS  += -DTEMPEST_KCSAN
TSAN_FLAGS := -fsanitize=thread --param tsan-distinguish-volatile=1 \
              --param tsan-instrument-func-entry-exit=0 -Wno-tsan
export TEMPEST_KERNEL := $(abspath $(BUILD))/kernel.elf
# The table of the access hooks' call sites (tools/tsan_sites.py), which
# kcsan=off turns into no-ops: empty in the first link, filled in the second.
SITES0 := $(BUILD)/tsan_sites0.o
SITES  := $(BUILD)/tsan_sites.o
endif

KLDFLAGS := -nostdlib -z max-page-size=0x1000 -z noexecstack --no-warn-rwx-segments -T boot/linker.ld

KDIRS   := boot kern drivers
CSRCS   := $(filter-out $(if $(filter 1,$(KCSAN)),,kern/kcsan/%),$(shell find $(KDIRS) -name '*.c' | sort))
ASRCS   := $(shell find $(KDIRS) -name '*.asm' | sort)
KOBJS   := $(CSRCS:%.c=$(BUILD)/%.o) $(ASRCS:%.asm=$(BUILD)/%.asm.o)
DEPS_OK := $(HOSTBUILD)/.deps-ok

.PHONY: all deps run boot bochs debug check check-long tools clean bench linux-run userland fuzz crash flip soak upkernel help bootbench
all: $(BUILD)/kernel.elf $(BUILD)/tempest.iso $(if $(filter 1,$(UP) $(KCSAN)),,compile_commands.json)

deps: $(DEPS_OK)
$(DEPS_OK): tools/install-deps.sh
	@mkdir -p $(HOSTBUILD)
	sh tools/install-deps.sh
	@touch $@

# V=1 shows the full commands.
Q := $(if $(V),,@)

$(BUILD)/%.o: %.c $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(KCFLAGS) $(if $(filter $(KCSAN_SKIP),$<),,$(TSAN_FLAGS)) -MMD -MP -c $< -o $@

$(BUILD)/%.asm.o: %.asm $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NASM    $<")
	$(Q)$(NASM) -f elf64 -g -F dwarf -MD $(@:.o=.d) $< -o $@

# User programs the user-mode ktests run (userland/ktprogs/), built static
# against musl and embedded in the kernel by kern/tests/ktprogs.asm.
KTPROGS := $(HOSTBUILD)/ktprogs/ktprog
$(HOSTBUILD)/ktprogs/%: userland/ktprogs/%.c $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MUSL    $<")
	$(Q)musl-gcc -static -O2 -Wall -o $@ $<
$(BUILD)/kern/tests/ktprogs.asm.o: $(KTPROGS)

# The object list as a file, rewritten only when it changes, so that adding
# or removing a source file relinks the kernel.
$(BUILD)/objs.list: FORCE
	@mkdir -p $(BUILD)
	@echo $(KOBJS) | cmp -s - $@ || echo $(KOBJS) > $@
.PHONY: FORCE

# Two-pass link: the first pass has an empty symbol table; its symbols are
# turned into the real table for the second.  .ksyms is placed last, so the
# addresses it records are those of the final image.
$(BUILD)/ksyms0.c: tools/mksyms.py
	@mkdir -p $(BUILD)
	$(PYTHON) tools/mksyms.py > $@
$(BUILD)/ksyms0.o: $(BUILD)/ksyms0.c
	$(Q)$(CC) $(KCFLAGS) -c $< -o $@
$(BUILD)/kernel.pass1.elf: $(KOBJS) $(BUILD)/ksyms0.o $(SITES0) boot/linker.ld $(BUILD)/objs.list
	$(Q)$(LD) $(KLDFLAGS) -o $@ $(KOBJS) $(BUILD)/ksyms0.o $(SITES0)
$(BUILD)/ksyms.c: $(BUILD)/kernel.pass1.elf tools/mksyms.py
	$(Q)nm -n $< > $(BUILD)/kernel.nm
	$(Q)nm -n -S --defined-only $< > $(BUILD)/kernel.sized.nm
	$(Q)$(PYTHON) tools/mksyms.py $(BUILD)/kernel.nm $(BUILD)/kernel.sized.nm > $@
$(BUILD)/ksyms.o: $(BUILD)/ksyms.c
	$(Q)$(CC) $(KCFLAGS) -c $< -o $@
$(BUILD)/tsan_sites0.c: tools/tsan_sites.py
	@mkdir -p $(BUILD)
	$(Q)$(PYTHON) tools/tsan_sites.py > $@
$(BUILD)/tsan_sites.c: $(BUILD)/kernel.pass1.elf tools/tsan_sites.py
	$(Q)objdump -d --no-show-raw-insn $< | $(PYTHON) tools/tsan_sites.py - > $@
$(BUILD)/tsan_sites0.o: $(BUILD)/tsan_sites0.c
	$(Q)$(CC) $(KCFLAGS) -c $< -o $@
$(BUILD)/tsan_sites.o: $(BUILD)/tsan_sites.c
	$(Q)$(CC) $(KCFLAGS) -c $< -o $@
$(BUILD)/kernel.elf: $(KOBJS) $(BUILD)/ksyms.o $(SITES) boot/linker.ld $(BUILD)/objs.list
	@echo "  LD      $@"
	$(Q)$(LD) $(KLDFLAGS) -o $@ $(KOBJS) $(BUILD)/ksyms.o $(SITES)
	$(Q)nm -n $@ | awk '$$2 ~ /[tT]/' > $(BUILD)/kernel.text2
	$(Q)awk '$$2 ~ /[tT]/' $(BUILD)/kernel.nm | cmp -s - $(BUILD)/kernel.text2 || \
	  { echo "text symbols moved between link passes"; exit 1; }

# The default ISO boots with no options; harnesses make their own per-run
# ISOs with tools/mkiso.sh so every run can carry its own command line.
$(BUILD)/tempest.iso: $(BUILD)/kernel.elf tools/mkiso.sh
	@echo "  ISO     $@"
	$(Q)sh tools/mkiso.sh $< $@ ""

compile_commands.json: Makefile $(CSRCS)
	$(Q)$(PYTHON) tools/compile_commands.py "$(CC) $(KCFLAGS)" $(BUILD) $(CSRCS) > $@

# make run: a root image with busybox, init, the tests and benchmarks
# (tools/userrun.py); RUN='cmd' runs cmd and exits with its status,
# ADD=DIR puts a host directory under /add, SIZE= the free space in the
# image (default 16M), ROOT=path keeps the image there between runs, FS=ufs
# makes the root a UFS image (mkfs.ufs) instead of S5; the
# command's output alone goes to standard output (hence the silent recipe).
# USERLAND=debian: the root is Debian's packages instead (gcc, binutils,
# make, bash, coreutils ...; tools/debian_root.py, the list in
# tools/debian/packages), on a UFS image.
# make boot: the kernel alone, no root file system (OPTS= for ktest=,
# kbench= ...).
run: export TEMPEST_RUN = $(value RUN)
run: all tools userland bench
	@$(PYTHON) tools/userrun.py --machine $(MACHINE) --accel $(ACCEL) --opts "$(OPTS)" --timeout $(TIMEOUT) $(if $(ADD),--add $(ADD)) $(foreach d,$(DISK),--disk $(d)) $(if $(SIZE),--free $(SIZE)) $(if $(ROOT),--root $(ROOT)) $(if $(FS),--fs $(FS)) $(if $(USERLAND),--userland $(USERLAND)) $(if $(filter 1,$(GAEDE)),--gaede) $(if $(NET),--net $(NET)) $(foreach f,$(FWD),--hostfwd $(f))

boot: all
	$(PYTHON) tests/tempest.py run --machine $(MACHINE) --accel $(ACCEL) --opts "$(OPTS)" --timeout $(TIMEOUT) $(foreach d,$(DISK),--disk $(d))

userland: $(DEPS_OK)
	@$(MAKE) -s --no-print-directory -C userland BUILD=$(abspath $(HOSTBUILD))/userland

bochs: all
	$(PYTHON) tests/tempest.py bochs --machine $(MACHINE) --opts "$(OPTS)" --timeout $(TIMEOUT)

debug: all
	$(PYTHON) tests/tempest.py debug --machine $(MACHINE) --accel $(ACCEL) --opts "$(OPTS)" $(foreach d,$(DISK),--disk $(d))

tools: $(DEPS_OK)
	@$(MAKE) -s --no-print-directory -C tools BUILD=$(abspath $(HOSTBUILD))/tools

# CHECK_ARGS= passes options to tests/check.py (e.g. --record-times, -k NAME).
# Everything the jobs use is built first, so that no job depends on another
# having built it (they start longest first, not in a fixed order) and no
# two jobs run the same make at once.
check: all tools userland
	@$(MAKE) -s --no-print-directory -C bench BUILD=$(abspath $(HOSTBUILD))/bench
	$(PYTHON) tests/check.py $(CHECK_ARGS)

# The long variants only (tests/check.py --long): the whole user-test
# suite built against glibc on the Debian root (debian/ufs/long), and the
# data-race detector's campaign (kcsan/*/long, tests/kcsan_check.py).
check-long: all tools userland
	$(PYTHON) tests/check.py --long -k /long -j 1

# The Linux peer: Debian's kernel on the same machine, running RUN
# (tools/linux_peer.py; bench/README.md).  RUN reaches the script through
# the environment, so any shell quoting in it survives.
LINUX_APPEND ?=

# make bench SWEEP=bench/sweeps/NAME (or POINTS='workloads fork; machines
# spur; cpus 1-5'): after building the benchmarks, the harness
# (tools/sweep.py, docs/benchmarks.md "Benchmark sweeps") runs every point not yet
# done, then writes the records, tables, plots and report under
# build/sweeps/NAME/ (OUT= elsewhere) and prints where the report is.
# CLUSTER=tcp://host:8786 (or local) runs the boots through Dask
# distributed; JOBS= emulators at once.  It runs under /usr/bin/python3,
# which Debian's matplotlib and Dask serve.
SWEEPING := $(if $(SWEEP)$(POINTS),yes)
export HARNESS_POINTS = $(value POINTS)
bench: $(DEPS_OK) $(if $(SWEEPING),all tools userland upkernel)
	@$(MAKE) -s --no-print-directory -C bench BUILD=$(abspath $(HOSTBUILD))/bench
	$(if $(SWEEPING),/usr/bin/python3 tools/sweep.py run $(if $(SWEEP),$(SWEEP),--points "$$HARNESS_POINTS") $(if $(CLUSTER),--cluster $(CLUSTER)) $(if $(JOBS),-j $(JOBS)) $(if $(OUT),--out $(OUT)))
# The uniprocessor kernel a sweep's kernel tempest-up boots.
upkernel: $(DEPS_OK)
	@$(MAKE) -s --no-print-directory UP=1 build/up/kernel.elf
# USERLAND=debian: chrooted in the Debian root, made an ext4 image for it.
PEER_ROOT := $(if $(filter debian,$(USERLAND)),$(HOSTBUILD)/debian.ext4)
linux-run: export LINUX_RUN = $(value RUN)
linux-run: bench
	$(if $(PEER_ROOT),$(PYTHON) tools/debian_root.py image $(PEER_ROOT) --format ext4 $(if $(ADD),--add $(ADD)))
	$(PYTHON) tools/linux_peer.py run --machine $(MACHINE) --accel $(ACCEL) --timeout $(TIMEOUT) --append "$(LINUX_APPEND)" $(if $(PEER_ROOT),--root $(PEER_ROOT)) $(foreach d,$(DISK),--disk $(d)) --run "$$LINUX_RUN"

# make fuzz: the random-syscall campaign inside Tempest (tools/fuzz.py):
# one boot per preset and seed, CALLS calls by each of one fuzzing child
# per CPU; SEED=s CALLS=n FROM=k replays a report's shortened sequence.
FUZZ_PRESETS ?= default,svr4mp
FUZZ_SEEDS   ?= 1,2
fuzz: all tools userland
	nice -n 5 $(PYTHON) tools/fuzz.py --presets "$(or $(PRESETS),$(FUZZ_PRESETS))" --seeds "$(or $(SEED),$(SEEDS),$(FUZZ_SEEDS))" --calls $(or $(CALLS),100000) $(if $(FROM),--from $(FROM)) --opts "$(OPTS)" $(if $(filter-out 0,$(TIMEOUT)),--timeout $(TIMEOUT))

# make crash: QEMU killed in the middle of a file workload, fsck -y, the
# fsync'ed files checked (tests/crash_check.py); STOPS= stop points, FS=
# s5 (the default) or ufs.
# make flip: IMAGES= S5 (or FS=ufs: UFS) images with bytes flipped in their metadata,
# mounted and walked inside Tempest (tests/flip_check.py).
# make soak: DURATION= seconds of a multi-user load on svr4mp, then no
# leak, memory back, no lock-order reversal (tools/soak.py).
crash: all tools userland
	nice -n 5 $(PYTHON) tests/crash_check.py --fs $(or $(FS),s5) --stops $(or $(STOPS),12) $(if $(SEED),--seed $(SEED))
flip: all tools userland
	nice -n 5 $(PYTHON) tests/flip_check.py --fs $(or $(FS),s5) --images $(or $(IMAGES),1000) $(if $(SEED),--seed $(SEED))
soak: all tools userland
	nice -n 5 $(PYTHON) tools/soak.py --duration $(or $(DURATION),600) $(if $(USERS),--users $(USERS)) --opts "$(OPTS)"

# make bootbench: how long a boot takes, phase by phase, on Tempest and
# on the Linux peer (tools/boottime.py).
bootbench: all tools userland bench
	$(PYTHON) tools/boottime.py --machine $(MACHINE) --accel $(ACCEL) --repeats $(or $(REPEATS),3)

clean:
	rm -rf $(BUILD)

# The header of this file, its targets and variables, one line each.
help:
	@awk '/^[^#]/ { exit } /^# [A-Z][a-z]*:$$/ { sub(/^# /, ""); print; next } /^#   / { sub(/^# /, ""); print }' $(firstword $(MAKEFILE_LIST))

-include $(KOBJS:.o=.d)
