package dev.inbox.http;

import dev.inbox.StoredResult;
import dev.inbox.internal.Fingerprints;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntPredicate;

/**
 * Turns a handler's buffered response into the {@link StoredResult} its key records, and a stored
 * result back into a replayed response. Only allow-listed headers are kept, and never a credential
 * header; a body over the limit is kept by its hash alone, and replayed empty.
 */
final class StoredResponses {
  /** Never stored or replayed, whatever the allow-list says. */
  private static final Set<String> CREDENTIAL_HEADERS =
      Set.of(
          "set-cookie",
          "set-cookie2",
          "authorization",
          "proxy-authorization",
          "www-authenticate",
          "proxy-authenticate",
          "cookie");

  private final IntPredicate storedStatuses;
  private final Set<String> replayedHeaders;
  private final int maxStoredBody;

  StoredResponses(IntPredicate storedStatuses, Set<String> replayedHeaders, int maxStoredBody) {
    this.storedStatuses = storedStatuses;
    TreeSet<String> replayed = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    replayed.addAll(replayedHeaders);
    this.replayedHeaders = Collections.unmodifiableSet(replayed);
    this.maxStoredBody = maxStoredBody;
  }

  /** Whether a response with the status completes its key; any other status fails the attempt. */
  boolean isStored(int status) {
    return storedStatuses.test(status);
  }

  StoredResult stored(BufferedResponse buffered) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    buffered
        .headers()
        .forEach(
            (name, values) -> {
              if (replayedHeaders.contains(name)
                  && !CREDENTIAL_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
                headers.put(name, values);
              }
            });
    byte[] body = buffered.body();
    return body.length > maxStoredBody
        ? StoredResult.withoutBody(buffered.getStatus(), headers, Fingerprints.sha256(body))
        : StoredResult.of(buffered.getStatus(), headers, body);
  }

  static void replay(StoredResult result, HttpServletResponse response) throws IOException {
    response.setStatus(result.status());
    result.headers().forEach((name, values) -> values.forEach(v -> response.addHeader(name, v)));
    response.setHeader(IdempotencyFilter.REPLAYED_HEADER, "true");
    byte[] body;
    if (result.bodyStored()) {
      body = result.body().orElseThrow();
    } else {
      response.setHeader(IdempotencyFilter.BODY_STORED_HEADER, "false");
      body = new byte[0];
    }
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }
}
