/* glibc's GNU extensions the tests need, which Swift's Glibc module does not show. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <stddef.h>
#include <sys/uio.h>
#include <unistd.h>
#include "DelegateKitFixtures.h"

int fx_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

const char *fx_loaded_path(const char *library, const char *symbol) {
    void *handle = dlopen(library, RTLD_NOW);
    if (handle == NULL) return NULL;
    void *address = dlsym(handle, symbol);
    Dl_info info;
    const char *path = address != NULL && dladdr(address, &info) != 0 ? info.dli_fname : NULL;
    /* The library stays loaded (the tests link it): the path outlives the handle. */
    dlclose(handle);
    return path;
}

bool fx_process_vm_readv_works(void) {
    long source = 42, copy = 0;
    struct iovec local = {&copy, sizeof copy}, remote = {&source, sizeof source};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof copy && copy == source;
}

size_t fx_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
