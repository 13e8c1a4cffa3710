# dlfilter/: libstrace_dlf.so for `perf script --itrace=b --dlfilter`.
#   libstrace_dlfcore.a  the logic (dlf.c), linked by the unit tests
#   libstrace_dlf.so     perf's entry points (dlfilter.c) + the core; only
#                        perf's symbols are exported (exports.map)
dlfilter_CFLAGS = -fvisibility=hidden $(CAPSTONE_CFLAGS)
DLF_CORE_OBJS := $(call objs,dlfilter/dlf.c)

$(O)/lib/libstrace_dlfcore.a: $(DLF_CORE_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(O)/lib/libstrace_dlf.so: $(call objs,dlfilter/dlfilter.c) \
		$(O)/lib/libstrace_dlfcore.a $(O)/lib/libstrace_decoder.a \
		$(O)/lib/libstrace.a dlfilter/exports.map
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -Wl,--version-script=dlfilter/exports.map \
		-Wl,-z,defs -Wl,--as-needed -o $@ $(call objs,dlfilter/dlfilter.c) \
		$(O)/lib/libstrace_dlfcore.a $(O)/lib/libstrace_decoder.a \
		$(O)/lib/libstrace.a $(DECODER_LIBS)

LIBS += $(O)/lib/libstrace_dlfcore.a $(O)/lib/libstrace_dlf.so

# Unit tests of the logic, with a fake perf (tests/unit/test_dlf*.c).
DLF_TESTS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(wildcard tests/unit/test_dlf*.c))

$(DLF_TESTS): $(O)/tests/%: $(O)/obj/tests/unit/%.o $(O)/lib/libstrace_dlfcore.a \
		$(O)/lib/libstrace_decoder.a $(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(O)/lib/libstrace_dlfcore.a \
		$(O)/lib/libstrace_decoder.a $(O)/lib/libstrace.a $(DECODER_LIBS)

TEST_BINS += $(DLF_TESTS)
MANPAGES += docs/man/libstrace_dlf.1
