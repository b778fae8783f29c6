#ifndef CPEERS_PLACEMENT_H
#define CPEERS_PLACEMENT_H

/* Puts every thread of this process on CPU 0 (threads made afterwards inherit it). Returns 0,
   or -1 when the process's threads cannot be listed. */
int cp_placement_one_cpu(void);

/* Gives every thread of this process back the CPUs the process had when it first called
   cp_placement_one_cpu. */
int cp_placement_restore(void);

#endif
