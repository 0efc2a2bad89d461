/*
 * triage.c — `lobes triage [--follow] [--all] [--timeout S] [FILE...]`: read
 * vLLM boot logs and name the known causes in them.
 *
 * Signatures are the shipped data/signatures plus <deploy-dir>/signatures.
 * Each input (a file, or stdin for "-" or no FILE) gets its own matcher
 * (line numbers are per input). The result is one JSON object, printed as
 * text or --json: per input the matches (each signature's first occurrence
 * with its count, or with --all every occurrence), a per-signature summary,
 * and the cause (the first specific fatal line). With --follow the one
 * input is read as it grows (every 200 ms) until `Application startup
 * complete.`, a fatal signature, the end of a pipe, --timeout, or SIGINT;
 * text output then prints each match as it comes and the summary at the end.
 *
 * The report (JSON and text) is formatted in triage_report.c.
 *
 * Exit: 1 when a fatal signature matched, else 0; 3 when an input cannot be
 * read or a signature file is bad (nothing is printed then).
 *
 * Inputs are sources: a file descriptor and a label; everything downstream
 * (feed, follow, print) does not care where bytes come from. `--role R`
 * (a container's log through the Docker Engine API) plugs in at
 * open_sources(): resolve R to its container, open the log stream as a
 * source labelled "role R", and run it through run_source() like a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/knowledge/knowledge.h"
#include "../lib/runtime/runtime.h"
#include "../lib/util/cleanup.h"
#include "../lib/triage/triage.h"
#include "../lib/util/secret.h"
#include "cmd.h"
#include "triage_report.h"

#define BLOCK ((size_t)256 << 10) /* fits in L2: the copy and the scan stay in cache */
#define POLL_MS 200
#define MAP_WINDOW ((size_t)16 << 20) /* a multiple of the page size */

struct source {
	const char *label; /* "FILE" or "(stdin)" */
	int fd;
	bool regular;      /* a regular file: EOF is "no more yet" when following */
};

struct opts {
	bool follow, all;
	double timeout;    /* seconds; 0 = none (with --follow) */
	const char *version; /* --vllm-version, or NULL */
};

static volatile sig_atomic_t interrupted;
static sigjmp_buf bus_jmp;
static char *volatile bus_map;
static size_t bus_len;
static struct sigaction bus_old;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

/* Map n bytes of fd at off and feed them. 0 done, -1 not mapped, -2 the
 * file shrank under the map (SIGBUS; the matcher's state is then not to
 * be used). */
static int feed_window(struct triage *t, int fd, uint64_t off, size_t n)
{
	char *map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, (off_t)off);
	if (map == MAP_FAILED)
		return -1;
	bus_map = map;
	bus_len = n;
	madvise(map, n, MADV_WILLNEED);
	struct sigaction sa = { .sa_handler = on_sigbus };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &bus_old);
	if (sigsetjmp(bus_jmp, 1)) {
		sigaction(SIGBUS, &bus_old, NULL);
		munmap(bus_map, bus_len);
		return -2;
	}
	triage_feed(t, map, n);
	sigaction(SIGBUS, &bus_old, NULL);
	munmap(map, n);
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* --- reading ---------------------------------------------------------- */

struct live {
	const struct ctx *ctx;
	const struct triage *t;
	const char *label;
	bool all;
	bool print; /* text output while following */
};

