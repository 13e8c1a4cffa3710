# pt_backend/: perf.data format and writer (later: capture, reader,
# process image) -> libptbackend.a.
PTBACKEND_SRCS := $(wildcard pt_backend/*.c)
PTBACKEND_OBJS := $(call objs,$(PTBACKEND_SRCS))

$(O)/lib/libptbackend.a: $(PTBACKEND_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

LIBS += $(O)/lib/libptbackend.a
