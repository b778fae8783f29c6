/* A C "host" that owns a libuv loop, for the tests of components on an attached loop. */
#ifndef CHOSTLOOP_H
#define CHOSTLOOP_H

/* A new, initialized uv_loop_t (NULL when libuv fails). */
void *chostloop_new(void);
/* One turn of the loop without blocking: uv_run(UV_RUN_NOWAIT). */
int chostloop_run_nowait(void *loop);
/* Whether anything referenced keeps the loop alive: uv_loop_alive. */
int chostloop_alive(void *loop);
/* uv_loop_close's status; frees the loop when it is 0. */
int chostloop_close(void *loop);

#endif
