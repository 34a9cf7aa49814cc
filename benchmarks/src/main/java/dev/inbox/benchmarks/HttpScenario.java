package dev.inbox.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.inbox.Inbox;
import dev.inbox.InboxDataSources;
import dev.inbox.InboxSettings;
import dev.inbox.http.IdempotencyFilter;
import dev.inbox.http.IdempotentRequests;
import dev.inbox.http.ScopeResolver;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.NetworkConnector;
import org.eclipse.jetty.server.Server;

/**
 * The {@code http} scenario: a Jetty server with one payments servlet on two paths, {@code
 * /payments} behind the {@link IdempotencyFilter} (transactional mode: the servlet writes through
 * the filter's transaction) and {@code /nofilter/payments} without it (the servlet opens and
 * commits its own transaction). Each run posts every distinct payment of the workload from {@value
 * #CLIENTS} client threads three times: to {@code /nofilter/payments} ({@code nofilter}), to {@code
 * /payments} with a fresh key ({@code first}), and to {@code /payments} again with the same,
 * completed keys ({@code replay}), and records each request's latency. The three take turns every
 * {@value #CHUNK} payments.
 */
final class HttpScenario {
  static final int CLIENTS = 16;

  /** One connection per concurrent request, so that no request waits for the pool. */
  static final int POOL_SIZE = CLIENTS;

  /** Payments per turn of the three variants. */
  static final int CHUNK = 500;

  static final List<String> VARIANTS = List.of("nofilter", "first", "replay");

  private final DataSource dataSource;
  private final List<Workload.Payment> distinct;
  private final Workload workload;
  private final PaymentsSchema filtered = new PaymentsSchema("bench_http");
  private final PaymentsSchema unfiltered = new PaymentsSchema("bench_http_nofilter");

  HttpScenario(DataSource dataSource, Workload workload) {
    this.dataSource = dataSource;
    this.workload = workload;
    Set<String> seen = new HashSet<>();
    List<Workload.Payment> firsts = new ArrayList<>();
    for (Workload.Payment payment : workload.messages) {
      if (seen.add(payment.id())) {
        firsts.add(payment);
      }
    }
    this.distinct = List.copyOf(firsts);
  }

  /**
   * The latencies of one run, per variant in {@link #VARIANTS} order, the machine's busy CPU time
   * during each variant's turns ({@link MachineCpu}; -1 where unknown), and the run's check.
   */
  record Latencies(List<long[]> nanos, long[] cpuMicros, boolean correct) {}

  static boolean runAll(BenchmarkRun run) throws Exception {
    try (HikariDataSource pool =
        InboxDataSources.pool(run.options.jdbcUrl, null, null, POOL_SIZE)) {
      return new HttpScenario(pool, run.workload).measure(run);
    }
  }

  private boolean measure(BenchmarkRun run) throws Exception {
    for (int i = 0; i < run.options.warmup; i++) {
      run();
    }
    List<Latencies> runs = new ArrayList<>();
    boolean correct = true;
    for (int i = 0; i < run.options.runs; i++) {
      Latencies latencies = run();
      runs.add(latencies);
      correct &= latencies.correct();
    }
    double baselineP50 = 0;
    double baselineCpu = 0;
    for (int v = 0; v < VARIANTS.size(); v++) {
      List<Double> p50s = new ArrayList<>();
      List<Double> p99s = new ArrayList<>();
      List<Double> cpus = new ArrayList<>();
      for (Latencies latencies : runs) {
        p50s.add(percentileMillis(latencies.nanos().get(v), 0.50));
        p99s.add(percentileMillis(latencies.nanos().get(v), 0.99));
        cpus.add((double) latencies.cpuMicros()[v] / distinct.size());
      }
      double p50 = BenchmarkRun.median(p50s);
      double cpu = BenchmarkRun.median(cpus);
      if (v == 0) {
        baselineP50 = p50;
        baselineCpu = cpu;
      }
      JsonLine line =
          JsonLine.scenario("http")
              .put("variant", VARIANTS.get(v))
              .put("clients", CLIENTS)
              .put("requests", distinct.size())
              .put("messages", workload.messages.size())
              .put("duplicate_rate", run.options.duplicateRate, 2)
              .put("runs", run.options.runs)
              .put("p50_ms", p50, 3)
              .put("p99_ms", BenchmarkRun.median(p99s), 3)
              .put("ratio_p50_vs_nofilter", p50 / baselineP50, 3)
              .put("run_p50_ms", p50s, 3)
              .put("run_p99_ms", p99s, 3);
      if (cpu >= 0) {
        // The whole machine's CPU per request during this variant's turns: clients, server and
        // database together, so it says what the p50 ratio comes from without the queueing.
        line.put("cpu_us_per_request", cpu, 0).put("cpu_ratio_vs_nofilter", cpu / baselineCpu, 3);
      }
      run.print(line.put("correct", correct));
    }
    return correct;
  }

