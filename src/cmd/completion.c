/*
 * completion.c — `lobes completion bash|zsh|fish`: a shell completion
 * script generated from the command table (src/main.c), so it never drifts
 * from `-h`. Each command's options are the `--x` words of its synopsis and
 * of its help lines that start with one (the text `-h` prints); an option
 * takes a value when the synopsis or its help line names a placeholder
 * after it (`--profile P`). Placeholders say what to offer: a profile for
 * --profile, a role for ROLE/--role, a question for QUESTION, a cached
 * checkpoint for MODEL, directories and files for DIR/FILE.
 *
 * Lists that change on a box (profiles under DIR/profiles, questions, the
 * Hugging Face cache) are not baked in: the script asks `lobes completion
 * --values KIND` when it completes.
 */
#include <ctype.h>
#include <getopt.h>
#include <string.h>

#include "../lib/facts/facts.h"
#include "../lib/knowledge/knowledge.h"
#include "../lib/util/buf.h"
#include "../lib/util/cleanup.h"
#include "../lib/util/strv.h"
#include "../lib/verify/verify.h"
#include "cmd.h"

#define MAX_OPTS 48
#define MAX_POS 4

struct copt {
	char name[40];
	char arg[24]; /* "" = a flag */
};

struct cspec {
	const struct command *c;
	struct copt opts[MAX_OPTS];
	size_t n;
	char pos[MAX_POS][24];
	size_t npos;
	bool repeat; /* the last positional repeats (ROLE...) */
};

static const char globals[] = "--json --dir --no-color -h --help";

/* The placeholder a word starts with ("N" of "N,..", "FILE" of "FILE.md"):
 * a run of capitals not followed by a letter or digit; NULL for none.
 * Returns a static copy. */
static const char *placeholder(const char *w)
{
	static __thread char ph[24];
	size_t n = strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
	if (!n || n >= sizeof(ph) || isalnum((unsigned char)w[n]))
		return NULL;
	snprintf(ph, sizeof(ph), "%.*s", (int)n, w);
	return ph;
}

static void add_opt(struct cspec *s, const char *name, size_t len, const char *arg)
{
	if (len >= sizeof(s->opts[0].name))
		return;
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->opts[i].name) == len && !strncmp(s->opts[i].name, name, len)) {
			if (arg && !*s->opts[i].arg)
				snprintf(s->opts[i].arg, sizeof(s->opts[i].arg), "%s", arg);
			return;
		}
	if (s->n == MAX_OPTS)
		return;
	snprintf(s->opts[s->n].name, sizeof(s->opts[0].name), "%.*s", (int)len, name);
	snprintf(s->opts[s->n].arg, sizeof(s->opts[0].arg), "%s", arg ? arg : "");
	s->n++;
}

/* A synopsis word stripped of [ ] and ... ; *rep set for "X...". */
static void bare(const char *in, char *out, size_t cap, bool *rep)
{
	while (*in == '[')
		in++;
	size_t n = strcspn(in, "]");
	snprintf(out, cap, "%.*s", (int)n, in);
	char *dots = strstr(out, "...");
	*rep = dots != NULL;
	if (dots)
		*dots = '\0';
}

static void read_synopsis(struct cspec *s)
{
	_cleanup_strv_ char **w = NULL;
	_cleanup_free_ char *copy = xstrdup(s->c->synopsis);
	for (char *save = NULL, *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
		strv_push(&w, t);
	for (size_t i = 2; w && w[i]; i++) { /* after "lobes VERB" */
		char b[40], nb[40];
		bool rep, nrep;
		bare(w[i], b, sizeof(b), &rep);
		if (!strncmp(b, "--", 2) && b[2]) {
			bool closes = strchr(w[i], ']') != NULL;
			const char *arg = NULL;
			if (!closes && w[i + 1]) {
				bare(w[i + 1], nb, sizeof(nb), &nrep);
				arg = placeholder(nb);
			}
			add_opt(s, b, strlen(b), arg);
			if (arg)
				i++;
		} else if (placeholder(b) && s->npos < MAX_POS) {
			snprintf(s->pos[s->npos++], sizeof(s->pos[0]), "%s", placeholder(b));
			s->repeat = rep;
		}
	}
}

/* Help lines that start with an option: "  --profile P   use ...". */
static void read_help(struct cspec *s)
{
	for (const char *l = s->c->help; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		const char *p = l;
		while (p < l + len && *p == ' ')
			p++;
		if (p > l && p + 2 < l + len && p[0] == '-' && p[1] == '-' && isalpha((unsigned char)p[2])) {
			const char *q = p + 2;
			while (q < l + len && (isalnum((unsigned char)*q) || *q == '-'))
				q++;
			const char *arg = q < l + len && *q == ' ' ? placeholder(q + 1) : NULL;
			add_opt(s, p, (size_t)(q - p), arg);
		}
		l = e ? e + 1 : l + len;
	}
}

static void spec_of(const struct command *c, struct cspec *s)
{
	memset(s, 0, sizeof(*s));
	s->c = c;
	read_synopsis(s);
	read_help(s);
}

/* What to offer for an option's value; "none" when nothing in particular. */
static const char *opt_kind(const struct copt *o)
{
	if (!strcmp(o->name, "--profile"))
		return "profiles";
	if (!strcmp(o->name, "--role"))
		return "roles";
	if (!strcmp(o->arg, "DIR") || !strcmp(o->arg, "D"))
		return "dirs";
	if (!strcmp(o->arg, "F") || !strcmp(o->arg, "FILE"))
		return "files";
	return "none";
}

static const char *pos_kind(const char *ph)
{
	static const char *const map[][2] = { { "ROLE", "roles" },	   { "QUESTION", "questions" },
					      { "MODEL", "models" },	   { "FILE", "files" },
					      { "SHELL", "shells" },	   { "COMMAND", "commands" } };
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(ph, map[i][0]))
			return map[i][1];
	return "none";
}

