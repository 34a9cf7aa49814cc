package dev.inbox.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CPU time the whole machine has spent busy (user, nice, system, irq, softirq and steal), from
 * Linux's {@code /proc/stat}. When clients, server and database share the machine and keep it
 * saturated, a request's latency follows the CPU it costs all of them together, and this measures
 * that cost directly instead of through queueing.
 */
final class MachineCpu {
  private static final Path STAT = Path.of("/proc/stat");

  /** Linux reports in USER_HZ ticks, 100 per second on every architecture it supports. */
  private static final long MICROS_PER_TICK = 10_000;

  private MachineCpu() {}

  /** Whether this machine reports its CPU time, so that {@link #busyMicros()} means something. */
  static boolean available() {
    return busyMicros() >= 0;
  }

  /** Busy CPU time since boot, summed over all CPUs, in microseconds; -1 where unknown. */
  static long busyMicros() {
    try {
      String[] fields = Files.readAllLines(STAT).get(0).trim().split("\\s+");
      long ticks = 0;
      for (int field : new int[] {1, 2, 3, 6, 7, 8}) { // skips idle (4) and iowait (5)
        ticks += Long.parseLong(fields[field]);
      }
      return ticks * MICROS_PER_TICK;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }
}
