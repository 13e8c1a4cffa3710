# decoder/: process image, Capstone block summaries, the PT flow walker
# (fast inline path + libipt reference) -> libstrace_decoder.a, internal
# (decoder/decoder.h; not installed). A program that links it also links
# libstrace.a and $(DECODER_LIBS): libipt, libdw (elfutils, for the
# DWARF of decoder/dwarf.c), libelf, pthreads. Capstone (libcapstone.so.4)
# and the C++ runtime (libstdc++.so.6, for __cxa_demangle) are loaded with
# dlopen when first needed: a decode whose blocks and symbols come from
# the persistent cache loads neither.
DECODER_SRCS := $(wildcard decoder/*.c)
DECODER_A := $(O)/lib/libstrace_decoder.a
decoder_CFLAGS = $(CAPSTONE_CFLAGS) -I$(O)/gen $(FUZZ_DECODER_CFLAGS)
DECODER_LIBS = -pthread -lipt -ldw -lelf

$(eval $(call archive,$(DECODER_A),$(call objs,$(DECODER_SRCS))))

LIBS += $(DECODER_A)

# The x86-64 system call names (decoder/sysnr.c), generated from the
# kernel's list as Debian's linux-libc-dev installs it (libc6-dev, and so
# every C compiler, depends on it).
SYSCALL_LIST ?= /usr/include/x86_64-linux-gnu/asm/unistd_64.h
$(O)/gen/syscall_names.h: $(SYSCALL_LIST) decoder/module.mk
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)awk '/^#define __NR_[a-z0-9_]+ [0-9]+$$/ { n = $$2; sub(/^__NR_/, "", n); \
		printf "\t[%d] = \"%s\",\n", $$3, n; k++ } \
		END { if (k < 300) exit 1 }' $< >$@.tmp && mv $@.tmp $@
$(call objs,decoder/sysnr.c): $(O)/gen/syscall_names.h

