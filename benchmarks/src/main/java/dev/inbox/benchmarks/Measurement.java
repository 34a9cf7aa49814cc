package dev.inbox.benchmarks;

/** One timed run: how long it took, and whether its effects checked out afterwards. */
record Measurement(double seconds, boolean correct) {}
