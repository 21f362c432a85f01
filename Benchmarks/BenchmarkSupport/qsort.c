/* The C side of the qsort benchmark: glibc's qsort timed with nothing but the call between the two
   clock reads, and the plain C comparator every other comparator is compared with. */
#include "include/DelegateKitBenchmarkSupport.h"

#include <stdlib.h>

int bench_compare_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int64_t bench_qsort_int32(int32_t *data, size_t count, const void *compare) {
    int (*function)(const void *, const void *) = (int (*)(const void *, const void *))compare;
    int64_t start = bench_now();
    qsort(data, count, sizeof *data, function);
    return bench_now() - start;
}
