// loadgen: the external load generator of the server benchmark (scripts/bench --servers).
//
// A closed loop over epoll: each connection writes one message, waits until as many bytes came
// back, and writes the next, so the offered load follows the server. One or more threads, each
// with its own epoll set and its share of the connections. Modes:
//
//   echo   N connections echo SIZE-byte messages for WARMUP + DURATION seconds; reports the
//          messages per second, p50/p99/p99.9 of the round trip (write start to the last byte
//          back), and, with --pid, the server's user and system CPU time over the measured window
//          (/proc/PID/stat: every thread of the process).
//   churn  N slots, each in a loop: connect, echo one SIZE-byte message, close (the client
//          closes first). Reports connections per second and the server's CPU per connection.
//   idle   opens N connections one at a time, echoes one message on each, prints "ready" and
//          holds them open until standard input ends (the driver reads the server's memory
//          meanwhile).
//
// Output: one JSON object on standard output. Errors go to standard error, exit status 1.
//
//   loadgen --tcp 127.0.0.1:7000 | --unix /path [--mode echo|churn|idle] [--connections N]
//           [--size BYTES] [--duration S] [--warmup S] [--threads T] [--pid PID]
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum mode { MODE_ECHO, MODE_CHURN, MODE_IDLE };

static struct {
    enum mode mode;
    struct sockaddr_storage address;
    socklen_t address_length;
    int is_unix;
    int connections;
    size_t size;
    double duration;
    double warmup;
    int threads;
    long pid;
} options = {MODE_ECHO, {0}, 0, 0, 1, 64, 3.0, 1.0, 1, 0};

static unsigned char *message;           // the SIZE bytes every connection writes
static atomic_int measuring;              // 1 while the measured window is open
static atomic_int stopping;               // 1 once the threads must return

static void fail(const char *what) {
    fprintf(stderr, "loadgen: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void fail_message(const char *what) {
    fprintf(stderr, "loadgen: %s\n", what);
    exit(1);
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

// A log-linear histogram of nanoseconds: exact below 64, then 32 buckets per power of two
// (about 3% wide), up to 2^63.
#define HISTOGRAM_BUCKETS (64 + 58 * 32)

struct histogram {
    uint64_t counts[HISTOGRAM_BUCKETS];
};

static int bucket_of(uint64_t value) {
    if (value < 64) return (int)value;
    int exponent = 63 - __builtin_clzll(value);           // 6 or more
    uint64_t mantissa = value >> (exponent - 5);          // 32..63
    return 64 + (exponent - 6) * 32 + (int)(mantissa - 32);
}

static uint64_t bucket_value(int bucket) {                // the bucket's middle value
    if (bucket < 64) return (uint64_t)bucket;
    int exponent = (bucket - 64) / 32 + 6;
    uint64_t mantissa = (uint64_t)((bucket - 64) % 32 + 32);
    uint64_t low = mantissa << (exponent - 5);
    return low + ((1ull << (exponent - 5)) >> 1);
}

static uint64_t percentile(const struct histogram *h, uint64_t total, double fraction) {
    if (total == 0) return 0;
    uint64_t rank = (uint64_t)(fraction * (double)total);
    if (rank >= total) rank = total - 1;
    uint64_t seen = 0;
    for (int i = 0; i < HISTOGRAM_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen > rank) return bucket_value(i);
    }
    return 0;
}

struct connection {
    int fd;
    size_t sent;           // bytes of the current message written
    size_t got;            // bytes of the current message echoed
    uint64_t started;      // when the current message (or connection, in churn) started
    int wants_out;         // EPOLLOUT is on
    int connecting;        // churn: the connect is in flight
    uint64_t others_before; // the worker's messages finished when this one started
};

struct worker {
    pthread_t thread;
    int epoll;
    int count;
    struct connection *connections;
    struct histogram histogram;
    uint64_t completed;    // messages (echo) or connections (churn) finished in the window
    uint64_t finished;     // the same since the start, warm-up included
};

static int open_socket(void) {
    int fd = socket(options.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket");
    if (!options.is_unix) {
        int one = 1;
        if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) fail("TCP_NODELAY");
    }
    return fd;
}

static void set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) fail("O_NONBLOCK");
}

static void watch(struct worker *w, struct connection *c, int op) {
    struct epoll_event event = {.events = EPOLLIN | (c->wants_out ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(w->epoll, op, c->fd, &event) != 0) fail("epoll_ctl");
}

// Writes what is left of the current message; asks for EPOLLOUT while the kernel refuses some.
static void write_rest(struct worker *w, struct connection *c) {
    while (c->sent < options.size) {
        ssize_t n = write(c->fd, message + c->sent, options.size - c->sent);
        if (n > 0) {
            c->sent += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!c->wants_out) {
                c->wants_out = 1;
                watch(w, c, EPOLL_CTL_MOD);
            }
            return;
        }
        fail("write");
    }
    if (c->wants_out) {
        c->wants_out = 0;
        watch(w, c, EPOLL_CTL_MOD);
    }
}

