#include "ui/logic/latest_worker.h"

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
  // Every core: at the lower priority below it takes only what the window leaves, and the window, paced to the
  // display (pace_frame), leaves part of every frame.
  omp_set_num_threads(omp_get_num_procs());
#endif
#if defined(__linux__)
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
#endif
}

}  // namespace attn::ui
