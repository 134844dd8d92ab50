/* osu_allreduce-style measurement with MPI, to compare with `rdmabench allreduce --algo tree`
 * on the same ranks: per size, warmup, then ITERS timed MPI_Allreduce calls of float32 sums,
 * each followed by an untimed MPI_Barrier (as osu_allreduce); each rank averages its own
 * iterations; rank 0 prints min / max / mean over ranks of those means (OSU's Min/Max/Avg).
 * Usage: mpirun -np 4 ./mpi_allreduce ITERS WARMUP BYTES... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iters = argc > 1 ? atoi(argv[1]) : 1000, warmup = argc > 2 ? atoi(argv[2]) : 100;
  if (rank == 0) printf("# mpi_allreduce: %d ranks, float32 sum\n# bytes t_min[us] t_max[us] t_avg[us]\n", size);
  for (int a = 3; a < argc; ++a) {
    long bytes = atol(argv[a]);
    int count = (int)(bytes / 4);
    float* in = malloc((size_t)count * 4 + 4);
    float* out = malloc((size_t)count * 4 + 4);
    for (int i = 0; i < count; ++i) in[i] = (float)(rank + 1);
    double sum = 0;
    for (int i = 0; i < warmup + iters; ++i) {
      double t0 = MPI_Wtime();
      MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double t1 = MPI_Wtime();
      MPI_Barrier(MPI_COMM_WORLD);
      if (i >= warmup) sum += t1 - t0;
    }
    double mean = sum / iters * 1e6, mn, mx, tot;
    MPI_Reduce(&mean, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mean, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mean, &tot, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%ld %.2f %.2f %.2f\n", bytes, mn, mx, tot / size);
    free(in);
    free(out);
  }
  MPI_Finalize();
  return 0;
}