/* ' → '\'' for a single-quoted shell word (bash, zsh); fish escapes with \'. */
static void quoted(struct buf *b, const char *s, bool fish)
{
	buf_printf(b, "'");
	for (; *s; s++) {
		if (*s == '\'')
			buf_printf(b, fish ? "\\'" : "'\\''");
		else if (fish && *s == '\\')
			buf_printf(b, "\\\\");
		else
			buf_printf(b, "%c", *s);
	}
	buf_printf(b, "'");
}

/* The shell functions bash and zsh share: _lobes_optarg CMD OPT (the kind
 * of an option's value; status 1 for a flag), _lobes_opts CMD, _lobes_pos
 * CMD N (the kind of the N-th positional, 0-based). */
static void common_functions(struct buf *b, const struct cspec *sp, size_t n)
{
	buf_printf(b, "_lobes_optarg() {\n\tcase \"$1 $2\" in\n");
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < sp[i].n; j++)
			if (*sp[i].opts[j].arg)
				buf_printf(b, "\t\"%s %s\") echo %s ;;\n", sp[i].c->name, sp[i].opts[j].name,
					   opt_kind(&sp[i].opts[j]));
	buf_printf(b, "\t*) return 1 ;;\n\tesac\n}\n");
	buf_printf(b, "_lobes_opts() {\n\tcase $1 in\n");
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "\t%s) echo", sp[i].c->name);
		for (size_t j = 0; j < sp[i].n; j++)
			buf_printf(b, " %s", sp[i].opts[j].name);
		buf_printf(b, " ;;\n");
	}
	buf_printf(b, "\tesac\n}\n");
	buf_printf(b, "_lobes_pos() {\n\tcase $1 in\n");
	for (size_t i = 0; i < n; i++) {
		if (!sp[i].npos)
			continue;
		buf_printf(b, "\t%s) case $2 in", sp[i].c->name);
		for (size_t j = 0; j < sp[i].npos; j++) {
			if (sp[i].repeat && j + 1 == sp[i].npos)
				buf_printf(b, " *)");
			else
				buf_printf(b, " %zu)", j);
			buf_printf(b, " echo %s ;;", pos_kind(sp[i].pos[j]));
		}
		buf_printf(b, " esac ;;\n");
	}
	buf_printf(b, "\tesac\n}\n");
	buf_printf(b, "_lobes_commands=\"");
	for (size_t i = 0; i < n; i++)
		buf_printf(b, "%s%s", i ? " " : "", sp[i].c->name);
	buf_printf(b, "\"\n_lobes_globals=\"%s\"\n", globals);
}

/* The scan both share: the command word, how many positionals precede
 * the word being completed, and --dir. W is the words array, FIRST the
 * index of the first word after "lobes", CUR the index being completed. */
