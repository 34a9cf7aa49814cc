package dev.inbox.spring.actuate;

import dev.inbox.AdminAction;
import dev.inbox.InboxAdmin;
import dev.inbox.InboxRecord;
import dev.inbox.InvalidKeyException;
import dev.inbox.KeyFilter;
import dev.inbox.KeyReport;
import dev.inbox.LiveLeaseException;
import dev.inbox.RecordState;
import dev.inbox.ReleaseResult;
import dev.inbox.SettleResult;
import dev.inbox.StoredResult;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.lang.Nullable;

/**
 * {@code /actuator/inbox}: the operator's verbs of {@link InboxAdmin}, the same as the {@code
 * inbox} command-line tool's.
 *
 * <ul>
 *   <li>{@code GET /actuator/inbox}: counts per scope and state, the oldest lease, the table's
 *       size, the last purge.
 *   <li>{@code GET /actuator/inbox/keys?scope=&state=&olderThan=&minAttempts=&limit=&after=}: a
 *       page of keys, ordered by scope and key; {@code next} is the {@code after} of the next page.
 *   <li>{@code GET /actuator/inbox/{scope}/{key}}: one key, its record and its audit trail.
 *   <li>{@code POST /actuator/inbox/{scope}/{key}/release} with {@code {"reason": ..., "force":
 *       false}}: frees a FAILED key, or one whose lease expired, for one more run.
 *   <li>{@code POST /actuator/inbox/{scope}/{key}/settle} with {@code {"reason": ..., "status":
 *       200, "body": ..., "contentType": ..., "create": false, "force": false}}: marks it COMPLETED
 *       with that result, for an effect reconciled by hand.
 * </ul>
 *
 * <p>Actuator maps one operation per HTTP method and path shape, so the two writes share one {@code
 * POST} whose last path segment names the verb, and the listing sits under the fixed segment {@code
 * keys}. A key that holds a {@code /} cannot be named in the path: use the command-line tool.
 *
 * <p>Every write is audited with the authenticated principal's name (with Spring Security, the user
 * the request authenticated as), or {@code management.endpoint.inbox.actor} without one. An
 * operator's mistake is answered 400 (bad input, named), 404 (no such key, or an unknown verb) or
 * 409 (a live lease without {@code force}, or a key in a state the verb does not take), with a
 * {@code message} that says what happened and what to do; nothing is changed then.
 */
@Endpoint(id = "inbox")
// Spring's own @Nullable marks an optional parameter for Actuator on both Boot lines: Boot 3.5
// looks for exactly it, and Boot 4 (where Spring 7 deprecates it for JSpecify's) for any @Nullable.
@SuppressWarnings("deprecation")
public class InboxEndpoint {
  /** Keys per page of the listing when {@code limit} is not given. */
  public static final int DEFAULT_LIMIT = 50;

  private final InboxAdmin admin;
  private final String anonymousActor;

  /**
   * @param admin the inbox's operator verbs
   * @param anonymousActor who the audit trail names when no principal is authenticated
   */
  public InboxEndpoint(InboxAdmin admin, String anonymousActor) {
    this.admin = Objects.requireNonNull(admin, "admin");
    this.anonymousActor = Objects.requireNonNull(anonymousActor, "anonymousActor");
  }

  /** Counts per scope and state; it scans the whole table. */
  @ReadOperation
  public Map<String, Object> stats() {
    return Views.stats(admin.stats(), admin.countExpired());
  }

  /** A page of keys; {@code view} is the fixed path segment {@code keys}. */
  @ReadOperation
  public WebEndpointResponse<Map<String, Object>> list(
      @Selector String view,
      @Nullable String scope,
      @Nullable String state,
      @Nullable String olderThan,
      @Nullable Integer minAttempts,
      @Nullable Integer limit,
      @Nullable String after) {
    if (!"keys".equals(view)) {
      return Answers.notFound(
          "no view '"
              + view
              + "': GET /actuator/inbox for the counts, /actuator/inbox/keys for a page of keys,"
              + " /actuator/inbox/{scope}/{key} for one key");
    }
    return Answers.checked(
        () -> {
          KeyFilter filter =
              new KeyFilter(blankToNull(scope), state(state), duration(olderThan), minAttempts);
          return Answers.ok(
              Views.page(admin.list(filter, after, limit == null ? DEFAULT_LIMIT : limit)));
        });
  }