static void start_message(struct worker *w, struct connection *c) {
    c->sent = 0;
    c->got = 0;
    c->started = now_ns();
    c->others_before = w->finished;
    write_rest(w, c);
}

static void record(struct worker *w, uint64_t started) {
    w->finished++;
    if (!atomic_load_explicit(&measuring, memory_order_relaxed)) return;
    w->histogram.counts[bucket_of(now_ns() - started)]++;
    w->completed++;
}

// churn: starts a non-blocking connect on slot c.
static void start_connect(struct worker *w, struct connection *c) {
    c->fd = open_socket();
    set_nonblocking(c->fd);
    c->started = now_ns();
    c->others_before = w->finished;
    c->sent = 0;
    c->got = 0;
    for (;;) {
        if (connect(c->fd, (struct sockaddr *)&options.address, options.address_length) == 0) {
            c->connecting = 0;
            c->wants_out = 0;
            watch(w, c, EPOLL_CTL_ADD);
            write_rest(w, c);
            return;
        }
        if (errno == EINTR) continue;
        if (errno == EINPROGRESS) {
            c->connecting = 1;
            c->wants_out = 1;
            watch(w, c, EPOLL_CTL_ADD);
            return;
        }
        if (errno == EAGAIN) {        // a Unix socket's backlog is full: wait for the server
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
            continue;
        }
        fail("connect");
    }
}

// A readable or writable connection: read what came back; a whole echo completes the message.
static void serve_event(struct worker *w, struct connection *c, uint32_t events, unsigned char *buffer, size_t capacity) {
    if (c->connecting) {
        int error = 0;
        socklen_t length = sizeof error;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) fail("SO_ERROR");
        if (error != 0) {
            errno = error;
            fail("connect");
        }
        c->connecting = 0;
        write_rest(w, c);
        return;
    }
    if ((events & EPOLLOUT) && c->sent < options.size) write_rest(w, c);
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
    for (;;) {
        ssize_t n = read(c->fd, buffer, capacity);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n < 0) fail("read");
        if (n == 0) {
            // Say what the connection was waiting for: an echo the server never sent looks
            // like this, and so does a server idle timeout after the client stopped sending.
            fprintf(stderr,
                    "loadgen: the server closed a connection %.1f ms after its current message started "
                    "(%zu of %zu bytes written, %zu echoed; %llu other messages finished meanwhile)\n",
                    (double)(now_ns() - c->started) / 1e6, c->sent, options.size, c->got,
                    (unsigned long long)(w->finished - c->others_before));
            exit(1);
        }
        c->got += (size_t)n;
        if (c->got > c->sent) fail_message("more bytes came back than were sent");
        if (c->got == options.size) {
            if (options.mode == MODE_CHURN) {
                record(w, c->started);
                close(c->fd);       // removes it from the epoll set
                if (!atomic_load_explicit(&stopping, memory_order_relaxed)) start_connect(w, c);
                else c->fd = -1;
                return;
            }
            record(w, c->started);
            start_message(w, c);
            return;
        }
        if ((size_t)n < capacity) return;    // the kernel had no more: wait for the next event
    }
}

static void *run_worker(void *argument) {
    struct worker *w = argument;
    size_t capacity = 256 * 1024;
    unsigned char *buffer = malloc(capacity);
    if (buffer == NULL) fail("malloc");
    for (int i = 0; i < w->count; i++) {
        struct connection *c = &w->connections[i];
        if (options.mode == MODE_CHURN) start_connect(w, c);
        else start_message(w, c);
    }
    struct epoll_event events[256];
    while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
        int n = epoll_wait(w->epoll, events, 256, 50);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("epoll_wait");
        for (int i = 0; i < n; i++) serve_event(w, events[i].data.ptr, events[i].events, buffer, capacity);
    }
    free(buffer);
    return NULL;
}

// Opens one connection and waits until it is established (blocking connect).
static int connect_blocking(void) {
    int fd = open_socket();
    while (connect(fd, (struct sockaddr *)&options.address, options.address_length) != 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) {
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
            continue;
        }
        fail("connect");
    }
    return fd;
}

static void echo_once_blocking(int fd) {
    size_t sent = 0, got = 0;
    static unsigned char buffer[65536];
    while (sent < options.size) {
        ssize_t n = write(fd, message + sent, options.size - sent);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("write");
        sent += (size_t)n;
    }
    while (got < options.size) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("read");
        if (n == 0) fail_message("the server closed a connection");
        got += (size_t)n;
    }
}

