/* Mappings of the trampoline table and their slots; see Trampolines.h and TrampolineTable.S. */
#define _GNU_SOURCE
#include <CDelegateKitTrampolines/Trampolines.h>
#include "TrampolineTable.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* cffi_enter_array reads its entry at these offsets (TrampolineTable.S). */
_Static_assert(offsetof(cffi_array_entry, user_data) == 8 && offsetof(cffi_array_entry, cif) == 16 &&
                   offsetof(cffi_array_entry, frame) == 24 && offsetof(cffi_array_entry, count) == 28 &&
                   offsetof(cffi_array_entry, places) == 32,
               "cffi_array_entry's layout is what TrampolineTable.S reads");
_Static_assert(offsetof(cffi_array_entry, result) == 40 && CFFI_ARRAY_RESULT_INTEGER_SSE == CFFI_RESULT_INTEGER_SSE &&
                   CFFI_ARRAY_RESULT_SSE_INTEGER == CFFI_RESULT_SSE_INTEGER && CFFI_ARRAY_RESULT_MEMORY == CFFI_RESULT_MEMORY &&
                   CFFI_ARRAY_RESULT_X87 == CFFI_RESULT_X87,
               "cffi_enter_array_composite reads the result's kind as Trampolines.h says");

static _Thread_local int register_path_suppressed = 0;

void cffi_register_path_suppress(int suppress) { register_path_suppressed = suppress; }

int cffi_register_path_suppressed(void) { return register_path_suppressed; }

static _Thread_local int opaque_calls_suppressed = 0;

void cffi_opaque_calls_suppress(int suppress) { opaque_calls_suppressed = suppress; }

int cffi_opaque_calls_suppressed(void) { return opaque_calls_suppressed; }

/* Where a dead or freed slot goes (TrampolineTable.S's stubs pass the slot's context). */
__attribute__((visibility("hidden"), noreturn)) void cffi_trampoline_stop(const char *message) {
    fprintf(stderr, "%s\n", message);
    fflush(stderr);
    abort();
}

#if (defined(__x86_64__) || defined(__aarch64__)) && defined(__linux__)

extern const unsigned char cffi_trampoline_table[];
extern void cffi_trampoline_dead_registers(void);
extern void cffi_trampoline_dead_chain(void);
extern void cffi_trampoline_freed(void);

_Static_assert(CFFI_REGISTER_SLOTS + CFFI_CHAIN_SLOTS == CFFI_TABLE_SIZE / CFFI_SLOT_SIZE, "the kinds fill the table");
enum { kinds = 2 };
/* Where each kind's slots start in a mapping, and how many there are (TrampolineTable.S's order). The
   first slot of all is never handed out: its words hold the mapping's own (mapping_of). */
static const int first_slot[kinds] = {1, CFFI_REGISTER_SLOTS};
static const int slot_count[kinds] = {CFFI_REGISTER_SLOTS - 1, CFFI_CHAIN_SLOTS};

/* What cffi_trampoline_freed stops with (TrampolineTable.S). */
__attribute__((visibility("hidden"))) const char cffi_trampoline_freed_message[] =
    "DelegateKit: C called a closure after it was freed; keep the closure (or its delegate) alive for as "
    "long as C may call it";

struct table_mapping;

/* A slot's data words, CFFI_WORDS_SIZE bytes: two words, where four took a slot's whole stride (16 bytes
   of every live closure's memory). What a free slot needs besides is found elsewhere: its next free slot
   in its context word (its entry, cffi_trampoline_freed, reads none), its mapping in the mapping's first
   words (mapping_of). */
typedef struct slot_words {
    union {
        void *context;
        /* While the slot is free: the next free slot of its kind in its mapping. */
        struct slot_words *next_free;
        /* The first slot of a mapping, never handed out: the mapping. */
        struct table_mapping *mapping;
    };
    const void *entry;
} slot_words;
_Static_assert(sizeof(slot_words) == CFFI_WORDS_SIZE, "a slot's words are what TrampolineTable.S reads");
_Static_assert((CFFI_REGISTER_SLOTS + CFFI_CHAIN_SLOTS) * CFFI_WORDS_SIZE <= CFFI_TABLE_SIZE, "the words fit the data");

