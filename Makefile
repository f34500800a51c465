# prismlab - one non-recursive Makefile for the whole tree.
#
#   make            build bin/prismlab (needs the packages of `make deps`)
#   make deps       install the Debian packages the build and tests need
#   make check      deps, unit tests, the same tests under ASan+UBSan, summary
#   make asan       build the sanitizer variant into build/asan/
#   make bench      run the benchmarks; each prints `name: value unit`
#   make layering   check the one-way rule between the source folders
#   make crashtest  SIGKILL import, record, process, daemon, validate,
#                   run delete, import --manifest 50 times each
#   make hostiletest  a socket flood, a slowloris, a disk full while recording
#   make fuzz       libFuzzer (clang) on each parser for FUZZ_S seconds
#   make demo       deps, build, run the pipeline on the bundled fixtures
#   make install    PREFIX=/usr/local DESTDIR= : binary and the commands'
#                   programs (libexec/prismlab), schemas, man page, docs
#
# Sources are found by folder: every .c below a stage folder goes into the
# library build/libprismlab.a, tests/<stage>/**/*_test.c become one test
# program each, tests/<stage>/**/*_test.sh are script tests, and
# tests/bench/*_bench.c are benchmarks.  Adding a file never needs an edit
# here.  `make check` and `make demo` first call `make deps` and then
# re-enter this Makefile, because pkg-config can only answer once the
# packages are there.

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo 0.1)

# Debian packages: build libraries, test tools, and what the tests boot or
# drive (qemu and a kernel for the comedi VM test, chromium for the report,
# util-linux's prlimit for the daemon's full-disk test).
DEB_PACKAGES := build-essential pkg-config git libsqlite3-dev sqlite3 \
	libsndfile1-dev libfftw3-dev libcomedi-dev libcsv-dev libcmocka-dev \
	libgsl-dev zlib1g-dev nettle-dev libinih-dev libplplot-dev \
	plplot-driver-cairo fonts-dejavu-core qemu-system-x86 busybox-static \
	cpio chromium clang libmicrohttpd-dev \
	libopenmpi-dev openmpi-bin slurm-wlm munge util-linux