struct cpu { double user, system, total; };  // seconds

// The server's CPU time: the total, to the nanosecond, from every thread's run time
// (/proc/PID/task/*/schedstat), and the user and system split from /proc/PID/stat, which the
// kernel keeps in clock ticks (10 ms): the split is scaled to the exact total over the window.
static struct cpu server_cpu(void) {
    struct cpu cpu = {0, 0, 0};
    if (options.pid == 0) return cpu;
    char path[96], text[4096];
    snprintf(path, sizeof path, "/proc/%ld/stat", options.pid);
    FILE *file = fopen(path, "r");
    if (file == NULL) fail(path);
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = 0;
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    char *p = strrchr(text, ')');
    if (p == NULL) fail_message("cannot parse /proc/PID/stat");
    unsigned long user = 0, system = 0;
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &user, &system) != 2) {
        fail_message("cannot parse /proc/PID/stat");
    }
    double tick = (double)sysconf(_SC_CLK_TCK);
    cpu.user = (double)user / tick;
    cpu.system = (double)system / tick;
    snprintf(path, sizeof path, "/proc/%ld/task", options.pid);
    DIR *tasks = opendir(path);
    if (tasks == NULL) fail(path);
    unsigned long long run_ns = 0;
    for (struct dirent *entry; (entry = readdir(tasks)) != NULL;) {
        if (entry->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/%ld/task/%.20s/schedstat", options.pid, entry->d_name);
        file = fopen(path, "r");
        if (file == NULL) continue;   // the thread has just ended
        unsigned long long ns = 0;
        if (fscanf(file, "%llu", &ns) == 1) run_ns += ns;
        fclose(file);
    }
    closedir(tasks);
    cpu.total = (double)run_ns / 1e9;
    return cpu;
}

static double own_cpu(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 +
           (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
}

static void sleep_seconds(double seconds) {
    struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

static void run_idle(void) {
    int *fds = calloc((size_t)options.connections, sizeof *fds);
    if (fds == NULL) fail("calloc");
    for (int i = 0; i < options.connections; i++) {
        fds[i] = connect_blocking();
        echo_once_blocking(fds[i]);
    }
    printf("{\"mode\":\"idle\",\"connections\":%d,\"ready\":true}\n", options.connections);
    fflush(stdout);
    char ignored[256];
    while (read(0, ignored, sizeof ignored) > 0) {}
    for (int i = 0; i < options.connections; i++) close(fds[i]);
    free(fds);
}

static void run_loaded(void) {
    int threads = options.threads;
    struct worker *workers = calloc((size_t)threads, sizeof *workers);
    if (workers == NULL) fail("calloc");
    for (int t = 0; t < threads; t++) {
        struct worker *w = &workers[t];
        w->count = options.connections / threads + (t < options.connections % threads ? 1 : 0);
        w->connections = calloc((size_t)(w->count > 0 ? w->count : 1), sizeof *w->connections);
        w->epoll = epoll_create1(EPOLL_CLOEXEC);
        if (w->connections == NULL || w->epoll < 0) fail("worker");
        if (options.mode == MODE_ECHO) {
            for (int i = 0; i < w->count; i++) {
                struct connection *c = &w->connections[i];
                c->fd = connect_blocking();
                set_nonblocking(c->fd);
                watch(w, c, EPOLL_CTL_ADD);
            }
        }
    }
    for (int t = 0; t < threads; t++) {
        if (pthread_create(&workers[t].thread, NULL, run_worker, &workers[t]) != 0) fail_message("pthread_create");
    }
    sleep_seconds(options.warmup);
    struct cpu before = server_cpu();
    double own_before = own_cpu();
    uint64_t t0 = now_ns();
    atomic_store(&measuring, 1);
    sleep_seconds(options.duration);
    atomic_store(&measuring, 0);
    uint64_t t1 = now_ns();
    struct cpu after = server_cpu();
    double own_after = own_cpu();
    atomic_store(&stopping, 1);
    static struct histogram total_histogram;
    uint64_t completed = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(workers[t].thread, NULL);
        for (int i = 0; i < HISTOGRAM_BUCKETS; i++) total_histogram.counts[i] += workers[t].histogram.counts[i];
        completed += workers[t].completed;
        for (int i = 0; i < workers[t].count; i++) {
            if (workers[t].connections[i].fd >= 0) close(workers[t].connections[i].fd);
        }
        close(workers[t].epoll);
        free(workers[t].connections);
    }
    free(workers);
    double seconds = (double)(t1 - t0) / 1e9;
    double per = completed > 0 ? 1e9 / (double)completed : 0;   // seconds -> ns per item
    double total = after.total - before.total;
    double ticked = (after.user - before.user) + (after.system - before.system);
    double user_share = ticked > 0 ? (after.user - before.user) / ticked : 0.5;
    printf("{\"mode\":\"%s\",\"connections\":%d,\"size\":%zu,\"threads\":%d,\"seconds\":%.3f,"
           "\"completed\":%llu,\"per_second\":%.1f,\"p50_us\":%.2f,\"p99_us\":%.2f,\"p999_us\":%.2f,"
           "\"server_cpu_s\":%.4f,\"server_user_s\":%.4f,\"server_system_s\":%.4f,\"server_ticks\":%.0f,"
           "\"server_user_ns\":%.1f,\"server_system_ns\":%.1f,\"client_cpu_s\":%.3f}\n",
           options.mode == MODE_CHURN ? "churn" : "echo", options.connections, options.size, threads, seconds,
           (unsigned long long)completed, (double)completed / seconds,
           (double)percentile(&total_histogram, completed, 0.50) / 1e3,
           (double)percentile(&total_histogram, completed, 0.99) / 1e3,
           (double)percentile(&total_histogram, completed, 0.999) / 1e3,
           total, total * user_share, total * (1 - user_share), ticked * (double)sysconf(_SC_CLK_TCK),
           total * user_share * per, total * (1 - user_share) * per, own_after - own_before);
}

static void parse_address(const char *flag, const char *value) {
    memset(&options.address, 0, sizeof options.address);
    if (strcmp(flag, "--unix") == 0) {
        struct sockaddr_un *un = (struct sockaddr_un *)&options.address;
        if (strlen(value) >= sizeof un->sun_path) fail_message("--unix: the path is too long");
        un->sun_family = AF_UNIX;
        strcpy(un->sun_path, value);
        options.address_length = sizeof *un;
        options.is_unix = 1;
        return;
    }
    const char *colon = strrchr(value, ':');
    if (colon == NULL) fail_message("--tcp takes HOST:PORT");
    char host[64];
    size_t length = (size_t)(colon - value);
    if (length >= sizeof host) fail_message("--tcp: the host is too long");
    memcpy(host, value, length);
    host[length] = 0;
    int port = atoi(colon + 1);
    struct sockaddr_in *in = (struct sockaddr_in *)&options.address;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&options.address;
    if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        options.address_length = sizeof *in;
    } else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        options.address_length = sizeof *in6;
    } else {
        fail_message("--tcp: the host is not an IP address");
    }
}

