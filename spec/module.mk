# The built-in event type tables of spec/sttrace-format.md, from the header.
SPEC_TABLE := $(B)/spec/gen_event_table
PROGRAMS += $(SPEC_TABLE)

$(SPEC_TABLE): $(B)/spec/gen_event_table.o $(LIBST)
	$(Q)$(CC) $(ST_CFLAGS) -o $@ $^ $(LIBST_LIBS)

.PHONY: spec-table
spec-table: $(SPEC_TABLE)
	$(Q)$(SPEC_TABLE)
