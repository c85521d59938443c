// AddressSanitizer and SystemC's QuickThreads coroutines. libsystemc 2.3.4 tells ASan about a
// coroutine switch through weak references to __sanitizer_start_switch_fiber and
// __sanitizer_finish_switch_fiber, with two gaps: a switch back to the main coroutine passes an
// empty stack (ASan then has no bounds for the thread's own stack), and the switch made when a
// thread process ends (qt_abort) is not announced at all. Either way the next exception thrown
// finds ASan's stack bounds wrong, ASan skips unpoisoning the unwound frames
// (google/sanitizers#189), and later stack accesses report false errors.
//
// In GCC builds libasan is a shared library, so definitions here take precedence for
// libsystemc's lookups: the start of a switch to the empty stack becomes a switch to the
// thread's real stack, and sc_cor_qt_aborthelp (QuickThreads' helper run on the resumed stack
// right after qt_abort; SystemC's own does nothing) announces the switch it completes.
#include "sim/core/asan_fibers.h"

#if defined(__SANITIZE_ADDRESS__) && !defined(__clang__)

#include <dlfcn.h>
#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

/// A stack as ASan's fiber interface takes it: lowest address and size in bytes.
struct Stack {
  uintptr_t bottom = 0;
  size_t size = 0;
  bool contains(uintptr_t address) const { return address >= bottom && address < bottom + size; }
};

using StartSwitch = void (*)(void**, const void*, size_t);
using FinishSwitch = void (*)(void*, const void**, size_t*);

StartSwitch asanStartSwitch() {
  static const auto start =
      reinterpret_cast<StartSwitch>(dlsym(RTLD_NEXT, "__sanitizer_start_switch_fiber"));
  return start;
}

FinishSwitch asanFinishSwitch() {
  static const auto finish =
      reinterpret_cast<FinishSwitch>(dlsym(RTLD_NEXT, "__sanitizer_finish_switch_fiber"));
  return finish;
}

/// The calling thread's own stack (the main coroutine's).
Stack threadStack() {
  thread_local Stack stack;
  if (stack.size == 0) {
    pthread_attr_t attr;
    void* address = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &address, &size);
      pthread_attr_destroy(&attr);
    }
    stack = {reinterpret_cast<uintptr_t>(address), size};
  }
  return stack;
}

/// Every coroutine stack switched to since the kernel started, latest last.
thread_local std::vector<Stack> coroutineStacks;

void announceSwitch(void** fakeStack, Stack target) {
  asanStartSwitch()(fakeStack, reinterpret_cast<const void*>(target.bottom), target.size);
}

}  // namespace

extern "C" void __sanitizer_start_switch_fiber(void** fakeStack, const void* bottom, size_t size) {
  Stack target{reinterpret_cast<uintptr_t>(bottom), size};
  if (target.size == 0) {
    target = threadStack();
  } else {
    std::erase_if(coroutineStacks, [&](const Stack& s) { return s.bottom == target.bottom; });
    coroutineStacks.push_back(target);
  }
  announceSwitch(fakeStack, target);
}

extern "C" void* sc_cor_qt_aborthelp(void*, void*, void*) {
  const auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  Stack target = threadStack();
  for (auto it = coroutineStacks.rbegin(); !target.contains(here) && it != coroutineStacks.rend();
       ++it)
    if (it->contains(here)) target = *it;
  announceSwitch(nullptr, target);
  asanFinishSwitch()(nullptr, nullptr, nullptr);
  return nullptr;
}

void neuronsim::sim::resetAsanFibers() {
  coroutineStacks.clear();
}

#else

void neuronsim::sim::resetAsanFibers() {}

#endif
