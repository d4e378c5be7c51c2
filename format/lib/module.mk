# libsttrace: format/lib/*.c, the library alone. The st-format program
# (format/st-format/) and the synthetic trace generator (format/synth/) use it
# like any other program.
LIBST_SRCS := $(wildcard format/lib/*.c)
LIBST_OBJS := $(LIBST_SRCS:%.c=$(B)/%.o)

$(LIBST): $(LIBST_OBJS)
	@mkdir -p $(dir $@)
	$(Q)$(ARCHIVE)

all: $(LIBST)

# Installed with the library (`make install`): its public headers.
LIBST_HEADERS := format/lib/sttrace.h format/lib/sttrace_events.h

# Unit tests: tests/format/test_*.c, one program each, plain and under
# ASan+UBSan (ASAN_* in the top Makefile).
FORMAT_UNITS := $(patsubst tests/format/%.c,%,$(wildcard tests/format/test_*.c))
FORMAT_TESTS := $(FORMAT_UNITS:%=$(B)/tests/%)
FORMAT_ASAN_TESTS := $(FORMAT_UNITS:%=$(ASAN_B)/tests/%)
LIBST_ASAN_OBJS := $(LIBST_SRCS:%.c=$(ASAN_B)/%.o)

TESTS += $(FORMAT_TESTS) $(FORMAT_ASAN_TESTS)

$(FORMAT_TESTS): $(B)/tests/%: $(B)/tests/format/%.o $(LIBST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)

$(LIBST_ASAN): $(LIBST_ASAN_OBJS)
	$(Q)$(ARCHIVE)

$(FORMAT_ASAN_TESTS): $(ASAN_B)/tests/%: $(ASAN_B)/tests/format/%.o $(LIBST_ASAN)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LIBST_LIBS)

# synth-future: a trace as a later version might write it (compat tests, golden file).
TEST_TOOLS += $(B)/tests/synth-future

$(B)/tests/synth-future: $(B)/tests/format/synth_future.o $(LIBST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)

# write-strings: a trace with the string bytes it is given (t_stformat_strings.sh).
TEST_TOOLS += $(B)/tests/write-strings

$(B)/tests/write-strings: $(B)/tests/format/write_strings.o $(LIBST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)

# drop-type-count: a trace whose index leaves out one type's count (t_stformat_cat.sh).
TEST_TOOLS += $(B)/tests/drop-type-count

$(B)/tests/drop-type-count: $(B)/tests/format/drop_type_count.o $(LIBST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)

# replace-strings: a trace's names made hostile (t_inject.sh).
TEST_TOOLS += $(B)/tests/replace-strings

$(B)/tests/replace-strings: $(B)/tests/format/replace_strings.o $(LIBST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)

# craft-trace: a trace rewritten with valid checksums and absurd contents (t_hostile_files.sh).
TEST_TOOLS += $(B)/tests/craft-trace

$(B)/tests/craft-trace: $(B)/tests/format/craft_trace.o $(LIBST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)
