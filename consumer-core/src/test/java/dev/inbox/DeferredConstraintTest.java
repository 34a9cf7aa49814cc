package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.PreparedStatement;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A handler's deferred constraint is checked by the COMMIT that rides in the same round trip as the
 * reserved key's record. Its unique violation is the handler's failure, never taken for another
 * claimant having recorded the key (which would run the handler again).
 */
class DeferredConstraintTest extends InboxTestSupport {

  @Test
  void a_deferred_unique_violation_at_commit_fails_the_call_once_and_commits_nothing()
      throws Exception {
    sql(
        "CREATE TABLE "
            + schema
            + ".ledger (entry text, CONSTRAINT ledger_entry_unique UNIQUE (entry)"
            + " DEFERRABLE INITIALLY DEFERRED)");
    Inbox inbox = inbox();
    AtomicInteger runs = new AtomicInteger();
    assertThatThrownBy(
            () ->
                inbox.execute(
                    "s",
                    "k-deferred",
                    tx -> {
                      runs.incrementAndGet();
                      try (PreparedStatement insert =
                          tx.prepareStatement(
                              "INSERT INTO " + schema + ".ledger VALUES ('e-1'), ('e-1')")) {
                        insert.executeUpdate();
                      }
                      return null;
                    }))
        .isInstanceOf(InboxDatabaseException.class)
        .hasMessageContaining("k-deferred");
    assertThat(runs.get()).as("handler runs").isEqualTo(1);
    assertThat(queryLong("SELECT count(*) FROM " + schema + ".ledger")).isZero();
    assertThat(inbox.admin().find("s", "k-deferred")).as("no record committed").isEmpty();
  }
}
