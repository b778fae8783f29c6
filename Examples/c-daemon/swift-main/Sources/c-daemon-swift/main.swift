import CDaemon
import Glibc

// A Swift program that embeds a C daemon: the daemon's own main runs on this thread, owns its
// uv_loop_t and attaches UVLoop to it, exactly as when it is its own C program.
exit(daemon_main(CommandLine.argc, CommandLine.unsafeArgv))
