# events/: event table, shared ring, string table, names, definitions,
# errors -> libstrace (libc only): libstrace.a, and libstrace.so.$(VERSION)
# with its .so.MAJOR (the SONAME) and .so links, exporting only the API
# (libstrace.map).
LIBSTRACE_SRCS := $(wildcard events/*.c)
LIBSTRACE_OBJS := $(call objs,$(LIBSTRACE_SRCS))
LIBSTRACE_A := $(O)/lib/libstrace.a
LIBSTRACE_SO := $(O)/lib/libstrace.so.$(VERSION)

$(eval $(call archive,$(LIBSTRACE_A),$(LIBSTRACE_OBJS)))

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

LIBS += $(LIBSTRACE_A) $(LIBSTRACE_SO) $(O)/lib/libstrace.so.$(VERSION_MAJOR) \
	$(O)/lib/libstrace.so
MANPAGES += docs/man/libstrace.3
