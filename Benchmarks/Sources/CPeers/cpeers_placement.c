#define _GNU_SOURCE
#include "cpeers_placement.h"
#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/types.h>

static cpu_set_t starting;
static int saved;

static int set_all(const cpu_set_t *set) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return -1;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        pid_t tid = (pid_t)atoi(entry->d_name);
        (void)sched_setaffinity(tid, sizeof *set, set);
    }
    closedir(dir);
    return 0;
}

int cp_placement_one_cpu(void) {
    if (!saved) {
        if (sched_getaffinity(0, sizeof starting, &starting) != 0) return -1;
        saved = 1;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    return set_all(&one);
}

int cp_placement_restore(void) {
    if (!saved) return 0;
    return set_all(&starting);
}
