# ptrace toolkit - one non-recursive build.
#
#   make                 release build (-O2 -g) into build/
#   make DEBUG=1         -O0 -g3 -Werror into build/debug/
#   make SAN=address,undefined   sanitizers, into build/san/
#   make SAN=thread check-ring   ThreadSanitizer on the ring and its
#                        readers and writers, and the parallel decode, into
#                        build/tsan/
#   make check           install test dependencies if needed, build, run tests
#                        (make check-unit: the quick tier, make check-e2e:
#                        the scripts)
#   make bench           benchmarks; figures go to docs/performance.md
#                        (XDC_EXPERIMENTS=DIR LIBXDC_DIR=DIR: also beside
#                        libxdc on kAFL's recordings, tests/bench/xdc.sh)
#   make demo            trace a bundled program (ptsynth), decode, read back
#   make libipt-suite LIBIPT_SRC=DIR [LIBIPT_OUT=DIR]
#                        libipt's test suite as a judge of our decoders
#                        (tests/external/libipt-suite.sh; not in check)
#   make kafl-traces XDC_EXPERIMENTS=DIR [KAFL_OUT=DIR]
#                        real kAFL recordings (nyx-fuzz/libxdc_experiments):
#                        the fast walker against libipt (not in check)
#   make fuzz            libFuzzer targets into build/fuzz/ (clang, ASan, UBSan);
#                        make fuzz-run FUZZ_TARGET=perf|perf_ref|ring|blockfile|rawpt|damage
#                        (tests/fuzz/fuzz.mk)
#   make install PREFIX=/usr/local DESTDIR=   (make uninstall: the same
#                        PREFIX and DESTDIR remove it all)
#   make format          clang-format the sources
#   V=1                  show the commands
#
# Each folder adds to the build in its own module.mk
# (see events/module.mk).

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# perf looks for `--dlfilter NAME.so` in the current directory, then in
# $(perf --exec-path)/dlfilters: /usr/lib/perf-core/dlfilters for
# Debian's perf, so PREFIX=/usr puts the dlfilter where perf finds it;
# for another PREFIX, perf finds it with PERF_EXEC_PATH=$(PREFIX)/lib/perf-core.
DLFILTERDIR ?= $(PREFIX)/lib/perf-core/dlfilters
DOCDIR ?= $(PREFIX)/share/doc/ptrace-toolkit
# the example plugins, where --plugin NAME finds them (cli/pluginpath.h:
# beside the commands, BINDIR/../lib/strace/plugins)
PLUGINDIR ?= $(PREFIX)/lib/strace/plugins

# The one version, written in include/strace/version.h.
VERSION := $(shell sed -n 's/^\#define STRACE_VERSION "\(.*\)"$$/\1/p' include/strace/version.h)
VERSION_MAJOR := $(firstword $(subst ., ,$(VERSION)))

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
# Capstone's flags, asked of pkg-config when first used (not while the
# Makefile is read: `make demo` and `make check` install Capstone first).
CAPSTONE_CFLAGS = $(eval CAPSTONE_CFLAGS := $$(shell $(PKG_CONFIG) --cflags capstone))$(CAPSTONE_CFLAGS)
CAPSTONE_LIBS = $(eval CAPSTONE_LIBS := $$(shell $(PKG_CONFIG) --libs capstone))$(CAPSTONE_LIBS)

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

BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -fPIC -Iinclude -I. $(SANFLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)

ifeq ($(V),1)
Q :=
msg = @:
else
Q := @
msg = @printf '  %-7s %s\n' '$(1)' "$(2)";
endif

# Filled by the module.mk files.
BINS :=        # installed commands: $(O)/bin/...
LIBS :=        # libraries built: $(O)/lib/... (installed: see install)
TEST_BINS :=   # test programs, run by tests/run.sh (tests/module.mk)
TEST_TOOLS :=  # built for tests, not installed
MANPAGES :=    # man page sources docs/man/NAME.SECTION (@VERSION@ filled in)

all: build

