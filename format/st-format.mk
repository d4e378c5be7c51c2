# st-format: the trace tool (format/st_format*.c) and the synthetic trace
# generator (format/synth*.c), linked against libsttrace; `convert` reads
# traces through the analyzer's input and names (libanalyze); anonymize
# takes its HMAC from OpenSSL's libcrypto.
ST_FORMAT_SRCS := $(wildcard format/st_format*.c format/synth*.c)
ST_FORMAT_OBJS := $(ST_FORMAT_SRCS:%.c=$(B)/%.o)

$(B)/st-format: $(ST_FORMAT_OBJS) $(ANALYZE_LIB) $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS) -ljson-c -lcrypto -lm

PROGRAMS += $(B)/st-format
