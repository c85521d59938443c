#pragma once
// The instruction table (one row per instruction and DMA transfer) as CSV.

#include <string>

#include "isa/program.h"
#include "traces/event.h"
#include "traces/trace_model.h"

namespace neuronsim::traces {

/// Header line of the table (no newline).
inline constexpr const char* kCsvHeader =
    "kind,index,track,opcode,ready_ns,start_ns,end_ns,duration_ns,stall_ns,stall_cause,semaphore,"
    "wait_value,waited_on,cycles,bytes,flops,bytes_per_partition,asm";

/// The table text: header, then spans sorted by start time (ties by index).
std::string instructionCsv(const TraceModel& model);
/// Writes instructionCsv(traceModel(program, log)) to `path`; throws neuronsim::Error naming it.
void writeInstructionCsv(const std::string& path, const isa::Program& program, const EventLog& log);
/// Writes the table of a saved trace.
void writeInstructionCsv(const std::string& path, const TraceModel& model);

}  // namespace neuronsim::traces
