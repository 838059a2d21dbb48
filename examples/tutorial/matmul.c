/* Tiled matrix multiplication C = A * B of two N x N matrices, the program the tutorial tunes.
 *
 * The tile sizes are compile-time constants (-DTILE_I=.. -DTILE_J=.. -DTILE_K=..), so every
 * configuration is a separate build. The entries are small integers, so every summation order gives
 * the same exact checksum, whatever the tiles and the compiler flags.
 *
 * Usage: matmul N     prints "time SECONDS" (the multiplication only) and "checksum SUM".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef TILE_I
#define TILE_I 32
#endif
#ifndef TILE_J
#define TILE_J 32
#endif
#ifndef TILE_K
#define TILE_K 32
#endif

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void multiply(int n, const double *a, const double *b, double *c) {
    for (int ii = 0; ii < n; ii += TILE_I)
        for (int kk = 0; kk < n; kk += TILE_K)
            for (int jj = 0; jj < n; jj += TILE_J)
                for (int i = ii; i < ii + TILE_I && i < n; i++)
                    for (int k = kk; k < kk + TILE_K && k < n; k++) {
                        double aik = a[(size_t)i * n + k];
                        for (int j = jj; j < jj + TILE_J && j < n; j++)
                            c[(size_t)i * n + j] += aik * b[(size_t)k * n + j];
                    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 256;
    if (n < 1) {
        fprintf(stderr, "matmul: N must be a positive integer\n");
        return 2;
    }
    double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
    double *c = calloc((size_t)n * n, sizeof(double));
    if (!a || !b || !c) {
        fprintf(stderr, "matmul: out of memory for N = %d\n", n);
        return 1;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            a[(size_t)i * n + j] = (i * 7 + j * 3) % 10;
            b[(size_t)i * n + j] = (i * 5 + j * 11) % 10;
        }
    double start = seconds();
    multiply(n, a, b, c);
    double elapsed = seconds() - start;
    double sum = 0;
    for (size_t i = 0; i < (size_t)n * n; i++)
        sum += c[i];
    printf("time %.9f\nchecksum %.0f\n", elapsed, sum);
    free(a); free(b); free(c);
    return 0;
}