/* One mapping: the table's code and its slots' data words, each part CFFI_TABLE_SIZE bytes, at an
   address CFFI_TABLE_SIZE divides (so that a slot's words find their mapping's start: region_of). The
   data part's second half is never touched: a page of it is never resident. */
enum { mapping_size = 2 * CFFI_TABLE_SIZE };

/* What this file knows of one mapping. A mapping whose slots are all free again, when another empty one is
   kept already, gives its memory back (retire_mapping) and is used again before any new one is made: the
   room a burst of closures took comes back after it, and the count of mappings never grows past the
   burst's. */
typedef struct table_mapping {
    unsigned char *region;
    /* Slots of each kind freed here, handed out first; then the `unused` never handed out (the last ones
       of the kind's part): their words are first written when handed out, so that a kind's part nobody
       uses stays untouched memory. */
    slot_words *free[2];
    int unused[2];
    /* Slots handed out and not freed, buried ones included (their words must stay). */
    int in_use;
    int retired;
    /* Whether this mapping is on available[kind]; an entry there may be stale (nothing left of the kind,
       or retired): whoever pops it looks. */
    int listed[2];
    struct table_mapping *next_available[2];
    /* Every mapping, for the retired ones to be found again. */
    struct table_mapping *next;
} table_mapping;

/* Taken by fork itself (the handlers below): a fork waits for a section in progress, so that a forked
   child never finds the lock held by a thread it does not have. A section takes no other lock and runs no
   code of the program's, so the wait is short and cannot deadlock. */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static void lock_slots(void) { pthread_mutex_lock(&slots_lock); }
static void unlock_slots(void) { pthread_mutex_unlock(&slots_lock); }
__attribute__((constructor)) static void lock_slots_across_fork(void) {
    pthread_atfork(lock_slots, unlock_slots, unlock_slots);
}

/* Mappings that may have slots of each kind to hand out; every mapping; how many hold no slot and are
   not retired (one is kept, so that a program that makes and frees one closure at a time never maps and
   retires in turn). */
static table_mapping *available[kinds];
static table_mapping *mappings;
static int empty_mappings;
/* Slots handed out to live code: not freed, not buried (a debug build's graveyard holds a bounded number
   of buried ones on purpose). What the churn tests check comes back to where it was. Counted outside the
   lock: a thread's kept slots (below) come and go without it. */
static _Atomic size_t live_slots;
/* The binary holding the table, open for mapping it again, and the table's offset in it. */
static int table_file = -1;
static off_t table_offset;
/* A file of CFFI_TABLE_SIZE bytes holding the data words of a mapping whose every slot is freed, shared
   read-only by the retired mappings, so that a late call through a retired slot still stops with
   cffi_trampoline_freed_message; -1 where none could be made (then no mapping is retired). */
static int retired_words_file = -1;

static const void *dead_entry(int kind) {
    return kind == CFFI_TRAMPOLINE_STATIC_CHAIN ? (const void *)cffi_trampoline_dead_chain
                                                : (const void *)cffi_trampoline_dead_registers;
}

static slot_words *words_at(unsigned char *region) { return (slot_words *)(region + CFFI_TABLE_SIZE); }

static slot_words *data_words(const table_mapping *mapping) { return words_at(mapping->region); }

/* The start of the mapping holding `slot`: its words lie within CFFI_TABLE_SIZE / 2 bytes past the
   table, which starts at a multiple of CFFI_TABLE_SIZE (reserve_near_code). */
static unsigned char *region_of(const slot_words *slot) {
    return (unsigned char *)(((uintptr_t)slot - CFFI_TABLE_SIZE) & ~(uintptr_t)(CFFI_TABLE_SIZE - 1));
}