# Objects: $(O)/obj/<path>.o from <path>.c, with header dependencies.
$(O)/obj/%.o: %.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $($(subst /,_,$(<D))_CFLAGS) -MMD -MP -c -o $@ $<

# $(call objs,files.c) -> object paths
objs = $(patsubst %.c,$(O)/obj/%.o,$(1))

# $(call archive,LIB,OBJS): the rule of a static library.
define archive
$(1): $(2)
	$$(call msg,AR,$$@)
	@mkdir -p $$(@D)
	$$(Q)rm -f $$@ && $$(AR) rcs $$@ $$^
endef

NO_LDLIBS :=
PTHREAD := -lpthread

# $(call program,OUT,SOURCES,LIBS,LDLIBS-VARIABLE): the rule of a program
# linked from SOURCES' objects, the static LIBS (in link order, each once)
# and the system libraries in the variable named last (expanded when the
# program is linked: it may ask pkg-config).
define program
$(1): $(call objs,$(2)) $(3)
	$$(call msg,LD,$$@)
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(ALL_LDFLAGS) -o $$@ $(call objs,$(2)) $(3) $$($(4))
endef

# One module.mk per top-level folder; tests/module.mk registers every test.
include events/module.mk decoder/module.mk pt_backend/module.mk \
	dlfilter/module.mk cli/view/module.mk cli/module.mk tests/module.mk

# Man pages with the version and the documents' place filled in, as
# installed ($(O)/man for `man -l`); the documents they name.
MAN_OUT := $(patsubst docs/man/%,$(O)/man/%,$(MANPAGES))
man_sed = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' \
	-e 's|@DLFILTERDIR@|$(DLFILTERDIR)|g' $(1)
USER_DOCS := docs/design.md docs/events.md docs/decoder.md docs/stacks.md \
	docs/viewing.md docs/howto-capture.md docs/howto-dlfilter.md \
	docs/plugins.md docs/cache.md docs/performance.md
define NL


endef

build: $(BINS) $(LIBS) $(MAN_OUT)

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)

deps-build:
	@scripts/install-deps build

deps-test:
	@scripts/install-deps test

# make check: both tiers, one summary line. make check-unit: the unit
# tests and the fuzz replays (under a minute). make check-e2e: the
# scripts (tests/e2e/*.sh, tests/*/e2e-*.sh), which use the corpus.
check: deps-test
	@$(MAKE) --no-print-directory build tests
	@O=$(O) tests/run.sh $(TEST_BINS)

check-unit: deps-test
	@$(MAKE) --no-print-directory build $(TEST_BINS) $(UNIT_TOOLS)
	@O=$(O) SCRIPTS="" tests/run.sh $(TEST_BINS)

check-e2e: deps-test
	@$(MAKE) --no-print-directory build tests
	@O=$(O) tests/run.sh

tests: $(BINS) $(LIBS) $(TEST_BINS) $(TEST_TOOLS)

# The ring alone: its unit tests, its stress matrix and a following reader,
# plugins handed batches by parallel decoding threads, and the decoder's
# unit tests of the parallel decode (workers and merge): what CI runs under
# ThreadSanitizer (make SAN=thread check-ring).
CHECK_RING_PLUGINS := $(addprefix $(O)/plugins/,callcount.so slow.so tee.so)
check-ring: deps-test
	@$(MAKE) --no-print-directory $(O)/bin/ptrace-read $(O)/bin/ptrace-capture \
		$(CHECK_RING_PLUGINS) $(RING_TESTS)
	@O=$(O) SCRIPTS="tests/e2e/ptrace-read-follow.sh tests/plugins/e2e-capture-threads.sh" \
		tests/run.sh $(RING_TESTS)

bench: deps-test
	@$(MAKE) --no-print-directory build $(BENCH_BINS) bench-trace
	@O=$(O) tests/bench/run.sh

# (the example plugins the README names: $(O)/plugins/; make install
# puts them in $(PLUGINDIR))
DEMO_PLUGINS := $(addprefix $(O)/plugins/,callcount.so latency.so slow.so tee.so)
demo: deps-test
	@$(MAKE) --no-print-directory build $(O)/bin/ptsynth $(DEMO_PLUGINS)
	@O=$(O) scripts/demo.sh

