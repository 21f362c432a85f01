/* What the process holds: heap in use, and mappings. */
#include "include/DelegateKitBenchmarkSupport.h"

#include <malloc.h>
#include <stdio.h>

size_t bench_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

void bench_trim_heap(void) { malloc_trim(0); }

/* Read with stdio: a file of /proc has no size, and readers that trust one read part of it. */
int64_t bench_mapping_count(void) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return -1;
    int64_t lines = 0;
    for (int c; (c = getc(maps)) != EOF;) lines += c == '\n';
    fclose(maps);
    return lines;
}
