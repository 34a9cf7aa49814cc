package dev.inbox.examples.spring;

import java.util.Map;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * The one write every door makes for a new payment: a row in {@code payments} and a credit to its
 * account. It joins the caller's transaction (the listener's or the endpoint's), in which the inbox
 * has claimed the payment's key, so the key, the row and the credit commit together or not at all.
 */
@Repository
public class Payments {
  private final JdbcTemplate jdbc;
  private final PaymentsProperties properties;

  public Payments(JdbcTemplate jdbc, PaymentsProperties properties) {
    this.jdbc = jdbc;
    this.properties = properties;
  }

  /**
   * Records the payment and credits its account.
   *
   * @return the account's new balance
   */
  @Transactional(propagation = Propagation.MANDATORY)
  public long apply(String paymentId, PaymentRequest payment, String channel) {
    jdbc.update(
        "INSERT INTO payments (payment_id, account_id, amount_cents, channel, created_at)"
            + " VALUES (?, ?, ?, ?, now())",
        paymentId,
        payment.account(),
        payment.amountCents(),
        channel);
    long balance =
        jdbc.queryForObject(
            "INSERT INTO accounts (account_id, balance_cents) VALUES (?, ?)"
                + " ON CONFLICT (account_id) DO UPDATE"
                + " SET balance_cents = accounts.balance_cents + EXCLUDED.balance_cents"
                + " RETURNING balance_cents",
            Long.class,
            payment.account(),
            payment.amountCents());
    hold();
    return balance;
  }

  /** The balance of an account, or null when it has none. */
  @Transactional(readOnly = true)
  public Long balance(String account) {
    return jdbc.query(
        "SELECT balance_cents FROM accounts WHERE account_id = ?",
        rs -> rs.next() ? rs.getLong(1) : null,
        account);
  }

  /** Payment rows and balances of the accounts whose ids start with {@code prefix}. */
  @Transactional(readOnly = true)
  public Map<String, Object> totals(String prefix) {
    return jdbc.queryForMap(
        "SELECT (SELECT count(*) FROM payments WHERE payment_id LIKE ? || '%') AS rows,"
            + " (SELECT count(DISTINCT payment_id) FROM payments"
            + "   WHERE payment_id LIKE ? || '%') AS distinct_ids,"
            + " (SELECT coalesce(sum(amount_cents), 0) FROM payments"
            + "   WHERE payment_id LIKE ? || '%') AS amount_sum,"
            + " (SELECT coalesce(sum(balance_cents), 0) FROM accounts"
            + "   WHERE account_id LIKE ? || '%') AS balance_sum",
        prefix, prefix, prefix, prefix);
  }

  private void hold() {
    if (properties.hold().isZero()) {
      return;
    }
    try {
      Thread.sleep(properties.hold().toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while holding a payment's transaction", e);
    }
  }
}
