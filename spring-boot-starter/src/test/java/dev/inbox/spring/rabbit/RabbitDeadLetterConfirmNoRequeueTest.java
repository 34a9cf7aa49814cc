package dev.inbox.spring.rabbit;

import org.springframework.test.context.TestPropertySource;

/**
 * {@link RabbitDeadLetterConfirmTest} with {@code default-requeue-rejected=false}: the container
 * rejects a failed message without requeueing it, so the message whose dead letter failed was
 * dropped (no broker-side dead-letter exchange here) unless the recoverer's exception asks for a
 * requeue.
 */
@TestPropertySource(
    properties = {
      "spring.rabbitmq.listener.simple.default-requeue-rejected=false",
      "test.queue.confirm=boot-confirm-norequeue-${test.run}"
    })
class RabbitDeadLetterConfirmNoRequeueTest extends RabbitDeadLetterConfirmTest {}
