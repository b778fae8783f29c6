#ifndef CPEERS_INVOKE_H
#define CPEERS_INVOKE_H
/* invoke_roundtrip's floor in C: the fewest system calls and instructions a blocking round trip
 * to a libuv loop thread can take. The loop polls an eventfd with a uv_poll_t (not uv_async_t,
 * whose woken loop spins while the sender is still inside uv_async_send), posts sit in nodes on
 * the caller's stack (no malloc), a wake-pending flag makes a post write the eventfd only while
 * the loop may sleep, and the caller sleeps on a futex word in its node that the loop wakes only
 * if the caller went to sleep. `spin_ns` > 0: the caller first polls its node for up to that
 * long (busy waiting, the opt-in kind), to show what a caller that never sleeps gains. */
typedef struct cp_inv cp_inv;
cp_inv *cp_inv_start(void);
void cp_inv_stop(cp_inv *l);
double cp_inv_roundtrip(cp_inv *l, long n, long spin_ns);   /* total ns for n round trips */
#endif