static void live_cb(const struct triage_match *m, void *opaque)
{
	struct live *l = opaque;
	if (!l->print)
		return;
	/* default mode prints a signature's first occurrence only */
	if (!l->all && triage_count(l->t, m->sig_index) > 1)
		return;
	json_t *j = triage_match_json(l->t, m, 0);
	secret_mask_json(j);
	triage_print_match(l->ctx, l->label, j);
	json_decref(j);
	fflush(stdout);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool should_stop(const struct triage *t, const struct sigset *set, const char **why)
{
	if (triage_fatal(t)) {
		*why = "fatal";
		return true;
	}
	const struct signature *done = sigset_find(set, "startup-complete");
	if (done && triage_count(t, (size_t)(done - set->sigs))) {
		*why = "startup-complete";
		return true;
	}
	return false;
}

/* Read src to its end (or, following, to a stop condition) into t. Sets
 * *stopped (following only). A source that is not a regular file is read
 * through poll(): following, every POLL_MS the held-back lines are matched
 * (triage_flush) and the stop conditions and --timeout are checked, so a
 * FIFO nobody writes to ends at --timeout. Errors: EXIT_CONFIG for a read
 * failure. */
static int run_source(const struct source *src, const struct opts *o, const struct sigset *set,
		      struct triage *t, const char **stopped, struct err **err)
{
	/* a regular file read once: map it a window at a time (no copy
	 * through read(), resident pages bounded by MAP_WINDOW) */
	struct stat st;
	if (src->regular && !o->follow && fstat(src->fd, &st) == 0 && st.st_size > 0) {
		uint64_t len = (uint64_t)st.st_size;
		int r = 0;
		for (uint64_t off = 0; off < len && r == 0; off += MAP_WINDOW)
			r = feed_window(t, src->fd, off, len - off < MAP_WINDOW ? (size_t)(len - off) : MAP_WINDOW);
		if (r == -2)
			return err_set(err, EXIT_CONFIG, "read '%s': the file shrank while it was read",
				       src->label);
		if (r == 0) {
			triage_finish(t);
			return 0;
		}
		if (lseek(src->fd, 0, SEEK_SET) != 0 || triage_lines(t))
			return err_errno(err, EXIT_CONFIG, errno, "read '%s'", src->label);
		/* the first window could not be mapped: read() below */
	}
	_cleanup_free_ char *buf = xcalloc(1, BLOCK);
	double deadline = o->timeout > 0 ? now_s() + o->timeout : 0;
	for (;;) {
		if (!src->regular) {
			struct pollfd p = { .fd = src->fd, .events = POLLIN };
			int r = poll(&p, 1, o->follow ? POLL_MS : -1);
			if (r < 0 && errno != EINTR)
				return err_errno(err, EXIT_CONFIG, errno, "read '%s'", src->label);
			if (r <= 0)
				goto idle;
		}
		ssize_t n = read(src->fd, buf, BLOCK);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				goto idle;
			return err_errno(err, EXIT_CONFIG, errno, "read '%s'", src->label);
		}
		if (n > 0) {
			triage_feed(t, buf, (size_t)n);
			if (o->follow && should_stop(t, set, stopped))
				break;
			if (o->follow && deadline && now_s() >= deadline) {
				*stopped = "timeout";
				break;
			}
			continue;
		}
		/* end of input for now */
		if (!o->follow || !src->regular) {
			if (o->follow)
				*stopped = "end-of-input";
			break;
		}
		struct timespec ts = { 0, POLL_MS * 1000000L };
		nanosleep(&ts, NULL);
idle:
		if (!o->follow)
			continue;
		/* nothing new: what was held for a continuation is whole */
		triage_flush(t);
		if (should_stop(t, set, stopped))
			break;
		if (interrupted) {
			*stopped = "interrupted";
			break;
		}
		if (deadline && now_s() >= deadline) {
			*stopped = "timeout";
			break;
		}
	}
	triage_finish(t);
	if (o->follow && !*stopped)
		should_stop(t, set, stopped);
	return 0;
}

static void close_sources(struct source *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].fd > 0)
			close(s[i].fd);
	free(s);
}

static bool role_previous; /* --previous: the boot before the current one, as kept */

/* The boot before role's current one, from DIR/logs/ROLE/ (logs.c). */
static char *previous_boot(const char *dir, const char *role, struct err **err)
{
	unsigned *nos;
	size_t n;
	if (logstore_list(dir, role, &nos, &n, err) < 0)
		return NULL;
	unsigned no = n >= 2 ? nos[n - 2] : 0;
	free(nos);
	if (!no) {
		_cleanup_free_ char *d = logstore_role_dir(dir, role);
		err_set(err, EXIT_CONFIG, "no previous boot of %s kept in '%s' (see lobes logs -h)", role, d);
		return NULL;
	}
	return logstore_read(dir, role, no, NULL, err);
}

