/* SPDX-License-Identifier: MIT */
/*
 * input.h - "-" as a FILE argument: the trace on standard input.
 *
 * libsttrace reads chunks by offset (the index at the end, chunks in time
 * order), which a pipe cannot do. So a stream on standard input is first
 * copied to an unlinked file in $TMPDIR (default /tmp): `ssh host cat
 * run.sttrace | st-analyze -` costs disk, not memory, and a stream that was
 * cut (a dropped connection) reads back up to its last complete chunk like
 * any cut file. Standard input redirected from a file is read in place.
 * A FIFO given by name is read the same way, so a reader never blocks in
 * open() waiting for its writer.
 */
#ifndef STTRACE_INPUT_H
#define STTRACE_INPUT_H

#include <stddef.h>

/*
 * The path to open for FILE argument `arg`: arg itself, or for "-" or a FIFO
 * a path of the data copied from it (/dev/fd/N). 0, or -1 with a one-line
 * reason in err. Standard input is read once; a second "-" gets the same data.
 */
int input_path(const char *arg, char *path, size_t cap, char *err, size_t errcap);

/*
 * input_path for each of files[0..nfiles-1], replacing "-" or a FIFO by the
 * path of its copy. 0, or EXIT_FAIL after "PROG: FILE: why" on stderr.
 */
int input_files(char **files, int nfiles, const char *prog);

#endif /* STTRACE_INPUT_H */
