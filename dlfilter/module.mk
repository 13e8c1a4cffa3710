# dlfilter/: libstrace_dlf.so for `perf script --itrace=b --dlfilter`.
#   libstrace_dlfcore.a  the logic (dlf.c the per-sample path, dlf_dso.c the
#                        DSO table and block cache files, dlf_life.c new and
#                        free, dlf_args.c its arguments),
#                        linked by the unit tests
#   libstrace_dlf.so     perf's entry points (dlfilter.c) + the core; only
#                        perf's symbols are exported (exports.map)
dlfilter_CFLAGS = -fvisibility=hidden $(CAPSTONE_CFLAGS)
DLFCORE_A := $(O)/lib/libstrace_dlfcore.a

$(eval $(call archive,$(DLFCORE_A),$(call objs,dlfilter/dlf.c dlfilter/dlf_args.c dlfilter/dlf_dso.c dlfilter/dlf_life.c)))

$(O)/lib/libstrace_dlf.so: $(call objs,dlfilter/dlfilter.c) $(DLFCORE_A) \
		$(DECODER_A) $(LIBSTRACE_A) dlfilter/exports.map
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -Wl,--version-script=dlfilter/exports.map \
		-Wl,-z,defs -Wl,--as-needed -o $@ $(call objs,dlfilter/dlfilter.c) \
		$(DLFCORE_A) $(DECODER_A) $(LIBSTRACE_A) $(DECODER_LIBS)

LIBS += $(DLFCORE_A) $(O)/lib/libstrace_dlf.so
MANPAGES += docs/man/libstrace_dlf.1
