/* The C target that carries uvloop.h; the functions are implemented in Swift (UVLoopC). */
