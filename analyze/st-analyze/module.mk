# st-analyze: the program (options, reports' output as text / CSV / gnuplot /
# HTML, diff, merge, the live view, metrics) on libanalyze (analyze/lib/).
ST_ANALYZE_SRCS := $(wildcard analyze/st-analyze/*.c)
ST_ANALYZE_OBJS := $(ST_ANALYZE_SRCS:%.c=$(B)/%.o)

# --metrics serves HTTP through libmicrohttpd (scripts/install-deps.sh
# installs it), which metrics.c loads only then, by the soname of the one the
# linker finds here.
MHD_SONAME := $(or $(shell objdump -p "$$($(CC) -print-file-name=libmicrohttpd.so)" 2>/dev/null | \
			  awk '$$1 == "SONAME" { print $$2 }'),libmicrohttpd.so.12)
$(B)/analyze/st-analyze/metrics.o $(ASAN_B)/analyze/st-analyze/metrics.o: ST_CFLAGS += -DMHD_SONAME='"$(MHD_SONAME)"'

PROGRAMS += $(B)/st-analyze
INSTALL_BIN += $(B)/st-analyze
INSTALL_MAN1 += analyze/st-analyze/st-analyze.1

$(B)/st-analyze: $(ST_ANALYZE_OBJS) $(ANALYZE_LIB) $(LIBCOMMON) $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS) -ljson-c -lm -pthread

# test_metrics tests the program's Prometheus exposition (metrics.c).
$(B)/tests/analyze/test_metrics: $(B)/analyze/st-analyze/metrics.o
$(ASAN_B)/tests/analyze/test_metrics: $(ASAN_B)/analyze/st-analyze/metrics.o

# The same under ASan+UBSan, for the hostile-file loop (tests/fuzz/module.mk).
$(ASAN_B)/st-analyze: $(ST_ANALYZE_OBJS:$(B)/%=$(ASAN_B)/%) $(ANALYZE_ASAN_LIB) $(LIBCOMMON_ASAN) $(LIBST_ASAN)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LIBST_LIBS) -ljson-c -lm -pthread
