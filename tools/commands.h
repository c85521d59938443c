#pragma once
// One function per `neuronsim` subcommand: each adds its CLI11 subcommand to the app and returns
// what runs when it is chosen.

#include "tools/cli.h"

namespace neuronsim::tools {

Command addListCommand(CLI::App& app);       // list
Command addRunCommand(CLI::App& app);        // run KERNEL
Command addAsmCommand(CLI::App& app);        // asm FILE
Command addReportCommand(CLI::App& app);     // report TRACE.json
Command addViewCommand(CLI::App& app);       // view TRACE.json
Command addDiffCommand(CLI::App& app);       // diff A.json B.json
Command addSweepCommand(CLI::App& app);      // sweep KERNEL, sweep merge FILES
Command addCalibrateCommand(CLI::App& app);  // calibrate

/// `kernel` names a Python kernel (FILE.py:NAME), or a Python file (FILE.py: an error listing its
/// kernels).
bool isPythonKernel(const char* kernel);
/// run FILE.py:NAME [options]: replaces the process with python3 -m neuronsim run ...
int runPythonKernel(int argc, char** argv);

}  // namespace neuronsim::tools
