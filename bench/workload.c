/* Benchmark workload for replay speed: sorting, hashing and a matrix walk,
 * enough for tens of millions of lackey trace lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    int *a = malloc(n * sizeof(int));
    unsigned s = 7;
    for (int i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        a[i] = (int)(s >> 8);
    }
    qsort(a, n, sizeof(int), cmp);
    int m = 160;
    double *x = malloc(sizeof(double) * m * m), *y = calloc(m * m, sizeof(double));
    for (int i = 0; i < m * m; i++) x[i] = i % 13;
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < m; j++)
            for (int i = 0; i < m; i++) y[i * m + j] += x[j * m + i] * 0.5;
    char *buf = malloc(1 << 22);
    memset(buf, 1, 1 << 22);
    long sum = 0;
    for (int i = 0; i < n; i += 3) sum += a[i] + buf[(unsigned)a[i] % (1 << 22)];
    printf("%ld %f\n", sum, y[m * m - 1]);
    return 0;
}