libipt-suite: build
	@O=$(O) tests/external/libipt-suite.sh $(LIBIPT_SRC) $(LIBIPT_OUT)

kafl-traces: build
	@O=$(O) tests/external/kafl-traces.sh $(XDC_EXPERIMENTS) $(KAFL_OUT)

# What is installed: the commands, libstrace (shared, with its .so.MAJOR
# and .so links, and static), its public headers and .pc, the dlfilter
# where perf looks for it, the man pages and the API's example. The
# decoder and backend archives are internal and stay in $(O)/lib. The
# example plugin (docs/examples/plugin.c) builds with the headers alone.
PUBLIC_HEADERS := $(wildcard include/strace/*.h)
# A program built with pkg-config finds libstrace.so.MAJOR where the
# dynamic loader does not look by itself (PREFIX=/tmp/inst, /opt/...):
# the .pc adds an rpath for any library directory but the system's.
SYSTEM_LIBDIRS := /usr/lib /usr/lib64 /lib /lib64 /usr/lib/x86_64-linux-gnu \
	/lib/x86_64-linux-gnu
comma := ,
PC_RPATH := $(if $(filter $(SYSTEM_LIBDIRS),$(LIBDIR)),,-Wl$(comma)-rpath$(comma)$${libdir} )
install: build $(DEMO_PLUGINS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/strace \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(DLFILTERDIR) \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(PLUGINDIR)
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)
	install -m 0755 $(DEMO_PLUGINS) $(DESTDIR)$(PLUGINDIR)
	install -m 0755 $(O)/lib/libstrace.so.$(VERSION) $(DESTDIR)$(LIBDIR)
	ln -sf libstrace.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libstrace.so.$(VERSION_MAJOR)
	ln -sf libstrace.so.$(VERSION_MAJOR) $(DESTDIR)$(LIBDIR)/libstrace.so
	install -m 0644 $(O)/lib/libstrace.a $(DESTDIR)$(LIBDIR)
	install -m 0755 $(O)/lib/libstrace_dlf.so $(DESTDIR)$(DLFILTERDIR)
	install -m 0644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCDIR)/strace
	$(foreach m,$(MANPAGES),$(call man_sed,$(m)) > \
		$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m))$(NL))
	install -m 0644 $(USER_DOCS) $(DESTDIR)$(DOCDIR)
	install -m 0644 docs/examples/reader.c docs/examples/plugin.c \
		$(DESTDIR)$(DOCDIR)/examples
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@RPATH@|$(PC_RPATH)|' \
	    scripts/libstrace.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libstrace.pc

# Everything install put there, and the folders of ours it leaves empty.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(BINS))) \
		$(addprefix $(DESTDIR)$(LIBDIR)/,libstrace.so.$(VERSION) \
			libstrace.so.$(VERSION_MAJOR) libstrace.so libstrace.a) \
		$(DESTDIR)$(DLFILTERDIR)/libstrace_dlf.so \
		$(addprefix $(DESTDIR)$(INCDIR)/strace/,$(notdir $(PUBLIC_HEADERS))) \
		$(foreach m,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m))) \
		$(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(USER_DOCS))) \
		$(DESTDIR)$(DOCDIR)/examples/reader.c $(DESTDIR)$(DOCDIR)/examples/plugin.c \
		$(addprefix $(DESTDIR)$(PLUGINDIR)/,$(notdir $(DEMO_PLUGINS))) \
		$(DESTDIR)$(PKGCONFIGDIR)/libstrace.pc
	rmdir $(DESTDIR)$(INCDIR)/strace $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(PREFIX)/lib/strace 2>/dev/null || true

$(O)/man/%: docs/man/% include/strace/version.h
	@mkdir -p $(@D)
	$(Q)$(call man_sed,$<) > $@

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(O)

.PHONY: all build check check-unit check-e2e check-ring tests bench demo libipt-suite kafl-traces install uninstall format clean deps-build deps-test
.DELETE_ON_ERROR:
