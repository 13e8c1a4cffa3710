# decoder/: process image, Capstone block summaries, the PT flow walker
# (fast inline path + libipt reference) -> libstrace_decoder.a, internal
# (decoder/decoder.h; not installed). A program that links it also links
# libstrace.a and $(DECODER_LIBS): libipt, libelf, pthreads. Capstone
# (libcapstone.so.4) and the C++ runtime (libstdc++.so.6, for
# __cxa_demangle) are loaded with dlopen when first needed: a decode whose
# blocks and symbols come from the persistent cache loads neither.
DECODER_SRCS := $(wildcard decoder/*.c)
DECODER_A := $(O)/lib/libstrace_decoder.a
decoder_CFLAGS = $(CAPSTONE_CFLAGS)
DECODER_LIBS = -pthread -lipt -lelf

$(eval $(call archive,$(DECODER_A),$(call objs,$(DECODER_SRCS))))

LIBS += $(DECODER_A)
