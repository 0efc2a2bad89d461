/*
 * fs.h — file helpers: reads under the sysroot, whole-file reads with a cap,
 * and atomic writes.
 *
 * Host facts are read through sysroot_path() so a test can point
 * LOBES_SYSROOT at a fixture tree of a real box. Writes that an operator
 * relies on go through fs_write_atomic(): temp file in the same directory,
 * fsync, rename, fsync of the directory — a reader sees the old file or the
 * new one, never a torn one.
 */
#ifndef LOBES_FS_H
#define LOBES_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "err.h"

/* "<LOBES_SYSROOT><path>" (or path itself when unset/empty); caller frees. */
char *sysroot_path(const char *path);

/* Read a whole file (at most cap bytes; 0 = 64 MiB). Returns a NUL-terminated
 * string the caller frees, or NULL with *err set (code EXIT_CONFIG). When
 * len is non-NULL it receives the byte count. */
char *fs_read(const char *path, size_t cap, size_t *len, struct err **err);
/* As fs_read but the path is taken under the sysroot; a missing file is not
 * an error: returns NULL and leaves *err NULL. */
char *fs_read_sys(const char *path, size_t cap, struct err **err);

bool fs_exists(const char *path);
bool fs_is_dir(const char *path);

/* mkdir -p with mode for the created directories. */
int fs_mkdirs(const char *path, mode_t mode, struct err **err);

/* Write data atomically to path with the given mode. The environment
 * variable LOBES_FAULT_AFTER_TEMP (tests only) makes the process exit with
 * status 99 after writing the temp file and before the rename, to prove a
 * killed write never leaves a torn file. */
int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		    struct err **err);

/* Trim trailing whitespace in place; returns s. */
char *str_rstrip(char *s);
/* Strip leading and trailing whitespace, returning a pointer into s. */
char *str_strip(char *s);
bool str_starts_with(const char *s, const char *prefix);
/* The whole of s as a number (strtod); false when s is not one. */
bool str_to_double(const char *s, double *out);
/* Case-insensitive substring test. */
bool str_icontains(const char *haystack, const char *needle);

#endif
