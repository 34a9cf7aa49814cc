package dev.inbox.spi;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a listener's exception out of the work it observes. The inbox and every adapter call their
 * listener ({@link InboxListener}, the Kafka and RabbitMQ consumer listeners, the HTTP filter's)
 * inside claims, right after handlers and in their consumer loops; an exception there (a Micrometer
 * registry refusing a meter, say) would turn a success into a counted failure, roll a handler's
 * writes back or stop a consumer.
 */
public final class Listeners {
  private static final Logger log = LoggerFactory.getLogger(Listeners.class);

  private Listeners() {}

  /**
   * The listener, with every call guarded: a {@link RuntimeException} it throws is logged at WARN
   * and ignored, and the call returns normally; an {@link Error} still propagates. A listener that
   * overrides none of {@code type}'s methods (such as its {@code NOOP}), and one wrapped already,
   * is returned as it is, so that a listener that does nothing costs nothing.
   *
   * @param type the listener interface, whose methods all return {@code void}
   */
  public static <T> T nonThrowing(Class<T> type, T listener) {
    Objects.requireNonNull(listener, "listener must not be null");
    if (!type.isInterface()) {
      throw new IllegalArgumentException("a listener type must be an interface, but was " + type);
    }
    if (isNonThrowing(listener) || !overridesAny(type, listener)) {
      return listener;
    }
    return type.cast(
        Proxy.newProxyInstance(
            type.getClassLoader(), new Class<?>[] {type}, new NonThrowing(type, listener)));
  }

  private static boolean isNonThrowing(Object listener) {
    return Proxy.isProxyClass(listener.getClass())
        && Proxy.getInvocationHandler(listener) instanceof NonThrowing;
  }

  /** Whether the listener's class implements one of the type's methods itself. */
  private static boolean overridesAny(Class<?> type, Object listener) {
    for (Method method : type.getMethods()) {
      if (Modifier.isStatic(method.getModifiers())) {
        continue;
      }
      try {
        Method implementation =
            listener.getClass().getMethod(method.getName(), method.getParameterTypes());
        if (!implementation.isDefault()) {
          return true;
        }
      } catch (NoSuchMethodException e) {
        throw new IllegalStateException(
            "the listener " + listener + " lacks " + method + " of its type; this indicates a bug",
            e);
      }
    }
    return false;
  }

  private static final class NonThrowing implements InvocationHandler {
    private final Class<?> type;
    private final Object delegate;

    NonThrowing(Class<?> type, Object delegate) {
      this.type = type;
      this.delegate = delegate;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      if (method.getDeclaringClass() == Object.class) {
        return switch (method.getName()) {
          case "equals" -> proxy == args[0];
          case "hashCode" -> System.identityHashCode(proxy);
          default -> "nonThrowing(" + delegate + ")";
        };
      }
      try {
        return method.invoke(delegate, args);
      } catch (InvocationTargetException e) {
        Throwable thrown = e.getCause();
        if (thrown instanceof Error error) {
          throw error;
        }
        log.warn(
            "the {} {} threw from {}; it must not, and the work goes on",
            type.getSimpleName(),
            delegate,
            method.getName(),
            thrown);
        return null;
      }
    }
  }
}
