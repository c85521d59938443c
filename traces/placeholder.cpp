// Chrome/Perfetto trace writer (placeholder until built).
