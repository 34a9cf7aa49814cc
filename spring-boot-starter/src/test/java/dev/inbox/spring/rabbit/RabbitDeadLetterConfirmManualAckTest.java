package dev.inbox.spring.rabbit;

import org.springframework.test.context.TestPropertySource;

/**
 * {@link RabbitDeadLetterConfirmTest} in MANUAL acknowledge mode, where the container settles
 * nothing: the message whose dead letter failed must still come back. The recoverer requeues it
 * itself; Spring's {@code SimpleMessageListenerContainer} also restarts the consumer on the
 * exception, which closes the channel and would requeue it too (so this held before the recoverer
 * did it, on this container).
 */
@TestPropertySource(
    properties = {
      "spring.rabbitmq.listener.simple.acknowledge-mode=manual",
      "test.queue.confirm=boot-confirm-manual-${test.run}"
    })
class RabbitDeadLetterConfirmManualAckTest extends RabbitDeadLetterConfirmTest {}
