# tests/ptsynth/: the PT trace synthesizer (build/bin/ptsynth, not
# installed) and ptblk, the libipt block-decoder checker (a test tool).
tests_ptsynth_CFLAGS := $(shell $(PKG_CONFIG) --cflags capstone)
PTSYNTH_LIBS := $(shell $(PKG_CONFIG) --libs capstone) -lipt

$(O)/bin/ptsynth: $(call objs,tests/ptsynth/ptsynth.c) $(O)/lib/libptbackend.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PTSYNTH_LIBS)

$(O)/tests/ptblk: $(call objs,tests/ptsynth/ptblk.c)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PTSYNTH_LIBS)

TEST_TOOLS += $(O)/bin/ptsynth $(O)/tests/ptblk
