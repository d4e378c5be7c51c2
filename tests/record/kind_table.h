/* SPDX-License-Identifier: MIT */
/*
 * kind_table.h - two rows the event table does not have, a data call made
 * up for test_kinds: defined before format/lib/sttrace_events.h is
 * included, they join ST_EVENT_TYPES (ST_EVENT_TYPES_LOCAL).
 */
#ifndef STTRACE_TEST_KIND_TABLE_H
#define STTRACE_TEST_KIND_TABLE_H

#define ST_EVENT_TYPES_LOCAL(E)							\
	E(200, sys_enter_made_up, sys_enter, ST_KIND_SYS_ENTER | ST_KIND_DATA | ST_KIND_CGROUP) \
	E(201, sys_exit_made_up,  sys_exit,  ST_KIND_SYS_EXIT | ST_KIND_DATA)

#endif /* STTRACE_TEST_KIND_TABLE_H */