  /** One key: its record, if any, and every operator's change of it. */
  @ReadOperation
  public WebEndpointResponse<Map<String, Object>> show(
      @Selector String scope, @Selector String key) {
    return Answers.checked(
        () -> {
          KeyReport report = admin.show(scope, key);
          if (report.record() == null) {
            return Answers.notFound(
                describe(scope, key)
                    + " has no record: never claimed, rolled back, or purged. Check the scope and"
                    + " the key with GET /actuator/inbox/keys?scope=...",
                Views.report(report));
          }
          return Answers.ok(Views.report(report));
        });
  }

  /**
   * Releases or settles a key: {@code verb} is {@code release} or {@code settle}. {@code reason} is
   * mandatory; {@code status}, {@code body}, {@code contentType} and {@code create} belong to
   * settle.
   */
  @WriteOperation
  public WebEndpointResponse<Map<String, Object>> change(
      @Selector String scope,
      @Selector String key,
      @Selector String verb,
      String reason,
      @Nullable Boolean force,
      @Nullable Integer status,
      @Nullable String body,
      @Nullable String contentType,
      @Nullable Boolean create,
      @Nullable Principal principal) {
    return Answers.checked(
        () -> {
          AdminAction action =
              new AdminAction(actor(principal), reason, Boolean.TRUE.equals(force));
          KeyChange change = new KeyChange(admin, scope, key, action);
          return switch (verb) {
            case "release" -> {
              List<String> settleOnly = new ArrayList<>();
              given(settleOnly, "status", status);
              given(settleOnly, "body", body);
              given(settleOnly, "contentType", contentType);
              given(settleOnly, "create", create);
              if (!settleOnly.isEmpty()) {
                throw new IllegalArgumentException(
                    String.join(", ", settleOnly)
                        + " belong to settle, not to release; nothing was changed");
              }
              yield change.release();
            }
            case "settle" -> change.settle(result(status, body, contentType), create);
            default ->
                Answers.notFound(
                    "no verb '"
                        + verb
                        + "': POST /actuator/inbox/{scope}/{key}/release or .../settle");
          };
        });
  }

  private String actor(Principal principal) {
    return principal == null || principal.getName() == null || principal.getName().isBlank()
        ? anonymousActor
        : principal.getName();
  }

  static String describe(String scope, String key) {
    return "key '" + key + "' in scope '" + scope + "'";
  }

  private static StoredResult result(Integer status, String body, String contentType) {
    if (status == null) {
      throw new IllegalArgumentException(
          "status is required to settle a key: the result's status, 100 to 599 (an HTTP status;"
              + " consumers ignore it); nothing was changed");
    }
    if (status < 100 || status > 599) {
      throw new IllegalArgumentException(
          "status must be between 100 and 599, but was " + status + "; nothing was changed");
    }
    Map<String, List<String>> headers =
        contentType == null || contentType.isBlank()
            ? Map.of()
            : Map.of("Content-Type", List.of(contentType.trim()));
    byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    return StoredResult.of(status, headers, bytes);
  }

  private static void given(List<String> names, String name, Object value) {
    if (value != null) {
      names.add(name);
    }
  }

  private static RecordState state(String state) {
    if (state == null || state.isBlank()) {
      return null;
    }
    try {
      return RecordState.valueOf(state.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "state must be one of "
              + Arrays.toString(RecordState.values())
              + ", but was '"
              + state
              + "'",
          e);
    }
  }

