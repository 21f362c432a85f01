/* GLib's callback forms without GLib: a signal-like registry of erased handlers with two-argument destroy
   notifications, a plugin table C allocates and owns, and a cancellable operation completed by a thread
   of its own. For DelegateKit's tests of one-shots, awaiting, streams and tables filled in place. */
#include "DelegateKitFixtures.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- The registry ---- */

typedef struct {
    unsigned id;
    int kind; /* 0 free, 1 value, 2 event */
    fx_erased_fn handler;
    void *data;
    fx_closure_notify destroy;
} fx_registration;

static fx_registration fx_registrations[32];
static unsigned fx_next_id = 1;
static pthread_mutex_t fx_registry_lock = PTHREAD_MUTEX_INITIALIZER;

unsigned fx_registry_connect(const char *name, fx_erased_fn handler, void *data, fx_closure_notify destroy) {
    int kind = strcmp(name, "value") == 0 ? 1 : strcmp(name, "event") == 0 ? 2 : 0;
    if (kind == 0 || handler == NULL) return 0; /* refused: the notification is never called */
    pthread_mutex_lock(&fx_registry_lock);
    unsigned id = 0;
    for (int i = 0; i < 32; i++) {
        if (fx_registrations[i].kind != 0) continue;
        id = fx_next_id++;
        fx_registrations[i] = (fx_registration){id, kind, handler, data, destroy};
        break;
    }
    pthread_mutex_unlock(&fx_registry_lock);
    return id;
}

int64_t fx_registry_emit_value(int64_t value) {
    for (int i = 0; i < 32; i++) {
        if (fx_registrations[i].kind != 1) continue;
        /* Cast back to the real type before calling, as GLib's marshallers do. */
        int64_t (*handler)(int64_t, void *) = (int64_t (*)(int64_t, void *))fx_registrations[i].handler;
        value = handler(value, fx_registrations[i].data);
    }
    return value;
}

static void *fx_emit_events(void *argument) {
    int64_t count = *(int64_t *)argument;
    for (int64_t n = 0; n < count; n++) {
        for (int i = 0; i < 32; i++) {
            if (fx_registrations[i].kind != 2) continue;
            void (*handler)(int64_t, void *) = (void (*)(int64_t, void *))fx_registrations[i].handler;
            handler(n, fx_registrations[i].data);
        }
    }
    return NULL;
}

void fx_registry_emit_events(int64_t count) {
    pthread_t thread;
    pthread_create(&thread, NULL, fx_emit_events, &count);
    pthread_join(thread, NULL);
}

int fx_registry_disconnect(unsigned id) {
    pthread_mutex_lock(&fx_registry_lock);
    fx_registration found = {0};
    for (int i = 0; i < 32; i++) {
        if (fx_registrations[i].kind == 0 || fx_registrations[i].id != id) continue;
        found = fx_registrations[i];
        memset(&fx_registrations[i], 0, sizeof fx_registrations[i]);
    }
    pthread_mutex_unlock(&fx_registry_lock);
    if (found.kind == 0) return 0;
    /* GClosureNotify's second argument is the GClosure; here, something else that is not the data. */
    if (found.destroy) found.destroy(found.data, &fx_registrations);
    return 1;
}

void fx_registry_clear(void) {
    for (int i = 0; i < 32; i++) {
        if (fx_registrations[i].kind != 0) fx_registry_disconnect(fx_registrations[i].id);
    }
}

/* ---- A table C owns ---- */

static int32_t fx_owned_start(void *context) { (void)context; return 1; }
static int64_t fx_owned_transform(void *context, int64_t value) { (void)context; return value * 2; }

fx_plugin *fx_owned_plugin_new(void) {
    fx_plugin *plugin = calloc(1, sizeof *plugin);
    plugin->version = 1;
    plugin->start = fx_owned_start;
    plugin->transform = fx_owned_transform;
    return plugin;
}

void fx_owned_plugin_free(fx_plugin *plugin) { free(plugin); }

const void *fx_owned_plugin_transform(void) { return (const void *)fx_owned_transform; }

/* ---- A cancellable operation ---- */

struct fx_cancellable {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    fx_completion done;
    void *user_data;
    int ended; /* 0 running, 1 completed, 2 cancelled */
    int32_t status;
};

static void *fx_cancellable_run(void *argument) {
    fx_cancellable *operation = argument;
    pthread_mutex_lock(&operation->lock);
    while (operation->ended == 0) pthread_cond_wait(&operation->changed, &operation->lock);
    int32_t status = operation->ended == 2 ? -125 : operation->status;
    pthread_mutex_unlock(&operation->lock);
    operation->done(operation->user_data, status);
    return NULL;
}

fx_cancellable *fx_cancellable_start(fx_completion done, void *user_data) {
    fx_cancellable *operation = calloc(1, sizeof *operation);
    pthread_mutex_init(&operation->lock, NULL);
    pthread_cond_init(&operation->changed, NULL);
    operation->done = done;
    operation->user_data = user_data;
    pthread_create(&operation->thread, NULL, fx_cancellable_run, operation);
    return operation;
}

static void fx_cancellable_end(fx_cancellable *operation, int how, int32_t status) {
    pthread_mutex_lock(&operation->lock);
    if (operation->ended == 0) {
        operation->ended = how;
        operation->status = status;
        pthread_cond_signal(&operation->changed);
    }
    pthread_mutex_unlock(&operation->lock);
}

void fx_cancellable_cancel(fx_cancellable *operation) { fx_cancellable_end(operation, 2, 0); }
void fx_cancellable_complete(fx_cancellable *operation, int32_t status) { fx_cancellable_end(operation, 1, status); }

void fx_cancellable_join(fx_cancellable *operation) {
    pthread_join(operation->thread, NULL);
    pthread_mutex_destroy(&operation->lock);
    pthread_cond_destroy(&operation->changed);
    free(operation);
}
