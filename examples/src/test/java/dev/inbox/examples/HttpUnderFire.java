package dev.inbox.examples;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Many clients sending the same keys, each retrying a key until it gets an answer, as real clients
 * do after timeouts, 409s and dropped connections: every client sends every key, in its own random
 * order, with random pauses. What each client finally got for each key is kept, so that the run can
 * check that all clients got the same answer for a key.
 */
final class HttpUnderFire {
  private final String baseUri;
  private final String apiKey;
  private final List<Payment> payments;
  private final int clients;
  private final long seed;
  private final Map<String, Set<String>> answers = new ConcurrentHashMap<>();
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong answered = new AtomicLong();
  private final ExecutorService pool;

  HttpUnderFire(String baseUri, String apiKey, List<Payment> payments, int clients, long seed) {
    this.baseUri = baseUri;
    this.apiKey = apiKey;
    this.payments = payments;
    this.clients = clients;
    this.seed = seed;
    this.pool = Executors.newFixedThreadPool(clients);
  }

  List<Future<?>> start() {
    List<Future<?>> running = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      long clientSeed = seed + c;
      running.add(pool.submit(() -> runClient(clientSeed)));
    }
    pool.shutdown();
    return running;
  }

  /** The share of all (client, key) pairs answered so far. */
  double progress() {
    return answered.get() / (double) (clients * payments.size());
  }

  long requests() {
    return requests.get();
  }

  /** Every distinct 201 body each key got, over all clients. */
  Map<String, Set<String>> answers() {
    return answers;
  }

  private Void runClient(long clientSeed) throws Exception {
    Random random = new Random(clientSeed);
    List<Payment> order = new ArrayList<>(payments);
    Collections.shuffle(order, random);
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    for (Payment payment : order) {
      String body = sendUntilAnswered(http, payment, random);
      answers.computeIfAbsent(payment.paymentId(), k -> ConcurrentHashMap.newKeySet()).add(body);
      answered.incrementAndGet();
    }
    return null;
  }

  /**
   * Retries through 409s, 5xx and a dead server. A 201, or the filter's 200 replay for a key that
   * the Kafka consumer applied first, is the answer; any other fails the run.
   */
  private String sendUntilAnswered(HttpClient http, Payment payment, Random random)
      throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(baseUri + "/payments"))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header("X-Api-Key", apiKey)
            .header("Idempotency-Key", payment.paymentId())
            .POST(HttpRequest.BodyPublishers.ofByteArray(payment.toJson()))
            .build();
    long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    while (true) {
      requests.incrementAndGet();
      try {
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        boolean replayed =
            response.headers().firstValue("Idempotent-Replayed").orElse("").equals("true");
        if (response.statusCode() == 201 || (response.statusCode() == 200 && replayed)) {
          return response.body();
        }
        if (response.statusCode() != 409 && response.statusCode() < 500) {
          throw new IllegalStateException(
              payment.paymentId() + " got " + response.statusCode() + ": " + response.body());
        }
      } catch (java.io.IOException e) {
        // The server is down or restarting: retry like a client would.
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(payment.paymentId() + " got no answer within 5 minutes");
      }
      Thread.sleep(20 + random.nextInt(200));
    }
  }
}
