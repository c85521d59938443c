#pragma once
// AddressSanitizer and SystemC's QuickThreads coroutines: the fiber-switch annotations that
// libsystemc 2.3.4 leaves out (docs/hardening.md, "SystemC under ASan").

namespace neuronsim::sim {

/// Forgets the coroutine stacks of earlier kernels; call before a new SystemC kernel runs.
/// Does something only in GCC AddressSanitizer builds (the asan preset).
void resetAsanFibers();

}  // namespace neuronsim::sim
