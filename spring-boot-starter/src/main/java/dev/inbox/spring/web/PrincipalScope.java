package dev.inbox.spring.web;

import dev.inbox.InboxKeys;
import dev.inbox.http.ScopeResolver;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;

/**
 * The default scope of an {@link Idempotent} endpoint's key: the authenticated principal's name,
 * which Spring Security's servlet integration exposes (and hides for its anonymous token), or the
 * configured anonymous scope; none when that is empty, which the filter answers with 401.
 */
final class PrincipalScope implements ScopeResolver {
  private final String anonymousScope;

  PrincipalScope(String anonymousScope) {
    if (anonymousScope != null && !anonymousScope.isEmpty()) {
      String rule = InboxKeys.brokenRule(anonymousScope);
      if (rule != null) {
        throw new IllegalArgumentException(
            "inbox.web.anonymous-scope " + InboxKeys.describe(anonymousScope) + " " + rule);
      }
    }
    this.anonymousScope =
        anonymousScope == null || anonymousScope.isEmpty() ? null : anonymousScope;
  }

  @Override
  public String scopeOf(HttpServletRequest request) {
    Principal principal = request.getUserPrincipal();
    return principal == null ? anonymousScope : principal.getName();
  }
}
