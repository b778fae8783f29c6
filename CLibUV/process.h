#ifndef CLIBUV_PROCESS_H
#define CLIBUV_PROCESS_H
/* Child processes without fork: posix_spawn (glibc's is clone(CLONE_VM|CLONE_VFORK), which
 * shares the parent's memory until the child executes, where libuv 1.44's uv_spawn forks and
 * copies the parent's page tables) and a pidfd that the loop polls for the child's exit. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
/* glibc declares these only under _GNU_SOURCE, which a module map cannot set. */
#ifndef POSIX_SPAWN_SETSID
#define POSIX_SPAWN_SETSID 0x80
#endif
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *__restrict actions,
                                                const char *__restrict path);

/* What one of the child's descriptors 0, 1, 2 is, besides a descriptor of the parent's (>= 0). */
#define SHIM_STDIO_IGNORE (-1) /* /dev/null */
#define SHIM_STDIO_PIPE (-2)   /* a new socket pair; the parent's end is returned */

/* A pidfd for the child `pid` (closed on exec, as every pidfd is), or -errno: -ENOSYS before
 * Linux 5.3. */
static inline int shim_pidfd_open(pid_t pid) {
    long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd < 0 ? -errno : (int)fd;
}

/* Sends `signal` to the process of `pidfd`; 0 or -errno (-ESRCH once it has exited). */
static inline int shim_pidfd_send_signal(int pidfd, int signal) {
    return syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, 0) < 0 ? -errno : 0;
}

/* Reaps the child `pid` if it has ended (waiting for it when `block`): 1 with its exit status or
 * terminating signal (the other 0), 0 while it runs, or -errno (-ECHILD: not a child of ours, or
 * reaped already). */
static inline int shim_reap(pid_t pid, int block, int *exit_status, int *term_signal) {
    int status = 0;
    pid_t result;
    do {
        result = waitpid(pid, &status, block ? 0 : WNOHANG);
    } while (result == -1 && errno == EINTR);
    if (result == 0) return 0;
    if (result == -1) return -errno;
    *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    *term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return 1;
}

/* Whether SIGCHLD is ignored (SIG_IGN or SA_NOCLDWAIT): the kernel then reaps children itself,
 * and their status is lost to waitpid. */
static inline int shim_children_reaped_by_kernel(void) {
    struct sigaction action;
    if (sigaction(SIGCHLD, NULL, &action) != 0) return 0;
    return action.sa_handler == SIG_IGN || (action.sa_flags & SA_NOCLDWAIT) != 0;
}

/* Starts `file` (searched in the parent's PATH when it has no slash) with `argv` and `envp` (NULL:
 * the parent's environment) in `cwd` (NULL: the parent's), its descriptors 0, 1, 2 being
 * `stdio[i]`: a descriptor of the parent's, SHIM_STDIO_IGNORE or SHIM_STDIO_PIPE, whose parent
 * end (a blocking Unix stream socket, closed on exec) goes to `parent_ends[i]` (-1 otherwise).
 * `new_session`: the child calls setsid. Returns 0 with `*pid` set, or an errno value, having
 * closed what it opened.
 *
 * The child is set up the way libuv 1.44's uv_spawn sets it up: every signal's disposition
 * reset to the default (an ignored SIGPIPE too) and no signal blocked; descriptors 0, 1 and 2
 * blocking; nothing else inherited (every descriptor UVLoop and libuv open is closed on exec). */
static inline int shim_spawn(pid_t *pid, const char *file, char *const argv[], char *const envp[], const char *cwd,
                             const int stdio[3], int parent_ends[3], int new_session) {
    extern char **environ; /* declared here, so that Swift keeps seeing only Glibc's */
    int child_ends[3] = {-1, -1, -1};
    int error = 0;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    sigset_t mask, defaults;
    for (int i = 0; i < 3; i++) parent_ends[i] = -1;
    for (int i = 0; i < 3 && error == 0; i++) {
        if (stdio[i] == SHIM_STDIO_PIPE) {
            int pair[2];
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
                error = errno;
                break;
            }
            parent_ends[i] = pair[0];
            child_ends[i] = pair[1];
        } else if (stdio[i] >= 0 && stdio[i] != i && stdio[i] <= 2) {
            /* A low descriptor that an earlier dup2 could replace (stdout and stderr swapped):
             * the child gets a copy of it that no dup2 touches. */
            child_ends[i] = fcntl(stdio[i], F_DUPFD_CLOEXEC, 3);
            if (child_ends[i] < 0) error = errno;
        }
        if (error == 0 && stdio[i] >= 0) {
            /* libuv's child makes its descriptors 0 to 2 blocking, which changes the file it shares
             * with the parent: so does this, before the child starts. */
            int flags = fcntl(stdio[i], F_GETFL);
            if (flags != -1 && (flags & O_NONBLOCK)) fcntl(stdio[i], F_SETFL, flags & ~O_NONBLOCK);
        }
    }
    if (error == 0) {
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attributes);
        for (int i = 0; i < 3 && error == 0; i++) {
            if (stdio[i] == SHIM_STDIO_IGNORE)
                error = posix_spawn_file_actions_addopen(&actions, i, "/dev/null", i == 0 ? O_RDONLY : O_RDWR, 0);
            else
                error = posix_spawn_file_actions_adddup2(&actions, child_ends[i] >= 0 ? child_ends[i] : stdio[i], i);
        }
        if (error == 0 && cwd != NULL) error = posix_spawn_file_actions_addchdir_np(&actions, cwd);
        sigemptyset(&mask);
        sigemptyset(&defaults);
        for (int n = 1; n < 32; n++)
            if (n != SIGKILL && n != SIGSTOP) sigaddset(&defaults, n);
        short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (new_session ? POSIX_SPAWN_SETSID : 0);
        if (error == 0) error = posix_spawnattr_setsigmask(&attributes, &mask);
        if (error == 0) error = posix_spawnattr_setsigdefault(&attributes, &defaults);
        if (error == 0) error = posix_spawnattr_setflags(&attributes, flags);
        if (error == 0) error = posix_spawnp(pid, file, &actions, &attributes, argv, envp ? envp : environ);
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attributes);
    }
    for (int i = 0; i < 3; i++) {
        if (child_ends[i] >= 0) close(child_ends[i]);
        if (error != 0 && parent_ends[i] >= 0) {
            close(parent_ends[i]);
            parent_ends[i] = -1;
        }
    }
    return error;
}
#endif
