/* Validation program with pointer chasing: a singly linked list of
 * 64-byte nodes linked in a random order (an 8 MiB list, beyond the
 * last-level cache a VM is given), walked a few times. */
#include <stdio.h>
#include <stdlib.h>

struct node {
    struct node *next;
    long value;
    char pad[48];
};

int main(void) {
    enum { N = 1 << 17, PASSES = 3 };
    struct node *nodes = malloc(sizeof(struct node) * N);
    unsigned *order = malloc(sizeof(unsigned) * N);
    unsigned s = 12345;
    for (unsigned i = 0; i < N; i++) order[i] = i;
    for (unsigned i = N - 1; i > 0; i--) {
        s = s * 1103515245u + 12345u;
        unsigned j = (s >> 8) % (i + 1);
        unsigned t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (unsigned i = 0; i < N; i++) {
        nodes[order[i]].next = &nodes[order[(i + 1) % N]];
        nodes[order[i]].value = i;
    }
    free(order);
    long sum = 0;
    struct node *p = &nodes[0];
    for (long k = 0; k < (long)N * PASSES; k++) {
        sum += p->value;
        p = p->next;
    }
    printf("%ld\n", sum);
    free(nodes);
    return 0;
}
