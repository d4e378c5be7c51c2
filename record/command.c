/* SPDX-License-Identifier: MIT */
/*
 * command.c - `st-record -- CMD`: the command is forked before the probes
 * load (its pid goes into the filter) and held on a pipe until they are
 * attached, so its first I/O is traced; it ends with the recording, or the
 * recording with it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/recorder.h"

#define COMMAND_GRACE_MS	5000		/* for the command to exit after SIGTERM */

/* Fork the command now (its pid goes into the filter) and exec it once the probes are attached. */
int rec_command_start(struct recorder *r)
{
	int go[2];
	char c;

	if (pipe2(go, O_CLOEXEC))
		return rec_fail("pipe", strerror(errno));
	r->child = fork();
	if (r->child < 0)
		return rec_fail("fork", strerror(errno));
	if (r->child == 0) {
		sigset_t none;

		/* the command gets the signal state st-record was started with */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(r->opts.cmd[0], r->opts.cmd);
		fprintf(stderr, "%s: %s: %s\n", REC_NAME, r->opts.cmd[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	r->child_go_fd = go[1];
	return 0;
}

void rec_command_release(struct recorder *r)
{
	char c = 'g';

	if (write(r->child_go_fd, &c, 1) != 1)
		fprintf(stderr, "%s: cannot start the command: %s\n", REC_NAME, strerror(errno));
	close(r->child_go_fd);
	r->child_go_fd = -1;
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return REC_EXIT_FAIL;
}

void rec_command_reap(struct recorder *r, bool wait)
{
	int status;

	if (!r->child || r->child_done)
		return;
	if (waitpid(r->child, &status, wait ? 0 : WNOHANG) == r->child) {
		r->child_done = true;
		r->child_status = exit_code_of(status);
	}
}

/*
 * The recording stopped first: the command was only there to be traced.
 * SIGTERM, and SIGKILL when it is still there after COMMAND_GRACE_MS.
 */
void rec_command_end(struct recorder *r)
{
	if (!r->child)
		return;
	if (r->child_go_fd >= 0)
		close(r->child_go_fd);
	rec_command_reap(r, false);
	if (!r->child_done)
		kill(r->child, SIGTERM);
	for (int ms = 0; ms < COMMAND_GRACE_MS && !r->child_done; ms += 10) {
		usleep(10000);
		rec_command_reap(r, false);
	}
	if (!r->child_done)
		kill(r->child, SIGKILL);
	rec_command_reap(r, true);
}
