package dev.inbox.internal;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;

/**
 * The transaction as a handler sees it: every call goes to the real connection, except that {@code
 * close()} does nothing (so that try-with-resources is harmless) and {@code commit}, {@code
 * rollback()}, {@code setAutoCommit(true)} and {@code abort} throw. The inbox owns the transaction
 * and commits the key's record with it: a handler that committed its writes first would commit them
 * without the key (a key reserved in {@code execute} has no row until the commit), and a retry
 * would run them again. Rolling back to a savepoint of the handler's own stays allowed.
 */
public final class HandlerConnection implements InvocationHandler {
  private final Connection target;

  private HandlerConnection(Connection target) {
    this.target = target;
  }

  /** The guard around a handler's connection; a guard already is returned as it is. */
  public static Connection wrap(Connection target) {
    if (Proxy.isProxyClass(target.getClass())
        && Proxy.getInvocationHandler(target) instanceof HandlerConnection) {
      return target;
    }
    return (Connection)
        Proxy.newProxyInstance(
            HandlerConnection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            new HandlerConnection(target));
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
          "the handler's transaction belongs to the inbox, which commits it together with the"
              + " key's record; "
              + name
              + "() is not allowed (throw an exception to roll it back)");
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
