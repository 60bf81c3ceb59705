/* cachegrind-exactness test program: naive and transposed matrix multiply
 * (unit-stride and large-stride data walks). */
#include <stdio.h>
#include <stdlib.h>

#define N 56

int main(void) {
    double *a = malloc(sizeof(double) * N * N), *b = malloc(sizeof(double) * N * N);
    double *c = calloc(N * N, sizeof(double)), *bt = malloc(sizeof(double) * N * N);
    for (int i = 0; i < N * N; i++) {
        a[i] = i % 7;
        b[i] = i % 5;
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < N; k++) c[i * N + j] += a[i * N + k] * b[k * N + j];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) bt[j * N + i] = b[i * N + j];
    double t = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++) s += a[i * N + k] * bt[j * N + k];
            t += s - c[i * N + j];
        }
    printf("%f %f\n", c[N * N - 1], t);
    free(a), free(b), free(c), free(bt);
    return 0;
}
