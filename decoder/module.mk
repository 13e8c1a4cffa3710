# decoder/: process image, Capstone block summaries, the PT flow walker
# (fast inline path + libipt reference) -> libstrace_decoder.a, internal
# (decoder/decoder.h; not installed). A program that links it also links
# libstrace.a and $(DECODER_LIBS): libipt, libelf, Capstone, pthreads,
# and the C++ runtime (for __cxa_demangle: -l:libstdc++.so.6, so that
# the run-time library suffices, no g++ needed).
DECODER_SRCS := $(wildcard decoder/*.c)
DECODER_A := $(O)/lib/libstrace_decoder.a
decoder_CFLAGS = $(CAPSTONE_CFLAGS)
DECODER_LIBS = -pthread -lipt -lelf -l:libstdc++.so.6 $(CAPSTONE_LIBS)

$(eval $(call archive,$(DECODER_A),$(call objs,$(DECODER_SRCS))))

LIBS += $(DECODER_A)
