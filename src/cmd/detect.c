/* detect.c — placeholder until detection lands. */
#include "cmd.h"
CMD(detect) { (void)argc; (void)argv; return cmd_fail(ctx, NULL); }
