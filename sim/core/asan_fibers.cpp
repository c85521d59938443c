// AddressSanitizer and SystemC's QuickThreads coroutines. libsystemc 2.3.4 tells ASan about a
// coroutine switch through weak references to __sanitizer_start_switch_fiber and
// __sanitizer_finish_switch_fiber, with two gaps: a switch back to the main coroutine passes an
// empty stack (ASan then has no bounds for the thread's own stack), and the switch made when a
// thread process ends (qt_abort) is not announced at all; it may even enter a coroutine that has
// never run, whose stack nothing has named yet. Either way the next exception thrown finds
// ASan's stack bounds wrong, ASan skips unpoisoning the unwound frames (google/sanitizers#189),
// and later stack accesses report false errors. Besides, GCC 12's ASan keeps the shadow of an
// unmapped coroutine stack (the poisoned redzones of the frames suspended on it), which a stack
// mapped later at that address would inherit.
//
// In GCC builds libasan is a shared library, so definitions here take precedence for
// libsystemc's lookups: the start of a switch to the empty stack becomes a switch to the
// thread's real stack; sc_cor_qt_aborthelp (QuickThreads' helper run on the resumed stack right
// after qt_abort; SystemC's own does nothing) announces the switch it completes, working out a
// fresh coroutine's stack from where it runs; and a coroutine stack seen for the first time since
// resetAsanFibers() is unpoisoned whole. Python loads the same definitions as a library
// preloaded before libasan (neuronsim_asan_fibers).
#include "sim/core/asan_fibers.h"

#if defined(__SANITIZE_ADDRESS__) && !defined(__clang__)

#include <dlfcn.h>
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <unistd.h>

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

/// Makes `stack` known: unpoisoned whole when first seen since the kernel started (shadow left
/// by an unmapped stack of an earlier kernel at the same address), latest last.
void remember(Stack stack) {
  const auto seen =
      std::erase_if(coroutineStacks, [&](const Stack& s) { return s.bottom == stack.bottom; });
  if (seen == 0) __asan_unpoison_memory_region(reinterpret_cast<void*>(stack.bottom), stack.size);
  coroutineStacks.push_back(stack);
}

/// The stack `address` lies on: the thread's, a coroutine stack seen before, or else the stack
/// of a coroutine that starts here, entered by qt_abort (never announced). QuickThreads starts
/// a coroutine at the top of its page-aligned stack, so that top is the page boundary above
/// `address`; all coroutines of a kernel have SystemC's default stack size (neuronsim sets none),
/// the size of the coroutine that just ended.
Stack stackHolding(uintptr_t address) {
  const Stack thread = threadStack();
  if (thread.contains(address)) return thread;
  for (auto it = coroutineStacks.rbegin(); it != coroutineStacks.rend(); ++it)
    if (it->contains(address)) return *it;
  if (coroutineStacks.empty()) return thread;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const size_t size = coroutineStacks.back().size;
  const Stack fresh{(address / page + 1) * page - size, size};
  remember(fresh);
  return fresh;
}

}  // namespace

extern "C" void __sanitizer_start_switch_fiber(void** fakeStack, const void* bottom, size_t size) {
  Stack target{reinterpret_cast<uintptr_t>(bottom), size};
  if (target.size == 0) {
    target = threadStack();
  } else {
    remember(target);
  }
  announceSwitch(fakeStack, target);
}

extern "C" void* sc_cor_qt_aborthelp(void*, void*, void*) {
  announceSwitch(nullptr, stackHolding(reinterpret_cast<uintptr_t>(__builtin_frame_address(0))));
  asanFinishSwitch()(nullptr, nullptr, nullptr);
  return nullptr;
}

/// The reset of the definitions libsystemc binds to: the preloaded library's in Python, the
/// executable's own elsewhere.
extern "C" void neuronsim_reset_asan_fibers() {
  coroutineStacks.clear();
}

void neuronsim::sim::resetAsanFibers() {
  using Reset = void (*)();
  static const auto reset = [] {
    auto global = reinterpret_cast<Reset>(dlsym(RTLD_DEFAULT, "neuronsim_reset_asan_fibers"));
    return global ? global : &neuronsim_reset_asan_fibers;
  }();
  reset();
}

#else

void neuronsim::sim::resetAsanFibers() {}

#endif
