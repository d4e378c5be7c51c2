# st-replay: re-issues recorded I/O through io_uring. Needs liburing (and
# json-c for --report), not BPF; reads traces through libsttrace and the
# analyzer's input and correlator (libanalyze.a), never a copy of them.

HAVE_URING := $(shell $(PKG_CONFIG) --exists liburing json-c 2>/dev/null && echo 1)

ifeq ($(HAVE_URING),1)

REPLAY_SRCS := $(wildcard replay/*.c)
REPLAY_OBJS := $(REPLAY_SRCS:%.c=$(B)/%.o)

PROGRAMS += $(B)/st-replay
INSTALL_BIN += $(B)/st-replay
INSTALL_MAN1 += replay/st-replay.1

$(B)/st-replay: $(REPLAY_OBJS) $(ANALYZE_LIB) $(LIBCOMMON) $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(call pkg_libs,liburing json-c,-luring -ljson-c) $(LIBST_LIBS)

# The same under ASan+UBSan, for the tests that run a replay's plan on
# unusual traces (tests/replay/t_plan_asan.sh).
TEST_TOOLS += $(ASAN_B)/st-replay

$(ASAN_B)/st-replay: $(REPLAY_OBJS:$(B)/%=$(ASAN_B)/%) $(ANALYZE_ASAN_LIB) $(LIBCOMMON_ASAN) $(LIBST_ASAN)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(call pkg_libs,liburing json-c,-luring -ljson-c) $(LIBST_LIBS)

endif
