package dev.inbox.benchmarks;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** Builds one JSON object, fields in the order they were added. */
final class JsonLine {
  private final StringBuilder json = new StringBuilder("{");

  static JsonLine scenario(String name) {
    return new JsonLine().put("scenario", name);
  }

  /** Another line that starts with this one's fields. */
  JsonLine copy() {
    JsonLine copy = new JsonLine();
    copy.json.setLength(0);
    copy.json.append(json);
    return copy;
  }

  JsonLine put(String field, String value) {
    return raw(field, value == null ? "null" : '"' + value.replace("\"", "\\\"") + '"');
  }

  JsonLine put(String field, long value) {
    return raw(field, Long.toString(value));
  }

  JsonLine put(String field, boolean value) {
    return raw(field, Boolean.toString(value));
  }

  /** A decimal with the given number of fraction digits. */
  JsonLine put(String field, double value, int digits) {
    return raw(field, String.format(Locale.ROOT, "%." + digits + "f", value));
  }

  JsonLine put(String field, List<Double> values, int digits) {
    return raw(
        field,
        values.stream()
            .map(v -> String.format(Locale.ROOT, "%." + digits + "f", v))
            .collect(Collectors.joining(",", "[", "]")));
  }

  /** A JSON object of counts, in the map's order. */
  JsonLine put(String field, Map<String, Long> counts) {
    return raw(
        field,
        counts.entrySet().stream()
            .map(e -> '"' + e.getKey().replace("\"", "\\\"") + "\":" + e.getValue())
            .collect(Collectors.joining(",", "{", "}")));
  }

  private JsonLine raw(String field, String value) {
    if (json.length() > 1) {
      json.append(',');
    }
    json.append('"').append(field).append("\":").append(value);
    return this;
  }

  @Override
  public String toString() {
    return json + "}";
  }
}
