/* version.h — the one place the version string lives. */
#define LOBES_VERSION "0.1.0"
