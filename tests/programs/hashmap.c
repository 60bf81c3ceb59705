/* cachegrind-exactness test program: a chained hash table of string keys
 * (pointer chasing through malloc'ed nodes), memcpy of unaligned buffers
 * (accesses that straddle lines) and fxsave (a 512-byte access that
 * cachegrind clamps to the line size). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
    struct node *next;
    char key[24];
    long value;
};

#define BUCKETS 512

static unsigned hash(const char *s) {
    unsigned h = 2166136261u;
    while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

int main(void) {
    struct node *table[BUCKETS] = {0};
    char key[24];
    for (int i = 0; i < 1500; i++) {
        snprintf(key, sizeof key, "k%d", (i * 7919) % 2000);
        unsigned b = hash(key) % BUCKETS;
        struct node *n = table[b];
        while (n && strcmp(n->key, key) != 0) n = n->next;
        if (!n) {
            n = malloc(sizeof *n);
            strcpy(n->key, key);
            n->value = 0;
            n->next = table[b];
            table[b] = n;
        }
        n->value += i;
    }
    char *src = malloc(70000), *dst = malloc(70000);
    memset(src, 3, 70000);
    for (int off = 1; off < 40; off += 7) memcpy(dst + off, src + 2 * off, 20000);
    static char area[512] __attribute__((aligned(64)));
    for (int i = 0; i < 20; i++) __asm__ volatile("fxsave %0" : "=m"(area));
    long total = 0;
    for (int b = 0; b < BUCKETS; b++)
        for (struct node *n = table[b]; n; n = n->next) total += n->value;
    printf("%ld %d %d\n", total, dst[100], area[0] != 0);
    return 0;
}
