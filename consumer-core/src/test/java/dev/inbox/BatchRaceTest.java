package dev.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Batches that share keys race: each batch claims its keys with a plain INSERT where its snapshot
 * shows none, and a key another batch committed in between sends it back to the full claim. Every
 * key must take effect once, and every item must settle.
 */
class BatchRaceTest extends InboxTestSupport {

  @ParameterizedTest(name = "new items at once: {0}")
  @ValueSource(booleans = {false, true})
  void eight_threads_of_overlapping_batches_apply_each_key_exactly_once(boolean atOnce)
      throws Exception {
    Inbox inbox = inbox();
    int threads = 8;
    int rounds = 5;
    int keys = 300;
    AtomicInteger unsettled = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Random random = new Random(t);
        running.add(
            pool.submit(
                () -> {
                  for (int round = 0; round < rounds; round++) {
                    List<BatchItem<Long>> batch = new ArrayList<>();
                    for (int k = 0; k < keys; k++) {
                      if (random.nextInt(3) > 0) {
                        batch.add(BatchItem.of("pay-" + k, 1L));
                      }
                    }
                    Collections.shuffle(batch, random);
                    BatchResult<Long> result =
                        atOnce
                            ? inbox.executeBatch(
                                "race",
                                batch,
                                BatchFailurePolicy.CONTINUE,
                                BatchHandler.setBased(
                                    (newItems, tx) -> effects(tx, "race", newItems)))
                            : inbox.executeBatch(
                                "race",
                                batch,
                                BatchFailurePolicy.CONTINUE,
                                (item, tx) -> {
                                  effect(tx, "race", item.key(), item.payload());
                                  return null;
                                });
                    unsettled.addAndGet(
                        batch.size()
                            - result.count(ItemStatus.COMPLETED)
                            - result.count(ItemStatus.DUPLICATE));
                  }
                  return null;
                }));
      }
      for (Future<?> f : running) {
        f.get(2, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }

    long distinctKeysSeen =
        queryLong("SELECT count(*) FROM " + schema + ".inbox WHERE scope = 'race'");
    assertThat(unsettled).as("items neither completed nor duplicate").hasValue(0);
    assertThat(effects()).as("effect rows").isEqualTo(distinctKeysSeen);
    assertThat(keysWithADoubledEffect()).as("keys with a doubled effect").isZero();
    assertThat(distinctKeysSeen).as("8 x 5 batches of two thirds of the keys").isEqualTo(keys);
  }
}
