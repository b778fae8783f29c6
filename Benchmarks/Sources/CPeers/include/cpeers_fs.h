/* file_read_sequential and file_stat_small: the C peers, on libuv and on plain system calls. */
#ifndef CPEERS_FS_H
#define CPEERS_FS_H

/* Reads the file at `path` from start to end in chunks of `chunk` bytes, with uv_fs_open, then
 * uv_fs_read at each offset from the previous read's callback (one read in flight), then
 * uv_fs_close, on a loop of its own run by this thread. Returns the ns per chunk read and the
 * bytes read in `*bytes`, or -1 on failure. */
double cp_uv_read_sequential(const char *path, long chunk, long long *bytes);

/* The same with open, pread and close on this thread. */
double cp_pread_sequential(const char *path, long chunk, long long *bytes);

/* Stats the files `directory`/0 to `directory`/(n-1) one after the other with uv_fs_stat, each
 * from the previous one's callback, on a loop of its own run by this thread. The paths are made
 * before the clock starts. Returns the ns per stat, or -1 on failure. */
double cp_uv_stat_files(const char *directory, long n);

/* The same with stat on this thread. */
double cp_stat_files(const char *directory, long n);

/* file_read_ahead: reads the file at `path` from start to end in chunks of `chunk` bytes with
 * `depth` uv_fs_read requests in flight at successive offsets (each completion starts the read at
 * the next offset), on a loop of its own run by this thread; the file is opened and closed with
 * synchronous libuv calls inside the timing. Returns the ns per chunk and the bytes read in
 * `*bytes`, or -1 on failure. */
double cp_uv_read_ahead(const char *path, long chunk, int depth, long long *bytes);

/* file_stat_concurrent: stats `directory`/0 to `directory`/(n-1) with `depth` uv_fs_stat requests
 * in flight, each completion starting the next path, on a loop of its own run by this thread.
 * Returns the ns per stat, or -1 on failure. */
double cp_uv_stat_concurrent(const char *directory, long n, int depth);

#endif
