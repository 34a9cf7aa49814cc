package dev.inbox;

import dev.inbox.internal.Fingerprints;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The result kept with a completed record and handed back on every duplicate: a status code,
 * headers and a body. HTTP uses all three; a message consumer may store nothing at all.
 *
 * <p>A body too large to keep is recorded by its SHA-256 only ({@link #bodyStored()} is false), so
 * that a retry still never runs the handler again.
 */
public final class StoredResult {
  private final int status;
  private final Map<String, List<String>> headers;
  private final byte[] body;
  private final byte[] bodySha256;

  private StoredResult(
      int status, Map<String, List<String>> headers, byte[] body, byte[] bodySha256) {
    this.status = status;
    Map<String, List<String>> copy = new LinkedHashMap<>();
    headers.forEach((name, values) -> copy.put(name, List.copyOf(values)));
    this.headers = Collections.unmodifiableMap(copy);
    this.body = body;
    this.bodySha256 = bodySha256;
  }

  /** A result with a status, headers and the full body. */
  public static StoredResult of(int status, Map<String, List<String>> headers, byte[] body) {
    Objects.requireNonNull(headers, "headers");
    Objects.requireNonNull(body, "body");
    return new StoredResult(status, headers, body.clone(), Fingerprints.sha256(body));
  }

  /** A result with a status and a body, and no headers. */
  public static StoredResult of(int status, byte[] body) {
    return of(status, Map.of(), body);
  }

  /** A result whose body is not kept, only its SHA-256, because it was larger than allowed. */
  public static StoredResult withoutBody(
      int status, Map<String, List<String>> headers, byte[] bodySha256) {
    Objects.requireNonNull(headers, "headers");
    Objects.requireNonNull(bodySha256, "bodySha256");
    return new StoredResult(status, headers, null, bodySha256.clone());
  }

  /** Rebuilds a result read from the table; either part of the body may be null. */
  public static StoredResult restore(
      int status, Map<String, List<String>> headers, byte[] body, byte[] bodySha256) {
    return new StoredResult(status, headers, body, bodySha256);
  }

  public int status() {
    return status;
  }

  public Map<String, List<String>> headers() {
    return headers;
  }

  /** The body, or empty when only its hash was kept. */
  public Optional<byte[]> body() {
    return Optional.ofNullable(body).map(byte[]::clone);
  }

  public boolean bodyStored() {
    return body != null;
  }

  /** The SHA-256 of the body as the handler produced it; null only for rows written without one. */
  public byte[] bodySha256() {
    return bodySha256 == null ? null : bodySha256.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StoredResult other
        && status == other.status
        && headers.equals(other.headers)
        && Arrays.equals(body, other.body)
        && Arrays.equals(bodySha256, other.bodySha256);
  }

  @Override
  public int hashCode() {
    return Objects.hash(status, headers, Arrays.hashCode(body), Arrays.hashCode(bodySha256));
  }

  @Override
  public String toString() {
    return "StoredResult[status="
        + status
        + ", headers="
        + headers
        + ", body="
        + (body == null ? "not stored" : body.length + " bytes")
        + "]";
  }
}
