# cli/: the commands, thin over the libraries.
#   ptrace-read: read a ring (text, jsonl, raw, saved ring), --generate,
#   --stat. format.c and sample.c are shared with tests/unit/test_format*
#   and the benchmarks in tests/bench/.
CLI_COMMON_OBJS := $(call objs,cli/format.c cli/sample.c cli/ringmsg.c)

$(O)/bin/ptrace-read: $(call objs,cli/ptrace-read.c) $(CLI_COMMON_OBJS) \
		$(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^

BINS += $(O)/bin/ptrace-read
MANPAGES += docs/man/ptrace-read.1

# Unit tests of the formatter (tests/unit/test_format*.c), built here so
# that they need nothing from other folders' module.mk files.
CLI_UNIT_TESTS := $(patsubst tests/unit/%.c,$(O)/tests/unit/%,\
	$(wildcard tests/unit/test_format*.c))

$(CLI_UNIT_TESTS): $(O)/tests/unit/%: $(O)/obj/tests/unit/%.o \
		$(CLI_COMMON_OBJS) $(O)/lib/libstrace.a
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^

TEST_BINS += $(CLI_UNIT_TESTS)
