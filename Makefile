# ptrace toolkit - one non-recursive build.
#
#   make                 release build (-O2 -g) into build/
#   make DEBUG=1         -O0 -g3 -Werror into build/debug/
#   make SAN=address,undefined   sanitizers, into build/san/
#   make SAN=thread check-ring   ThreadSanitizer on the ring and its
#                        readers and writers, into build/tsan/
#   make check           install test dependencies if needed, build, run tests
#   make bench           benchmarks; figures go to docs/performance.md
#   make demo            trace a bundled program (ptsynth), decode, read back
#   make libipt-suite LIBIPT_SRC=DIR [LIBIPT_OUT=DIR]
#                        libipt's test suite as a judge of our decoders
#                        (tests/external/libipt-suite.sh; not in check)
#   make fuzz            libFuzzer targets into build/fuzz/ (clang, ASan, UBSan);
#                        make fuzz-run FUZZ_TARGET=perf|perf_ref|ring
#                        (tests/fuzz/module.mk)
#   make install PREFIX=/usr/local DESTDIR=
#   make format          clang-format the sources
#   V=1                  show the commands
#
# Each folder adds to the build in its own module.mk or module-*.mk
# (see events/module.mk).

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
VERSION := 0.1.0

ifneq ($(findstring thread,$(SAN)),)
O ?= build/tsan
else ifneq ($(SAN),)
O ?= build/san
else ifneq ($(DEBUG),)
O ?= build/debug
else
O ?= build
endif

CC ?= cc
CXX ?= c++
PKG_CONFIG ?= pkg-config

WARN := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wpointer-arith -Wcast-qual -Wwrite-strings \
	-Wformat=2 -Wundef -Wvla -Wimplicit-fallthrough
ifneq ($(DEBUG),)
OPT := -O0 -g3
WERROR ?= 1
else
OPT := -O2 -g
endif
ifneq ($(CI),)
WERROR ?= 1
endif
ifeq ($(WERROR),1)
WARN += -Werror
endif
ifneq ($(SAN),)
SANFLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
ifneq ($(findstring thread,$(SAN)),)
# ThreadSanitizer does not model atomic_thread_fence (gcc warns). The ring's
# fences order atomic accesses only (its flight-mode slots are copied with
# relaxed atomics), so TSan sees no race either way; what the fences add
# is the cross-process ordering that docs/design.md argues.
SANFLAGS += -Wno-tsan
endif

BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -fPIC -Iinclude $(SANFLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)

ifeq ($(V),1)
Q :=
msg = @:
else
Q := @
msg = @printf '  %-7s %s\n' $(1) $(2);
endif

# Filled by the module.mk files.
BINS :=        # installed commands: $(O)/bin/...
LIBS :=        # installed libraries: $(O)/lib/...
TEST_BINS :=   # test programs, run by tests/run.sh
TEST_TOOLS :=  # built for tests, not installed
BENCH_BINS :=
MANPAGES :=

all: build

# Objects: $(O)/obj/<path>.o from <path>.c, with header dependencies.
$(O)/obj/%.o: %.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $($(subst /,_,$(<D))_CFLAGS) -MMD -MP -c -o $@ $<

# $(call objs,files.c) -> object paths
objs = $(patsubst %.c,$(O)/obj/%.o,$(1))

include $(sort $(wildcard */module*.mk) $(wildcard tests/*/module*.mk))

build: $(BINS) $(LIBS)

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)

deps-build:
	@scripts/install-deps build

deps-test:
	@scripts/install-deps test

check: deps-test
	@$(MAKE) --no-print-directory build tests
	@O=$(O) tests/run.sh $(TEST_BINS)

tests: $(BINS) $(LIBS) $(TEST_BINS) $(TEST_TOOLS)

# The ring alone: its unit tests, its stress matrix and a following reader,
# what CI runs under ThreadSanitizer (make SAN=thread check-ring).
RING_TESTS = $(O)/tests/test_ring $(O)/tests/test_ring_stress
check-ring: deps-test
	@$(MAKE) --no-print-directory $(O)/bin/ptrace-read $(RING_TESTS)
	@O=$(O) SCRIPTS="tests/e2e/ptrace-read-follow.sh" tests/run.sh $(RING_TESTS)

bench: deps-test
	@$(MAKE) --no-print-directory build $(BENCH_BINS) bench-trace
	@O=$(O) tests/bench/run.sh

demo: deps-test
	@$(MAKE) --no-print-directory build $(O)/bin/ptsynth
	@O=$(O) scripts/demo.sh

libipt-suite: build
	@O=$(O) tests/external/libipt-suite.sh $(LIBIPT_SRC) $(LIBIPT_OUT)

install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/strace \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)
	install -m 0644 $(filter %.a,$(LIBS)) $(DESTDIR)$(LIBDIR)
	install -m 0755 $(filter %.so,$(LIBS)) $(DESTDIR)$(LIBDIR)
	install -m 0644 include/strace/*.h $(DESTDIR)$(INCDIR)/strace
	install -m 0644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man1
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    scripts/libstrace.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libstrace.pc

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(O)

.PHONY: all build check check-ring tests bench demo libipt-suite install format clean deps-build deps-test
.DELETE_ON_ERROR:
