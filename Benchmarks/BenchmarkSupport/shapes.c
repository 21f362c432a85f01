/* The callback shapes C libraries use most, each called in a loop the way such a library calls it, and
   the plain C function of each shape: the floor a closure of that shape is measured against. */
#include "include/DelegateKitBenchmarkSupport.h"

#include <stdint.h>

__attribute__((noinline)) static int compare_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}
__attribute__((noinline)) static void increment(void *p) { *(int64_t *)p += 1; }
__attribute__((noinline)) static int read_plus_one(void *p) { return (int)*(int32_t *)p + 1; }
__attribute__((noinline)) static void *same(void *p) { return p; }
__attribute__((noinline)) static int count_up(void *p, int count) { return count + (p != 0); }
__attribute__((noinline)) static void add_into(void *element, void *context) {
    *(int64_t *)context += *(int64_t *)element;
}

const void *bench_shape_direct(int shape) {
    switch (shape) {
    case BENCH_SHAPE_COMPARATOR: return (const void *)compare_int32;
    case BENCH_SHAPE_DESTROY: return (const void *)increment;
    case BENCH_SHAPE_CONTEXT: return (const void *)read_plus_one;
    case BENCH_SHAPE_THREAD_START: return (const void *)same;
    case BENCH_SHAPE_BUSY: return (const void *)count_up;
    default: return (const void *)add_into;
    }
}

int64_t bench_shape_loop(int shape, const void *f, int64_t n) {
    int64_t acc = 0;
    switch (shape) {
    case BENCH_SHAPE_COMPARATOR: {
        int (*fn)(const void *, const void *) = (int (*)(const void *, const void *))f;
        int32_t values[2] = {1, 2};
        for (int64_t i = 0; i < n; i++) acc += fn(&values[i & 1], &values[(i + 1) & 1]);
        return acc;
    }
    case BENCH_SHAPE_DESTROY: {
        void (*fn)(void *) = (void (*)(void *))f;
        for (int64_t i = 0; i < n; i++) fn(&acc);
        return acc;
    }
    case BENCH_SHAPE_CONTEXT: {
        int (*fn)(void *) = (int (*)(void *))f;
        int32_t value = 0;
        for (int64_t i = 0; i < n; i++) value = fn(&value);
        return value;
    }
    case BENCH_SHAPE_THREAD_START: {
        void *(*fn)(void *) = (void *(*)(void *))f;
        void *p = &acc;
        for (int64_t i = 0; i < n; i++) p = fn(p);
        return p == &acc ? n : -1;
    }
    case BENCH_SHAPE_BUSY: {
        int (*fn)(void *, int) = (int (*)(void *, int))f;
        int count = 0;
        for (int64_t i = 0; i < n; i++) count = fn(&acc, count);
        return count;
    }
    default: {
        void (*fn)(void *, void *) = (void (*)(void *, void *))f;
        int64_t one = 1;
        for (int64_t i = 0; i < n; i++) fn(&one, &acc);
        return acc;
    }
    }
}

int64_t bench_opaque_zero(void) {
    static volatile int64_t zero = 0;
    return zero;
}