static ptrdiff_t index_of(const slot_words *slot) { return slot - words_at(region_of(slot)); }

static table_mapping *mapping_of(const slot_words *slot) { return words_at(region_of(slot))[0].mapping; }

static int kind_of(const slot_words *slot) {
    return index_of(slot) < CFFI_REGISTER_SLOTS ? CFFI_TRAMPOLINE_REGISTERS : CFFI_TRAMPOLINE_STATIC_CHAIN;
}

static void *code_of(const slot_words *slot) { return region_of(slot) + index_of(slot) * CFFI_SLOT_SIZE; }

/* Opens the file that holds the table, from the line of /proc/self/maps whose mapping holds it: through
   /proc/self/map_files (the very file mapped, even if the path now names another or none) where the
   kernel offers it, else by its path. The caller checks what it maps against the table itself. */
static int open_table_file(void) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return -1;
    uintptr_t table = (uintptr_t)cffi_trampoline_table;
    char line[4096];
    int file = -1;
    while (file < 0 && fgets(line, sizeof line, maps) != NULL) {
        uintptr_t start, end;
        unsigned long long offset;
        int path_start = 0;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %llx %*s %*s %n", &start, &end, &offset, &path_start) < 3) continue;
        if (table < start || table >= end || path_start == 0 || line[path_start] != '/') continue;
        table_offset = (off_t)(offset + (table - start));
        char own[64];
        snprintf(own, sizeof own, "/proc/self/map_files/%" PRIxPTR "-%" PRIxPTR, start, end);
        file = open(own, O_RDONLY | O_CLOEXEC);
        if (file < 0) {
            line[strcspn(line, "\n")] = '\0';
            file = open(line + path_start, O_RDONLY | O_CLOEXEC);
        }
    }
    fclose(maps);
    return file;
}

/* The words every slot of a retired mapping holds: cffi_trampoline_freed's entry. Written a chunk at a
   time, so that nothing of it stays in this process's own memory; the file is CFFI_TABLE_SIZE bytes, as
   much as retire_mapping maps of it. */
static int make_retired_words_file(void) {
    enum { chunk = 256, slots = CFFI_REGISTER_SLOTS + CFFI_CHAIN_SLOTS };
    _Static_assert(slots % chunk == 0, "the chunks hold every slot");
    int file = memfd_create("delegatekit-retired-slots", MFD_CLOEXEC);
    if (file < 0) return -1;
    slot_words words[chunk];
    memset(words, 0, sizeof words);
    for (int index = 0; index < chunk; index++) words[index].entry = (const void *)cffi_trampoline_freed;
    for (int first = 0; first < slots; first += chunk) {
        if (pwrite(file, words, sizeof words, (off_t)first * CFFI_WORDS_SIZE) != (ssize_t)sizeof words) {
            close(file);
            return -1;
        }
    }
    if (ftruncate(file, CFFI_TABLE_SIZE) != 0) {
        close(file);
        return -1;
    }
    return file;
}

/* Reserves the room of one mapping of the table and its data (read+write), near this binary's code where
   there is room: a slot's indirect jump to an entry gigabytes away costs about a nanosecond more on AMD's
   cores (measured on an EPYC: 3.3 against 2.5 ns a call through a slot; within 1.5 GiB no difference),
   and the register path's entries are this binary's. Each try is exact or nothing (MAP_FIXED_NOREPLACE),
   from just below the last mapping made, downwards, then anywhere. Always at a multiple of
   CFFI_TABLE_SIZE, which region_of needs: the tries are (the table is aligned so), and the last one
   reserves a table more than it needs and gives back what lies outside the aligned room. */
