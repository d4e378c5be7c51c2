# The fuzz harness as a plain corpus replayer over tests/fuzz/corpus (in
# `make test`, plain and sanitized) and, with clang, as a libFuzzer binary.
# The corpus: seed-* from gen_corpus; finding-* inputs the fuzzer stopped on,
# as found (the fuzz build ignores checksums) and, as finding-*-checksummed,
# with the checksums of the chunks it took rewritten, so that the replayer's
# normal build reaches the same bytes; hostile-* crafted with valid checksums.
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

$(FUZZ_BIN): tests/fuzz/fuzz_reader.c $(LIBST_SRCS) $(wildcard format/lib/*.h)
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

# fuzz_analyze: libanalyze on event sequences from the input (fuzz_analyze.c),
# replayed over tests/fuzz/corpus-analyze in `make test` (plain and
# sanitized) and, with clang, `make fuzz-analyze`. Its seeds: seed-synth-*
# from `make fuzz-analyze-seeds` (synthetic traces), seed-real-* the first
# records of 4 s recordings of fio on a loop device made by gen_analyze_seeds
# (`-e block` and `-e all`, with `-- fio` and system-wide, and make demo's).
FUZZ_ANALYZE_REPLAY := $(B)/tests/fuzz_analyze_replay
FUZZ_ANALYZE_REPLAY_ASAN := $(ASAN_B)/tests/fuzz_analyze_replay
TESTS += $(FUZZ_ANALYZE_REPLAY) $(FUZZ_ANALYZE_REPLAY_ASAN)
FUZZ_ANALYZE_CORPUS := -DFUZZ_CORPUS='"$(CURDIR)/tests/fuzz/corpus-analyze"'

$(B)/tests/fuzz/replay_analyze.o: tests/fuzz/replay_main.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) $(FUZZ_ANALYZE_CORPUS) -MMD -MP -c $< -o $@

$(ASAN_B)/tests/fuzz/replay_analyze.o: tests/fuzz/replay_main.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) $(FUZZ_ANALYZE_CORPUS) -MMD -MP -c $< -o $@

$(FUZZ_ANALYZE_REPLAY): $(B)/tests/fuzz/fuzz_analyze.o $(B)/tests/fuzz/replay_analyze.o \
		$(ANALYZE_LIB) $(LIBCOMMON) $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LIBST_LIBS) -lm -pthread

$(FUZZ_ANALYZE_REPLAY_ASAN): $(ASAN_B)/tests/fuzz/fuzz_analyze.o $(ASAN_B)/tests/fuzz/replay_analyze.o \
		$(ANALYZE_ASAN_LIB) $(LIBCOMMON_ASAN) $(LIBST_ASAN)
	$(Q)$(CC) $(ST_CFLAGS) $(ASAN_FLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LIBST_LIBS) -lm -pthread

FUZZ_ANALYZE_BIN := $(B)/fuzz/fuzz_analyze

$(FUZZ_ANALYZE_BIN): tests/fuzz/fuzz_analyze.c $(ANALYZE_SRCS) $(COMMON_SRCS) $(LIBST_SRCS) \
		$(wildcard analyze/lib/*.h format/lib/*.h common/*.h)
	@mkdir -p $(dir $@)
	$(Q)clang -std=gnu11 -O1 -g $(CPPFLAGS) -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -o $@ \
		tests/fuzz/fuzz_analyze.c $(ANALYZE_SRCS) $(COMMON_SRCS) $(LIBST_SRCS) $(LIBST_LIBS) -lm

$(B)/tests/gen_analyze_seeds: $(B)/tests/fuzz/gen_analyze_seeds.o $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)

.PHONY: fuzz-analyze fuzz-analyze-seeds
fuzz-analyze-seeds: $(B)/tests/gen_analyze_seeds $(B)/st-format
	@mkdir -p $(B)/fuzz tests/fuzz/corpus-analyze
	$(Q)for s in 1 2 3; do $(B)/st-format synth -o $(B)/fuzz/synth-$$s.sttrace --ios 50 --seed $$s \
		--devices 2 --procs 4 --cpus 4 && \
		$(B)/tests/gen_analyze_seeds $(B)/fuzz/synth-$$s.sttrace 2000 tests/fuzz/corpus-analyze/seed-synth-$$s || exit 1; done

fuzz-analyze: $(FUZZ_ANALYZE_BIN)
	@mkdir -p $(B)/fuzz/corpus-analyze
	$(FUZZ_ANALYZE_BIN) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
		$(B)/fuzz/corpus-analyze tests/fuzz/corpus-analyze

# st-format and st-analyze under ASan+UBSan, for the tests that run them on
# hostile files (t_hostile_answers.sh, t_hostile_files.sh).
TEST_TOOLS += $(ASAN_B)/st-format $(ASAN_B)/st-analyze

# fuzz-hostile: t_hostile_files.sh (every command and report on every hostile
# file) with every report flag and 250 k lost entries, plain and under
# ASan+UBSan; `make test` runs it plain without them. About 28 min on the
# shared 2-core VM (the script's header has the times).
.PHONY: fuzz-hostile
fuzz-hostile: all $(TEST_TOOLS)
	$(Q)ST_HOSTILE_FULL=1 tests/run.sh tests/format/t_hostile_files.sh
	$(Q)ST_HOSTILE_FULL=1 ST_HOSTILE_ASAN=1 tests/run.sh tests/format/t_hostile_files.sh
