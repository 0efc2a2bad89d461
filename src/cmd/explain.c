/* explain.c — placeholder until the plan lands. */
#include "cmd.h"
CMD(explain) { (void)argc; (void)argv; return cmd_fail(ctx, NULL); }
