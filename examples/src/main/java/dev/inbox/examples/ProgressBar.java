package dev.inbox.examples;

import java.io.PrintStream;

/** A one-line progress bar that redraws itself with a carriage return. */
final class ProgressBar {
  private static final int WIDTH = 40;
  private final PrintStream out;
  private final String label;

  ProgressBar(PrintStream out, String label) {
    this.out = out;
    this.label = label;
  }

  void show(long done, long total, String note) {
    double fraction = total == 0 ? 1 : Math.min(1.0, (double) done / total);
    int filled = (int) Math.round(fraction * WIDTH);
    out.printf(
        "\r%s [%s%s] %3d%% %d/%d %s",
        label,
        "#".repeat(filled),
        " ".repeat(WIDTH - filled),
        Math.round(fraction * 100),
        done,
        total,
        note);
    out.flush();
  }

  void finish() {
    out.println();
  }
}
