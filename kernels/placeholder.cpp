// Kernel library (placeholder until built).
