# libsttrace: every format/*.c except the st-format tool's own sources.
LIBST_SRCS := $(filter-out format/st_format% format/synth%,$(wildcard format/*.c))
LIBST_OBJS := $(LIBST_SRCS:%.c=$(B)/%.o)

$(LIBST): $(LIBST_OBJS)
	@mkdir -p $(dir $@)
	$(Q)$(AR) rcs $@ $^

all: $(LIBST)

# Installed with the library (`make install`): its public headers.
LIBST_HEADERS := format/sttrace.h format/sttrace_events.h

# Unit tests: tests/format/unit_*.c, one program each, plain and under
# ASan+UBSan (ASAN_* in the top Makefile).
FORMAT_UNITS := $(patsubst tests/format/%.c,%,$(wildcard tests/format/unit_*.c))
FORMAT_TESTS := $(FORMAT_UNITS:%=$(B)/tests/%)
FORMAT_ASAN_TESTS := $(FORMAT_UNITS:%=$(ASAN_B)/tests/%)
LIBST_ASAN_OBJS := $(LIBST_SRCS:%.c=$(ASAN_B)/%.o)

TESTS += $(FORMAT_TESTS) $(FORMAT_ASAN_TESTS)

$(FORMAT_TESTS): $(B)/tests/%: $(B)/tests/format/%.o $(LIBST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)

$(ASAN_B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) -MMD -MP -c $< -o $@

$(LIBST_ASAN): $(LIBST_ASAN_OBJS)
	$(Q)$(AR) rcs $@ $^

$(FORMAT_ASAN_TESTS): $(ASAN_B)/tests/%: $(ASAN_B)/tests/format/%.o $(LIBST_ASAN)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LIBST_LIBS)

# The fuzz harness as a plain corpus replayer over tests/fuzz/corpus (in
# `make test`, plain and sanitized) and, with clang, as a libFuzzer binary.
FUZZ_SRCS := tests/fuzz/fuzz_reader.c tests/fuzz/replay_main.c
FUZZ_REPLAY := $(B)/tests/fuzz_replay
FUZZ_REPLAY_ASAN := $(ASAN_B)/tests/fuzz_replay
TESTS += $(FUZZ_REPLAY) $(FUZZ_REPLAY_ASAN)

$(FUZZ_REPLAY): $(FUZZ_SRCS:%.c=$(B)/%.o) $(LIBST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)

$(FUZZ_REPLAY_ASAN): $(FUZZ_SRCS:%.c=$(ASAN_B)/%.o) $(LIBST_ASAN)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LIBST_LIBS)

$(B)/tests/fuzz/replay_main.o $(ASAN_B)/tests/fuzz/replay_main.o: \
	CPPFLAGS += -DFUZZ_CORPUS='"$(CURDIR)/tests/fuzz/corpus"'

FUZZ_SECONDS ?= 60
FUZZ_BIN := $(B)/fuzz/fuzz_reader

$(FUZZ_BIN): tests/fuzz/fuzz_reader.c $(LIBST_SRCS) $(wildcard format/*.h)
	@mkdir -p $(dir $@)
	$(Q)clang -std=gnu11 -O1 -g $(CPPFLAGS) -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
		-fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -o $@ tests/fuzz/fuzz_reader.c $(LIBST_SRCS) $(LIBST_LIBS)

# Rewrites the committed seed corpus (small files from the writer).
$(B)/tests/gen_corpus: $(B)/tests/fuzz/gen_corpus.o $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)

.PHONY: fuzz fuzz-corpus test-asan
fuzz-corpus: $(B)/tests/gen_corpus
	$(Q)$(B)/tests/gen_corpus tests/fuzz/corpus

fuzz: $(FUZZ_BIN)
	@mkdir -p $(B)/fuzz/corpus
	$(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
		$(B)/fuzz/corpus tests/fuzz/corpus

test-asan: $(FORMAT_ASAN_TESTS) $(FUZZ_REPLAY_ASAN)
	$(Q)tests/run.sh $(FORMAT_ASAN_TESTS) $(FUZZ_REPLAY_ASAN)

# The built-in event type tables of spec/sttrace-format.md, from the header.
SPEC_TABLE := $(B)/spec/gen_event_table
PROGRAMS += $(SPEC_TABLE)

$(SPEC_TABLE): $(B)/spec/gen_event_table.o $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)

.PHONY: spec-table
spec-table: $(SPEC_TABLE)
	$(Q)$(SPEC_TABLE)

# Header dependencies of the sanitized objects (the top Makefile reads build/'s).
-include $(shell find $(ASAN_B) -name '*.d' 2>/dev/null)
