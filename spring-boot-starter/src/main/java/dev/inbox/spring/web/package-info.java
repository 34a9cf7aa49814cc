/**
 * {@link dev.inbox.spring.web.Idempotent @Idempotent} Spring MVC endpoints: the HTTP adapter's
 * {@code IdempotencyFilter}, applied to exactly the handler methods that carry the annotation
 * (found through the application's own {@code RequestMappingHandlerMapping}, so that the filter
 * protects what the {@code DispatcherServlet} will run), inside a Spring transaction begun with the
 * method's {@code @Transactional} attributes, and documented in OpenAPI when springdoc is present.
 * Wired by {@link dev.inbox.spring.web.InboxWebAutoConfiguration} in a servlet web application that
 * has the HTTP adapter on its class path.
 */
package dev.inbox.spring.web;
