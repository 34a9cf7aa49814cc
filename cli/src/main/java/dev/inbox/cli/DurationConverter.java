package dev.inbox.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** A duration as an operator types it: {@code 90s}, {@code 10m}, {@code 2h}, {@code 3d}, or ISO. */
final class DurationConverter implements ITypeConverter<Duration> {
  private static final Pattern SHORT = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

  @Override
  public Duration convert(String value) {
    Matcher m = SHORT.matcher(value.trim());
    if (m.matches()) {
      long amount = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(amount);
        case "s" -> Duration.ofSeconds(amount);
        case "m" -> Duration.ofMinutes(amount);
        case "h" -> Duration.ofHours(amount);
        default -> Duration.ofDays(amount);
      };
    }
    try {
      Duration duration = Duration.parse(value.trim());
      if (!duration.isNegative()) {
        return duration;
      }
    } catch (DateTimeParseException e) {
      // Reported below with the accepted forms.
    }
    throw new TypeConversionException(
        "'"
            + value
            + "' is not a duration; use a number and a unit (90s, 10m, 2h, 3d) or ISO-8601"
            + " (PT10M)");
  }
}
