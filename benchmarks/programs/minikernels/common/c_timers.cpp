#include <omp.h>

#include "npb.hpp"

double wtime() { return omp_get_wtime(); }