/* The boot log of role's container in the deploy dir's project (with
 * --previous: the boot before it, as kept), as an in-memory file (a memfd
 * the rest reads like a regular file). */
static int role_log_fd(const char *dir, const char *role, struct err **err)
{
	struct fleet fleet;
	if (fleet_load(&fleet, dir, err) < 0)
		return -1;
	struct engine eng = { 0 };
	struct engine_container_list l = { 0 };
	int fd = -1;
	char *log = NULL;
	if (role_previous) {
		if (!(log = previous_boot(dir, role, err)))
			goto out;
		goto hold;
	}
	if (engine_open(&eng, err) < 0 || engine_list_project(&eng, fleet.project, &l, err) < 0)
		goto out;
	const struct engine_container *c = NULL;
	for (size_t i = 0; i < l.n; i++)
		if (strcmp(l.c[i].service, role) == 0)
			c = &l.c[i];
	if (!c) {
		err_set(err, EXIT_RUNTIME, "role '%s' has no container in project '%s'", role, fleet.project);
		goto out;
	}
	struct engine_log_opts lo = { .tail = -1, .since = 0, .cap = (size_t)1 << 30 };
	if (engine_logs(&eng, c->id, &lo, &log, err) < 0)
		goto out;
hold:
	fd = memfd_create("lobes-role-log", MFD_CLOEXEC);
	size_t len = strlen(log), off = 0;
	while (fd >= 0 && off < len) {
		ssize_t w = write(fd, log + off, len - off);
		if (w <= 0) {
			close(fd);
			fd = -1;
		} else {
			off += (size_t)w;
		}
	}
	free(log);
	if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		err_errno(err, EXIT_RUNTIME, errno, "hold the log of role '%s'", role);
		fd = -1;
	}
out:
	engine_container_list_free(&l);
	engine_close(&eng);
	fleet_free(&fleet);
	return fd;
}

/* Open every input before reading any, so an unreadable one fails the run
 * before output starts. A role's log (--role) is read whole from the Engine
 * API into memory first. */
