package dev.inbox.kafka;

import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Names a record's dead-letter topic as the application's naming does, and refuses a name that the
 * loop's own subscription pattern matches: the loop would read its own dead letters back, run the
 * handler on them as new records when their key comes from their coordinates, and dead-letter their
 * failures again, one new topic at a time. Refusing to publish leaves the record uncommitted and
 * its partition retried, with this error in the log, until the naming or the pattern is fixed.
 */
final class DeadLetterTopics implements Function<String, String> {
  private final Pattern subscription;
  private final Function<String, String> naming;

  DeadLetterTopics(Pattern subscription, Function<String, String> naming) {
    this.subscription = Objects.requireNonNull(subscription, "subscription");
    this.naming = Objects.requireNonNull(naming, "naming");
  }

  @Override
  public String apply(String topic) {
    String deadLetterTopic = naming.apply(topic);
    // Kafka's pattern subscription matches a whole topic name, as matches() does.
    if (subscription.matcher(deadLetterTopic).matches()) {
      throw new IllegalStateException(
          "the dead-letter topic '"
              + deadLetterTopic
              + "' of topic '"
              + topic
              + "' matches the subscription pattern '"
              + subscription.pattern()
              + "', so this consumer would read its own dead letters back; change"
              + " deadLetterTopic(...) or topicPattern(...) so that the pattern matches none of"
              + " the dead-letter topics");
    }
    return deadLetterTopic;
  }
}
