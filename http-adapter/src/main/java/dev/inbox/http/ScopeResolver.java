package dev.inbox.http;

import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Decides whose key a request's Idempotency-Key is, so that one tenant can never see, replay or
 * block another's: the key is claimed as (scope, key). Return null when the request has no scope;
 * the filter then refuses it with 401 and problem+json (rule {@code scope-unresolved}), because a
 * key without an owner would be shared by every client. A scope that breaks the rules of {@link
 * dev.inbox.InboxKeys} is refused the same way.
 *
 * <p>The scope is the same value a message consumer uses, so that a payment sent over HTTP and over
 * Kafka with the same key in the same scope takes effect once.
 */
@FunctionalInterface
public interface ScopeResolver {
  /** The scope of the request's key, or null when the request has none. */
  String scopeOf(HttpServletRequest request);

  /** The authenticated principal's name, or no scope for an anonymous request: the default. */
  static ScopeResolver principal() {
    return request -> {
      Principal principal = request.getUserPrincipal();
      return principal == null ? null : principal.getName();
    };
  }

  /**
   * The tenant that an API-key header maps to; an absent or unknown API key has no scope.
   *
   * @param name the header, such as {@code X-Api-Key}
   * @param tenantOfKey returns the tenant of an API key, or null for an unknown key
   */
  static ScopeResolver header(String name, Function<String, String> tenantOfKey) {
    Objects.requireNonNull(name, "name must not be null");
    Objects.requireNonNull(tenantOfKey, "tenantOfKey must not be null");
    return request -> {
      String value = request.getHeader(name);
      return value == null ? null : tenantOfKey.apply(value);
    };
  }

  /**
   * The tenant that an API-key header maps to, from a fixed map (copied); an absent or unknown API
   * key has no scope.
   */
  static ScopeResolver header(String name, Map<String, String> tenantsByKey) {
    Map<String, String> copy = Map.copyOf(tenantsByKey);
    return header(name, copy::get);
  }

  /**
   * One scope for every request, even anonymous ones. Only for services with a single client,
   * because every key then lives in one space, and any caller can replay any key.
   *
   * @throws IllegalArgumentException when the scope breaks a rule of {@link dev.inbox.InboxKeys}
   */
  static ScopeResolver global(String scope) {
    String rule = dev.inbox.InboxKeys.brokenRule(scope);
    if (rule != null) {
      throw new IllegalArgumentException(
          "global scope " + dev.inbox.InboxKeys.describe(scope) + " " + rule);
    }
    return request -> scope;
  }
}
