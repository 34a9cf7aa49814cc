package dev.inbox.spring.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.inbox.spring.InboxRepublishMessageRecoverer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * The startup warnings of {@link InboxRepublishMessageRecoverer}: a dead letter the broker drops is
 * lost with its acknowledged original unless the template waits for confirms and hears of returns,
 * which needs returns on the connection factory and a mandatory template. No broker is needed: the
 * connection factory does not connect until a message is sent.
 */
@ExtendWith(OutputCaptureExtension.class)
class RecovererConfirmWarningTest {
  private static final String DEAD_LETTERS = "warning-test.dlq";

  @Test
  void without_confirms_it_warns_that_a_dropped_dead_letter_is_lost(CapturedOutput output) {
    recoverer(false, false, false);
    assertThat(output).contains("dead letters to " + DEAD_LETTERS + " are sent without publisher");
  }

  @Test
  void with_confirms_but_a_template_that_is_not_mandatory_it_warns(CapturedOutput output) {
    recoverer(true, true, false);
    assertThat(output).contains("without returns on a mandatory template");
  }

  @Test
  void with_confirms_but_no_returns_it_warns(CapturedOutput output) {
    recoverer(true, false, true);
    assertThat(output).contains("without returns on a mandatory template");
  }

  @Test
  void with_confirms_returns_and_a_mandatory_template_it_says_nothing(CapturedOutput output) {
    recoverer(true, true, true);
    assertThat(output).doesNotContain(DEAD_LETTERS);
  }

  private static void recoverer(boolean confirms, boolean returns, boolean mandatory) {
    CachingConnectionFactory connections = new CachingConnectionFactory("127.0.0.1");
    if (confirms) {
      connections.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
    }
    connections.setPublisherReturns(returns);
    RabbitTemplate template = new RabbitTemplate(connections);
    template.setMandatory(mandatory);
    try {
      new InboxRepublishMessageRecoverer(template, "", DEAD_LETTERS, null);
    } finally {
      connections.destroy();
    }
  }
}
