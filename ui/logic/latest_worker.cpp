#include "ui/logic/latest_worker.h"

#include <algorithm>

#if defined(__linux__)
#include <sys/resource.h>
#include <unistd.h>
#endif

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace attn::ui {

void yield_to_window() {
#if defined(_OPENMP)
  // The window keeps drawing while this thread computes.
  omp_set_num_threads(std::max(1, omp_get_num_procs() - 1));
#endif
#if defined(__linux__)
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
#endif
}

}  // namespace attn::ui
