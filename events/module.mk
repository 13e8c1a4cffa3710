# events/: event table, shared ring, string table, errors -> libstrace
# (libc only): libstrace.a, and libstrace.so.$(VERSION) with its
# .so.MAJOR (the SONAME) and .so links, exporting only the API
# (libstrace.map).
LIBSTRACE_SRCS := $(wildcard events/*.c)
LIBSTRACE_OBJS := $(call objs,$(LIBSTRACE_SRCS))
LIBSTRACE_SO := $(O)/lib/libstrace.so.$(VERSION)

$(O)/lib/libstrace.a: $(LIBSTRACE_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(LIBSTRACE_SO): $(LIBSTRACE_OBJS) events/libstrace.map
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libstrace.so.$(VERSION_MAJOR) \
		-Wl,--version-script=events/libstrace.map $(ALL_LDFLAGS) \
		-o $@ $(LIBSTRACE_OBJS)

$(O)/lib/libstrace.so.$(VERSION_MAJOR): $(LIBSTRACE_SO)
	$(Q)ln -sf $(notdir $<) $@

$(O)/lib/libstrace.so: $(O)/lib/libstrace.so.$(VERSION_MAJOR)
	$(Q)ln -sf $(notdir $<) $@

LIBS += $(O)/lib/libstrace.a $(LIBSTRACE_SO) $(O)/lib/libstrace.so.$(VERSION_MAJOR) \
	$(O)/lib/libstrace.so

$(O)/tests/test_ring $(O)/tests/test_names: $(O)/tests/%: \
		$(O)/obj/tests/unit/%.o $(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lpthread

TEST_BINS += $(O)/tests/test_ring $(O)/tests/test_names
MANPAGES += docs/man/libstrace.3
