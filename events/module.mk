# events/: event table, shared ring, string table -> libstrace (libc only).
LIBSTRACE_SRCS := $(wildcard events/*.c)
LIBSTRACE_OBJS := $(call objs,$(LIBSTRACE_SRCS))

$(O)/lib/libstrace.a: $(LIBSTRACE_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(O)/lib/libstrace.so: $(LIBSTRACE_OBJS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libstrace.so.0 $(ALL_LDFLAGS) -o $@ $^

LIBS += $(O)/lib/libstrace.a $(O)/lib/libstrace.so

$(O)/tests/test_ring: $(O)/obj/tests/unit/test_ring.o $(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lpthread

TEST_BINS += $(O)/tests/test_ring
