/* LD_PRELOAD helper for a device run: on SIGSEGV, print the native stack (glibc backtrace with
 * the dynamic symbols' names) to stderr, then die of the signal as before.
 *   cc -shared -fPIC -O1 -o segv_backtrace.so bench/debug/segv_backtrace.c
 *   LD_PRELOAD=$PWD/segv_backtrace.so python3 ... */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void on_segv(int sig) {
    void *frames[64];
    int n = backtrace(frames, 64);
    static const char head[] = "\n== native stack at SIGSEGV ==\n";
    if (write(2, head, sizeof head - 1) < 0) { /* nothing to do: the stack follows anyway */ }
    backtrace_symbols_fd(frames, n, 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((constructor)) static void install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
}