PKGS := sqlite3 sndfile fftw3 comedilib gsl zlib nettle inih plplot libmicrohttpd ompi-c
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lcsv -lpthread -lm
# prismlab-dimer-mpi (prismlab_dimer_mpi.c), dimer-report over MPI ranks,
# names Open MPI itself: prismlab hands itself over to it under mpirun
MPI_CFLAGS = $(shell pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS   = $(shell pkg-config --libs ompi-c 2>/dev/null)

WARN    := -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
CFLAGS  ?= -O2 -g
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined,float-cast-overflow
# float-cast-overflow (a double outside an integer type's range cast to it)
# is not part of -fsanitize=undefined.  (It found process/lattice.c, now
# lattice_settle.c, casting floor(x) to size_t before testing x >= 0.)
build/asan/obj/%.o: FCO := -fsanitize=float-cast-overflow
CPP_FLAGS = $(WARN) $(CFLAGS) -I. -Ibuild/gen $(PKG_CFLAGS)
ALL_CFLAGS = $(CPP_FLAGS) -MMD -MP

# A stage may have rooms (model/prism/, acquire/sim/): sources are found
# at any depth below the stage folders, tests likewise below tests/.
STAGES  := core db acquire process model web commands
LIB_SRC := $(sort $(shell find $(STAGES) -name '*.c'))
LIB_HDR := $(sort $(shell find $(STAGES) -name '*.h'))
SCHEMAS := $(sort $(wildcard schemas/[0-9][0-9][0-9]_*.sql))
# what the browser gets besides the pages, compiled in (web/embed.sh)
WEB_ASSETS := $(sort $(wildcard web/static/*.js web/static/*.css)) \
	web/vendor/uplot/uPlot.iife.min.js web/vendor/uplot/uPlot.min.css web/vendor/uplot/LICENSE
TEST_SRC  := $(sort $(shell find $(addprefix tests/,$(STAGES) cli) -name '*_test.c' 2>/dev/null))
TEST_SH   := $(sort $(shell find $(addprefix tests/,$(STAGES) cli) -name '*_test.sh' 2>/dev/null))
BENCH_SRC := $(sort $(wildcard tests/bench/*_bench.c))
TEST_UTIL := $(wildcard tests/util/*.c)
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/*_fuzz.c))
# One program a command: each `int pl_cmd_NAME(int argc, char **argv);` of
# commands.h is libexec/prismlab/prismlab-NAME (underscores as dashes),
# which bin/prismlab execs (docs/layout.md, "Start-up").
PROGRAMS  := $(subst _,-,$(shell sed -n 's/^int pl_cmd_\([a-z0-9_]*\)(int argc, char \*\*argv);$$/\1/p' commands.h))

.DEFAULT_GOAL := all

# Two build variants share the rules below: B is the output folder.
define variant
# The migrations' names, rewritten only when the set changes: a schema
# file removed (a placeholder a merge dropped) rebuilds the embedded list,
# which its timestamps alone would not.
$(1)/gen/schemas.list: FORCE
	@mkdir -p $$(@D)
	@echo '$(SCHEMAS)' > $$@.tmp; if cmp -s $$@.tmp $$@; then rm -f $$@.tmp; else mv -f $$@.tmp $$@; fi

$(1)/gen/schemas.c: $(SCHEMAS) schemas/embed.sh $(1)/gen/schemas.list
	@mkdir -p $$(@D)
	sh schemas/embed.sh $(SCHEMAS) > $$@.tmp && mv $$@.tmp $$@

$(1)/obj/%.o: %.c
	@mkdir -p $$(@D)
	$$(CC) $(2) $$(FCO) $$(ALL_CFLAGS) -c $$< -o $$@

# The same for the web page's files: a script added to web/static is
# embedded even when it is older than the generated file (a merge).
$(1)/gen/webassets.list: FORCE
	@mkdir -p $$(@D)
	@echo '$(WEB_ASSETS)' > $$@.tmp; if cmp -s $$@.tmp $$@; then rm -f $$@.tmp; else mv -f $$@.tmp $$@; fi

$(1)/gen/webassets.c: $(WEB_ASSETS) web/embed.sh $(1)/gen/webassets.list
	@mkdir -p $$(@D)
	sh web/embed.sh $(WEB_ASSETS) > $$@.tmp && mv $$@.tmp $$@

$(1)/obj/gen/webassets.o: $(1)/gen/webassets.c
	@mkdir -p $$(@D)
	$$(CC) $(2) $$(ALL_CFLAGS) -c $$< -o $$@

$(1)/obj/gen/schemas.o: $(1)/gen/schemas.c
	@mkdir -p $$(@D)
	$$(CC) $(2) $$(ALL_CFLAGS) -c $$< -o $$@

# The version (git describe) lives in one generated file, rewritten only
# when it changes: everything that prints it is current without a rebuild
# of anything else.
$(1)/gen/version.c: FORCE
	@mkdir -p $$(@D)
	@printf '#include "core/version.h"\nconst char *pl_version(void) { return "%s"; }\n' \
	  '$$(VERSION)' > $$@.tmp; \
	if cmp -s $$@.tmp $$@; then rm -f $$@.tmp; else mv -f $$@.tmp $$@; fi

$(1)/obj/gen/version.o: $(1)/gen/version.c
	@mkdir -p $$(@D)
	$$(CC) $(2) $$(ALL_CFLAGS) -c $$< -o $$@

$(1)/libprismlab.a: $(patsubst %.c,$(1)/obj/%.o,$(LIB_SRC)) $(1)/obj/gen/schemas.o \
		$(1)/obj/gen/version.o $(1)/obj/gen/webassets.o
	rm -f $$@ && ar rcs $$@ $$^

# bin/prismlab, the dispatcher, links no library but the C library (the
# link fails when it calls into one); it execs the commands' programs, each
# linked with only the shared libraries its command calls (--as-needed).
$(1)/bin/prismlab: $(1)/obj/prismlab.o $(1)/libprismlab.a | \
		$(patsubst %,$(1)/libexec/prismlab/prismlab-%,$(PROGRAMS))
	@mkdir -p $$(@D)
	$$(CC) $(2) $$^ -o $$@

$(1)/obj/command_main-%.o: command_main.c
	@mkdir -p $$(@D)
	$$(CC) $(2) $$(ALL_CFLAGS) -DPL_COMMAND=pl_cmd_$$(subst -,_,$$*) -c $$< -o $$@

$(1)/libexec/prismlab/prismlab-%: $(1)/obj/command_main-%.o $(1)/libprismlab.a
	@mkdir -p $$(@D)
	$$(CC) $(2) $$^ -o $$@ -Wl,--as-needed $$(PKG_LIBS)

$(1)/obj/prismlab_dimer_mpi.o: CPP_FLAGS += $(MPI_CFLAGS)

$(1)/libexec/prismlab/prismlab-dimer-mpi: $(1)/obj/prismlab_dimer_mpi.o $(1)/libprismlab.a
	@mkdir -p $$(@D)
	$$(CC) $(2) $$^ -o $$@ $$(PKG_LIBS) $$(MPI_LIBS)

$(1)/tests/%: $(1)/obj/tests/%.o $(patsubst %.c,$(1)/obj/%.o,$(TEST_UTIL)) $(1)/libprismlab.a
	@mkdir -p $$(@D)
	$$(CC) $(2) $$^ -o $$@ $$(PKG_LIBS) -lcmocka
endef

$(eval $(call variant,build,))
$(eval $(call variant,build/asan,$(SANFLAGS)))

TESTS      := $(patsubst tests/%.c,build/tests/%,$(TEST_SRC))
ASAN_TESTS := $(patsubst tests/%.c,build/asan/tests/%,$(TEST_SRC))
BENCHES    := $(patsubst tests/%.c,build/tests/%,$(BENCH_SRC))

.PHONY: all asan deps check check-run check-under-load demo demo-run bench install clean fixtures layering crashtest hostiletest fuzz FORCE
.SECONDARY:

all: bin/prismlab libexec/prismlab/prismlab-dimer-mpi

# copy then rename: a running prismlab (a daemon) keeps its old binary;
# the commands' programs go to libexec/prismlab/, where bin/prismlab looks
# for them (../libexec/prismlab from its own folder, as when installed)
bin/prismlab: build/bin/prismlab | $(patsubst %,libexec/prismlab/prismlab-%,$(PROGRAMS))
	@mkdir -p bin
	cp $< $@.tmp && mv -f $@.tmp $@

libexec/prismlab/prismlab-%: build/libexec/prismlab/prismlab-%
	@mkdir -p $(@D)
	cp $< $@.tmp && mv -f $@.tmp $@

asan: build/asan/bin/prismlab build/asan/libexec/prismlab/prismlab-dimer-mpi $(ASAN_TESTS)

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" != 0 ]; then \
	  echo "prismlab: missing Debian packages:$$missing -- run 'make deps' as root or 'apt-get install$$missing'" >&2; exit 1; \
	fi; \
	if [ -n "$$missing" ]; then echo "prismlab: installing$$missing"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$$missing >/dev/null; fi
	@$(MAKE) --no-print-directory tests/web/node_modules/.package-lock.json

# The browser tests' driver (playwright-core, pinned by the lockfile) from
# npm, run by the machine's Node.js (Debian's when there is none).
tests/web/node_modules/.package-lock.json: tests/web/package.json tests/web/package-lock.json
	@command -v npm >/dev/null || { [ "$$(id -u)" = 0 ] && \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; } || \
	  { echo "prismlab: node and npm are missing: apt-get install nodejs npm" >&2; exit 1; }
	cd tests/web && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

check:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory check-run

check-run: bin/prismlab libexec/prismlab/prismlab-dimer-mpi build/asan/bin/prismlab \
		build/asan/libexec/prismlab/prismlab-dimer-mpi $(TESTS) $(ASAN_TESTS)
	@sh tests/run-tests.sh "$(TESTS)" "$(ASAN_TESTS)" "$(TEST_SH)"

# The suite beside 4 CPU hogs until it passes 5 times in a row (RUNS=,
# HOGS= to change): what a busy CI machine does to it.
check-under-load:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory bin/prismlab libexec/prismlab/prismlab-dimer-mpi build/asan/bin/prismlab \
		build/asan/libexec/prismlab/prismlab-dimer-mpi $(TESTS) $(ASAN_TESTS)
	@sh tests/check-under-load.sh "$(TESTS)" "$(ASAN_TESTS)" "$(TEST_SH)"

BENCH_SH  := $(sort $(wildcard tests/bench/*_bench.sh))

bench: bin/prismlab $(BENCHES)
	@for b in $(BENCHES); do $$b || exit 1; done
	@for b in $(BENCH_SH); do sh $$b || exit 1; done

# The long crash test; make check runs the same script 10 times each.
crashtest: bin/prismlab
	@CRASH_N=50 PRISMLAB_BIN=bin/prismlab sh tests/acquire/crash_test.sh
	@CRASH_N=50 PRISMLAB_BIN=bin/prismlab sh tests/db/crash_store_test.sh

# Hostile clients and a full disk (issue 31): a reconnect flood on the
# daemon's socket and a slowloris on serve, each asserting that a normal
# client is served within 1 s, and a daemon recording onto a disk that
# fills (SQLite's page cap, PRISMLAB_TEST_MAX_PAGE_COUNT: no mount, no
# root).  make check runs the same three among the others.
hostiletest: bin/prismlab build/tests/acquire/daemon_flood_test build/tests/web/slowloris_test
	@PRISMLAB_SRC=$(CURDIR) PRISMLAB_BIN=$(CURDIR)/bin/prismlab build/tests/acquire/daemon_flood_test
	@PRISMLAB_SRC=$(CURDIR) PRISMLAB_BIN=$(CURDIR)/bin/prismlab build/tests/web/slowloris_test
	@PRISMLAB_BIN=bin/prismlab sh tests/acquire/daemon_fulldisk_test.sh

# Fuzzing: the library again, built by clang with libFuzzer's coverage and
# ASan+UBSan, one program per parser (tests/fuzz/*_fuzz.c).  Each runs
# FUZZ_S seconds, or FUZZ_RUNS inputs when that comes first (the 1 M per
# parser of issue 21: make fuzz FUZZ_S=3600 FUZZ_RUNS=1000000; FUZZ_ONLY=wav
# for one), from its seed corpus (tests/fuzz/corpus/NAME, read only;
# what it learns goes to build/fuzz/work/NAME); an input that crashes or
# hangs is written to tests/fuzz/crashers/ and make check replays it from
# then on (tests/acquire/fuzz_regress_test.c).
FUZZ_S     ?= 60
FUZZ_RUNS  ?= -1
FUZZ_ONLY  ?= $(patsubst tests/fuzz/%_fuzz.c,%,$(FUZZ_SRC))
FUZZ_CC    := clang
FUZZ_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined,float-cast-overflow \
	-fno-sanitize-recover=undefined,float-cast-overflow
FUZZ_BINS  := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))

build/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(ALL_CFLAGS) -c $< -o $@

build/fuzz/obj/gen/%.o: build/gen/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(ALL_CFLAGS) -c $< -o $@

build/fuzz/libprismlab.a: $(patsubst %.c,build/fuzz/obj/%.o,$(LIB_SRC)) \
		build/fuzz/obj/gen/schemas.o build/fuzz/obj/gen/version.o build/fuzz/obj/gen/webassets.o
	rm -f $@ && ar rcs $@ $^

build/fuzz/%_fuzz: build/fuzz/obj/tests/fuzz/%_fuzz.o build/fuzz/libprismlab.a
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer $^ -o $@ $(PKG_LIBS)

fuzz: $(FUZZ_BINS)
	@mkdir -p tests/fuzz/crashers
	@for n in $(FUZZ_ONLY); do \
	  b=build/fuzz/$${n}_fuzz; mkdir -p build/fuzz/work/$$n; \
	  $$b -max_total_time=$(FUZZ_S) -runs=$(FUZZ_RUNS) -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
	    -print_final_stats=1 -artifact_prefix=tests/fuzz/crashers/$$n- \
	    build/fuzz/work/$$n tests/fuzz/corpus/$$n > build/fuzz/$$n.log 2>&1; rc=$$?; \
	  execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' build/fuzz/$$n.log); \
	  secs=$$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' build/fuzz/$$n.log); \
	  echo "fuzz_$$n: $$execs inputs in $${secs:-?} s, exit $$rc"; \
	done

demo:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory demo-run

demo-run: bin/prismlab
	@sh fixtures/demo.sh

fixtures: bin/prismlab
	@sh fixtures/make-fixtures.sh

# core <- db <- acquire, process, model; commands on top; SQLite only in
# db/ (docs/layout.md), from the compiler's own dependency lists.
layering:
	@sh tests/util/layering.sh scan "$(CC) $(CPP_FLAGS)" $(LIB_SRC) $(LIB_HDR) prismlab.c \
		command_main.c prismlab_dimer_mpi.c commands.h

# README.md and docs/ go to share/doc/prismlab (docs/ keeping its name, so
# the README's links work): --help and the man page point there.
DOCS := $(wildcard docs/*.md) $(wildcard docs/*.service)
DOC_FIGURES := $(wildcard docs/figures/*.png docs/figures/*.svg)
# one page per command beside the overview (docs/man-pages.sh writes them)
MAN_PAGES := $(wildcard docs/man/prismlab-*.1)
install: bin/prismlab libexec/prismlab/prismlab-dimer-mpi
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/libexec/prismlab \
		$(DESTDIR)$(PREFIX)/share/prismlab/schemas \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/prismlab/docs/figures
	install -m 755 bin/prismlab $(DESTDIR)$(PREFIX)/bin/prismlab
	install -m 755 $(patsubst %,libexec/prismlab/prismlab-%,$(PROGRAMS)) \
		libexec/prismlab/prismlab-dimer-mpi \
		$(DESTDIR)$(PREFIX)/libexec/prismlab/
	install -m 644 $(SCHEMAS) $(DESTDIR)$(PREFIX)/share/prismlab/schemas/
	install -m 644 docs/prismlab.1 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/prismlab/
	install -m 644 $(DOCS) $(DESTDIR)$(PREFIX)/share/doc/prismlab/docs/
	$(if $(DOC_FIGURES),install -m 644 $(DOC_FIGURES) $(DESTDIR)$(PREFIX)/share/doc/prismlab/docs/figures/)

clean:
	rm -rf build bin libexec

-include $(shell find build -name '*.d' 2>/dev/null)