static void scan_loop(struct buf *b, const char *w, const char *first, const char *cur)
{
	buf_printf(b,
		   "\tlocal cmd=\"\" npos=0 i skip=0 w kind\n"
		   "\t_lobes_dir=\"\"\n"
		   "\tfor ((i = %s; i < %s; i++)); do\n"
		   "\t\tw=${%s[i]}\n"
		   "\t\tif ((skip)); then skip=0; continue; fi\n"
		   "\t\tcase $w in\n"
		   "\t\t--dir) skip=1; _lobes_dir=${%s[i+1]} ;;\n"
		   "\t\t-*) if [[ -n $cmd ]] && _lobes_optarg \"$cmd\" \"$w\" >/dev/null; then skip=1; fi ;;\n"
		   "\t\t*) if [[ -z $cmd ]]; then cmd=$w; else npos=$((npos + 1)); fi ;;\n"
		   "\t\tesac\n"
		   "\tdone\n",
		   first, cur, w, w);
}

static void gen_bash(struct buf *b, const struct cspec *sp, size_t n)
{
	buf_printf(b, "# bash completion for lobes, generated by `lobes completion bash` from its\n"
		      "# command table. Install: save as lobes in a bash-completion directory\n"
		      "# (e.g. /usr/share/bash-completion/completions/), or source it.\n");
	common_functions(b, sp, n);
	buf_printf(b,
		   "_lobes_values() {\n"
		   "\tcase $1 in\n"
		   "\troles) echo cortex senses hand embedder reranker ;;\n"
		   "\tshells) echo bash zsh fish ;;\n"
		   "\tcommands) echo $_lobes_commands ;;\n"
		   "\t*) \"${COMP_WORDS[0]}\" ${_lobes_dir:+--dir \"$_lobes_dir\"} completion --values \"$1\" 2>/dev/null ;;\n"
		   "\tesac\n}\n"
		   "_lobes_reply() {\n"
		   "\tcase $1 in\n"
		   "\tdirs) COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n"
		   "\tfiles) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
		   "\tnone | \"\") COMPREPLY=() ;;\n"
		   "\t*) COMPREPLY=($(compgen -W \"$(_lobes_values \"$1\")\" -- \"$cur\")) ;;\n"
		   "\tesac\n}\n"
		   "_lobes() {\n"
		   "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} _lobes_dir\n");
	scan_loop(b, "COMP_WORDS", "1", "COMP_CWORD");
	buf_printf(b,
		   "\tif [[ $prev == --dir ]]; then _lobes_reply dirs; return; fi\n"
		   "\tif [[ -n $cmd ]] && kind=$(_lobes_optarg \"$cmd\" \"$prev\"); then _lobes_reply \"$kind\"; return; fi\n"
		   "\tif [[ -z $cmd ]]; then\n"
		   "\t\tif [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$_lobes_globals --version\" -- \"$cur\"))\n"
		   "\t\telse COMPREPLY=($(compgen -W \"$_lobes_commands\" -- \"$cur\")); fi\n"
		   "\t\treturn\n\tfi\n"
		   "\tif [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$(_lobes_opts \"$cmd\") $_lobes_globals\" -- \"$cur\")); return; fi\n"
		   "\t_lobes_reply \"$(_lobes_pos \"$cmd\" \"$npos\")\"\n"
		   "}\n"
		   "complete -F _lobes lobes\n");
}

static void gen_zsh(struct buf *b, const struct cspec *sp, size_t n)
{
	buf_printf(b, "#compdef lobes\n"
		      "# zsh completion for lobes, generated by `lobes completion zsh` from its\n"
		      "# command table. Install: save as _lobes in a directory of $fpath\n"
		      "# (e.g. /usr/share/zsh/vendor-completions/), or source it after compinit.\n");
	common_functions(b, sp, n);
	buf_printf(b, "_lobes_describe=(\n");
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *e = xasprintf("%s:%s", sp[i].c->name, sp[i].c->summary);
		buf_printf(b, "\t");
		quoted(b, e, false);
		buf_printf(b, "\n");
	}
	buf_printf(b, ")\n"
		      "_lobes_values() {\n"
		      "\tcase $1 in\n"
		      "\troles) print -l cortex senses hand embedder reranker ;;\n"
		      "\tshells) print -l bash zsh fish ;;\n"
		      "\tcommands) print -l ${=_lobes_commands} ;;\n"
		      "\t*) ${words[1]} ${_lobes_dir:+--dir $_lobes_dir} completion --values $1 2>/dev/null ;;\n"
		      "\tesac\n}\n"
		      "_lobes_reply() {\n"
		      "\tlocal -a v\n"
		      "\tcase $1 in\n"
		      "\tdirs) _files -/ ;;\n"
		      "\tfiles) _files ;;\n"
		      "\tnone | '') ;;\n"
		      "\t*) v=(${(f)\"$(_lobes_values $1)\"}); compadd -a v ;;\n"
		      "\tesac\n}\n"
		      "_lobes() {\n"
		      "\tlocal cur=${words[CURRENT]} prev=${words[CURRENT-1]} _lobes_dir\n"
		      "\tlocal -a o\n");
	scan_loop(b, "words", "2", "CURRENT");
	buf_printf(b,
		   "\tif [[ $prev == --dir ]]; then _files -/; return; fi\n"
		   "\tif [[ -n $cmd ]] && kind=$(_lobes_optarg $cmd $prev); then _lobes_reply $kind; return; fi\n"
		   "\tif [[ -z $cmd ]]; then\n"
		   "\t\tif [[ $cur == -* ]]; then o=(${=_lobes_globals} --version); compadd -a o\n"
		   "\t\telse _describe command _lobes_describe; fi\n"
		   "\t\treturn\n\tfi\n"
		   "\tif [[ $cur == -* ]]; then o=($(_lobes_opts $cmd) ${=_lobes_globals}); compadd -a o; return; fi\n"
		   "\t_lobes_reply \"$(_lobes_pos $cmd $npos)\"\n"
		   "}\n"
		   "if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then _lobes \"$@\"; else compdef _lobes lobes; fi\n");
}

