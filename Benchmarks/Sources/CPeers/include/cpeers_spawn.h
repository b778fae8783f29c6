#ifndef CPEERS_SPAWN_H
#define CPEERS_SPAWN_H
#include <stdint.h>

/* ns per posix_spawn + waitpid of `path` (no arguments), n in a row; -1 on failure. */
double cp_spawn_wait(const char *path, long n);

#endif
