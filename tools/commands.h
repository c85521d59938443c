#pragma once
// One function per `neuronsim` subcommand; each returns the process exit status.

namespace neuronsim::tools {

/// argv[0] is the program, argv[1] the subcommand; options start at argv[2].
int runCommand(int argc, char** argv);        // run KERNEL
int listCommand(int argc, char** argv);       // list
int asmCommand(int argc, char** argv);        // asm FILE
int reportCommand(int argc, char** argv);     // report TRACE.json
int viewCommand(int argc, char** argv);       // view TRACE.json
int diffCommand(int argc, char** argv);       // diff A.json B.json
int calibrateCommand(int argc, char** argv);  // calibrate

/// `kernel` names a Python kernel (FILE.py:NAME).
bool isPythonKernel(const char* kernel);
/// run FILE.py:NAME [options]: replaces the process with python3 -m neuronsim run ...
int runPythonKernel(int argc, char** argv);

}  // namespace neuronsim::tools