  /** One run on fresh schemas and a fresh server: the three variants in order, then the check. */
  Latencies run() throws Exception {
    filtered.reset(dataSource);
    unfiltered.reset(dataSource);
    InboxSettings settings =
        InboxSettings.builder().schema(filtered.schema).janitorInterval(Duration.ZERO).build();
    try (Inbox inbox =
        Inbox.builder().dataSource(dataSource).settings(settings).migrate(true).build()) {
      Server server = start(inbox);
      try {
        String base =
            "http://127.0.0.1:" + ((NetworkConnector) server.getConnectors()[0]).getLocalPort();
        HttpClient client =
            HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
        AtomicInteger wrong = new AtomicInteger();
        URI nofilter = URI.create(base + "/nofilter/payments");
        URI payments = URI.create(base + "/payments");
        List<long[]> nanos = new ArrayList<>();
        for (int v = 0; v < VARIANTS.size(); v++) {
          nanos.add(new long[distinct.size()]);
        }
        long[] cpuMicros = new long[VARIANTS.size()];
        boolean cpuKnown = MachineCpu.available();
        // The variants take turns chunk by chunk, so that outside load falls on all three alike.
        for (int from = 0; from < distinct.size(); from += CHUNK) {
          int to = Math.min(from + CHUNK, distinct.size());
          for (int v = 0; v < VARIANTS.size(); v++) {
            long cpuBefore = MachineCpu.busyMicros();
            post(client, v == 0 ? nofilter : payments, from, to, v == 2, nanos.get(v), wrong);
            cpuMicros[v] += MachineCpu.busyMicros() - cpuBefore;
          }
        }
        if (!cpuKnown) {
          Arrays.fill(cpuMicros, -1);
        }
        boolean correct =
            wrong.get() == 0
                && filtered.correct(dataSource, workload)
                && unfiltered.correct(dataSource, workload);
        return new Latencies(nanos, cpuMicros, correct);
      } finally {
        server.stop();
      }
    }
  }

  private Server start(Inbox inbox) throws Exception {
    Server server = new Server(0);
    ServletContextHandler context = new ServletContextHandler();
    IdempotencyFilter filter =
        IdempotencyFilter.builder(inbox).scopeResolver(ScopeResolver.global("bench")).build();
    context.addFilter(new FilterHolder(filter), "/payments", EnumSet.of(DispatcherType.REQUEST));
    context.addServlet(new ServletHolder(new PaymentsServlet(filtered, null)), "/payments");
    context.addServlet(
        new ServletHolder(new PaymentsServlet(unfiltered, dataSource)), "/nofilter/payments");
    server.setHandler(context);
    server.start();
    return server;
  }

  /**
   * Posts the distinct payments {@code from} to {@code to} once from {@value #CLIENTS} threads,
   * records their latencies, and counts each answer that is not a 201, or is a replay when it
   * should not be, or the other way round.
   */
  private void post(
      HttpClient client,
      URI uri,
      int from,
      int to,
      boolean expectReplay,
      long[] nanos,
      AtomicInteger wrong)
      throws Exception {
    AtomicInteger next = new AtomicInteger(from);
    ExecutorService threads = Executors.newFixedThreadPool(CLIENTS);
    try {
      List<Future<?>> clients = new ArrayList<>();
      for (int t = 0; t < CLIENTS; t++) {
        clients.add(
            threads.submit(
                () -> {
                  for (int i = next.getAndIncrement(); i < to; i = next.getAndIncrement()) {
                    Workload.Payment payment = distinct.get(i);
                    HttpRequest request =
                        HttpRequest.newBuilder(uri)
                            .header("Idempotency-Key", '"' + payment.id() + '"')
                            .header("Content-Type", "text/plain")
                            .POST(
                                HttpRequest.BodyPublishers.ofByteArray(PaymentCodec.body(payment)))
                            .build();
                    long start = System.nanoTime();
                    HttpResponse<byte[]> response =
                        client.send(request, HttpResponse.BodyHandlers.ofByteArray());
                    nanos[i] = System.nanoTime() - start;
                    boolean replayed =
                        response
                            .headers()
                            .firstValue(IdempotencyFilter.REPLAYED_HEADER)
                            .map("true"::equals)
                            .orElse(false);
                    if (response.statusCode() != 201 || replayed != expectReplay) {
                      wrong.incrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> c : clients) {
        c.get();
      }
    } finally {
      threads.shutdown();
    }
  }

  static double percentileMillis(long[] nanos, double fraction) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    int index = (int) Math.ceil(fraction * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(index, sorted.length - 1))] / 1e6;
  }

  /**
   * Applies one payment: through the filter's transaction when {@code ownTransactions} is null,
   * else in a transaction of its own.
   */
  private static final class PaymentsServlet extends HttpServlet {
    private final PaymentsSchema payments;
    private final DataSource ownTransactions;

    PaymentsServlet(PaymentsSchema payments, DataSource ownTransactions) {
      this.payments = payments;
      this.ownTransactions = ownTransactions;
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      String key = request.getHeader("Idempotency-Key");
      String id = key.startsWith("\"") ? key.substring(1, key.length() - 1) : key;
      Workload.Payment payment = PaymentCodec.payment(id, request.getInputStream().readAllBytes());
      try {
        if (ownTransactions == null) {
          payments.apply(IdempotentRequests.connection(request), payment);
        } else {
          try (Connection tx = ownTransactions.getConnection()) {
            tx.setAutoCommit(false);
            payments.apply(tx, payment);
            tx.commit();
          }
        }
      } catch (SQLException e) {
        throw new IOException("payment " + id + " could not be written", e);
      }
      byte[] body =
          ("{\"paymentId\":\""
                  + payment.id()
                  + "\",\"account\":"
                  + payment.account()
                  + ",\"amountCents\":"
                  + payment.amountCents()
                  + "}")
              .getBytes(StandardCharsets.UTF_8);
      response.setStatus(201);
      response.setContentType("application/json");
      response.setContentLength(body.length);
      response.getOutputStream().write(body);
    }
  }
}
