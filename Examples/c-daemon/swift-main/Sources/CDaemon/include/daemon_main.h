/* The C daemon's main (../../../daemon.c), compiled with -Dmain=daemon_main. */
#ifndef DAEMON_MAIN_H
#define DAEMON_MAIN_H

int daemon_main(int argc, char **argv);

#endif /* DAEMON_MAIN_H */
