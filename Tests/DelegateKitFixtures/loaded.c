/* Where the dynamic loader found a library, as dlerror() names it: glibc's dladdr is a GNU extension,
   which Swift's Glibc module does not show. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include "DelegateKitFixtures.h"

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
