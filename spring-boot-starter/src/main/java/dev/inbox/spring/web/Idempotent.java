package dev.inbox.spring.web;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Puts an {@code Idempotency-Key} (draft-ietf-httpapi-idempotency-key-header) on a Spring MVC
 * handler method, or on every handler method of a controller: the key is claimed in the inbox
 * table, as (scope, key), in the transaction the method's {@code @Transactional} describes, so that
 * the method's JdbcTemplate and JPA writes, the key and the stored response commit together.
 *
 * <ul>
 *   <li>A retry with the same key gets the first response again (status, body and the headers the
 *       HTTP adapter replays, such as {@code Content-Type} and {@code Location}) with {@code
 *       Idempotent-Replayed: true}; the method does not run again.
 *   <li>A retry while the first request is still running waits for it up to {@code
 *       inbox.web.in-flight-wait}, then gets 409 with {@code Retry-After}.
 *   <li>The same key with a different request (method, path, query, content type or body) gets 422;
 *       a missing key (when {@link #keyRequired}) or a malformed one gets 400. Each of these is a
 *       Spring {@code ProblemDetail} ({@code application/problem+json}) whose {@code rule} member
 *       names the rule that failed, rendered from an {@link IdempotencyProblemException} by the
 *       application's own {@code @ExceptionHandler} methods when one takes it.
 *   <li>A response with a 5xx status, or a method that throws, rolls its writes back and leaves the
 *       key free for a retry; 2xx, 301 to 303 and 4xx responses are stored.
 * </ul>
 *
 * <p>The transaction is begun before the key is claimed, by the filter that protects the method,
 * with the method's own {@code @Transactional} attributes (isolation, timeout, read-only, its
 * transaction manager); the method's {@code @Transactional} then joins it. A method without
 * {@code @Transactional} runs in a default one ({@code REQUIRED} on the application's transaction
 * manager), so that a {@code @Transactional} service it calls joins it too. A method whose
 * {@code @Transactional} would leave that transaction ({@code REQUIRES_NEW}, {@code NOT_SUPPORTED},
 * {@code NEVER}) fails the application's startup: its writes could never commit with the key. A
 * service it calls with {@code REQUIRES_NEW} commits on its own, outside the key's protection.
 *
 * <p>The key belongs to the caller: its scope is the authenticated principal's name ({@code
 * HttpServletRequest.getUserPrincipal()}, which Spring Security fills in), or {@code
 * inbox.web.anonymous-scope} for an unauthenticated request, so that two users sending the same key
 * get two effects. Name a {@link dev.inbox.http.ScopeResolver} bean in {@link #scopeResolver} to
 * decide it otherwise (a tenant header, say). A message listener shares a key with an endpoint when
 * it claims the key in the same scope string: one table, one key space.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

  /**
   * Whether a request without an {@code Idempotency-Key} is refused with 400 (the default) or runs
   * unprotected, as if the method were not annotated.
   */
  boolean keyRequired() default true;

  /**
   * The name of a {@link dev.inbox.http.ScopeResolver} bean that decides whose key a request's key
   * is. Empty (the default): the principal's name, or {@code inbox.web.anonymous-scope}.
   */
  String scopeResolver() default "";
}