int main(int argc, char **argv) {
    int have_address = 0;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (i + 1 >= argc) {
            fprintf(stderr, "loadgen: %s needs a value\n", flag);
            return 1;
        }
        const char *value = argv[++i];
        if (strcmp(flag, "--tcp") == 0 || strcmp(flag, "--unix") == 0) {
            parse_address(flag, value);
            have_address = 1;
        } else if (strcmp(flag, "--mode") == 0) {
            if (strcmp(value, "echo") == 0) options.mode = MODE_ECHO;
            else if (strcmp(value, "churn") == 0) options.mode = MODE_CHURN;
            else if (strcmp(value, "idle") == 0) options.mode = MODE_IDLE;
            else fail_message("--mode takes echo, churn or idle");
        } else if (strcmp(flag, "--connections") == 0) {
            options.connections = atoi(value);
        } else if (strcmp(flag, "--size") == 0) {
            options.size = (size_t)atol(value);
        } else if (strcmp(flag, "--duration") == 0) {
            options.duration = atof(value);
        } else if (strcmp(flag, "--warmup") == 0) {
            options.warmup = atof(value);
        } else if (strcmp(flag, "--threads") == 0) {
            options.threads = atoi(value);
        } else if (strcmp(flag, "--pid") == 0) {
            options.pid = atol(value);
        } else {
            fprintf(stderr, "loadgen: unknown option %s\n", flag);
            return 1;
        }
    }
    if (!have_address) fail_message("give --tcp HOST:PORT or --unix PATH");
    if (options.connections < 1 || options.size < 1 || options.threads < 1 || options.duration <= 0 || options.warmup < 0) {
        fail_message("--connections, --size, --threads and --duration must be positive");
    }
    if (options.threads > options.connections) options.threads = options.connections;
    message = malloc(options.size);
    if (message == NULL) fail("malloc");
    for (size_t i = 0; i < options.size; i++) message[i] = (unsigned char)('a' + i % 26);
    if (options.mode == MODE_IDLE) run_idle();
    else run_loaded();
    free(message);
    return 0;
}
