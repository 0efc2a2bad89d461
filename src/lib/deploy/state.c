/*
 * state.c — the state file, .lobes-state.json: what lobes last wrote to
 * .env, as {"version": 1, "profile": NAME, "env": {KEY: VALUE}}. init
 * compares the .env with it to tell an operator's edit (a value that
 * differs from what lobes wrote) from a stale render; without it, every
 * value that differs from the render counts as the operator's. It changes
 * in the same commit as the .env it describes (deploy_int.h).
 */
#include <jansson.h>
#include <stdlib.h>

#include "deploy_int.h"

int deploy_state_parse(const char *dir, const char *text, json_t **state, struct err **err)
{
	*state = NULL;
	if (!text)
		return 0;
	json_error_t je;
	json_t *s = json_loads(text, 0, &je);
	if (!s || !json_is_object(json_object_get(s, "env"))) {
		err_set(err, EXIT_CONFIG, "%s/%s:%d:%d: %s; expected the state lobes wrote "
			"(delete it to treat every .env value as yours)",
			dir, STATE_FILE, je.line, je.column, s ? "no 'env' object" : je.text);
		json_decref(s);
		return -1;
	}
	*state = s;
	return 0;
}

char *deploy_state_text(const char *profile, json_t *env)
{
	json_auto_t *o = json_object();
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "profile", json_string(profile));
	json_object_set(o, "env", env);
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
	char *out = xasprintf("%s\n", s);
	free(s);
	return out;
}
