# st-format: the trace tool (format/st_format*.c) and the synthetic trace
# generator (format/synth*.c), linked against libsttrace.
ST_FORMAT_SRCS := $(wildcard format/st_format*.c format/synth*.c)
ST_FORMAT_OBJS := $(ST_FORMAT_SRCS:%.c=$(B)/%.o)

$(B)/st-format: $(ST_FORMAT_OBJS) $(LIBCOMMON) $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS) -ljson-c -lm

PROGRAMS += $(B)/st-format
INSTALL_BIN += $(B)/st-format
INSTALL_MAN1 += format/st-format.1
