#ifndef CLIBUV_SHIM_H
#define CLIBUV_SHIM_H
/* UVLoop links the system's libuv (Debian: libuv1-dev); it is never vendored. */
#include <uv.h>
#endif
