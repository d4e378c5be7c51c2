# common/: what every sttrace program does the same way on its command line
# and in its outputs (CSV fields), linked into each program as libcommon.a.
# The file format itself is libsttrace's (format/lib/).
# (LIBCOMMON is named in the top Makefile: modules read before this one link it.)
COMMON_SRCS := $(wildcard common/*.c)

$(LIBCOMMON): $(COMMON_SRCS:%.c=$(B)/%.o)
	@mkdir -p $(dir $@)
	$(Q)$(ARCHIVE)

$(LIBCOMMON_ASAN): $(COMMON_SRCS:%.c=$(ASAN_B)/%.o)
	@mkdir -p $(dir $@)
	$(Q)$(ARCHIVE)
