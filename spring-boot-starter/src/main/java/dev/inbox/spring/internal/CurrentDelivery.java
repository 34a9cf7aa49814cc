package dev.inbox.spring.internal;

/**
 * The delivery the container is handing to a listener on this thread. A transport hook sets it
 * before the listener method is called and clears it afterwards; containers call their listeners on
 * their own consumer threads, one delivery at a time, so a thread-local is enough.
 */
public final class CurrentDelivery {
  private static final ThreadLocal<Delivery> CURRENT = new ThreadLocal<>();

  private CurrentDelivery() {}

  public static void set(Delivery delivery) {
    CURRENT.set(delivery);
  }

  /** The delivery of this thread, or null when the method was called outside a container. */
  public static Delivery get() {
    return CURRENT.get();
  }

  public static void clear() {
    CURRENT.remove();
  }
}
