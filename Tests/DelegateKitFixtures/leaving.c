/* Calls that never return, the ways C allows: a thread that ends inside a callback, a longjmp out of one
   to a setjmp site (as libjpeg's, libpng's and Lua's users write), a fork while another thread is inside
   one. For DelegateKit's reliability tests. */
#define _GNU_SOURCE
#include "DelegateKitFixtures.h"

#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- A thread that makes one call ---- */

struct fx_caller {
    pthread_t thread;
    /* The call the thread makes: transform(NULL, value) of `plugin`, or call(target). */
    const fx_plugin *plugin;
    int64_t value;
    int64_t (*call)(const void *target);
    const void *target;
    int64_t result;
    int returned;
};

static void *fx_caller_main(void *argument) {
    fx_caller *caller = argument;
    int64_t result = caller->call ? caller->call(caller->target) : caller->plugin->transform(NULL, caller->value);
    caller->result = result;
    __atomic_store_n(&caller->returned, 1, __ATOMIC_RELEASE);
    return NULL;
}

static fx_caller *fx_caller_run(fx_caller *caller) {
    if (pthread_create(&caller->thread, NULL, fx_caller_main, caller) != 0) {
        free(caller);
        return NULL;
    }
    return caller;
}

fx_caller *fx_caller_start(const fx_plugin *plugin, int64_t value) {
    fx_caller *caller = calloc(1, sizeof *caller);
    caller->plugin = plugin;
    caller->value = value;
    return fx_caller_run(caller);
}

fx_caller *fx_caller_start_calling(int64_t (*call)(const void *target), const void *target) {
    fx_caller *caller = calloc(1, sizeof *caller);
    caller->call = call;
    caller->target = target;
    return fx_caller_run(caller);
}

void fx_caller_cancel(fx_caller *caller) { pthread_cancel(caller->thread); }

int fx_caller_join(fx_caller *caller, int64_t *result) {
    pthread_join(caller->thread, NULL);
    int returned = __atomic_load_n(&caller->returned, __ATOMIC_ACQUIRE);
    if (returned && result) *result = caller->result;
    free(caller);
    return returned;
}

/* ---- setjmp sites ---- */

static _Thread_local jmp_buf *fx_site = NULL;

jmp_buf **fx_jump_site(void) { return &fx_site; }

int fx_call_at_setjmp(const fx_plugin *plugin, int64_t value, int64_t *result) {
    jmp_buf site;
    jmp_buf *outer = fx_site;
    fx_site = &site;
    int code = setjmp(site);
    if (code == 0) {
        int64_t returned = plugin->transform(NULL, value);
        if (result) *result = returned;
    }
    fx_site = outer;
    return code;
}

void fx_jump_back(int code) {
    if (fx_site == NULL) abort(); /* no site on this thread: the test is wrong */
    longjmp(*fx_site, code);
}

int64_t fx_jump_many(const fx_plugin *plugin, int64_t count) {
    int64_t jumps = 0;
    for (int64_t i = 0; i < count; i++) {
        if (fx_call_at_setjmp(plugin, i, NULL) != 0) jumps++;
    }
    return jumps;
}

/* ---- A pool thread: calls at a setjmp site when asked, then idles ---- */

struct fx_pool_thread {
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t changed;
    const fx_plugin *plugin;
    int64_t request, jumps, done;
    int pending, stopping;
};

static void *fx_pool_thread_main(void *argument) {
    fx_pool_thread *pool = argument;
    pthread_mutex_lock(&pool->mutex);
    for (;;) {
        while (!pool->pending && !pool->stopping) pthread_cond_wait(&pool->changed, &pool->mutex);
        if (pool->pending) {
            int64_t value = pool->request;
            pthread_mutex_unlock(&pool->mutex);
            int jumped = fx_call_at_setjmp(pool->plugin, value, NULL) != 0;
            pthread_mutex_lock(&pool->mutex);
            pool->jumps += jumped;
            pool->done++;
            pool->pending = 0;
            pthread_cond_broadcast(&pool->changed);
        } else {
            break;
        }
    }
    pthread_mutex_unlock(&pool->mutex);
    return NULL;
}

fx_pool_thread *fx_pool_thread_start(const fx_plugin *plugin) {
    fx_pool_thread *pool = calloc(1, sizeof *pool);
    pool->plugin = plugin;
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->changed, NULL);
    pthread_create(&pool->thread, NULL, fx_pool_thread_main, pool);
    return pool;
}

int64_t fx_pool_thread_call(fx_pool_thread *pool, int64_t value) {
    pthread_mutex_lock(&pool->mutex);
    int64_t done = pool->done;
    pool->request = value;
    pool->pending = 1;
    pthread_cond_broadcast(&pool->changed);
    while (pool->done == done) pthread_cond_wait(&pool->changed, &pool->mutex);
    int64_t jumps = pool->jumps;
    pthread_mutex_unlock(&pool->mutex);
    return jumps;
}

void fx_pool_thread_stop(fx_pool_thread *pool) {
    pthread_mutex_lock(&pool->mutex);
    pool->stopping = 1;
    pthread_cond_broadcast(&pool->changed);
    pthread_mutex_unlock(&pool->mutex);
    pthread_join(pool->thread, NULL);
    pthread_mutex_destroy(&pool->mutex);
    pthread_cond_destroy(&pool->changed);
    free(pool);
}

/* ---- fork ---- */

int fx_fork_and_run(int (*child)(void *), void *context, unsigned seconds) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        /* A child that hangs is killed, and the test sees the signal; the forking thread may have had
           SIGALRM blocked, and the child inherits its mask. */
        sigset_t alarm_only;
        sigemptyset(&alarm_only);
        sigaddset(&alarm_only, SIGALRM);
        pthread_sigmask(SIG_UNBLOCK, &alarm_only, NULL);
        signal(SIGALRM, SIG_DFL);
        alarm(seconds);
        _exit(child(context));
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- Memory ---- */

size_t fx_malloc_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

size_t fx_malloc_usable_size(void *pointer) { return malloc_usable_size(pointer); }
