#define _GNU_SOURCE
#include "TrampolinePages.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__linux__)

enum { page_size = 4096, slot_size = 16, slots_per_page = page_size / slot_size };

/* One code page (slots_per_page trampolines, all entering `entry`) and the contexts page after it, whose
   last word points back here, so that a slot's handle finds its page at once. */
typedef struct trampoline_page {
    struct trampoline_page *next, *previous;
    cffi_register_entry entry;
    unsigned char *code;
    void **contexts;
    int free_count;
    unsigned short free_slots[slots_per_page];
} trampoline_page;

/* Taken by fork itself (the handlers below): a fork waits for a section in progress, so that a forked
   child never finds the lock held by a thread it does not have. A section takes no other lock and runs
   no code of the program's, so the wait is short and cannot deadlock; and it costs a section nothing,
   where the fork gate's shared lock would cost every trampoline made and freed. */
static pthread_mutex_t pages_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock_pages(void) { pthread_mutex_lock(&pages_lock); }

static void unlock_pages(void) { pthread_mutex_unlock(&pages_lock); }

__attribute__((constructor)) static void lock_pages_across_fork(void) {
    pthread_atfork(lock_pages, unlock_pages, unlock_pages);
}

/* Pages with a free slot, and full pages: a slot is found among the first few pages whatever the number
   of full ones, and a freed slot's page moves back at once. */
static trampoline_page *open_pages, *full_pages;
/* Set once the system refused to map or to make a page executable: from then on, libffi's memory. */
static int pages_refused;

static void unlink_page(trampoline_page **list, trampoline_page *page) {
    if (page->previous != NULL) page->previous->next = page->next; else *list = page->next;
    if (page->next != NULL) page->next->previous = page->previous;
    page->next = page->previous = NULL;
}

static void push_page(trampoline_page **list, trampoline_page *page) {
    page->previous = NULL;
    page->next = *list;
    if (*list != NULL) (*list)->previous = page;
    *list = page;
}

/* Slot i: endbr64 (a valid indirect-branch target under CET); mov contexts[i](%rip), %r9 (the register a
   register-only signature leaves free); jmp rel32 entry. As libffi-memory trampolines, it leaves every
   argument register and the stack as the caller set them. */
static void write_slot(unsigned char *code, int index, cffi_register_entry entry) {
    unsigned char *slot = code + index * slot_size;
    const unsigned char *context = code + page_size + index * (int)sizeof(void *);
    int32_t context_offset = (int32_t)(context - (slot + 11));
    int32_t entry_offset = (int32_t)((intptr_t)entry - (intptr_t)(slot + 16));
    static const unsigned char head[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x4c, 0x8b, 0x0d};
    memcpy(slot, head, sizeof head);
    memcpy(slot + 7, &context_offset, 4);
    slot[11] = 0xe9;
    memcpy(slot + 12, &entry_offset, 4);
}

/* Whether a jmp rel32 anywhere in the code page at `code` reaches `entry`. */
static int reaches(const unsigned char *code, cffi_register_entry entry) {
    intptr_t low = (intptr_t)entry - (intptr_t)(code + page_size);
    intptr_t high = (intptr_t)entry - (intptr_t)code;
    return low > INT32_MIN && high < INT32_MAX;
}

/* Maps two read-write pages within reach of `entry`: trying addresses below the entry's own text first
   (above it, the heap grows), each exactly or not at all. */
static unsigned char *map_near(cffi_register_entry entry) {
    const uintptr_t step = (uintptr_t)64 << 20;  /* 64 MiB */
    const uintptr_t base = (uintptr_t)entry & ~(uintptr_t)(page_size - 1);
    for (int direction = -1; direction <= 1; direction += 2) {
        for (uintptr_t distance = step; distance < ((uintptr_t)1 << 31) - step; distance += step) {
            if (direction < 0 && base < distance + page_size) break;
            uintptr_t hint = direction < 0 ? base - distance : base + distance;
            void *mapped = mmap((void *)hint, 2 * page_size, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (mapped == MAP_FAILED) continue;
            if (mapped == (void *)hint && reaches(mapped, entry)) return mapped;
            munmap(mapped, 2 * page_size);  /* an old kernel that took the flag as a hint only */
        }
    }
    return NULL;
}

static trampoline_page *make_page(cffi_register_entry entry) {
    unsigned char *code = map_near(entry);
    if (code == NULL) return NULL;
    for (int index = 0; index < slots_per_page; index++) write_slot(code, index, entry);
    /* From read-write to read-execute: the only change of protection a page ever gets. */
    if (mprotect(code, page_size, PROT_READ | PROT_EXEC) != 0) {
        munmap(code, 2 * page_size);
        return NULL;
    }
    trampoline_page *page = calloc(1, sizeof *page);
    if (page == NULL) {
        munmap(code, 2 * page_size);
        return NULL;
    }
    page->entry = entry;
    page->code = code;
    page->contexts = (void **)(code + page_size);
    page->contexts[page_size / sizeof(void *) - 1] = page;
    /* Handed out from the start of the page. */
    for (int index = 0; index < slots_per_page; index++) page->free_slots[index] = (unsigned short)(slots_per_page - 1 - index);
    page->free_count = slots_per_page;
    return page;
}

void *cffi_trampoline_create(cffi_register_entry entry, void *context, void **code) {
    lock_pages();
    trampoline_page *page = NULL;
    if (!pages_refused) {
        for (page = open_pages; page != NULL && page->entry != entry; page = page->next) {}
        if (page == NULL) {
            page = make_page(entry);
            if (page != NULL) {
                push_page(&open_pages, page);
            } else {
                pages_refused = 1;
            }
        }
    }
    void **handle = NULL;
    if (page != NULL) {
        int index = page->free_slots[--page->free_count];
        handle = &page->contexts[index];
        *handle = context;
        *code = page->code + index * slot_size;
        if (page->free_count == 0) {
            unlink_page(&open_pages, page);
            push_page(&full_pages, page);
        }
    }
    unlock_pages();
    return handle;
}

void cffi_trampoline_set_context(void *handle, void *context) { *(void **)handle = context; }

void cffi_trampoline_free(void *handle) {
    void **context = handle;
    void **contexts = (void **)((uintptr_t)handle & ~(uintptr_t)(page_size - 1));
    trampoline_page *page = contexts[page_size / sizeof(void *) - 1];
    lock_pages();
    *context = NULL;
    if (page->free_count == 0) {
        unlink_page(&full_pages, page);
        push_page(&open_pages, page);
    }
    page->free_slots[page->free_count++] = (unsigned short)(context - contexts);
    unlock_pages();
}

#else

void *cffi_trampoline_create(cffi_register_entry entry, void *context, void **code) {
    (void)entry; (void)context; (void)code;
    return NULL;
}

void cffi_trampoline_set_context(void *handle, void *context) { (void)handle; (void)context; }

void cffi_trampoline_free(void *handle) { (void)handle; }

#endif
