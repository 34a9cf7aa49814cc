package dev.inbox.http;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;

/**
 * The inbox transaction as the application sees it: every call goes to the real connection, except
 * that {@code close()} does nothing (so that try-with-resources is harmless) and {@code commit},
 * {@code rollback()}, {@code setAutoCommit(true)} and {@code abort} throw, because the filter owns
 * the transaction and must commit it together with the stored response.
 */
final class GuardedConnection implements InvocationHandler {
  private final Connection target;

  private GuardedConnection(Connection target) {
    this.target = target;
  }

  static Connection wrap(Connection target) {
    return (Connection)
        Proxy.newProxyInstance(
            GuardedConnection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            new GuardedConnection(target));
  }

  @Override
  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    String name = method.getName();
    int arity = args == null ? 0 : args.length;
    if (name.equals("close") && arity == 0) {
      return null;
    }
    if ((name.equals("commit") || name.equals("rollback")) && arity == 0
        || name.equals("abort")
        || name.equals("setAutoCommit") && Boolean.TRUE.equals(args[0])) {
      throw new IllegalStateException(
          "the inbox transaction of this request belongs to IdempotencyFilter, which commits it"
              + " together with the stored response; "
              + name
              + "() is not allowed (throw an exception or answer 5xx to roll it back)");
    }
    if (name.equals("equals") && arity == 1) {
      return proxy == args[0];
    }
    if (name.equals("hashCode") && arity == 0) {
      return System.identityHashCode(proxy);
    }
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
