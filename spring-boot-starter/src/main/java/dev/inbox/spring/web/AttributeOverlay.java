package dev.inbox.spring.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * A request whose attribute writes stay in the wrapper: a handler lookup made before the {@code
 * DispatcherServlet} caches the parsed path and sets its match attributes here, never on the
 * request the servlet will see, which must find it exactly as the container delivered it.
 */
final class AttributeOverlay extends HttpServletRequestWrapper {
  private final Map<String, Object> written = new HashMap<>();
  private final Set<String> removed = new HashSet<>();

  AttributeOverlay(HttpServletRequest request) {
    super(request);
  }

  @Override
  public Object getAttribute(String name) {
    if (written.containsKey(name)) {
      return written.get(name);
    }
    return removed.contains(name) ? null : super.getAttribute(name);
  }

  @Override
  public void setAttribute(String name, Object value) {
    if (value == null) {
      removeAttribute(name);
      return;
    }
    written.put(name, value);
    removed.remove(name);
  }

  @Override
  public void removeAttribute(String name) {
    written.remove(name);
    removed.add(name);
  }

  @Override
  public Enumeration<String> getAttributeNames() {
    Set<String> names = new LinkedHashSet<>(Collections.list(super.getAttributeNames()));
    names.removeAll(removed);
    names.addAll(written.keySet());
    return Collections.enumeration(names);
  }
}
