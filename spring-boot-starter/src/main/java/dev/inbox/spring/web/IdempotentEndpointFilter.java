package dev.inbox.spring.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The servlet filter in front of {@link Idempotent} handler methods. It runs on the request as the
 * container delivered it (the routed path the container decoded and normalised) and after Spring
 * Security's filter chain ({@code -100}), so that the principal is known; a request whose handler
 * is not {@code @Idempotent} passes through untouched.
 */
final class IdempotentEndpointFilter extends OncePerRequestFilter implements Ordered {
  /** After Spring Security's filter chain (-100) and Spring's request-context filter (-105). */
  static final int ORDER = 0;

  private final IdempotentEndpoints endpoints;

  IdempotentEndpointFilter(IdempotentEndpoints endpoints) {
    this.endpoints = endpoints;
  }

  @Override
  protected void doFilterInternal(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    IdempotentEndpoint endpoint = endpoints.routed(request);
    if (endpoint == null) {
      chain.doFilter(request, response);
    } else {
      endpoint.handle(request, response, chain);
    }
  }

  @Override
  public int getOrder() {
    return ORDER;
  }
}