static void gen_fish(struct buf *b, const struct cspec *sp, size_t n)
{
	buf_printf(b, "# fish completion for lobes, generated by `lobes completion fish` from its\n"
		      "# command table. Install: save as lobes.fish in a directory of\n"
		      "# $fish_complete_path (e.g. /usr/share/fish/vendor_completions.d/).\n"
		      "function __lobes_argopt\n    switch \"$argv[1] $argv[2]\"\n");
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < sp[i].n; j++)
			if (*sp[i].opts[j].arg)
				buf_printf(b, "        case '%s %s'\n            return 0\n", sp[i].c->name,
					   sp[i].opts[j].name);
	buf_printf(b, "    end\n    return 1\nend\n"
		      "# the command word, then the count of positionals before the cursor\n"
		      "function __lobes_scan\n"
		      "    set -l cmd\n    set -l npos 0\n    set -l skip 0\n"
		      "    for t in (commandline -opc)[2..-1]\n"
		      "        if test $skip = 1\n            set skip 0\n            continue\n        end\n"
		      "        switch $t\n"
		      "            case --dir\n                set skip 1\n"
		      "            case '-*'\n"
		      "                if test -n \"$cmd\"; and __lobes_argopt $cmd $t\n                    set skip 1\n                end\n"
		      "            case '*'\n"
		      "                if test -z \"$cmd\"\n                    set cmd $t\n"
		      "                else\n                    set npos (math $npos + 1)\n                end\n"
		      "        end\n    end\n    echo $cmd $npos\nend\n"
		      "function __lobes_cmd_is\n    set -l s (__lobes_scan | string split ' ')\n"
		      "    test \"$s[1]\" = $argv[1]\nend\n"
		      "function __lobes_no_cmd\n    set -l s (__lobes_scan | string split ' ')\n"
		      "    test -z \"$s[1]\"\nend\n"
		      "function __lobes_pos_is\n    set -l s (__lobes_scan | string split ' ')\n"
		      "    test \"$s[1]\" = $argv[1]; or return 1\n"
		      "    test \"$s[2]\" = $argv[2]; or begin; test (count $argv) -gt 2; and test \"$s[2]\" -ge $argv[2]; end\nend\n"
		      "function __lobes_values\n    switch $argv[1]\n"
		      "        case roles\n            printf '%%s\\n' cortex senses hand embedder reranker\n"
		      "        case shells\n            printf '%%s\\n' bash zsh fish\n"
		      "        case '*'\n            lobes completion --values $argv[1] 2>/dev/null\n"
		      "    end\nend\n"
		      "complete -c lobes -f\n"
		      "complete -c lobes -l json -d 'machine-readable output'\n"
		      "complete -c lobes -l no-color -d 'no color'\n"
		      "complete -c lobes -l dir -r -a '(__fish_complete_directories)' -d 'deploy directory'\n"
		      "complete -c lobes -s h -l help -d 'help'\n");
	for (size_t i = 0; i < n; i++) {
		buf_printf(b, "complete -c lobes -n __lobes_no_cmd -a %s -d ", sp[i].c->name);
		quoted(b, sp[i].c->summary, true);
		buf_printf(b, "\n");
	}
	for (size_t i = 0; i < n; i++) {
		const char *cn = sp[i].c->name;
		for (size_t j = 0; j < sp[i].n; j++) {
			const struct copt *o = &sp[i].opts[j];
			if (!strcmp(o->name, "--json") || !strcmp(o->name, "--dir"))
				continue;
			buf_printf(b, "complete -c lobes -n '__lobes_cmd_is %s' -l %s", cn, o->name + 2);
			const char *k = opt_kind(o);
			if (*o->arg && !strcmp(k, "dirs"))
				buf_printf(b, " -r -a '(__fish_complete_directories)'");
			else if (*o->arg && !strcmp(k, "files"))
				buf_printf(b, " -r -F");
			else if (*o->arg && strcmp(k, "none"))
				buf_printf(b, " -r -a '(__lobes_values %s)'", k);
			else if (*o->arg)
				buf_printf(b, " -r");
			buf_printf(b, "\n");
		}
		for (size_t j = 0; j < sp[i].npos; j++) {
			const char *k = pos_kind(sp[i].pos[j]);
			if (!strcmp(k, "none"))
				continue;
			bool last_rep = sp[i].repeat && j + 1 == sp[i].npos;
			buf_printf(b, "complete -c lobes -n '__lobes_pos_is %s %zu%s'", cn, j,
				   last_rep ? " more" : "");
			if (!strcmp(k, "files"))
				buf_printf(b, " -F\n");
			else
				buf_printf(b, " -a '(__lobes_values %s)'\n", k);
		}
	}
}

