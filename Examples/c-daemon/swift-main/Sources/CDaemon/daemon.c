/* The example daemon, unchanged: this target compiles it with -Dmain=daemon_main (Package.swift).
 * A target's sources must lie inside its package, so it is included rather than listed. */
#include "daemon_main.h"
#include "../../../daemon.c"
