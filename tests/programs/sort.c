/* cachegrind-exactness test program: qsort of pseudo-random ints. */
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main(void) {
    int n = 3000;
    int *a = malloc(n * sizeof(int));
    unsigned s = 1;
    for (int i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        a[i] = (int)(s >> 8);
    }
    qsort(a, n, sizeof(int), cmp);
    long sum = 0;
    for (int i = 0; i < n; i += 7) sum += a[i];
    printf("%ld\n", sum);
    free(a);
    return 0;
}
