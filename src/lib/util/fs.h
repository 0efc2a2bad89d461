/*
 * fs.h — file helpers: reads under the sysroot, whole-file reads with a cap,
 * and atomic writes.
 *
 * Host facts are read through sysroot_path() so a test can point
 * LOBES_SYSROOT at a fixture tree of a real box. Writes that an operator
 * relies on go through fs_write_atomic(): temp file in the same directory,
 * fsync, rename, fsync of the directory — a reader sees the old file or the
 * new one, never a torn one.
 *
 * Temp files are ".NAME.lobes-tmp-<16 random hex digits>", created with
 * O_CREAT|O_EXCL|O_NOFOLLOW relative to an open directory: a name cannot be
 * guessed ahead, and a link or file planted under it makes the open fail
 * (and a new name is drawn) instead of being written through. A temp left
 * by a killed process is recognised by that naming (fs_is_temp_name) and
 * removed by fs_clean_temps(), which writers call under their lock.
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
 * len is non-NULL it receives the byte count. Only regular files are read:
 * a FIFO, device, socket or directory is refused at once (it is opened
 * O_NONBLOCK, so a FIFO without a writer cannot block), and so is a file
 * whose size is over cap, before any byte is read. */
char *fs_read(const char *path, size_t cap, size_t *len, struct err **err);
/* As fs_read but the path is taken under the sysroot; a missing file is not
 * an error: returns NULL and leaves *err NULL. */
char *fs_read_sys(const char *path, size_t cap, struct err **err);

bool fs_exists(const char *path);
bool fs_is_dir(const char *path);

/* mkdir -p with mode for the created directories. */
int fs_mkdirs(const char *path, mode_t mode, struct err **err);

#define FS_TEMP_MARK ".lobes-tmp-"

/* Write data atomically to path with the given mode (temp, fsync, rename,
 * fsync of the directory). */
int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		    struct err **err);
/* Create a new temp file for base in the directory dfd (see above); returns
 * the open fd and sets *name (caller frees), or -1 with *err set. */
int fs_temp_create(int dfd, const char *base, mode_t mode, char **name, struct err **err);
/* fs_temp_create, then write data, fchmod to mode, fsync and close: a
 * complete temp file *name (caller frees) ready to be renamed. */
int fs_write_temp(int dfd, const char *base, const void *data, size_t len, mode_t mode,
		  char **name, struct err **err);
/* True when name is one of our temp names. */
bool fs_is_temp_name(const char *name);
/* Remove every temp file of our naming in dir (a crashed writer's); the
 * count removed, or -1 with *err set. Call it only while holding the lock
 * that writers of dir take. */
int fs_clean_temps(const char *dir, struct err **err);

/* Test hook, called at every step of a write (temp created, temp written,
 * renamed, ...): with LOBES_FAULT_AT=N in the environment the Nth call ends
 * the process with status 99; with LOBES_FAULT_AFTER_TEMP set, the first
 * "temp written" does. Proves a kill at any step leaves a consistent state. */
void fs_fault_point(const char *what);

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
