# tests/unit/: test programs that need no module of their own.
# test_ring_stress: the shared ring under load (see its header comment).
$(O)/tests/test_ring_stress: $(O)/obj/tests/unit/test_ring_stress.o $(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lpthread

TEST_BINS += $(O)/tests/test_ring_stress