  private static Duration duration(String text) {
    if (text == null || text.isBlank()) {
      return null;
    }
    try {
      return Duration.parse(text.trim());
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          "olderThan must be an ISO-8601 duration such as PT10M or P2D, but was '" + text + "'", e);
    }
  }

  private static String blankToNull(String text) {
    return text == null || text.isBlank() ? null : text;
  }

  /**
   * One release or settle, said the way the command-line tool says it: the record before and after,
   * and a warning when a live lease was taken.
   */
  private record KeyChange(InboxAdmin admin, String scope, String key, AdminAction action) {

    WebEndpointResponse<Map<String, Object>> release() {
      KeyReport before = admin.show(scope, key);
      ReleaseResult result = admin.release(scope, key, action);
      return switch (result) {
        case RELEASED ->
            done(
                "released",
                before,
                "The next delivery or claim runs it as NEW.",
                "if it is still running, its side effect may happen as well as the next"
                    + " claim's, and its complete() fails with LeaseLostException.");
        case NOT_FOUND ->
            Answers.notFound(
                describe(scope, key)
                    + " has no record; nothing to release (the next claim runs it as NEW anyway)."
                    + " Check the scope and the key with GET /actuator/inbox/keys?scope=...");
        case NOT_RELEASABLE ->
            Answers.conflict(
                describe(scope, key)
                    + " is "
                    + state(before.record())
                    + ", which is not released: a COMPLETED key's effect is committed (a claim"
                    + " committed without complete() counts as completed). Nothing was changed.");
      };
    }

    WebEndpointResponse<Map<String, Object>> settle(StoredResult result, Boolean create) {
      KeyReport before = admin.show(scope, key);
      if (before.record() == null && !Boolean.TRUE.equals(create)) {
        return Answers.notFound(
            describe(scope, key)
                + " has no record, so it was not settled: settling it creates a COMPLETED record,"
                + " and a later delivery of this key is skipped as a duplicate. Check the key;"
                + " pass \"create\": true if you mean it. Nothing was changed.");
      }
      if (admin.settle(scope, key, result, action) == SettleResult.NOT_SETTLEABLE) {
        return Answers.conflict(
            describe(scope, key)
                + " is "
                + state(before.record())
                + ", which counts as completed already: its result stands. Nothing was changed.");
      }
      return done(
          "settled",
          before,
          "Every later claim is a DUPLICATE with this result.",
          "its complete() fails with LeaseLostException, and an effect it still performs is not"
              + " reflected in the result you recorded.");
    }

    private WebEndpointResponse<Map<String, Object>> done(
        String verb, KeyReport before, String next, String forcedRisk) {
      InboxRecord after = admin.find(scope, key).orElseThrow();
      Views.Builder answer =
          Views.map()
              .put("result", verb.toUpperCase(Locale.ROOT))
              .put(
                  "message",
                  verb
                      + " "
                      + describe(scope, key)
                      + ": was "
                      + state(before.record())
                      + "; now "
                      + state(after)
                      + ". "
                      + next
                      + " Audited as '"
                      + action.actor()
                      + "'.")
              .put("actor", action.actor())
              .put(
                  "before",
                  before.record() == null
                      ? null
                      : Views.record(before.record(), before.databaseNow(), false))
              .put("after", Views.record(after, before.databaseNow(), false));
      if (before.leaseLive()) {
        answer.put(
            "warning",
            "forced: the live lease of owner '"
                + before.record().leaseOwner()
                + "' was taken away; "
                + forcedRisk);
      }
      return Answers.ok(answer.done());
    }

    private static String state(InboxRecord r) {
      return r == null
          ? "no record"
          : r.state() + " (attempts " + r.attempts() + ", fencing token " + r.fencingToken() + ")";
    }
  }

  /** The endpoint's answers, and the operator's mistakes turned into 400 and 409, never 500. */
  static final class Answers {
    private Answers() {}

    static WebEndpointResponse<Map<String, Object>> checked(
        Supplier<WebEndpointResponse<Map<String, Object>>> operation) {
      try {
        return operation.get();
      } catch (LiveLeaseException e) {
        return conflict(e.getMessage() + " Nothing was changed; pass \"force\": true to take it.");
      } catch (IllegalArgumentException | InvalidKeyException e) {
        return error(WebEndpointResponse.STATUS_BAD_REQUEST, "Bad Request", e.getMessage(), null);
      }
    }

    static WebEndpointResponse<Map<String, Object>> ok(Map<String, Object> body) {
      return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK);
    }

    static WebEndpointResponse<Map<String, Object>> notFound(String message) {
      return notFound(message, null);
    }

    static WebEndpointResponse<Map<String, Object>> notFound(
        String message, Map<String, Object> report) {
      return error(WebEndpointResponse.STATUS_NOT_FOUND, "Not Found", message, report);
    }

    static WebEndpointResponse<Map<String, Object>> conflict(String message) {
      return error(409, "Conflict", message, null);
    }

    private static WebEndpointResponse<Map<String, Object>> error(
        int status, String error, String message, Map<String, Object> report) {
      Views.Builder body =
          Views.map().put("status", status).put("error", error).put("message", message);
      if (report != null) {
        body.put("key", report);
      }
      return new WebEndpointResponse<>(body.done(), status);
    }
  }
}
