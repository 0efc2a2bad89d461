/*
 * image_probe.c — `doctor --image-probe`: the image's own env registry,
 * read by running the image (never pulled) and cached by digest under
 * <deploy-dir>/cache/vllm-env/<digest>.txt. Also the reader of a registry
 * list (vllm_env_list_parse), which env_registry.c uses for the build noise
 * list: it lives here, below env_registry.c, so the two files do not call
 * each other.
 */
#include <ctype.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strv.h"
#include "doctor_int.h"

/* A registry line's first word, kept when it is a name (letters, digits,
 * '_') followed by white space or nothing. */
static bool env_name(char *line)
{
	size_t n = strspn(line, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
	if (n == 0 || (line[n] && !isspace((unsigned char)line[n])))
		return false;
	line[n] = '\0';
	return true;
}

char **vllm_env_list_parse(const char *text)
{
	return strv_lines(text, env_name);
}

char **image_registry(struct doctor_report *r, const struct doctor_opts *o,
			     const char *docker, const char *image, char **source)
{
	if (!image || !*image) {
		doc_add(r, "env-registry", SEV_WARNING,
		    "--image-probe: a role has no image in its compose service; using the recorded list");
		return NULL;
	}
	/* Present here? (never pulled). The cache is keyed by the pinned digest,
	 * else by the image id. */
	_cleanup_free_ char *digest = NULL;
	const char *at = strchr(image, '@');
	struct run_out ro;
	char *insp[] = { (char *)docker, "image", "inspect", "--format", "{{.Id}}", (char *)image, NULL };
	run_cmd(insp, DOCKER_TIMEOUT_MS, &ro);
	_cleanup_free_ char *id = first_line(ro.out);
	if (ro.rc != 0 || !digest_complete(id)) {
		struct check *c = doc_add(r, "env-registry", SEV_WARNING,
					  "--image-probe: image '%s' is not available here (%s); it is never "
					  "pulled; using the recorded list",
					  image, ro.why ? ro.why : "no image id");
		c->remedy = xasprintf("pull or load the image yourself (docker pull %s), then run "
				      "`lobes doctor --image-probe` again", image);
		run_out_free(&ro);
		return NULL;
	}
	run_out_free(&ro);
	digest = at && digest_complete(at + 1) ? xstrdup(at + 1) : TAKE_PTR(id);
	_cleanup_free_ char *cdir = xasprintf("%s/cache/vllm-env", o->dir);
	_cleanup_free_ char *cpath = xasprintf("%s/%s.txt", cdir, digest);
	struct err *e = NULL;
	if (fs_exists(cpath)) {
		_cleanup_free_ char *text = fs_read(cpath, 4 << 20, NULL, &e);
		if (text) {
			char **v = vllm_env_list_parse(text);
			if (v[0]) {
				*source = xasprintf("image %s, cached in %s", digest, cpath);
				return v;
			}
			strv_free(v);
		}
		err_free(e);
		e = NULL;
	}
	char *argv[] = { (char *)docker, "run", "--rm", "--pull", "never", "--entrypoint", "python3",
			 (char *)image, "-c",
			 "import vllm.envs as e; print('\\n'.join(e.environment_variables))", NULL };
	memset(&ro, 0, sizeof(ro));
	run_cmd(argv, o->probe_timeout_ms > 0 ? o->probe_timeout_ms : PROBE_TIMEOUT_MS, &ro);
	char **v = ro.rc == 0 ? vllm_env_list_parse(ro.out) : NULL;
	if (!v || !v[0]) {
		doc_add(r, "env-registry", SEV_WARNING,
		    "--image-probe: the image did not list its env registry (%s); using the recorded list",
		    ro.why ? ro.why : "empty answer");
		strv_free(v);
		run_out_free(&ro);
		return NULL;
	}
	run_out_free(&ro);
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	buf_printf(&b, "# vllm.envs.environment_variables of %s (%s), probed by lobes doctor\n", image,
		   digest);
	for (char **x = v; *x; x++)
		buf_printf(&b, "%s\n", *x);
	if (fs_mkdirs(cdir, 0700, &e) < 0 || fs_write_atomic(cpath, b.data, b.len, 0600, &e) < 0) {
		doc_add(r, "env-registry", SEV_INFO, "--image-probe: the list could not be cached: %s", e->msg);
		err_free(e);
		*source = xasprintf("image %s, probed now", digest);
	} else {
		*source = xasprintf("image %s, probed now and cached in %s", digest, cpath);
	}
	return v;
}
