package dev.inbox.examples;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.function.DoubleSupplier;

/**
 * Faults at random points of a run: each fires once the run's progress (effects so far over effects
 * expected) passes its own random mark. Tying the marks to progress rather than to time keeps every
 * fault inside the run, however fast the machine.
 */
final class FaultSchedule {
  /** A fault to inject; it may block, for example while a server restarts. */
  interface Fault {
    void inject() throws Exception;
  }

  private static final long MIN_GAP_MILLIS = 300;

  private record Event(double mark, String name, Fault fault) {}

  private final Random random;
  private final List<Event> events = new ArrayList<>();
  private final List<String> fired = new ArrayList<>();

  FaultSchedule(long seed) {
    this.random = new Random(seed);
  }

  /** Adds {@code times} injections of a fault at marks between 5 % and 85 % of the run. */
  void add(String name, int times, Fault fault) {
    for (int i = 0; i < times; i++) {
      events.add(new Event(0.05 + 0.8 * random.nextDouble(), name, fault));
    }
  }

  int size() {
    return events.size();
  }

  /**
   * Injects the faults in the order of their marks as progress passes them, until all fired or the
   * deadline passed. Returns the names of the faults injected, in order.
   */
  List<String> run(DoubleSupplier progress, long deadlineNanos) throws Exception {
    events.sort(Comparator.comparingDouble(Event::mark));
    for (Event event : events) {
      while (progress.getAsDouble() < event.mark()) {
        if (System.nanoTime() > deadlineNanos) {
          return List.copyOf(fired);
        }
        Thread.sleep(50);
      }
      event.fault().inject();
      // A fault that took long (a broker restart) may have let progress pass several marks; a
      // short gap keeps those from landing all at once.
      Thread.sleep(MIN_GAP_MILLIS);
      fired.add(String.format("%s at %.0f%%", event.name(), 100 * progress.getAsDouble()));
    }
    return List.copyOf(fired);
  }
}
