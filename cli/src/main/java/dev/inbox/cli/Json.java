package dev.inbox.cli;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A small JSON writer for the commands' {@code --json} output: objects keep the order their fields
 * are added in; a value is a string, a number, a boolean, null, an instant (ISO-8601 text), a list
 * or a map of them, or raw JSON from {@link #raw}.
 */
final class Json {
  private final StringBuilder out = new StringBuilder("{");

  /** JSON text that is written as it is, such as an audit entry's record. */
  record Raw(String json) {}

  static Raw raw(String json) {
    return json == null ? null : new Raw(json);
  }

  Json field(String name, Object value) {
    if (out.length() > 1) {
      out.append(',');
    }
    string(out, name);
    out.append(':');
    value(out, value);
    return this;
  }

  @Override
  public String toString() {
    return out + "}";
  }

  static String array(List<?> values) {
    StringBuilder out = new StringBuilder();
    value(out, values);
    return out.toString();
  }

  private static void value(StringBuilder out, Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof Json json) {
      out.append(json);
    } else if (value instanceof Raw raw) {
      out.append(raw.json());
    } else if (value instanceof Number || value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof Instant || value instanceof Enum<?>) {
      string(out, value.toString());
    } else if (value instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        value(out, list.get(i));
      }
      out.append(']');
    } else if (value instanceof Map<?, ?> map) {
      Json object = new Json();
      map.forEach((k, v) -> object.field(String.valueOf(k), v));
      out.append(object);
    } else {
      string(out, value.toString());
    }
  }

  private static void string(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20 || c == 0x2028 || c == 0x2029) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