/* `--values KIND`: one candidate a line. */
static int values(struct ctx *ctx, const char *kind)
{
	struct err *e = NULL;
	if (!strcmp(kind, "roles")) {
		for (int r = 0; r < ROLE__COUNT; r++)
			printf("%s\n", role_name((enum role_id)r));
	} else if (!strcmp(kind, "shells")) {
		printf("bash\nzsh\nfish\n");
	} else if (!strcmp(kind, "commands")) {
		for (size_t i = 0; i < ctx->n_commands; i++)
			printf("%s\n", ctx->commands[i].name);
	} else if (!strcmp(kind, "profiles")) {
		struct knowledge k = { 0 };
		_cleanup_free_ char *op = xasprintf("%s/profiles", ctx->dir);
		if (knowledge_load(&k, op, &e) < 0)
			return cmd_fail(ctx, e);
		for (size_t i = 0; i < k.n_profiles; i++)
			printf("%s\n", k.profiles[i].name);
		knowledge_free(&k);
	} else if (!strcmp(kind, "questions")) {
		struct question_set qs = { 0 };
		if (questions_load(&qs, ctx->dir, &e) < 0) {
			questions_free(&qs);
			return cmd_fail(ctx, e);
		}
		for (size_t i = 0; i < qs.n; i++)
			printf("%s\n", qs.q[i].id);
		questions_free(&qs);
	} else if (!strcmp(kind, "models")) {
		_cleanup_strv_ char **m = checkpoint_cache_list(NULL);
		for (size_t i = 0; m && m[i]; i++)
			printf("%s\n", m[i]);
	} else {
		return cmd_usage_error(ctx, "unknown kind '%s'; expected roles, profiles, questions, "
					    "models, commands or shells", kind);
	}
	return 0;
}

CMD(completion)
{
	static const struct option opts[] = { { "values", required_argument, NULL, 'v' },
					      { NULL, 0, NULL, 0 } };
	const char *kind = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'v')
			kind = optarg;
		else
			return cmd_usage_error(ctx, "unknown option");
	}
	if (kind)
		return optind < argc ? cmd_usage_error(ctx, "--values takes no other argument")
				     : values(ctx, kind);
	if (optind + 1 != argc)
		return cmd_usage_error(ctx, "expected one shell: bash, zsh or fish");
	const char *sh = argv[optind];
	if (strcmp(sh, "bash") && strcmp(sh, "zsh") && strcmp(sh, "fish"))
		return cmd_usage_error(ctx, "unknown shell '%s'; expected bash, zsh or fish", sh);
	struct cspec *sp = xcalloc(ctx->n_commands, sizeof(*sp));
	for (size_t i = 0; i < ctx->n_commands; i++)
		spec_of(&ctx->commands[i], &sp[i]);
	_cleanup_buf_ struct buf b;
	buf_init(&b, 0);
	if (!strcmp(sh, "bash"))
		gen_bash(&b, sp, ctx->n_commands);
	else if (!strcmp(sh, "zsh"))
		gen_zsh(&b, sp, ctx->n_commands);
	else
		gen_fish(&b, sp, ctx->n_commands);
	free(sp);
	if (ctx->json) {
		json_auto_t *j = json_pack("{s:s, s:s}", "shell", sh, "script", buf_str(&b));
		out_json(j);
	} else {
		fputs(buf_str(&b), stdout);
	}
	return 0;
}