static struct source *open_sources(char **files, size_t n, const char *dir, const char *role,
				    size_t *out_n, struct err **err)
{
	size_t cnt = n ? n : 1;
	struct source *s = xcalloc(cnt, sizeof(*s));
	for (size_t i = 0; i < cnt; i++) {
		const char *f = n ? files[i] : "-";
		if (role) {
			s[i].label = role;
			s[i].fd = role_log_fd(dir, role, err);
			if (s[i].fd < 0) {
				free(s);
				return NULL;
			}
		} else if (strcmp(f, "-") == 0) {
			s[i].label = "(stdin)";
			s[i].fd = STDIN_FILENO;
		} else {
			s[i].label = f;
			/* O_NONBLOCK: opening a FIFO must not wait for a writer
			 * (run_source polls it) */
			s[i].fd = open(f, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			if (s[i].fd < 0) {
				err_errno(err, EXIT_CONFIG, errno, "open '%s'", f);
				close_sources(s, i);
				return NULL;
			}
		}
		struct stat st;
		if (fstat(s[i].fd, &st) == 0) {
			if (S_ISDIR(st.st_mode)) {
				err_set(err, EXIT_CONFIG, "'%s' is a directory; expected a log file", f);
				close_sources(s, i + 1);
				return NULL;
			}
			s[i].regular = S_ISREG(st.st_mode);
			if (s[i].regular && s[i].fd != STDIN_FILENO)
				fcntl(s[i].fd, F_SETFL, fcntl(s[i].fd, F_GETFL) & ~O_NONBLOCK);
		}
	}
	*out_n = cnt;
	return s;
}

CMD(triage)
{
	static const struct option longopts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "all", no_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "role", required_argument, NULL, 'r' },
		{ "previous", no_argument, NULL, 'P' },
		{ "vllm-version", required_argument, NULL, 'V' },
		{ 0 },
	};
	struct opts o = { 0 };
	const char *role = NULL;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "fa", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o.follow = true;
			break;
		case 'a':
			o.all = true;
			break;
		case 'P':
			role_previous = true;
			break;
		case 'r':
			if (role_from_name(optarg) < 0)
				return cmd_usage_error(ctx, "unknown role '%s'; expected cortex, senses, hand, "
							    "embedder or reranker", optarg);
			role = optarg;
			break;
		case 'V': {
			struct vversion v;
			if (strlen(optarg) > 64 || !vversion_parse(optarg, &v))
				return cmd_usage_error(ctx, "bad --vllm-version '%s'; expected a version such "
							    "as 0.11.1", optarg);
			o.version = optarg;
			break;
		}
		case 't': {
			char *end;
			errno = 0;
			o.timeout = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o.timeout > 0))
				return cmd_usage_error(ctx, "bad --timeout '%s'; expected seconds > 0", optarg);
			break;
		}
		default:
			return cmd_usage_error(ctx, "unknown option '%s'", argv[optind - 1]);
		}
	}
	char **files = argv + optind;
	size_t n_files = (size_t)(argc - optind);
	if (o.timeout > 0 && !o.follow)
		return cmd_usage_error(ctx, "--timeout needs --follow");
	if (o.follow && n_files > 1)
		return cmd_usage_error(ctx, "--follow reads one input");
	if (role_previous && !role)
		return cmd_usage_error(ctx, "--previous goes with --role");
	if (role && (n_files || o.follow))
		return cmd_usage_error(ctx, "--role reads the role's log as it is now: no FILE, no --follow");

	struct err *e = NULL;
	struct sigset set = { 0 };
	if (sigset_load(&set, ctx->dir, &e) < 0) {
		sigset_free(&set);
		return cmd_fail(ctx, e);
	}
	size_t n_src = 0;
	struct source *src = open_sources(files, n_files, ctx->dir, role, &n_src, &e);
	if (!src) {
		sigset_free(&set);
		return cmd_fail(ctx, e);
	}
	if (o.follow) {
		struct sigaction sa = { .sa_handler = on_signal };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	json_t *result = json_pack("{s:[], s:b}", "files", "fatal", false);
	json_t *arr = json_object_get(result, "files");
	int code = 0;
	for (size_t i = 0; i < n_src; i++) {
		_cleanup_triage_ struct triage *t = triage_new(&set, o.all ? TRIAGE_KEEP_ALL : 0);
		if (o.version)
			triage_set_version(t, o.version);
		struct live l = { ctx, t, src[i].label, o.all, o.follow && !ctx->json };
		triage_set_callback(t, live_cb, &l);
		const char *stopped = NULL;
		if (run_source(&src[i], &o, &set, t, &stopped, &e) < 0) {
			code = cmd_fail(ctx, e);
			break;
		}
		json_t *f = triage_source_json(src[i].label, &set, t, o.all, o.version != NULL, o.follow ? stopped : NULL);
		if (json_is_true(json_object_get(f, "fatal"))) {
			json_object_set(result, "fatal", json_true());
			code = EXIT_CHECK;
		}
		json_array_append_new(arr, f);
	}
	secret_mask_json(result);
	if (!ctx->err) {
		if (ctx->json) {
			out_json(result);
		} else {
			size_t i;
			json_t *f;
			json_array_foreach(arr, i, f) {
				triage_print_notes(f);
				if (!o.follow)
					triage_print_headline(ctx, f);
				if (!o.follow) {
					size_t j;
					json_t *m;
					json_array_foreach(json_object_get(f, "matches"), j, m)
						triage_print_match(ctx, jstr(f, "file"), m);
				}
				triage_print_summary(ctx, f);
			}
		}
	}
	json_decref(result);
	close_sources(src, n_src);
	sigset_free(&set);
	return code;
}
