package dev.inbox.examples.spring;

import dev.inbox.InboxKeys;
import dev.inbox.spring.web.Idempotent;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * The HTTP door. {@code @Idempotent} puts the inbox in front of {@code POST /payments}: a retry
 * with the same {@code Idempotency-Key} gets the first answer again with {@code
 * Idempotent-Replayed: true}, and the method runs once per key, in the same key space as the
 * listeners ({@link PaymentsConfiguration#paymentsScope}).
 */
@RestController
public class PaymentsController {
  private final Payments payments;

  public PaymentsController(Payments payments) {
    this.payments = payments;
  }

  /** The body of a payment's answer. */
  public record PaymentAnswer(String paymentId, String account, long balanceCents) {}

  /** The body of {@code GET /accounts/{account}}. */
  public record Balance(String account, long balanceCents) {}

  @Idempotent(scopeResolver = PaymentsConfiguration.SCOPE_RESOLVER)
  @Transactional
  @PostMapping("/payments")
  public ResponseEntity<PaymentAnswer> pay(
      @RequestHeader("Idempotency-Key") String key, @RequestBody PaymentRequest payment) {
    String rule = payment.brokenRule();
    if (rule != null) {
      throw new ResponseStatusException(HttpStatus.BAD_REQUEST, rule);
    }
    // The key the filter claimed, read by the same rule ("pay-1" and pay-1 are one payment).
    String id = InboxKeys.fromIdempotencyKeyHeader(key);
    long balance = payments.apply(id, payment, "http");
    return ResponseEntity.created(UriComponentsBuilder.fromPath("/payments/{id}").build(id))
        .body(new PaymentAnswer(id, payment.account(), balance));
  }

  @GetMapping("/accounts/{account}")
  public Balance balance(@PathVariable("account") String account) {
    Long balance = payments.balance(account);
    if (balance == null) {
      throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no account " + account);
    }
    return new Balance(account, balance);
  }
}
