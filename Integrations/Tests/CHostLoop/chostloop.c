#include "chostloop.h"

#include <stdlib.h>
#include <uv.h>

void *chostloop_new(void) {
    uv_loop_t *loop = malloc(sizeof *loop);
    if (loop == NULL) return NULL;
    if (uv_loop_init(loop) != 0) {
        free(loop);
        return NULL;
    }
    return loop;
}

int chostloop_run_nowait(void *loop) { return uv_run(loop, UV_RUN_NOWAIT); }

int chostloop_alive(void *loop) { return uv_loop_alive(loop); }

int chostloop_close(void *loop) {
    int status = uv_loop_close(loop);
    if (status == 0) free(loop);
    return status;
}
