package dev.inbox.kafka;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes the loop's consumer, and on request makes it leave its group even as a static member
 * ({@code group.instance.id}), whose plain close keeps it in the group until its session times out.
 *
 * <p>kafka-clients 4.1 and later leave in the close itself: {@code close(CloseOptions)} with {@code
 * LEAVE_GROUP} (KIP-1092). Earlier clients (Spring Boot 3.5 manages 3.9) send no LeaveGroup for a
 * static member on close, whatever their settings say; there the member is closed with {@code
 * close(Duration)} and then removed by its {@code group.instance.id} with the Admin API made for a
 * static member that will not come back (KIP-345). The way is chosen once, by looking for {@code
 * CloseOptions}, which is reached by reflection so that the adapter compiles and links on both.
 */
final class ConsumerCloser {
  private static final Logger log = LoggerFactory.getLogger(ConsumerCloser.class);
  private static final CloseOptionsApi CLOSE_OPTIONS = CloseOptionsApi.find();

  /** Consumer settings an admin client must not get; connection and security settings stay. */
  private static final Set<String> CONSUMER_ONLY = consumerOnly();

  private final Map<String, Object> consumerProperties;

  ConsumerCloser(Map<String, Object> consumerProperties) {
    this.consumerProperties = Map.copyOf(consumerProperties);
  }

  /** Whether these kafka-clients leave a group in {@code close(CloseOptions)} (4.1 and later). */
  static boolean closesWithCloseOptions() {
    return CLOSE_OPTIONS != null;
  }

  /**
   * Closes {@code consumer} within about {@code timeout}; with {@code leaveGroup}, a static member
   * leaves its group too, else it keeps Kafka's default (a dynamic member leaves, a static one
   * stays until its session times out).
   */
  void close(Consumer<?, ?> consumer, Duration timeout, boolean leaveGroup) {
    if (CLOSE_OPTIONS != null) {
      CLOSE_OPTIONS.close(consumer, timeout, leaveGroup);
      return;
    }
    consumer.close(timeout);
    Object instanceId = consumerProperties.get(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
    if (leaveGroup && instanceId != null) {
      removeStaticMember(
          (String) consumerProperties.get(ConsumerConfig.GROUP_ID_CONFIG),
          instanceId.toString(),
          timeout);
    }
  }

  private void removeStaticMember(String group, String instanceId, Duration timeout) {
    Admin admin = Admin.create(adminConfig(timeout));
    try {
      admin
          .removeMembersFromConsumerGroup(
              group,
              new RemoveMembersFromConsumerGroupOptions(List.of(new MemberToRemove(instanceId))))
          .all()
          .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      log.info("static member {} removed from consumer group {}", instanceId, group);
    } catch (ExecutionException | TimeoutException e) {
      log.warn(
          "static member {} could not be removed from consumer group {}; its partitions wait for"
              + " its session to time out",
          instanceId,
          group,
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      log.warn("interrupted while removing static member {} from group {}", instanceId, group);
    } finally {
      admin.close(timeout);
    }
  }

  /**
   * The consumer's connection, security and plug-in settings, and timeouts within {@code timeout}.
   */
  private Map<String, Object> adminConfig(Duration timeout) {
    Map<String, Object> config = new HashMap<>();
    consumerProperties.forEach(
        (key, value) -> {
          if (!CONSUMER_ONLY.contains(key)) {
            config.put(key, value);
          }
        });
    Object clientId = consumerProperties.get(ConsumerConfig.CLIENT_ID_CONFIG);
    if (clientId != null && !clientId.toString().isEmpty()) {
      config.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId + "-leave");
    }
    int millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
    config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, millis);
    config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, millis);
    return config;
  }

  private static Set<String> consumerOnly() {
    Set<String> keys = new HashSet<>(ConsumerConfig.configNames());
    keys.removeAll(AdminClientConfig.configNames());
    return Set.copyOf(keys);
  }

  /** {@code Consumer.close(CloseOptions)} and what it takes, found once by name. */
  private record CloseOptionsApi(
      Method close, Method ofTimeout, Method withOperation, Object leaveGroup, Object byDefault) {
    private static final String CLOSE_OPTIONS = "org.apache.kafka.clients.consumer.CloseOptions";

    /** The API, or null on kafka-clients before 4.1. */
    static CloseOptionsApi find() {
      try {
        ClassLoader loader = Consumer.class.getClassLoader();
        Class<?> options = Class.forName(CLOSE_OPTIONS, false, loader);
        Class<?> operation =
            Class.forName(CLOSE_OPTIONS + "$GroupMembershipOperation", false, loader);
        return new CloseOptionsApi(
            Consumer.class.getMethod("close", options),
            options.getMethod("timeout", Duration.class),
            options.getMethod("withGroupMembershipOperation", operation),
            constant(operation, "LEAVE_GROUP"),
            constant(operation, "DEFAULT"));
      } catch (ClassNotFoundException | NoSuchMethodException e) {
        return null;
      }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object constant(Class<?> enumType, String name) {
      return Enum.valueOf((Class<? extends Enum>) enumType, name);
    }

    void close(Consumer<?, ?> consumer, Duration timeout, boolean leave) {
      try {
        Object options =
            withOperation.invoke(ofTimeout.invoke(null, timeout), leave ? leaveGroup : byDefault);
        close.invoke(consumer, options);
      } catch (InvocationTargetException e) {
        if (e.getCause() instanceof RuntimeException runtime) {
          throw runtime;
        }
        if (e.getCause() instanceof Error error) {
          throw error;
        }
        throw new IllegalStateException("Consumer.close threw " + e.getCause(), e.getCause());
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(
            "the public Consumer.close(CloseOptions) is not accessible, which indicates a bug", e);
      }
    }
  }
}
