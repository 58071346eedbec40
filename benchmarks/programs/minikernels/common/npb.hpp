// Shared by the kernels: timers and the NAS-style results block.
#pragma once

double wtime();
void print_results(const char *name, char cls, long size, int iterations, double seconds,
                   double mops, bool verified);