static unsigned char *reserve_near_code(void) {
    static uintptr_t next_hint = 0;
    const uintptr_t size = mapping_size, reach = (uintptr_t)1536 << 20;
    uintptr_t code = (uintptr_t)cffi_trampoline_table & ~(uintptr_t)(CFFI_TABLE_SIZE - 1);
    if (next_hint == 0) next_hint = code - (64u << 20);
    for (int tries = 0; tries < 64 && next_hint > size && code - next_hint < reach; tries++, next_hint -= size) {
        void *mapped = mmap((void *)next_hint, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (mapped == (void *)next_hint) {
            next_hint -= size;
            return mapped;
        }
        if (mapped != MAP_FAILED) munmap(mapped, size);  /* a kernel that took the flag as a hint only */
    }
    void *anywhere = mmap(NULL, size + CFFI_TABLE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (anywhere == MAP_FAILED) return NULL;
    uintptr_t start = (uintptr_t)anywhere, aligned = (start + CFFI_TABLE_SIZE - 1) & ~(uintptr_t)(CFFI_TABLE_SIZE - 1);
    if (aligned > start) munmap(anywhere, aligned - start);
    munmap((void *)(aligned + size), start + CFFI_TABLE_SIZE - aligned);
    return (unsigned char *)aligned;
}

/* Puts `mapping` on the list of those with slots of `kind` to hand out, unless it is there. */
static void list_available(table_mapping *mapping, int kind) {
    if (mapping->listed[kind]) return;
    mapping->listed[kind] = 1;
    mapping->next_available[kind] = available[kind];
    available[kind] = mapping;
}

/* Makes `mapping`'s slots all free and never handed out, its first words naming it. */
static void reset_mapping(table_mapping *mapping) {
    data_words(mapping)[0].mapping = mapping;
    data_words(mapping)[0].entry = (const void *)cffi_trampoline_freed;
    for (int kind = 0; kind < kinds; kind++) {
        mapping->free[kind] = NULL;
        mapping->unused[kind] = slot_count[kind];
        list_available(mapping, kind);
    }
    mapping->retired = 0;
    empty_mappings += 1;
}

/* Maps the table again, read+execute, with its data after it, read+write. 0 on success. Called with the
   lock held. */
static int map_table(void) {
    table_mapping *mapping = calloc(1, sizeof *mapping);
    if (mapping == NULL) return -1;
    unsigned char *region = reserve_near_code();
    if (region == NULL) {
        free(mapping);
        return -1;
    }
    /* A fresh mapping of a file, never written and never made executable afterwards: what PR_SET_MDWE
       allows. The first is compared with the table, which proves the file and offset; every later one
       maps the same bytes, and is left unread: reading it made all its pages resident (the kernel maps
       a whole window around each fault), 51 bytes a slot of memory a closure never called does not use.
       The first gives the pages it read back too. */
    static int table_checked = 0;
    void *code = mmap(region, CFFI_TABLE_SIZE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, table_file, table_offset);
    if (code != region || (!table_checked && memcmp(region, cffi_trampoline_table, CFFI_TABLE_SIZE) != 0)) {
        munmap(region, mapping_size);
        free(mapping);
        return -1;
    }
    if (!table_checked) {
        madvise(region, CFFI_TABLE_SIZE, MADV_DONTNEED);
        table_checked = 1;
    }
    mapping->region = region;
    mapping->next = mappings;
    mappings = mapping;
    reset_mapping(mapping);
    return 0;
}

/* Gives back the memory of `mapping`, whose slots are all free: its data words become a read-only view
   of retired_words_file (a late call still stops with the freed message), and the table's code, never
   written, is dropped from this process's pages until a call reads it again. Its addresses stay
   reserved: a late call never reaches whatever else could be mapped there. */
static void retire_mapping(table_mapping *mapping) {
    unsigned char *words = mapping->region + CFFI_TABLE_SIZE;
    if (mmap(words, CFFI_TABLE_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED, retired_words_file, 0) != words) return;
    madvise(mapping->region, CFFI_TABLE_SIZE, MADV_DONTNEED);
    mapping->retired = 1;
    empty_mappings -= 1;
}

/* Makes a retired mapping's data read+write again, every slot free. 0 on success. */
static int revive_mapping(table_mapping *mapping) {
    unsigned char *words = mapping->region + CFFI_TABLE_SIZE;
    if (mmap(words, CFFI_TABLE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != words) return -1;
    reset_mapping(mapping);
    return 0;
}

/* Whether `mapping` has a slot of `kind` to hand out: a freed one, or one never handed out. */
static int has_slot(const table_mapping *mapping, int kind) {
    return mapping->free[kind] != NULL || mapping->unused[kind] > 0;
}

/* A mapping with a slot of `kind` to hand out: listed, else a retired one revived, else a new one. Called
   with the lock held. */
static table_mapping *mapping_with_slot(int kind) {
    for (int attempt = 0; attempt < 2; attempt++) {
        while (available[kind] != NULL) {
            table_mapping *mapping = available[kind];
            if (!mapping->retired && has_slot(mapping, kind)) return mapping;
            available[kind] = mapping->next_available[kind];
            mapping->listed[kind] = 0;
        }
        table_mapping *retired = mappings;
        while (retired != NULL && !retired->retired) retired = retired->next;
        if (retired != NULL ? revive_mapping(retired) != 0 : map_table() != 0) return NULL;
    }
    return NULL;
}

/* Each thread keeps a few slots of each kind, freed ones and ones taken ahead, and hands them out
   without the lock: a program that makes and frees closures one after another, or a delegate of a few
   dozen slots at a time, takes no lock at all (the lock and its release cost more than the rest of making
   and freeing a slot), and a burst takes it once for every `taken_at_once` slots made and every
   `kept_per_kind / 2 + 1` freed. Taking a few and giving back half a full store keep a count that goes up
   and down by a handful from locking on every turn. A kept slot is freed in every way a call can see (its
   words stop a call with the freed message) and stays counted in its mapping's in_use, so that the
   mapping is never retired under it; the thread hands its kept slots back as it exits. A forked child
   keeps only its one thread's: the others' stay taken, as the few they are. */
enum { kept_per_kind = 32, taken_at_once = 8 };
typedef struct kept_slots {
    slot_words *first[kinds];
    int count[kinds];
} kept_slots;
static _Thread_local kept_slots kept;
/* Its value is set on a thread as it first keeps a slot, so that the thread's exit hands them back. */
static pthread_key_t kept_key;
static int kept_key_made = 0;
/* Whether this thread set kept_key's value; or, once its exit handed its slots back, that it keeps no
   more (a later destructor of the thread's may still free a closure). */
enum { keeps_not_yet, keeps, keeps_no_more };
static _Thread_local unsigned char keeping = keeps_not_yet;

/* Hands `slot`, freed and not kept, back to its mapping. Called with the lock held. */
static void return_slot(slot_words *slot, int kind) {
    table_mapping *mapping = mapping_of(slot);
    slot->next_free = mapping->free[kind];
    mapping->free[kind] = slot;
    list_available(mapping, kind);
    mapping->in_use -= 1;
    if (mapping->in_use == 0) {
        empty_mappings += 1;
        if (empty_mappings > 1 && retired_words_file >= 0) retire_mapping(mapping);
    }
}

/* Sets kept_key's value on this thread, so that its exit hands back what it keeps; keeps nothing where
   that fails. Out of line, as take_slot is. */
__attribute__((noinline)) static void start_keeping(void) {
    keeping = kept_key_made && pthread_setspecific(kept_key, &kept) == 0 ? keeps : keeps_no_more;
}

/* return_slot under the lock, with half the slots this thread keeps of the kind when it keeps its most.
   Out of line, as take_slot is. */
__attribute__((noinline)) static void return_slot_locked(slot_words *slot, int kind) {
    lock_slots();
    return_slot(slot, kind);
    if (keeping == keeps && kept.count[kind] == kept_per_kind) {
        for (int returned = 0; returned < kept_per_kind / 2; returned++) {
            slot_words *kept_slot = kept.first[kind];
            kept.first[kind] = kept_slot->next_free;
            return_slot(kept_slot, kind);
        }
        kept.count[kind] -= kept_per_kind / 2;
    }
    unlock_slots();
}

void cffi_trampoline_return_kept(void) {
    if (kept.count[0] == 0 && kept.count[1] == 0) return;
    lock_slots();
    for (int kind = 0; kind < kinds; kind++) {
        while (kept.first[kind] != NULL) {
            slot_words *slot = kept.first[kind];
            kept.first[kind] = slot->next_free;
            return_slot(slot, kind);
        }
        kept.count[kind] = 0;
    }
    unlock_slots();
}

static void return_kept_at_exit(void *value) {
    (void)value;
    keeping = keeps_no_more;
    cffi_trampoline_return_kept();
}

static int trampolines_available = 0;
static pthread_once_t trampolines_once = PTHREAD_ONCE_INIT;

static void map_first_table(void) {
    /* A mapping of the table must be whole pages: 4, 16 and 64 KiB kernels run aarch64, 4 KiB x86_64. */
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || CFFI_TABLE_SIZE % page != 0) return;
    table_file = open_table_file();
    if (table_file < 0) return;
    retired_words_file = make_retired_words_file();
    kept_key_made = pthread_key_create(&kept_key, return_kept_at_exit) == 0;
    lock_slots();
    trampolines_available = map_table() == 0;
    unlock_slots();
    if (!trampolines_available) {
        close(table_file);
        table_file = -1;
    }
}

int cffi_trampolines_available(void) {
    pthread_once(&trampolines_once, map_first_table);
    return trampolines_available;
}

/* A slot of `kind` from `mapping`, which has one. Called with the lock held. */
static slot_words *take_from(table_mapping *mapping, int kind) {
    slot_words *slot = mapping->free[kind];
    if (slot != NULL) {
        mapping->free[kind] = slot->next_free;
    } else {
        mapping->unused[kind] -= 1;
        slot = &data_words(mapping)[first_slot[kind] + slot_count[kind] - 1 - mapping->unused[kind]];
    }
    if (mapping->in_use == 0) empty_mappings -= 1;
    mapping->in_use += 1;
    return slot;
}

/* A slot of `kind` from a mapping, or NULL; a thread that keeps slots takes up to `taken_at_once` in all
   from the same mapping, the rest kept to hand out next without the lock. Out of line, so that reusing a
   kept slot saves no registers for it. */
__attribute__((noinline)) static slot_words *take_slot(int kind) {
    if (keeping == keeps_not_yet) start_keeping();
    lock_slots();
    table_mapping *mapping = mapping_with_slot(kind);
    slot_words *slot = mapping != NULL ? take_from(mapping, kind) : NULL;
    /* Called only with none kept of the kind: the ones taken are kept in the order taken, so that slots
       handed out one after another lie one after another, as they do when taken one at a time. */
    slot_words **last = &kept.first[kind];
    while (slot != NULL && keeping == keeps && kept.count[kind] < taken_at_once - 1 && has_slot(mapping, kind)) {
        slot_words *more = take_from(mapping, kind);
        /* Kept, so freed as a call sees it: its words stop a call with the freed message. */
        more->entry = (const void *)cffi_trampoline_freed;
        more->next_free = *last;
        *last = more;
        last = &more->next_free;
        kept.count[kind] += 1;
    }
    unlock_slots();
    return slot;
}

void *cffi_trampoline_create(int kind, const void *entry, void *context, void **code) {
    if (!cffi_trampolines_available() || kind < 0 || kind >= kinds) return NULL;
    slot_words *slot = kept.first[kind];
    if (slot != NULL) {
        kept.first[kind] = slot->next_free;
        kept.count[kind] -= 1;
    } else if ((slot = take_slot(kind)) == NULL) {
        return NULL;
    }
    /* Before the address leaves this function: the caller publishes it after this returns. */
    slot->context = context;
    slot->entry = entry;
    *code = code_of(slot);
    atomic_fetch_add_explicit(&live_slots, 1, memory_order_relaxed);
    return slot;
}

void *cffi_trampoline_context(const void *handle) { return ((const slot_words *)handle)->context; }

void *cffi_trampoline_code(void *handle) { return code_of(handle); }

void cffi_trampoline_set_context(void *handle, void *context) { ((slot_words *)handle)->context = context; }

void cffi_trampoline_bury(void *handle, const char *message) {
    slot_words *slot = handle;
    /* A call loads the context before the entry: between these stores it may reach the old entry with
       the message as its context. Burial comes after the last call (the closure's owner is gone), so that
       does not happen in a correct program. */
    slot->context = (void *)message;
    slot->entry = dead_entry(kind_of(slot));
    atomic_fetch_sub_explicit(&live_slots, 1, memory_order_relaxed);
}

void cffi_trampoline_free(void *handle) {
    slot_words *slot = handle;
    int kind = kind_of(slot);
    /* A buried slot was counted out when buried. */
    if (slot->entry != dead_entry(kind)) atomic_fetch_sub_explicit(&live_slots, 1, memory_order_relaxed);
    /* The entry first: a late call that loads the context word as it becomes a free list's link still
       stops with the freed message. */
    slot->entry = (const void *)cffi_trampoline_freed;
    if (keeping == keeps_not_yet) start_keeping();
    if (keeping == keeps && kept.count[kind] < kept_per_kind) {
        slot->next_free = kept.first[kind];
        kept.first[kind] = slot;
        kept.count[kind] += 1;
        return;
    }
    return_slot_locked(slot, kind);
}

size_t cffi_trampolines_live(void) { return atomic_load_explicit(&live_slots, memory_order_relaxed); }

int cffi_trampoline_slots_per_mapping(int kind) { return kind >= 0 && kind < kinds ? slot_count[kind] : 0; }

void cffi_trampoline_mappings(size_t *count, size_t *retired) {
    lock_slots();
    *count = *retired = 0;
    for (table_mapping *mapping = mappings; mapping != NULL; mapping = mapping->next) {
        *count += 1;
        *retired += mapping->retired != 0;
    }
    unlock_slots();
}

#else

int cffi_trampolines_available(void) { return 0; }

void *cffi_trampoline_create(int kind, const void *entry, void *context, void **code) {
    (void)kind; (void)entry; (void)context; (void)code;
    return NULL;
}

void *cffi_trampoline_context(const void *handle) { (void)handle; return NULL; }
void *cffi_trampoline_code(void *handle) { (void)handle; return NULL; }
void cffi_trampoline_set_context(void *handle, void *context) { (void)handle; (void)context; }
void cffi_trampoline_bury(void *handle, const char *message) { (void)handle; (void)message; }
void cffi_trampoline_free(void *handle) { (void)handle; }
void cffi_trampoline_return_kept(void) {}
size_t cffi_trampolines_live(void) { return 0; }
void cffi_trampoline_mappings(size_t *count, size_t *retired) { *count = *retired = 0; }
int cffi_trampoline_slots_per_mapping(int kind) { (void)kind; return 0; }

#endif

static int register_path_available = 0;
static pthread_once_t register_path_once = PTHREAD_ONCE_INIT;

static void decide_register_path(void) {
#if (defined(__x86_64__) || defined(__aarch64__)) && defined(__linux__)
    const char *setting = getenv("DELEGATEKIT_FAST_PATH");
    if (setting != NULL && strcmp(setting, "0") == 0) return;
    register_path_available = cffi_trampolines_available();
#endif
}

int cffi_register_path_available(void) {
    pthread_once(&register_path_once, decide_register_path);
    return register_path_available;
}
